"""`check` and `verify` on a real published wheel whose import loads its NVIDIA libraries itself.

faiss-gpu-cu12 1.14.1.post1's ``faiss/_swigfaiss.so`` and ``faiss_gpu_cu12.libs/libfaiss-*.so`` need
cudart, cuBLAS and cuBLASLt, and no RPATH of theirs reaches NVIDIA's wheels: its ``faiss/loader.py``
opens each library ``faiss/_preload_library.json`` names, from the distribution that installs it,
before it imports the extension module, and glibc reuses what is loaded. check called that "not
found" (4 errors) of a wheel that imports. verify installs it as published and proves the import
works with each library mapped from its NVIDIA wheel; with the JSON file taken out, check fails again.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import Severity
from slimwheel.catalog.store import load_catalog
from slimwheel.check import CheckKind, CheckReport, check_wheel
from slimwheel.cli import main
from slimwheel.wheel import Wheel
from tests.support.corpus import CORPUS, fetch

pytestmark = pytest.mark.network

(FAISS,) = [entry for entry in CORPUS if entry.project == "faiss-gpu-cu12"]
NAMED_IN = "faiss/_preload_library.json"
PROVIDERS = {
    "libcudart.so.12": "nvidia-cuda-runtime-cu12",
    "libcublas.so.12": "nvidia-cublas-cu12",
    "libcublasLt.so.12": "nvidia-cublas-cu12",
}
SONAMES = set(PROVIDERS)


def _check(wheel: Path) -> CheckReport:
    with Wheel.open(wheel) as opened:
        return check_wheel(opened, load_catalog(None))


def test_as_published_its_libraries_are_found_as_loaded_by_its_code() -> None:
    report = _check(fetch(FAISS))
    assert not report.has_errors, [f.message for f in report.findings if f.severity is Severity.ERROR]
    warnings = [f for f in report.findings if f.kind is CheckKind.LOADED_BY_CODE]
    assert {f.soname for f in warnings} == SONAMES
    assert {f.path for f in warnings} == {"faiss/_swigfaiss.so", "faiss_gpu_cu12.libs/libfaiss-6b43fd57.so"}
    assert all(f"as {NAMED_IN}, which names it" in f.message for f in warnings)


def test_without_the_file_that_names_them_they_are_not_found(tmp_path: Path) -> None:
    source = fetch(FAISS)
    stripped = tmp_path / source.name
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(stripped, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename == NAMED_IN:
                continue
            data = old.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(keepends=True)
                data = "".join(line for line in lines if not line.startswith(NAMED_IN + ",")).encode()
            new.writestr(info, data)
    report = _check(stripped)
    unresolved = {f.soname for f in report.findings if f.kind is CheckKind.UNRESOLVED}
    assert unresolved == SONAMES
    assert not [f for f in report.findings if f.kind is CheckKind.LOADED_BY_CODE]
    assert hashlib.sha256(source.read_bytes()).hexdigest() == FAISS.sha256  # the input is untouched


def test_as_published_it_imports_with_each_library_from_its_nvidia_wheel(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["verify", str(fetch(FAISS)), "--import", "faiss", "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0, json.dumps(document.get("problems"), indent=1)
    mapped = {library["soname"]: library for library in document["libraries"]}
    assert set(mapped) >= SONAMES, mapped
    for soname, distribution in PROVIDERS.items():
        assert mapped[soname]["distribution"] == distribution, mapped[soname]
        assert mapped[soname]["ok"], mapped[soname]
