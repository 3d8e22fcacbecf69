"""`check` on a torch-style extension: its libraries come from a non-NVIDIA requirement on a real index.

A fake ``torchlike`` distribution ships ``torchlike/lib/libc10x.so`` (gcc-built); an extension wheel
needs ``libc10x.so`` through RPATH ``$ORIGIN/../torchlike/lib`` and requires ``torchlike``. The index
is a real PEP 691/503 server on 127.0.0.1; torchlike's wheels are listed through HTTP Range requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import Resolution, Severity
from slimwheel.catalog.model import Catalog
from slimwheel.check import CheckKind, CheckReport, Lookup, Pin, check_wheel
from slimwheel.cli import main
from slimwheel.dist_files import ReleaseFiles, StaticDistFiles
from slimwheel.elf import read_elf
from slimwheel.errors import UsageError
from slimwheel.index import Cache, IndexSettings
from slimwheel.index.dist_files import IndexDistFiles, wheel_rank
from slimwheel.platforms import Platform
from slimwheel.repair.pipeline import RepairRefusedError, repair_wheel
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

StartServer = Callable[..., IndexServer]
TAG = "cp311-cp311-manylinux_2_17_x86_64"
LINUX = Platform("linux", "x86_64")
C10_C = "int c10_answer(void) { return 42; }\n"
EXT_C = """\
extern int c10_answer(void);
int ext_call(void) { return c10_answer(); }
void *PyInit__ext(void) { return 0; }
"""
RIGHT = "$ORIGIN/../torchlike/lib"


class Built:
    """The gcc-built files, once per module."""

    def __init__(self, root: Path) -> None:
        self.c10 = compile_shared(root / "c10/libc10x.so", {"c10.c": C10_C}, soname="libc10x.so")
        self.root = root

    def extension(self, rpath: str) -> bytes:
        """``_ext.so`` needing libc10x.so, with DT_RPATH ``rpath``."""
        folder = self.root / f"ext-{abs(hash(rpath))}"
        return compile_shared(folder / "_ext.so", {"ext.c": EXT_C}, link=[self.c10], rpath=rpath).read_bytes()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("torchlike-build"))


@pytest.fixture
def dists(built: Built, tmp_path: Path) -> Path:
    """torchlike 1.0 and 2.0 ship torchlike/lib/libc10x.so; 3.0 moved it to torchlike/lib64; 2.5 has
    only a cp312 wheel, so a cp311 extension never gets it."""
    directory = tmp_path / "dists"
    directory.mkdir()
    library = built.c10.read_bytes()
    for version, folder, tag in (
        ("1.0", "lib", TAG),
        ("2.0", "lib", TAG),
        ("2.5", "lib", "cp312-cp312-manylinux_2_17_x86_64"),
        ("3.0", "lib64", TAG),
    ):
        files = {"torchlike/__init__.py": b"", f"torchlike/{folder}/libc10x.so": library}
        make_wheel(directory, "torchlike", version, files, tag=tag)
    make_wheel(directory, "torchlike", "2.0", {"torchlike/__init__.py": b""})  # the pure one loses to cp311
    return directory


@pytest.fixture
def server(dists: Path, index_server: StartServer) -> IndexServer:
    return index_server(dists)


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")


def _extension(directory: Path, built: Built, *, rpath: str = RIGHT, requires: Iterable[str] = ()) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return make_wheel(
        directory, "ext", "1.0", {"ext/_ext.so": built.extension(rpath)}, tag=TAG, requires=requires
    )


def _check(wheel: Path, catalog: Catalog, source: Any, **options: Any) -> CheckReport:
    with Wheel.open(wheel) as opened:
        return check_wheel(opened, catalog, dist_files=source, **options)


def _lookups(report: CheckReport) -> tuple[Lookup, ...]:
    (file,) = report.files
    (needed,) = [n for n in file.needed if n.soname == "libc10x.so"]
    return needed.lookups


def _kinds(report: CheckReport, severity: Severity) -> dict[CheckKind, list[str]]:
    found: dict[CheckKind, list[str]] = {}
    for finding in report.findings:
        if finding.severity is severity:
            found.setdefault(finding.kind, []).append(finding.message)
    return found


def test_a_library_of_a_required_distribution_resolves_through_the_rpath(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        report = _check(wheel, provider_catalog, source)
    assert not report.has_errors, report.findings
    (lookup,) = _lookups(report)
    assert lookup.resolution is Resolution.REQUIREMENT
    assert (lookup.path, lookup.distribution) == ("torchlike/lib/libc10x.so", "torchlike")
    assert lookup.found_by is not None
    assert lookup.found_by.entry == RIGHT
    assert lookup.versions == (Pin("torchlike", "1.0"), Pin("torchlike", "2.0"))
    (answer,) = report.requirement_files
    assert answer.allowed == ("1.0", "2.0")  # 2.5 has no cp311 wheel; 3.0 is excluded
    assert [(r.version, r.wheel, r.files) for r in answer.releases] == [
        (v, f"torchlike-{v}-{TAG}.whl", ("torchlike/lib/libc10x.so",)) for v in ("1.0", "2.0")
    ]
    # $ORIGIN/.. into another distribution's folder: the same warning as for an NVIDIA wheel.
    warnings = _kinds(report, Severity.WARNING)
    assert list(warnings) == [CheckKind.SPLIT_INSTALL]
    # The wheels were listed, not downloaded: a few small range requests each.
    assert server.bytes_count("/files/") < 64 * 1024


def test_without_the_requirement_or_with_a_wrong_rpath_it_fails(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    dropped = _extension(tmp_path / "dropped", built)
    wrong = _extension(
        tmp_path / "wrong", built, rpath="$ORIGIN/../torch/lib", requires=["torchlike>=1.0,<3"]
    )
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        report = _check(dropped, provider_catalog, source)
        assert report.has_errors
        ((lookup,),) = [_lookups(report)]
        assert lookup.resolution is Resolution.UNRESOLVED
        assert server.request_count() == 0  # nothing to look up: no requirement but NVIDIA's
        (message,) = _kinds(report, Severity.ERROR)[CheckKind.UNRESOLVED]
        assert "needs libc10x.so: not found" in message

        report = _check(wrong, provider_catalog, source)
    assert report.has_errors
    ((lookup,),) = [_lookups(report)]
    assert lookup.resolution is Resolution.UNRESOLVED
    (message,) = _kinds(report, Severity.ERROR)[CheckKind.UNRESOLVED]
    assert "searched torch/lib" in message
    assert "torchlike installs it in torchlike/lib" in message
    assert "add RPATH '$ORIGIN/../torchlike/lib'" in message
    # What holds for every file at this depth, whatever it searched: repair's refusal groups by it.
    (finding,) = [f for f in report.findings if f.severity is Severity.ERROR]
    assert finding.cause == message.split("(searched torch/lib; ", 1)[1].removesuffix(")")
    assert finding.cause.startswith("torchlike installs it in torchlike/lib: add RPATH")


def test_a_range_that_admits_a_release_that_moved_the_library_fails_for_that_release(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        report = _check(wheel, provider_catalog, source)
    (answer,) = report.requirement_files
    assert answer.allowed == ("1.0", "2.0", "3.0")
    assert [r.version for r in answer.releases] == ["1.0", "3.0"]  # the oldest and the newest
    found, missing = sorted(_lookups(report), key=lambda lookup: lookup.resolution.value)
    assert (found.resolution, found.versions) == (Resolution.REQUIREMENT, (Pin("torchlike", "1.0"),))
    assert (missing.resolution, missing.versions) == (Resolution.UNRESOLVED, (Pin("torchlike", "3.0"),))
    (message,) = _kinds(report, Severity.ERROR)[CheckKind.UNRESOLVED]
    assert "not found with torchlike 3.0" in message
    assert "add RPATH '$ORIGIN/../torchlike/lib64'" in message


def test_a_second_run_reads_everything_from_the_cache(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        first = _check(wheel, provider_catalog, source)
    assert server.request_count("/files/") > 0
    server.reset_counters()
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        second = _check(wheel, provider_catalog, source)
    assert server.request_count() == 0
    assert second.requirement_files == first.requirement_files
    assert not second.has_errors


def test_offline_never_passes_on_files_it_could_not_read(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache, offline=True) as source:
        report = _check(wheel, provider_catalog, source)
    assert server.request_count() == 0
    assert report.has_errors
    (warning,) = _kinds(report, Severity.WARNING)[CheckKind.REQUIREMENT_FILES_UNREAD]
    assert warning.startswith("could not read torchlike's files (offline")
    (error,) = _kinds(report, Severity.ERROR)[CheckKind.UNRESOLVED]
    assert "could not read the files of torchlike, which may ship it" in error
    (answer,) = report.requirement_files
    assert answer.problem is not None
    assert not answer.known

    # Once an online run has cached the page and the lists, offline answers in full, asking nothing.
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        _check(wheel, provider_catalog, source)
    server.reset_counters()
    with IndexDistFiles(
        IndexSettings(server.simple_url), cache=Cache(cache.root, page_ttl=0), offline=True
    ) as source:
        report = _check(wheel, provider_catalog, source)
    assert server.request_count() == 0
    assert not report.has_errors, report.findings


def test_an_unreachable_index_is_a_warning_and_the_library_stays_unresolved(
    built: Built, provider_catalog: Catalog, closed_port: int, cache: Cache, tmp_path: Path
) -> None:
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(f"http://127.0.0.1:{closed_port}/simple/"), cache=cache) as source:
        report = _check(wheel, provider_catalog, source)
    assert report.has_errors
    (warning,) = _kinds(report, Severity.WARNING)[CheckKind.REQUIREMENT_FILES_UNREAD]
    assert "cannot reach the index: connection refused" in warning
    assert [lookup.resolution for lookup in _lookups(report)] == [Resolution.UNRESOLVED]


def test_a_preloaded_requirement_counts_off_the_search_path_with_a_warning(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    """torchvision's _C.so has no RPATH into torch/lib: it relies on ``import torch`` loading it first."""
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN", requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        report = _check(wheel, provider_catalog, source, preloaded=["TorchLike"])
    assert not report.has_errors, report.findings
    (lookup,) = _lookups(report)
    assert (lookup.resolution, lookup.path, lookup.found_by) == (
        Resolution.REQUIREMENT,
        "torchlike/lib/libc10x.so",
        None,
    )
    (warning,) = _kinds(report, Severity.WARNING)[CheckKind.PRELOADED]
    assert "found only because torchlike's torchlike/lib/libc10x.so is loaded first" in warning
    assert report.preloaded == ("torchlike",)


