"""`check` on a real published RAPIDS wheel: pylibraft-cu13 26.10.0 (abi3, manylinux x86_64, 1 MB),
whose extension modules need cuBLAS, cuRAND, cuSOLVER, cuSPARSE and nvJitLink with no RPATH to them
and no requirement on them: every install gets them through its requirement ``libraft-cu13==26.10.*``,
which requires ``cuda-toolkit[cublas,curand,cusolver,cusparse]==13.*``, and ``import libraft`` loads
them with ``libraft.so`` before pylibraft's extension modules load.

check once said "no Requires-Dist brings it in" of each, which is false of every install; now it reads
libraft-cu13's requirements on the index, says where the libraries land and which RPATH (or which
``--preloaded``) reaches them, and with ``--preloaded libraft-cu13`` (and the two other library
packages pylibraft imports first) the wheel passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.analysis import Severity
from slimwheel.catalog.store import load_catalog
from slimwheel.check import CheckKind, CheckReport, check_wheel
from slimwheel.index import Cache, IndexClient, resolve_index_settings
from slimwheel.index.dist_files import IndexDistFiles
from slimwheel.wheel import Wheel

pytestmark = pytest.mark.network

WHEEL = "pylibraft_cu13-26.10.0-cp311-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
NVIDIA = ("libcublas.so.13", "libcurand.so.10", "libcusolver.so.12", "libcusparse.so.12")
IMPORTED_FIRST = ("libraft-cu13", "librmm-cu13", "rapids-logger")


@pytest.fixture(scope="module")
def pylibraft() -> Path:
    with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
        (file,) = [f for f in client.project("pylibraft-cu13").files if f.filename == WHEEL]
        return client.download(file)


def _check(wheel: Path, *, preloaded: tuple[str, ...] = ()) -> CheckReport:
    with (
        IndexDistFiles(resolve_index_settings(), cache=Cache.default()) as source,
        Wheel.open(wheel) as opened,
    ):
        return check_wheel(opened, load_catalog(None), dist_files=source, preloaded=preloaded)


def test_what_libraft_brings_is_where_it_lands_not_a_missing_requirement(pylibraft: Path) -> None:
    report = _check(pylibraft)
    through = {provider.distribution: provider.through for provider in report.providers}
    assert through.get("nvidia-cublas") == ("libraft-cu13==26.10.*",), through
    findings = [f for f in report.findings if f.soname in NVIDIA]
    assert findings, report.findings
    assert {f.kind for f in findings} == {CheckKind.UNRESOLVED}, [f.message for f in findings]
    lanczos = next(
        f for f in findings if f.path == "pylibraft/sparse/linalg/lanczos.abi3.so" and f.soname == NVIDIA[0]
    )
    assert "nvidia-cublas installs it in nvidia/cu13/lib: add RPATH '$ORIGIN/../../../nvidia/cu13/lib'" in (
        lanczos.message
    ), lanczos.message
    assert "count on that (--preloaded libraft-cu13)" in lanczos.message, lanczos.message


def test_with_its_library_packages_imported_first_it_passes(pylibraft: Path) -> None:
    report = _check(pylibraft, preloaded=IMPORTED_FIRST)
    assert report.errors == 0, [f.message for f in report.findings if f.severity is Severity.ERROR]
    preloaded = [f for f in report.findings if f.soname == NVIDIA[0]]
    assert preloaded, report.findings
    assert {f.kind for f in preloaded} == {CheckKind.PRELOADED}, [f.message for f in preloaded]
    assert all("which libraft-cu13 brings in and loads" in f.message for f in preloaded), preloaded
