"""CMake links NVIDIA's pip wheels with no system CUDA toolkit (``include(slimwheel)``).

Every build here runs with the system toolkit hidden (see ``conftest.HIDE``). The example is built by
``pip wheel`` isolated (under strace, to show no toolkit path is even looked at) and not isolated;
the extensions are byte-identical; ``repair_wheel`` finishes it; pip installs it with its real
dependencies into a fresh venv, where a fresh process maps libcudss and libcudart from that venv's
``nvidia/cu13/lib`` (no GPU needed: ``cudssGetProperty`` and ``cudaRuntimeGetVersion`` run without one).
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from slimwheel.build.locate import cmake_dir
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from tests.build.conftest import EXAMPLE, SYSTEM_TOOLKITS, can_hide_toolkit, hidden, run
from tests.support.venvs import make_venv, run_probe, site_packages

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    pytest.mark.skipif(not can_hide_toolkit(), reason="hiding the system toolkit needs root and unshare"),
]

EXTENSION = "cudss_solver/_cudss_solver.abi3.so"
ONE_MB = 1_000_000


def _pip_wheel(
    out: Path, build_dir: Path, *options: str, python: Path | None = None, strace_log: Path | None = None
) -> Path:
    target = ["--python", str(python)] if python is not None else []
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        *target,
        "wheel",
        "--no-deps",
        "-w",
        str(out),
        f"--config-settings=build-dir={build_dir}",
        *options,
        str(EXAMPLE),
    ]
    process = run(hidden(argv, strace_log=strace_log))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    (wheel,) = out.glob("cudss_solver-*.whl")
    return wheel


def _extension(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(EXTENSION)


def _toolkit_lines(strace_log: Path) -> list[str]:
    text = strace_log.read_text(errors="replace")
    names = (*SYSTEM_TOOLKITS, "/usr/local/cuda")
    lines = [line for line in text.splitlines() if any(t in line for t in names)]
    # The backend finishes the wheel with repair, which runs auditwheel; auditwheel's lddtree stats
    # each folder /etc/ld.so.conf lists (this machine lists /usr/local/cuda-13.0/lib). That is a look
    # at the host's loader configuration after the build, not a use of the toolkit: a failed stat of
    # the folder by the auditwheel process is allowed, nothing else.
    auditwheel = {line.split()[0] for line in text.splitlines() if "execve(" in line and "auditwheel" in line}
    return [line for line in lines if not _failed_stat_by(line, auditwheel)]


def _failed_stat_by(line: str, pids: set[str]) -> bool:
    return line.split(maxsplit=1)[0] in pids and "stat" in line.split("(", maxsplit=1)[0] and "ENOENT" in line


def test_example_builds_isolated_and_not_installs_and_maps_from_the_venv(
    tmp_path: Path, slimwheel_wheelhouse: Path, build_python: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "strace.log"
    isolated = _pip_wheel(
        tmp_path / "iso", tmp_path / "iso-build", "--find-links", str(slimwheel_wheelhouse), strace_log=trace
    )
    # Not one file call of the build (pip, its isolated install, CMake, gcc, ld) names the toolkit:
    # it is not opened, not even looked for. (Hidden under an empty tmpfs, it could not be opened anyway.)
    assert _toolkit_lines(trace) == []
    assert "execve" in trace.read_text(errors="replace")
    plain = _pip_wheel(
        tmp_path / "plain", tmp_path / "plain-build", "--no-build-isolation", python=build_python
    )
    assert _extension(isolated) == _extension(plain)

    record = json.loads((tmp_path / "iso-build" / "slimwheel-linked.json").read_text())
    assert record["schema"] == "slimwheel.linked/1"
    assert record["cuda_major"] == 13
    linked = {entry["name"]: entry for entry in record["libraries"]}
    assert linked["cudss"]["soname"] == "libcudss.so.1"
    assert linked["cudss"]["distribution"] == "nvidia-cudss-cu13"
    assert linked["cudart"]["soname"] == "libcudart.so.13"
    assert record["targets"]["_cudss_solver"]["install_dir"] == "cudss_solver"

    facts = read_elf_file(tmp_path / "plain-build" / "_cudss_solver.abi3.so", symbols=False)
    assert {"libcudss.so.1", "libcudart.so.13"} <= set(facts.needed)
    assert tuple(facts.rpath) == ("$ORIGIN/../nvidia/cu13/lib",)
    assert tuple(facts.runpath) == ()

    # repair_wheel, as the example's build_with_cmake.py calls it, from the versions the build recorded.
    process = run(
        [
            sys.executable,
            str(EXAMPLE / "build_with_cmake.py"),
            "-o",
            str(tmp_path / "wheelhouse"),
            "--no-build-isolation",
            "--python",
            str(build_python),
            "--json",
        ]
    )
    assert process.returncode == 0, process.stderr
    built = json.loads(process.stdout)
    repaired = Path(built["wheel"])
    assert repaired.stat().st_size < ONE_MB
    assert any(r.startswith("nvidia-cudss-cu13>=1.0.0.35") for r in built["requires_dist"])
    assert main(["check", str(repaired), "--cuda", "13"]) == 0
    capsys.readouterr()

    python = make_venv(tmp_path / "venv")
    process = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "--disable-pip-version-check",
            "install",
            str(repaired),
        ]
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr
    probe = run_probe(python, "cudss_solver", "cudss_version", cwd=tmp_path)
    assert probe["value"][0] == 1
    lib_dir = (site_packages(python) / "nvidia" / "cu13" / "lib").resolve()
    mapped = [Path(path) for path in probe["mapped"]]
    for soname in ("libcudss.so.1", "libcudart.so.13"):
        assert [p.resolve() for p in mapped if p.name == soname] == [lib_dir / soname], probe["mapped"]


CUDA_LISTS = """cmake_minimum_required(VERSION 3.18)
project(kernels LANGUAGES CXX)
include(slimwheel)
slimwheel_enable_cuda()
add_library(kernels OBJECT scale.cu)
"""
CUDA_SOURCE = """#include <cuda_fp16.h>
__global__ void scale(__half *x, __half a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __hmul(x[i], a);
}
void launch(__half *x, __half a, int n) { scale<<<(n + 255) / 256, 256>>>(x, a, n); }
"""

SYSTEM_STYLE_LISTS = """cmake_minimum_required(VERSION 3.18)
project(system_style LANGUAGES C)
include(slimwheel)
# Below: CMake as written for a system CUDA toolkit and NVIDIA's cuDSS package, unchanged.
find_package(CUDAToolkit 12 REQUIRED)
find_package(cudss CONFIG REQUIRED)
add_library(solver SHARED solver.c)
target_link_libraries(solver PRIVATE CUDA::cudart CUDA::cublas CUDA::nvrtc cudss)
"""
SYSTEM_STYLE_SOURCE = """#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudss.h>
#include <nvrtc.h>
int probe(void) {
    cublasHandle_t blas; cudssHandle_t dss; int v = 0; int major, minor;
    cudaRuntimeGetVersion(&v); nvrtcVersion(&major, &minor);
    return (int)cublasCreate(&blas) + (int)cudssCreate(&dss) + v;
}
"""


def _cmake_build(tmp_path: Path, python: Path, lists: str, sources: dict[str, str], *defines: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(lists)
    for name, text in sources.items():
        (project / name).write_text(text)
    build = tmp_path / "build"
    configure = run(
        hidden(
            [
                "cmake",
                "-S",
                str(project),
                "-B",
                str(build),
                "-G",
                "Ninja",
                f"-DCMAKE_MODULE_PATH={cmake_dir()}",
                f"-DPython_EXECUTABLE={python}",
                *defines,
            ]
        )
    )
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr
    compiled = run(hidden(["cmake", "--build", str(build)]))
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr
    return build


def test_cu_kernel_with_fp16_compiles_with_the_wheels_nvcc(tmp_path: Path, build_python: Path) -> None:
    build = _cmake_build(
        tmp_path, build_python, CUDA_LISTS, {"scale.cu": CUDA_SOURCE}, "-DCMAKE_CUDA_ARCHITECTURES=90"
    )
    (compiler,) = build.rglob("CMakeCUDACompiler.cmake")
    nvcc = site_packages(build_python) / "nvidia" / "cu13" / "bin" / "nvcc"
    assert f'set(CMAKE_CUDA_COMPILER "{nvcc}")' in compiler.read_text()
    (obj,) = build.rglob("scale.cu.o")
    # The embedded fatbin holds device code for sm_90 (its ELF names the architecture).
    assert b"sm_90" in obj.read_bytes()


def test_cmake_written_for_a_system_toolkit_builds_unchanged(tmp_path: Path, build_python: Path) -> None:
    build = _cmake_build(tmp_path, build_python, SYSTEM_STYLE_LISTS, {"solver.c": SYSTEM_STYLE_SOURCE})
    facts = read_elf_file(build / "libsolver.so", symbols=False)
    assert {"libcudart.so.13", "libcublas.so.13", "libcudss.so.1", "libnvrtc.so.13"} <= set(facts.needed)


STATIC_LISTS = """cmake_minimum_required(VERSION 3.18)
project(static_runtime LANGUAGES C)
include(slimwheel)
add_library(runtime_probe SHARED probe.c)
slimwheel_link_nvidia(runtime_probe PRIVATE cudart INSTALL_DIR pkg)
"""
STATIC_SOURCE = """#include <cuda_runtime_api.h>
int probe(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }
"""


def test_static_libraries_link_from_the_wheels_static_archive(tmp_path: Path, build_python: Path) -> None:
    # What static-fallback asks of CMake (SLIMWHEEL_STATIC_LIBRARIES), on the one static archive NVIDIA's
    # CUDA 13 wheels ship: libcudart_static.a from nvidia-cuda-runtime.
    record = tmp_path / "linked.json"
    build = _cmake_build(
        tmp_path, build_python, STATIC_LISTS, {"probe.c": STATIC_SOURCE},
        "-DSLIMWHEEL_STATIC_LIBRARIES=cudart", f"-DSLIMWHEEL_LINK_RECORD={record}",
    )  # fmt: skip
    facts = read_elf_file(build / "libruntime_probe.so", symbols=False)
    assert not [n for n in facts.needed if n.startswith("libcudart")], facts.needed
    assert tuple(facts.rpath) == ()  # nothing to find at run time
    document = json.loads(record.read_text())
    assert document["libraries"] == []  # so no Requires-Dist, no manifest entry
    (static,) = document["static"]
    assert static["linkage"] == "static"
    assert static["archive"].endswith("/nvidia/cu13/lib/libcudart_static.a")
    assert static["distribution"] == "nvidia-cuda-runtime"
    assert document["targets"]["runtime_probe"]["static"] == ["cudart"]


UNUSED_LISTS = """cmake_minimum_required(VERSION 3.18)
project(unused LANGUAGES C)
include(slimwheel)
add_library(runtime_probe SHARED probe.c)
slimwheel_link_nvidia(runtime_probe PRIVATE cudart cublas INSTALL_DIR pkg {keep})
"""


@pytest.mark.parametrize("default", ["--no-as-needed", "--as-needed"])
@pytest.mark.parametrize("keep", [False, True])
def test_an_nvidia_library_the_target_calls_nothing_of_is_not_needed(
    tmp_path: Path, build_python: Path, keep: bool, default: str
) -> None:
    """The probe calls the runtime and nothing of cuBLAS: linked --as-needed (CMake 3.24+), it needs
    only the runtime, so repair requires only nvidia-cuda-runtime (gbgpu-cuda11x 1.2.4, built without
    it, required cuBLAS and cuSPARSE for nothing), whatever the toolchain's default (manylinux's gcc
    links what is named, Ubuntu's as needed: ``default`` stands for each). KEEP_UNUSED keeps both."""
    lists = UNUSED_LISTS.format(keep="KEEP_UNUSED" if keep else "")
    linker = f"-DCMAKE_SHARED_LINKER_FLAGS=-Wl,{default}"
    build = _cmake_build(tmp_path, build_python, lists, {"probe.c": STATIC_SOURCE}, linker)
    needed = read_elf_file(build / "libruntime_probe.so", symbols=False).needed
    assert "libcudart.so.13" in needed
    assert ("libcublas.so.13" in needed) is keep, needed