def test_a_wheel_repaired_counting_on_a_preloaded_requirement_passes_check_as_it_is(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    """Repaired with ``--preloaded torchlike``, the wheel passes repair's check; its manifest records
    that, so check of the wheel written counts on it too, without the flag given again (a torch
    extension repaired in CI and checked in a later job once failed there)."""
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN", requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        outcome = repair_wheel(
            wheel, tmp_path / "out", provider_catalog, dist_files=source, preloaded=["TorchLike"]
        )
        assert outcome.output is not None
        assert outcome.plan.manifest.preloaded == ("TorchLike",)
        report = _check(outcome.output, provider_catalog, source)
        (warning,) = _kinds(report, Severity.WARNING)[CheckKind.PRELOADED]
        assert "found only because torchlike's torchlike/lib/libc10x.so is loaded first" in warning
        assert not report.has_errors, report.findings
        assert _check(outcome.output, provider_catalog, source, recorded=False).has_errors


def test_repair_reaches_a_library_a_requirement_installs_off_the_search_path(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    """What check's error says to add, repair adds: an RPATH entry into each folder where the
    releases the range admits install it (torchlike 1.0 and 2.0 in torchlike/lib, 3.0 in
    torchlike/lib64). The wheel written passes check, and, installed by pip beside the newest
    torchlike, its file loads and calls into the requirement's library."""
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN", requires=["torchlike>=1.0"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        assert _check(wheel, provider_catalog, source).has_errors
        outcome = repair_wheel(wheel, tmp_path / "out", provider_catalog, dist_files=source)
        assert outcome.output is not None
        assert not _check(outcome.output, provider_catalog, source).has_errors
    (edit,) = outcome.plan.edits
    assert edit.search_path == ("$ORIGIN", "$ORIGIN/../torchlike/lib", "$ORIGIN/../torchlike/lib64")
    assert "also reaches libc10x.so in torchlike's torchlike/lib or torchlike/lib64" in edit.reason
    assert [(r.soname, r.distribution) for r in outcome.plan.reached] == [("libc10x.so", "torchlike")]
    with Wheel.open(outcome.output) as written, written.seekable_member("ext/_ext.so") as stream:
        assert read_elf(stream, path="ext/_ext.so", symbols=False).rpath == edit.search_path

    # pip installs it for CPython 3.11 (its tag), whichever Python runs the tests: into one folder,
    # as into a site-packages, with the newest torchlike from the index (3.0, in torchlike/lib64).
    target = tmp_path / "site-packages"
    pip = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", "install"]
    cp311 = ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
    installed = subprocess.run(
        [
            *pip,
            *("--no-cache-dir", "--index-url", server.simple_url, "--target", str(target)),
            *(*cp311, "--platform", "manylinux_2_17_x86_64", "--only-binary=:all:"),
            str(outcome.output),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    assert (target / "torchlike/lib64/libc10x.so").is_file()
    call = "import ctypes, sys; print(ctypes.CDLL(sys.argv[1]).ext_call())"
    answer = subprocess.run(
        [sys.executable, "-c", call, str(target / "ext/_ext.so")], capture_output=True, text=True, check=False
    )
    assert answer.stdout.strip() == "42", answer.stderr


def test_repair_leaves_the_search_path_alone_for_a_requirement_counted_as_preloaded_or_unread(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    """``--preloaded`` says the package's import loads it first: the file is left as it is. Without
    the requirements' files (offline), nothing tells where they are: refused, naming the library."""
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN", requires=["torchlike>=1.0,<3"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        outcome = repair_wheel(
            wheel, tmp_path / "out", provider_catalog, dist_files=source, preloaded=["torchlike"]
        )
    assert outcome.plan.edits == ()
    assert outcome.plan.reached == ()
    with pytest.raises(RepairRefusedError, match=r"needs libc10x\.so: not found"):
        repair_wheel(wheel, tmp_path / "offline", provider_catalog, dist_files=None)
    assert not (tmp_path / "offline").exists() or not any((tmp_path / "offline").iterdir())


def test_a_preloaded_distribution_no_requires_dist_names_is_looked_up_too(
    built: Built, provider_catalog: Catalog, server: IndexServer, cache: Cache, tmp_path: Path
) -> None:
    """ucxx-cu12 requires libucxx-cu12, which requires libucx-cu12 and loads it: ucxx's files need
    libucp.so.0 with no RPATH to it. Named by --preloaded, a distribution that comes in through a
    requirement's requirements is read from the index and counts as loaded first: its newest release,
    or those of the range given (its oldest may predate the library: librmm-cu12 24.12 had no
    librmm.so). Not named, it is not read, and the library is not found."""
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN", requires=["otherdep>=1"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        newest = _check(wheel, provider_catalog, source, preloaded=["TorchLike"])
        ranged = _check(wheel, provider_catalog, source, preloaded=["torchlike>=1,<3"])
        without = _check(wheel, provider_catalog, source)
    for report, paths in (
        (newest, {"torchlike/lib64/libc10x.so"}),  # 3.0 moved it to lib64
        (ranged, {"torchlike/lib/libc10x.so"}),  # 1.0 and 2.0
    ):
        assert not report.has_errors, report.findings
        assert {(lookup.resolution, lookup.path, lookup.found_by) for lookup in _lookups(report)} == {
            (Resolution.REQUIREMENT, path, None) for path in paths
        }
        assert report.preloaded == ("torchlike",)
        (warning, *_) = _kinds(report, Severity.WARNING)[CheckKind.PRELOADED]
        assert "is loaded first" in warning
    assert [answer.requirement for answer in newest.requirement_files] == ["otherdep>=1", "TorchLike"]
    assert [release.version for release in newest.requirement_files[1].releases] == ["3.0"]
    assert [release.version for release in ranged.requirement_files[1].releases] == ["1.0", "2.0"]
    assert [lookup.resolution for lookup in _lookups(without)] == [Resolution.UNRESOLVED]
    assert [answer.requirement for answer in without.requirement_files] == ["otherdep>=1"]


def test_a_preloaded_value_that_is_no_requirement_is_a_usage_error(
    built: Built, provider_catalog: Catalog, tmp_path: Path
) -> None:
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN", requires=["otherdep>=1"])
    with pytest.raises(UsageError, match="--preloaded 'torch like' is neither"):
        _check(wheel, provider_catalog, None, preloaded=["torch like"])


def test_an_injected_source_and_no_source(built: Built, provider_catalog: Catalog, tmp_path: Path) -> None:
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0"])
    source = StaticDistFiles(
        {"TorchLike": [ReleaseFiles("torchlike", "1.5", "t.whl", ("torchlike/lib/libc10x.so",))]}
    )
    report = _check(wheel, provider_catalog, source)
    assert not report.has_errors, report.findings
    assert [lookup.versions for lookup in _lookups(report)] == [(Pin("torchlike", "1.5"),)]
    # Without a source, as before: nothing but the catalog, and the library is not found.
    with Wheel.open(wheel) as opened:
        report = check_wheel(opened, provider_catalog)
    assert report.requirement_files == ()
    assert [lookup.resolution for lookup in _lookups(report)] == [Resolution.UNRESOLVED]


@pytest.mark.parametrize(
    ("filename", "python", "fits"),
    [
        ("t-1-cp311-cp311-manylinux_2_17_x86_64.whl", "3.11", True),
        ("t-1-cp312-cp312-manylinux_2_17_x86_64.whl", "3.11", False),
        ("t-1-cp39-abi3-manylinux_2_28_x86_64.whl", "3.11", True),
        ("t-1-cp312-abi3-manylinux_2_28_x86_64.whl", "3.11", False),
        ("t-1-py3-none-any.whl", "3.11", True),
        ("t-1-cp311-cp311-manylinux_2_17_aarch64.whl", "3.11", False),
        ("t-1-cp311-cp311-musllinux_1_2_x86_64.whl", "3.11", False),
        ("t-1-cp311-cp311-win_amd64.whl", None, False),
        ("t-1-cp313-cp313-linux_x86_64.whl", None, True),
    ],
)
def test_which_wheels_fit_the_target(filename: str, python: str | None, fits: bool) -> None:
    assert (wheel_rank(filename, LINUX, python) is not None) == fits


def test_cli_resolves_through_the_index_and_offline_fails(
    built: Built,
    provider_catalog_file: Path,
    server: IndexServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SLIMWHEEL_CACHE_DIR", str(tmp_path / "cli-cache"))
    wheel = _extension(tmp_path / "w", built, requires=["torchlike>=1.0,<3"])
    common = [str(wheel), "--catalog", str(provider_catalog_file), "--isolated"]
    assert main(["check", *common, "--offline", "--index-url", server.simple_url]) == 1
    assert "could not read torchlike's files (offline" in capsys.readouterr().out
    assert main(["check", *common, "--index-url", server.simple_url, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (checked,) = document["wheels"]
    (lookup,) = checked["files"][0]["needed"][0]["lookups"]
    assert (lookup["resolution"], lookup["distribution"]) == ("requirement", "torchlike")
    assert checked["requirement_files"][0]["releases"][0]["files"] == ["torchlike/lib/libc10x.so"]
    assert main(["check", *common, "--index-url", server.simple_url]) == 0
    out = capsys.readouterr().out
    assert "torchlike/lib/libc10x.so (requirement: torchlike 1.0, 2.0)" in out
    assert "passes" in out


def test_a_library_a_requirement_brings_in_turn_is_found_and_named(
    built: Built,
    provider_catalog: Catalog,
    dists: Path,
    server: IndexServer,
    cache: Cache,
    tmp_path: Path,
) -> None:
    """cudf-cu12 needs librmm.so and librapids_logger.so, which only its requirement libcudf-cu12's
    own requirements install: read level by level from the index's METADATA, they take part. Here
    ``shim`` requires ``torchlike``, which ships libc10x.so: found through the RPATH to torchlike/lib;
    with an RPATH that misses it, the error names torchlike and the flag that counts on its import."""
    make_wheel(dists, "shim", "1.0", {"shim/__init__.py": b""}, requires=["torchlike>=1.0,<3"])
    wheel = _extension(tmp_path / "w", built, requires=["shim"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        report = _check(wheel, provider_catalog, source)
    assert not report.has_errors, report.findings
    (lookup,) = _lookups(report)
    assert (lookup.resolution, lookup.distribution) == (Resolution.REQUIREMENT, "torchlike")
    assert [answer.requirement for answer in report.requirement_files] == [
        "shim",
        "torchlike<3,>=1.0 (required by shim)",
    ]
    assert [release.version for release in report.requirement_files[1].releases] == ["2.0"]  # the newest

    wrong = _extension(tmp_path / "wrong", built, rpath="$ORIGIN", requires=["shim"])
    with IndexDistFiles(IndexSettings(server.simple_url), cache=cache) as source:
        report = _check(wrong, provider_catalog, source)
    (error,) = _kinds(report, Severity.ERROR)[CheckKind.UNRESOLVED]
    assert "torchlike installs it in torchlike/lib: add RPATH '$ORIGIN/../torchlike/lib'" in error
    assert "(--preloaded torchlike)" in error
    # Offline, with nothing cached for the requirement's METADATA: not found, as before.
    with IndexDistFiles(
        IndexSettings(server.simple_url), cache=Cache(tmp_path / "empty"), offline=True
    ) as source:
        report = _check(wheel, provider_catalog, source)
    assert [lookup.resolution for lookup in _lookups(report)] == [Resolution.UNRESOLVED]


def test_requirements_in_turn_are_not_read_when_nothing_is_missing(
    built: Built, provider_catalog: Catalog, tmp_path: Path
) -> None:
    """Each level costs index requests: none are made once every DT_NEEDED is found."""
    asked: list[str] = []

    class Counting(StaticDistFiles):
        def with_requires(self, release: ReleaseFiles) -> ReleaseFiles:
            asked.append(release.distribution)
            return release

    torchlike = ReleaseFiles("torchlike", "1.5", "t.whl", ("torchlike/lib/libc10x.so",), requires=("deeper",))
    source = Counting({"TorchLike": [torchlike]})
    report = _check(_extension(tmp_path / "w", built, requires=["torchlike>=1.0"]), provider_catalog, source)
    assert not report.has_errors, report.findings
    assert asked == []
    shim = ReleaseFiles("shim", "1.0", "s.whl", (), requires=("torchlike>=1.0", "other; extra == 'x'"))
    source = Counting({"shim": [shim], "TorchLike": [torchlike]})
    report = _check(_extension(tmp_path / "v", built, requires=["shim"]), provider_catalog, source)
    assert not report.has_errors, report.findings
    assert asked == ["shim"]  # torchlike shipped it: its own requirements are not read


class _Counting(StaticDistFiles):
    """Files from ``releases``, recording the names of the requirements looked up, in order."""

    def __init__(self, releases: Any) -> None:
        super().__init__(releases)
        self.asked: list[str] = []

    def requirement_files(self, requirement: Any, **target: Any) -> Any:
        self.asked.append(requirement.name)
        return super().requirement_files(requirement, **target)


def test_of_many_requirements_in_turn_those_named_like_a_missing_soname_are_read_first(
    built: Built, provider_catalog: Catalog, tmp_path: Path
) -> None:
    """Requirements in turn are read a few per check (each costs index requests). cuopt-cu12's 12
    requirements bring 40 more; libcuopt_client.so comes from libcuopt-client, which came after the
    8th and was never read. Here shim requires ten unrelated distributions before ``libc10x-cu12``,
    which ships libc10x.so: it is read first, and the others not at all."""

    fillers = [f"filler-{n}" for n in range(10)]
    shim = ReleaseFiles("shim", "1.0", "s.whl", (), requires=(*fillers, "libc10x-cu12>=1"))
    shipping = ReleaseFiles("libc10x-cu12", "1.0", "l.whl", ("libc10x/lib/libc10x.so",))
    releases = {"shim": [shim], "libc10x-cu12": [shipping]}
    releases |= {name: [ReleaseFiles(name, "1.0", f"{name}.whl", ())] for name in fillers}
    source = _Counting(releases)
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN/../libc10x/lib", requires=["shim"])
    report = _check(wheel, provider_catalog, source)
    assert not report.has_errors, report.findings
    assert source.asked == ["shim", "libc10x-cu12"]
    assert [answer.requirement for answer in report.requirement_files] == [
        "shim",
        "libc10x-cu12>=1 (required by shim)",
    ]


def test_a_library_three_levels_down_is_reached_past_unrelated_requirements(
    built: Built, provider_catalog: Catalog, tmp_path: Path
) -> None:
    """raft-dask-cu12 needs libucp.so.0, which libucx-cu12 ships, three levels under it
    (distributed-ucxx-cu12 -> ucxx-cu12 -> libucxx-cu12 -> libucx-cu12); dask-cuda's click, numpy
    and pandas took the 8 look-ups of a level-by-level walk first. Here shim requires ten unrelated
    distributions and ``comms-cu12``, under which ``transport-cu12`` ships libc10x.so: those named for
    a CUDA major or as a library are read first, whatever their level, and the fillers not at all."""

    fillers = [f"filler-{n}" for n in range(10)]
    chain = {
        "shim": (*fillers, "comms-cu12>=1"),
        "comms-cu12": ("filler-extra", "libcomms-cu12>=1"),
        "libcomms-cu12": ("transport-cu12>=1",),
    }
    releases = {
        name: [ReleaseFiles(name, "1.0", f"{name}.whl", (), requires=req)] for name, req in chain.items()
    }
    releases["transport-cu12"] = [
        ReleaseFiles("transport-cu12", "1.0", "t.whl", ("transport/lib/libc10x.so",))
    ]
    releases |= {name: [ReleaseFiles(name, "1.0", f"{name}.whl", ())] for name in (*fillers, "filler-extra")}
    source = _Counting(releases)
    wheel = _extension(tmp_path / "w", built, rpath="$ORIGIN/../transport/lib", requires=["shim"])
    report = _check(wheel, provider_catalog, source)
    assert not report.has_errors, report.findings
    assert source.asked == ["shim", "comms-cu12", "libcomms-cu12", "transport-cu12"]
    assert report.requirement_files[-1].requirement == "transport-cu12>=1 (required by libcomms-cu12)"
