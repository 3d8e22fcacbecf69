"""A requirement's look-up parses only the wheels it could choose, and still chooses the same ones.

Big projects list thousands of files (numpy and torch about 9,300 together); building an object, a
URL and a parsed version for each cost most of a repair's time. ``IndexDistFiles`` now hands the
client a ``WheelFilter``: these tests serve a many-file project from a real simple index on
127.0.0.1 (tests/support/index_server.py), JSON and HTML, and check that the filtered page lists
fewer files (``ProjectPage.skipped`` counts the rest) and that every requirement picks the same
releases and wheels as it did from the whole page.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from slimwheel.index import Cache, IndexSettings
from slimwheel.index.client import IndexClient
from slimwheel.index.dist_files import IndexDistFiles, WheelFilter, _installable
from slimwheel.platforms import Platform
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

StartServer = Callable[..., IndexServer]
LINUX = Platform("linux", "x86_64")
VERSIONS = ("0.9", "1.0", "1.1", "1.2", "1.3", "2.0rc1", "2.0", "2.1", "3.0.dev1")
TAGS = (
    "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64",
    "cp311-cp311-manylinux_2_28_x86_64",
    "cp312-cp312-manylinux_2_17_x86_64",
    "cp311-cp311-manylinux_2_17_aarch64",
    "cp311-cp311-win_amd64",
    "cp311-cp311-macosx_11_0_arm64",
    "cp38-abi3-manylinux_2_17_x86_64",
)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bigproj``: every version x every tag (63 wheels), a pure wheel for 0.9, and an sdist each."""
    directory = tmp_path_factory.mktemp("bigproj")
    for version in VERSIONS:
        files = {"bigproj/__init__.py": b"", "bigproj/lib/libbig.so": b"\x7fELF"}
        for tag in TAGS:
            make_wheel(directory, "bigproj", version, files, tag=tag)
        (directory / f"bigproj-{version}.tar.gz").write_bytes(b"not read")
    make_wheel(directory, "bigproj", "0.9", {"bigproj/__init__.py": b""}, tag="py3-none-any")
    return directory


def whole_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.iterdir() if path.name.endswith((".whl", ".tar.gz")))


def _serve(many: Path, index_server: StartServer, *, json_api: bool) -> IndexServer:
    server = index_server(many, json_api=json_api)
    server.requires_python["bigproj-1.3-cp311-cp311-manylinux_2_28_x86_64.whl"] = ">=3.12"
    server.yanked["bigproj-1.2-cp311-cp311-manylinux_2_28_x86_64.whl"] = "broken"
    return server


REQUIREMENTS = (
    "bigproj",
    "bigproj>=1.1",
    "bigproj==1.2",  # pinned: its yanked wheel counts
    "bigproj!=1.*,>=0.9",
    "bigproj>=2.0rc1",
    "bigproj>=3.0.dev0",  # only a prerelease is allowed: it is chosen
    "bigproj===1.1",
    "bigproj>=99",
)


@pytest.mark.parametrize("json_api", [True, False], ids=["json", "html"])
def test_filtered_page_lists_fewer_files_and_chooses_the_same(
    many: Path, index_server: StartServer, json_api: bool
) -> None:
    server = _serve(many, index_server, json_api=json_api)
    with IndexClient(IndexSettings(server.simple_url)) as client:
        whole = client.project("bigproj")
        assert whole.skipped == 0
        assert len(whole.files) == len(VERSIONS) * (len(TAGS) + 1) + 1
        for text in REQUIREMENTS:
            requirement = Requirement(text)
            for python in ("3.11", "3.12", None):
                wanted = WheelFilter(requirement.specifier, LINUX, python)
                page = client.project("bigproj", keep=wanted)
                assert len(page.files) + page.skipped == len(whole.files)
                # Same choice, from a fraction of the objects: no sdist, no other platform's wheel.
                assert _installable(page, requirement, LINUX, python) == _installable(
                    whole, requirement, LINUX, python
                ), (text, python)
                assert all(file.filename.endswith(("x86_64.whl", "-any.whl")) for file in page.files), text
                # Never made: the sdists and the aarch64, Windows and macOS wheels, whatever is asked.
                assert page.skipped >= len(VERSIONS) * 4, (text, python, page.skipped)
                # Names repeat their tags and versions: each distinct one is judged once.
                assert wanted.judged <= len(TAGS) + 1 + len(VERSIONS)


def test_index_dist_files_reads_only_the_wheels_it_could_choose(
    many: Path, index_server: StartServer, tmp_path: Path
) -> None:
    server = _serve(many, index_server, json_api=True)
    settings = IndexSettings(server.simple_url)
    with IndexDistFiles(settings, cache=Cache(tmp_path / "cache")) as source:
        wanted = WheelFilter(Requirement("bigproj>=1.1").specifier, LINUX, "3.11")
        page = source.client.project("bigproj", keep=wanted)
        # cp311 x86_64 (two glibc levels) and abi3 wheels of 1.1, 1.2, 1.3, 2.0rc1, 2.0, 2.1, 3.0.dev1
        assert (len(page.files), page.skipped) == (7 * 3, len(whole_files(many)) - 7 * 3)
        found = source.requirement_files(Requirement("bigproj>=1.1"), platform=LINUX, python="3.11")
        assert found.problem is None
        # 1.2's manylinux_2_28 wheel is yanked, 1.3's needs Python 3.12: 2014's wheel wins for both;
        # 2.0rc1 and 3.0.dev1 are prereleases, left out when final releases are allowed.
        assert found.allowed == ("1.1", "1.2", "1.3", "2.0", "2.1")
        assert [release.wheel for release in found.releases] == [
            "bigproj-1.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
            "bigproj-2.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        ]
        assert all(release.files == ("bigproj/lib/libbig.so",) for release in found.releases)

        # Nothing allowed: the message still names the newest releases of the whole page.
        none = source.requirement_files(Requirement("bigproj>=99"), platform=LINUX, python="3.11")
        assert none.problem is not None
        assert "(newest on the index: 2.0, 2.1, 3.0.dev1)" in none.problem
        assert none.problem.startswith("the index has no release of bigproj that it allows"), none.problem
        # Releases it allows, none with a wheel for this target: said so, not that none exists.
        other = source.requirement_files(
            Requirement("bigproj==1.1"), platform=Platform("linux", "riscv64"), python="3.11"
        )
        assert other.problem is not None
        assert other.problem.startswith(
            "no release of bigproj that it allows has a wheel for manylinux_riscv64"
        ), other.problem
