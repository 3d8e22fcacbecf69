"""show in words a user knows, and in tables that keep one fact per row: NVIDIA's libraries that the
catalog does not list are called NVIDIA's (TensorRT, cuTENSOR...), and the ELF table prints each needed
library on its own row, in a pipe and on an 80-column terminal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from slimwheel.analysis import FindingKind, WheelReport, analyse_wheel
from slimwheel.analysis.libraries import nvidia_product_of
from slimwheel.catalog.model import Catalog
from slimwheel.wheel import Wheel
from tests.integration.test_output import BOX, _run_on_terminal, _run_piped
from tests.support.elfbuild import patchelf
from tests.support.fixtures_elf import ElfZoo
from tests.support.wheels import make_wheel

TAG = "cp311-cp311-manylinux_2_17_x86_64"
LONG = "pkg/very_long_subpackage_name/another_level/_extension_module_with_a_rather_long_name.so"
NEEDS = (
    "libnvinfer.so.10",
    "libcutensor.so.2",
    "libcudss.so.9",
    "libfrobnicate.so.3",
    "libcublas.so.13",
    "libm.so.6",
)


@pytest.fixture
def needy_wheel(elf_zoo: ElfZoo, tmp_path: Path) -> Path:
    """An extension that needs TensorRT, cuTENSOR, a cuDSS soname no wheel ships, a library nobody
    knows, and cuBLAS (which the provider catalog lists), besides its own libcudss.so.1."""
    work = tmp_path / "build"
    work.mkdir()
    extension = work / "_ext.so"
    shutil.copyfile(elf_zoo.ext_dynamic, extension)
    patchelf(extension, "--force-rpath", "--set-rpath", "$ORIGIN/../../../nvidia/cu13/lib")
    for soname in NEEDS:
        patchelf(extension, "--add-needed", soname)
    return make_wheel(tmp_path, "pkg", "1.0", {LONG: extension.read_bytes()}, tag=TAG)


def _analyse(wheel: Path, catalog: Catalog) -> WheelReport:
    with Wheel.open(wheel) as opened:
        return analyse_wheel(opened, catalog)


def _unresolved(report: WheelReport) -> dict[str, str]:
    found = {}
    for finding in report.findings:
        if finding.kind is FindingKind.UNRESOLVED_NEEDED:
            soname = finding.message.split(":", 1)[0].removeprefix("needs ")
            found[soname] = finding.message
    return found


def test_nvidias_libraries_the_catalog_does_not_list_are_named_as_nvidias(
    needy_wheel: Path, provider_catalog: Catalog
) -> None:
    messages = _unresolved(_analyse(needy_wheel, provider_catalog))
    assert set(messages) == {"libnvinfer.so.10", "libcutensor.so.2", "libcudss.so.9", "libfrobnicate.so.3"}
    tensorrt = messages["libnvinfer.so.10"]
    assert "NVIDIA's TensorRT, whose wheels the catalog does not list" in tensorrt
    assert "only as sdists" in tensorrt
    assert "tensorrt-cu<major>-libs to Requires-Dist" in tensorrt
    assert "not an NVIDIA wheel's" not in tensorrt
    cutensor = messages["libcutensor.so.2"]
    assert "NVIDIA's cuTENSOR, whose wheels the catalog does not list" in cutensor
    assert "cutensor-cu<major>" in cutensor
    assert "slimwheel catalog update" in cutensor
    # The catalog knows cuDSS, only not this soname.
    assert "NVIDIA's cuDSS, but no wheel the catalog lists ships this soname" in messages["libcudss.so.9"]
    # A library nobody knows keeps the plain words.
    assert "not an NVIDIA wheel's, not a system library" in messages["libfrobnicate.so.3"]


def test_product_names_by_soname() -> None:
    named = {
        soname: product.name if (product := nvidia_product_of(soname)) else None
        for soname in (
            "libnvinfer.so.10",
            "libnvinfer_plugin.so.10",
            "libnvonnxparser.so.10",
            "libtensorrt_rtx.so.1",
            "libtensorrt_onnxparser_rtx.so.1",
            "libnvinfer_lean.so.11",
            "libnvinfer_dispatch.so.11",
            "libnvinfer_vc_plugin.so.11",
            "libcutensor.so.2",
            "libcutensorMg.so.2",
            "libcutensornet.so.2",
            "libnvshmem_host.so.3",
            "libcusparseLt.so.0",
            "libnvcomp.so.4",
            "libcublasLt.so.13",
            "libtorch_cuda.so",
            "cudnn64_9.dll",
        )
    }
    assert named == {
        "libnvinfer.so.10": "TensorRT",
        "libtensorrt_rtx.so.1": "TensorRT-RTX",
        "libtensorrt_onnxparser_rtx.so.1": "TensorRT-RTX",
        "libnvinfer_lean.so.11": "TensorRT lean runtime",
        "libnvinfer_dispatch.so.11": "TensorRT dispatch runtime",
        "libnvinfer_vc_plugin.so.11": "TensorRT",
        "libnvinfer_plugin.so.10": "TensorRT",
        "libnvonnxparser.so.10": "TensorRT",
        "libcutensor.so.2": "cuTENSOR",
        "libcutensorMg.so.2": "cuTENSOR",
        "libcutensornet.so.2": "cuQuantum",
        "libnvshmem_host.so.3": "NVSHMEM",
        "libcusparseLt.so.0": "cuSPARSELt",
        "libnvcomp.so.4": "nvCOMP",
        "libcublasLt.so.13": "CUDA toolkit",
        "libtorch_cuda.so": None,
        "cudnn64_9.dll": None,
    }


# -- the ELF table: one row per fact ----------------------------------------------------------------


def test_show_in_a_pipe_prints_each_needed_library_on_its_own_line(
    needy_wheel: Path, provider_catalog_file: Path
) -> None:
    result = _run_piped(["show", str(needy_wheel), "--catalog", str(provider_catalog_file)])
    assert result.returncode in (0, 1), result.stderr
    assert not BOX.search(result.stdout), result.stdout
    for soname, answer in (
        ("libcublas.so.13", "nvidia-wheel: nvidia-cublas"),
        ("libnvinfer.so.10", "unresolved"),
        ("libcudss.so.1", "nvidia-wheel: nvidia-cudss-cu13"),
    ):
        # The file, the soname and where it resolves stand on one line: grep finds the fact whole.
        (line,) = [
            line for line in result.stdout.splitlines() if soname in line.split() and LONG in line.split()
        ]
        assert line.index(LONG) < line.index(soname) < line.index(answer), line
    # The system libraries are one counted row, not one line each.
    assert "+ 1 system library " in result.stdout


def test_show_on_an_80_column_terminal_keeps_each_soname_beside_its_answer(
    needy_wheel: Path, provider_catalog_file: Path
) -> None:
    code, text = _run_on_terminal(["show", str(needy_wheel), "--catalog", str(provider_catalog_file)])
    assert code in (0, 1), text
    assert BOX.search(text), text
    for line in text.splitlines():
        assert len(line) <= 80, line
    table = text.split("ELF files", 1)[1].split("Findings", 1)[0]
    for soname, answer in (
        ("libcublas.so.13", "nvidia-wheel"),
        ("libnvinfer.so.10", "unresolved"),
        ("libcudss.so.1", "nvidia-wheel"),
        ("libfrobnicate.so.3", "unresolved"),
    ):
        # A soname is never broken, and the first line of its answer is on the soname's own row.
        (row,) = [line for line in table.splitlines() if soname in line]
        assert row.index(soname) < row.index(answer), row
