"""`check` on a real published torch extension: torchvision 0.20.1 (cp311, manylinux x86_64), whose
``_C.so`` needs ``libc10.so`` and ``libtorch_cpu.so`` from its ``torch==2.5.1`` requirement.

torch's file list comes from its real 900 MB wheel on the index, read lazily (the zip's central
directory through HTTP Range requests, about 3 MB), into a fresh cache. The torchvision wheel itself
(7 MB) is downloaded once into slimwheel's cache.

torchvision's ``_C.so`` has no RPATH into ``torch/lib`` (it counts on ``import torch`` having loaded
torch's libraries): as published, those needs stay unresolved, naming torch/lib; with the RPATH a
repaired wheel would carry (``$ORIGIN/../torch/lib``) they resolve to torch 2.5.1; with torch counted
as preloaded they resolve with a warning.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from slimwheel.analysis import Resolution, Severity
from slimwheel.catalog.store import load_catalog
from slimwheel.check import CheckKind, CheckReport, Lookup, Pin, check_wheel
from slimwheel.index import Cache, IndexClient, resolve_index_settings
from slimwheel.index.dist_files import IndexDistFiles
from slimwheel.wheel import Wheel
from tests.support.elfbuild import patchelf
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.network

WHEEL = "torchvision-0.20.1-cp311-cp311-manylinux1_x86_64.whl"
TAG = "cp311-cp311-manylinux1_x86_64"
EXTENSION = "torchvision/_C.so"
FROM_TORCH = ("libc10.so", "libtorch_cpu.so")


@pytest.fixture(scope="module")
def torchvision() -> Path:
    with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
        (file,) = [f for f in client.project("torchvision").files if f.filename == WHEEL]
        return client.download(file)


def _lookups(report: CheckReport, soname: str) -> tuple[Lookup, ...]:
    (file,) = [f for f in report.files if f.installed_path == EXTENSION]
    (needed,) = [n for n in file.needed if n.soname == soname]
    return needed.lookups


def _check(wheel: Path, source: IndexDistFiles, *, preloaded: tuple[str, ...] = ()) -> CheckReport:
    with Wheel.open(wheel) as opened:
        return check_wheel(opened, load_catalog(None), dist_files=source, preloaded=preloaded)


def test_torch_libraries_resolve_from_torchs_real_wheel_listing(torchvision: Path, tmp_path: Path) -> None:
    # The extension as a repaired wheel would have it: RPATH $ORIGIN/../torch/lib, torch required.
    extension = tmp_path / "_C.so"
    with (
        zipfile.ZipFile(torchvision) as archive,
        archive.open(EXTENSION) as member,
        extension.open("wb") as out,
    ):
        shutil.copyfileobj(member, out)
    patchelf(extension, "--force-rpath", "--set-rpath", "$ORIGIN/../torch/lib")
    (tmp_path / "w").mkdir()
    wheel = make_wheel(
        tmp_path / "w",
        "torchvision",
        "0.20.1",
        {EXTENSION: extension.read_bytes()},
        tag=TAG,
        requires=["torch==2.5.1"],
    )
    settings = resolve_index_settings()
    with IndexDistFiles(settings, cache=Cache(tmp_path / "cache")) as source:
        report = _check(wheel, source)
        stats = source.client.stats.snapshot()
    (answer,) = report.requirement_files
    assert answer.problem is None
    ((release,),) = [answer.releases]
    assert (release.version, release.wheel) == ("2.5.1", f"torch-2.5.1-{TAG}.whl")
    assert {"torch/lib/libc10.so", "torch/lib/libtorch_cpu.so"} <= set(release.files)
    for soname in FROM_TORCH:
        (lookup,) = _lookups(report, soname)
        assert lookup.resolution is Resolution.REQUIREMENT
        assert (lookup.path, lookup.distribution) == (f"torch/lib/{soname}", "torch")
        assert lookup.versions == (Pin("torch", "2.5.1"),)
    unresolved = {f.soname for f in report.findings if f.kind is CheckKind.UNRESOLVED}
    assert not unresolved & set(FROM_TORCH)
    # The project page and the wheel's tail and central directory: a few MB of a 900 MB wheel.
    assert stats.requests <= 4
    assert stats.bytes_received < 16_000_000


def test_as_published_the_needs_stay_unresolved_unless_torch_is_preloaded(
    torchvision: Path, tmp_path: Path
) -> None:
    with IndexDistFiles(resolve_index_settings(), cache=Cache(tmp_path / "cache")) as source:
        report = _check(torchvision, source)
        preloaded = _check(torchvision, source, preloaded=("torch",))
    for soname in FROM_TORCH:
        assert [lookup.resolution for lookup in _lookups(report, soname)] == [Resolution.UNRESOLVED]
        (message,) = [
            f.message
            for f in report.findings
            if f.kind is CheckKind.UNRESOLVED and f.soname == soname and f.path == EXTENSION
        ]
        assert "torch installs it in torch/lib" in message
        (lookup,) = _lookups(preloaded, soname)
        assert (lookup.resolution, lookup.path, lookup.found_by) == (
            Resolution.REQUIREMENT,
            f"torch/lib/{soname}",
            None,
        )
    assert any(
        f.kind is CheckKind.PRELOADED and f.severity is Severity.WARNING and f.soname == "libc10.so"
        for f in preloaded.findings
    )