BAD_LISTS = """cmake_minimum_required(VERSION 3.18)
project(bad LANGUAGES C)
include(slimwheel)
add_library(thing SHARED thing.c)
slimwheel_link_nvidia(thing PRIVATE {libs})
"""


@pytest.fixture(scope="module")
def two_majors_python(tmp_path_factory: pytest.TempPathFactory, slimwheel_wheelhouse: Path) -> Path:
    """Small wheels only: the CUDA 13 and the CUDA 12 runtime side by side, and crt."""
    python = make_venv(tmp_path_factory.mktemp("two-majors") / "venv")
    process = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "--disable-pip-version-check",
            "install",
            "--find-links",
            str(slimwheel_wheelhouse),
            "slimwheel",
            "nvidia-cuda-runtime==13.*",
            "nvidia-cuda-crt==13.*",
            "nvidia-cuda-runtime-cu12",
        ]
    )
    assert process.returncode == 0, process.stderr
    return python


def _configure_error(tmp_path: Path, python: Path, libs: str, *defines: str) -> str:
    project = tmp_path / "bad"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(BAD_LISTS.format(libs=libs))
    (project / "thing.c").write_text("int thing(void) { return 0; }\n")
    process = run(
        hidden(
            [
                "cmake",
                "-S",
                str(project),
                "-B",
                str(tmp_path / "b"),
                f"-DCMAKE_MODULE_PATH={cmake_dir()}",
                f"-DPython_EXECUTABLE={python}",
                *defines,
            ]
        )
    )
    assert process.returncode != 0
    # CMake wraps a FATAL_ERROR message at 80 columns: compare the words.
    return " ".join(process.stderr.split())


@pytest.mark.parametrize(
    ("libs", "defines", "expected"),
    [
        ("notalib", (), "notalib: no installed wheel provides a library named libnotalib.so.N"),
        ("cudart", ("-DSLIMWHEEL_CUDA_MAJOR=11",), "cudart: no installed wheel provides it for CUDA 11"),
        ("cudss", ("-DSLIMWHEEL_CUDA_MAJOR=13",), "add nvidia-cudss-cu13 to build-system.requires"),
        ("cudart", (), "wheels for two CUDA majors are installed (CUDA 12: nvidia-cuda-runtime-cu12"),
    ],
)
def test_bad_input_is_one_clear_configure_error(
    tmp_path: Path, two_majors_python: Path, libs: str, defines: tuple[str, ...], expected: str
) -> None:
    message = _configure_error(tmp_path, two_majors_python, libs, *defines)
    assert expected in message, message


def test_cmake_dir_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cmake-dir"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "slimwheel.cmake").is_file()
    assert main(["cmake-dir", "--prefix", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "slimwheel.cmake-dir/1"
    assert (Path(document["prefix"]) / "slimwheelConfig.cmake").is_file()
    assert (Path(document["prefix"]) / "cudss" / "cudss-config.cmake").is_file()
