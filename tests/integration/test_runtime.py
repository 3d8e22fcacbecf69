"""``slimwheel.runtime`` against real installs: gcc-built stand-ins for NVIDIA's libraries inside fake
provider wheels, installed by real pip into real venvs (and ``pip install --target`` folders), each
scenario run in a fresh interpreter whose ``/proc/self/maps`` shows what was really mapped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.store import write_catalog
from slimwheel.cli import main
from slimwheel.manifest import Manifest, ManifestLibrary
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import build_provider_wheels
from tests.support.venvs import make_venv, pip_install, site_packages
from tests.support.wheels import make_wheel

SRC = str(Path(__file__).resolve().parents[2] / "src")
LINUX = "py3-none-manylinux_2_17_x86_64.manylinux_2_17_aarch64"
# What a fresh scenario process inherits from the test run must not steer the loader.
STEERING = ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "PYTHONPATH", "LD_PRELOAD")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the loader is Linux-only")


def _fake_library(path: Path, soname: str, body: str) -> Path:
    """A stand-in library; ``fake_origin()`` names the copy, so a test can tell copies apart."""
    source = f'const char *fake_origin(void) {{ return "{path}"; }}\n{body}'
    return compile_shared(path, {"lib.c": source}, soname=soname, work=path.parent / f".build-{path.name}")


def _cudss(path: Path, version: tuple[int, int, int], soname: str = "libcudss.so.1") -> Path:
    major, minor, patch = version
    body = f"""
int cudssGetProperty(int type, int *value) {{
    switch (type) {{
    case 0: *value = {major}; return 0;
    case 1: *value = {minor}; return 0;
    case 2: *value = {patch}; return 0;
    default: return 3;
    }}
}}
"""
    return _fake_library(path, soname, body)


def _cudart(path: Path, code: int, soname: str) -> Path:
    return _fake_library(path, soname, f"int cudaRuntimeGetVersion(int *v) {{ *v = {code}; return 0; }}\n")


@dataclass(frozen=True)
class World:
    """Everything built once per module: wheels, a venv with them installed, loose copies."""

    wheels: Path
    python: Path  # the venv's interpreter
    site: Path  # its site-packages
    system: Path  # a folder of "system" copies (LD_LIBRARY_PATH, CUDA_HOME/lib64)
    elsewhere: Path  # loose copies to load by path before the loader runs
    solver: Path  # an extension linked against libcudss.so.1 with no RPATH


def _manifest(cuda: int, libraries: list[ManifestLibrary]) -> bytes:
    return Manifest(cuda_major=cuda, libraries=tuple(libraries), generator="tests").to_json().encode()


CUDSS13 = ManifestLibrary(
    name="cudss",
    soname="libcudss.so.1",
    distribution="nvidia-cudss-cu13",
    requirement="nvidia-cudss-cu13>=1.0.0.35,<2",
    folder="nvidia/cu13/lib",
    requires=("cudart",),
    needed_by=("mypkg/_solver.so",),
    min_version="1.0.0.35",
)
CUDART13 = ManifestLibrary(
    name="cudart",
    soname="libcudart.so.13",
    distribution="nvidia-cuda-runtime",
    requirement="nvidia-cuda-runtime>=13.0.96,<14",
    folder="nvidia/cu13/lib",
    min_version="13.0.96",
)
CUDART13_EXTRA = CUDART13.replace(
    requirement='nvidia-cuda-runtime>=13.0.96,<14; extra == "cu13"', optional=True, cuda_major=13
)
CUDART12_EXTRA = ManifestLibrary(
    name="cudart",
    soname="libcudart.so.12",
    distribution="nvidia-cuda-runtime-cu12",
    requirement='nvidia-cuda-runtime-cu12>=12.8.90,<13; extra == "cuda12"',
    folder="nvidia/cuda_runtime/lib",
    min_version="12.8.90",
    optional=True,
    cuda_major=12,
)
COMMLAYER13 = ManifestLibrary(
    name="cudss_commlayer_nccl",
    soname="libcudss_commlayer_nccl.so.1",
    distribution="nvidia-cudss-cu13",
    requirement="nvidia-cudss-cu13>=1.0.0.35,<2",
    folder="nvidia/cu13/lib",
    requires=("cudss",),
    min_version="1.0.0.35",
    optional=True,
)


def _pip(python: Path, *args: str) -> None:
    # --isolated: this machine's pip configuration adds indexes and find-links of its own.
    argv = [sys.executable, "-m", "pip", "--python", str(python), "--isolated", "--disable-pip-version-check"]
    result = subprocess.run(
        [*argv, "install", "--no-cache-dir", *args], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def _pip_target(target: Path, *args: str) -> None:
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--isolated",
        "--disable-pip-version-check",
        "install",
        "--no-cache-dir",
    ]
    result = subprocess.run(
        [*argv, "--target", str(target), *args], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    if find_tool("gcc") is None:
        pytest.skip("needs gcc")
    root = tmp_path_factory.mktemp("runtime")
    libs = root / "libs"
    cudss = _cudss(libs / "cudss-1.0.0/libcudss.so.1", (1, 0, 0)).read_bytes()
    cudss_old = _cudss(libs / "cudss-0.7.1/libcudss.so.0", (0, 7, 1), soname="libcudss.so.0").read_bytes()
    commlayer = _fake_library(libs / "comm/libcudss_commlayer_nccl.so.1", "libcudss_commlayer_nccl.so.1", "")
    cudart13 = _cudart(libs / "cudart13/libcudart.so.13", 13000, "libcudart.so.13").read_bytes()
    cudart12 = _cudart(libs / "cudart12/libcudart.so.12", 12080, "libcudart.so.12").read_bytes()
    nccl = _fake_library(
        libs / "nccl/libnccl.so.2", "libnccl.so.2", "int ncclGetVersion(int *v) { *v = 22703; return 0; }\n"
    ).read_bytes()

    wheels = root / "wheels"
    wheels.mkdir()
    files13 = {
        "nvidia/cu13/lib/libcudss.so.1": cudss,
        "nvidia/cu13/lib/libcudss_commlayer_nccl.so.1": commlayer.read_bytes(),
    }
    make_wheel(wheels, "nvidia-cudss-cu13", "1.0.0.35", files13, tag=LINUX)
    make_wheel(
        wheels, "nvidia-cudss-cu13", "0.7.1.6", {"nvidia/cu13/lib/libcudss.so.0": cudss_old}, tag=LINUX
    )
    make_wheel(wheels, "nvidia-cudss-cu12", "1.0.0.35", {"nvidia/cu12/lib/libcudss.so.1": cudss}, tag=LINUX)
    make_wheel(
        wheels, "nvidia-cuda-runtime", "13.0.96", {"nvidia/cu13/lib/libcudart.so.13": cudart13}, tag=LINUX
    )
    make_wheel(
        wheels,
        "nvidia-cuda-runtime-cu12",
        "12.8.90",
        {"nvidia/cuda_runtime/lib/libcudart.so.12": cudart12},
        tag=LINUX,
    )
    # No -cuNN suffix and a folder that names no major: only METADATA tells it is for CUDA 13.
    make_wheel(
        wheels,
        "nvidia-nccl",
        "2.27.3",
        {"nvidia/nccl/lib/libnccl.so.2": nccl},
        tag=LINUX,
        requires=("cuda-toolkit==13.*",),
    )
    make_wheel(
        wheels,
        "mypkg",
        "1.0",
        {
            "mypkg/__init__.py": b"",
            "mypkg-1.0.dist-info/slimwheel.json": _manifest(13, [CUDART13, CUDSS13, COMMLAYER13]),
        },
    )
    # repair --cuda 12,13: each major's runtime behind its extra, the manifest of no one major.
    several = Manifest(cuda_major=None, libraries=(CUDART12_EXTRA, CUDART13_EXTRA), generator="tests")
    make_wheel(
        wheels,
        "multipkg",
        "1.0",
        {"multipkg/__init__.py": b"", "multipkg-1.0.dist-info/slimwheel.json": several.to_json().encode()},
    )
    newer = CUDSS13.replace(requirement="nvidia-cudss-cu13>=1.0.0.40,<2", min_version="1.0.0.40")
    make_wheel(
        wheels,
        "newpkg",
        "1.0",
        {"newpkg/__init__.py": b"", "newpkg-1.0.dist-info/slimwheel.json": _manifest(13, [newer])},
    )

    python = make_venv(root / "venv")
    _pip(
        python,
        "--no-index",
        "--find-links",
        str(wheels),
        "--no-deps",
        "nvidia-cudss-cu13==1.0.0.35",
        "nvidia-cudss-cu12",
        "nvidia-cuda-runtime",
        "nvidia-cuda-runtime-cu12",
        "nvidia-nccl",
        "mypkg",
        "newpkg",
        "multipkg",
    )

    system = root / "system"
    _cudss(system / "libcudss.so.1", (1, 1, 0))
    _fake_library(
        system / "libcusparse.so.12", "libcusparse.so.12", "int cusparse_probe(void) { return 1; }\n"
    )
    elsewhere = root / "elsewhere"
    _cudss(elsewhere / "new/libcudss.so.1", (1, 2, 0))
    _cudss(elsewhere / "old/libcudss.so.1", (0, 9, 0))
    solver_source = (
        "extern int cudssGetProperty(int, int *);\n"
        "int solver_major(void) { int v = -1; cudssGetProperty(0, &v); return v; }\n"
    )
    solver = compile_shared(
        root / "ext/_solver.so", {"solver.c": solver_source}, link=[libs / "cudss-1.0.0/libcudss.so.1"]
    )
    return World(wheels, python, site_packages(python), system, elsewhere, solver)


_PRELUDE = """
import ctypes, json, os, sys
from slimwheel import runtime

out = {}

def info(loaded):
    return {
        "path": loaded.path, "soname": loaded.soname, "how": loaded.how.value,
        "distribution": loaded.distribution, "version": loaded.version,
        "library_version": loaded.library_version, "cuda_major": loaded.cuda_major,
        "cuda_major_from": loaded.cuda_major_from,
    }

def attempt(key, call):
    try:
        result = call()
    except runtime.RuntimeLoadError as exc:
        out[key] = {"error": type(exc).__name__, "message": str(exc), "paths": list(exc.paths),
                    "pip": exc.pip_command, "is_oserror": isinstance(exc, OSError)}
    else:
        out[key] = [info(x) for x in result] if isinstance(result, tuple) else info(result)

def mapped(name):
    return [m.path for m in runtime.mapped_libraries() if m.path.rsplit("/", 1)[-1] == name]
"""


def _scenario(
    python: Path,
    code: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    pythonpath: tuple[str, ...] = (),
) -> Any:
    """Run ``code`` after the prelude in a fresh interpreter; it fills ``out``, printed as JSON."""
    environment = {
        k: v for k, v in os.environ.items() if k not in STEERING and not k.startswith("SLIMWHEEL_")
    }
    environment["PYTHONPATH"] = os.pathsep.join([*pythonpath, SRC])
    environment.update(env or {})
    script = _PRELUDE + code + "\nprint(json.dumps(out))\n"
    process = subprocess.run(
        [str(python), "-c", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=environment,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


# --- where a copy comes from -------------------------------------------------------------------------


def test_wheel_first_loads_the_wheel_and_reports_it(world: World, tmp_path: Path) -> None:
    out = _scenario(
        world.python,
        """
attempt("cudss", lambda: runtime.load("cudss", cuda=13))
out["maps"] = mapped("libcudss.so.1")
out["layers"] = [m.path for m in runtime.mapped_libraries("cudss_commlayer_nccl")]
out["again"] = info(runtime.load("libcudss.so.1"))
out["major"] = runtime.process_cuda_major()
out["registry"] = [x.soname for x in runtime.loaded_libraries()]
origin = runtime.load("cudss").cdll().fake_origin
origin.restype = ctypes.c_char_p
out["origin"] = origin().decode()
""",
        cwd=tmp_path,
        env={"LD_LIBRARY_PATH": str(world.system)},  # a system copy exists, but wheels come first
    )
    cudss = out["cudss"]
    assert cudss == {
        "path": str(world.site / "nvidia/cu13/lib/libcudss.so.1"),
        "soname": "libcudss.so.1",
        "how": "wheel",
        "distribution": "nvidia-cudss-cu13",
        "version": "1.0.0.35",
        "library_version": "1.0.0",
        "cuda_major": 13,
        "cuda_major_from": "distribution name",
    }
    assert out["maps"] == [cudss["path"]]
    assert out["layers"] == []  # cuDSS's add-on layers load only when asked for
    assert out["again"] == cudss  # the registry answers; nothing is loaded twice
    assert out["major"] == 13
    assert out["registry"] == ["libcudss.so.1"]
    assert out["origin"].endswith("cudss-1.0.0/libcudss.so.1")  # the handle is the wheel's copy


def test_without_a_major_the_newest_wheel_wins_and_fixes_the_process_major(
    world: World, tmp_path: Path
) -> None:
    out = _scenario(
        world.python,
        """
attempt("cudss", lambda: runtime.load("cudss"))
attempt("cudart", lambda: runtime.load("cudart"))
attempt("nccl", lambda: runtime.load("nccl"))
""",
        cwd=tmp_path,
    )
    assert out["cudss"]["path"] == str(world.site / "nvidia/cu13/lib/libcudss.so.1")
    assert out["cudart"]["path"] == str(world.site / "nvidia/cu13/lib/libcudart.so.13")
    assert (out["cudart"]["library_version"], out["cudart"]["cuda_major_from"]) == ("13.0", "folder")
    # nvidia-nccl has no suffix and nvidia/nccl/lib names no major: its METADATA does.
    assert out["nccl"]["cuda_major"] == 13
    assert out["nccl"]["cuda_major_from"] == "METADATA"
    assert out["nccl"]["library_version"] == "2.27.3"


def test_system_first_and_cuda_home(world: World, tmp_path: Path) -> None:
    cuda_home = tmp_path / "cuda-13.0"
    (cuda_home / "lib64").mkdir(parents=True)
    shutil.copy(world.system / "libcudss.so.1", cuda_home / "lib64/libcudss.so.1")
    code = 'attempt("cudss", lambda: runtime.load("cudss", policy=POLICY))'
    on_path = _scenario(
        world.python,
        code.replace("POLICY", '"system-first"'),
        cwd=tmp_path,
        env={"LD_LIBRARY_PATH": str(world.system)},
    )
    assert on_path["cudss"]["path"] == str(world.system / "libcudss.so.1")
    assert (on_path["cudss"]["how"], on_path["cudss"]["library_version"]) == ("system", "1.1.0")
    assert on_path["cudss"]["distribution"] is None

    home = _scenario(
        world.python,
        code.replace("POLICY", '"system-first"'),
        cwd=tmp_path,
        env={"CUDA_HOME": str(cuda_home)},
    )
    assert home["cudss"]["path"] == str(cuda_home / "lib64/libcudss.so.1")
    assert home["cudss"]["how"] == "CUDA_HOME"
    assert home["cudss"]["cuda_major"] == 13  # from the folder name cuda-13.0

    wheel_first = _scenario(
        world.python, code.replace("POLICY", '"wheel-first"'), cwd=tmp_path, env={"CUDA_HOME": str(cuda_home)}
    )
    assert wheel_first["cudss"]["how"] == "wheel"


def test_wheel_only_never_takes_a_system_copy(world: World, tmp_path: Path) -> None:
    out = _scenario(
        world.python,
        """
attempt("only", lambda: runtime.load("cusparse", policy="wheel-only", cuda=13))
attempt("first", lambda: runtime.load("cusparse", policy="wheel-first"))
""",
        cwd=tmp_path,
        env={"LD_LIBRARY_PATH": str(world.system)},
    )
    assert out["only"]["error"] == "LibraryNotFoundError"
    assert out["only"]["pip"] == "pip install 'nvidia-cusparse'"
    assert out["first"]["path"] == str(world.system / "libcusparse.so.12")


def test_the_override_variable_beats_everything(world: World, tmp_path: Path) -> None:
    new = world.elsewhere / "new/libcudss.so.1"
    code = 'attempt("cudss", lambda: runtime.load("cudss"))'
    as_file = _scenario(
        world.python,
        code,
        cwd=tmp_path,
        env={"SLIMWHEEL_CUDSS_PATH": str(new), "LD_LIBRARY_PATH": str(world.system)},
    )
    assert as_file["cudss"]["path"] == str(new)
    assert (as_file["cudss"]["how"], as_file["cudss"]["library_version"]) == ("override variable", "1.2.0")

    as_folder = _scenario(world.python, code, cwd=tmp_path, env={"SLIMWHEEL_CUDSS_PATH": str(new.parent)})
    assert as_folder["cudss"]["path"] == str(new)

    relative = _scenario(
        world.python, code, cwd=world.elsewhere, env={"SLIMWHEEL_CUDSS_PATH": "new/libcudss.so.1"}
    )
    assert relative["cudss"]["error"] == "LibraryNotFoundError"
    assert "not an absolute path" in relative["cudss"]["message"]

    missing = _scenario(
        world.python, code, cwd=tmp_path, env={"SLIMWHEEL_CUDSS_PATH": str(tmp_path / "nope.so.1")}
    )
    assert "no such file or folder" in missing["cudss"]["message"]
    assert missing["cudss"]["pip"].startswith("pip install 'nvidia-cudss-cu13'")


def test_pip_install_target_folder_on_pythonpath(world: World, tmp_path: Path) -> None:
    """A --target folder: RPATH ($ORIGIN/../..) cannot reach it from an extension elsewhere, the loader
    can. Beside the venv's cuDSS 1.0 (libcudss.so.1) it offers 0.7 (libcudss.so.0)."""
    target = tmp_path / "target"
    _pip_target(
        target, "--no-index", "--find-links", str(world.wheels), "--no-deps", "nvidia-cudss-cu13==0.7.1.6"
    )
    bare = make_venv(tmp_path / "bare")
    _pip_target(
        tmp_path / "target13",
        "--no-index",
        "--find-links",
        str(world.wheels),
        "--no-deps",
        "nvidia-cudss-cu13==1.0.0.35",
    )
    extension = f"ctypes.CDLL({str(world.solver)!r})"
    out = _scenario(
        bare,
        f"""
try:
    {extension}
    out["before"] = "loaded"
except OSError as exc:
    out["before"] = str(exc)
attempt("cudss", lambda: runtime.load("cudss", cuda=13))
out["major"] = {extension}.solver_major()
""",
        cwd=tmp_path,
        pythonpath=(str(target), str(tmp_path / "target13")),
    )
    assert "libcudss.so.1" in out["before"]  # the extension alone does not find cuDSS
    # The highest soname wins over sys.path order: target13's libcudss.so.1, not target's .so.0.
    assert out["cudss"]["path"] == str(tmp_path / "target13/nvidia/cu13/lib/libcudss.so.1")
    assert out["cudss"]["distribution"] == "nvidia-cudss-cu13"
    assert out["major"] == 1  # the extension's DT_NEEDED reused the loaded copy

    old = _scenario(
        bare, 'attempt("old", lambda: runtime.load("libcudss.so.0"))', cwd=tmp_path, pythonpath=(str(target),)
    )
    assert (old["old"]["path"], old["old"]["library_version"]) == (
        str(target / "nvidia/cu13/lib/libcudss.so.0"),
        "0.7.1",
    )
    too_old = _scenario(
        bare,
        'attempt("x", lambda: runtime.load("cudss", min_version="1.0"))',
        cwd=tmp_path,
        pythonpath=(str(target),),
    )
    assert too_old["x"]["error"] == "LibraryVersionError"
    assert "version 0.7.1.6 is below 1.0" in too_old["x"]["message"]


def test_the_current_directory_is_never_searched(world: World, tmp_path: Path) -> None:
    here = tmp_path / "here"
    _pip_target(
        here, "--no-index", "--find-links", str(world.wheels), "--no-deps", "nvidia-cudss-cu13==1.0.0.35"
    )
    shutil.copy(world.system / "libcusparse.so.12", here / "libcusparse.so.12")
    bare = make_venv(tmp_path / "bare")
    out = _scenario(
        bare,
        """
sys.path.insert(0, "")
attempt("cudss", lambda: runtime.load("cudss", policy="wheel-only"))
attempt("cusparse", lambda: runtime.load("libcusparse.so.12"))
""",
        cwd=here,
        env={"LD_LIBRARY_PATH": ":."},
    )
    assert out["cudss"]["error"] == "LibraryNotFoundError"
    assert "skipped relative entries" in out["cudss"]["message"]
    assert out["cusparse"]["error"] == "LibraryNotFoundError"
    assert "skipped its relative entries" in out["cusparse"]["message"]


# --- one CUDA major, one copy --------------------------------------------------------------------------


def test_two_majors_side_by_side(world: World, tmp_path: Path) -> None:
    out = _scenario(
        world.python,
        """
attempt("cu12", lambda: runtime.load("cudss", cuda=12))
attempt("cudart", lambda: runtime.load("cudart"))
attempt("cu13", lambda: runtime.load("cudss", cuda=13))
attempt("cudart13", lambda: runtime.load("libcudart.so.13"))
attempt("mixed", lambda: runtime.load("libcudart.so.13", allow_mixed_cuda=True))
out["maps"] = mapped("libcudss.so.1")
""",
        cwd=tmp_path,
    )
    cu12 = str(world.site / "nvidia/cu12/lib/libcudss.so.1")
    cu13 = str(world.site / "nvidia/cu13/lib/libcudss.so.1")
    assert (out["cu12"]["path"], out["cu12"]["distribution"], out["cu12"]["cuda_major"]) == (
        cu12,
        "nvidia-cudss-cu12",
        12,
    )
    # The process is CUDA 12 now: cudart comes from the cu12 wheel without being asked.
    assert out["cudart"]["path"] == str(world.site / "nvidia/cuda_runtime/lib/libcudart.so.12")
    assert out["cudart"]["library_version"] == "12.8"
    conflict = out["cu13"]
    assert conflict["error"] == "CudaMajorConflictError"
    assert conflict["is_oserror"]
    assert cu12 in conflict["message"]
    assert cu13 in conflict["message"]
    assert set(conflict["paths"]) >= {cu12, cu13}
    assert out["cudart13"]["error"] == "CudaMajorConflictError"
    assert cu12 in out["cudart13"]["message"]  # the file that fixed the process's major
    assert out["cudart13"]["pip"] is None  # no package gives libcudart.so.13 for CUDA 12
    assert out["mixed"]["path"] == str(world.site / "nvidia/cu13/lib/libcudart.so.13")
    assert out["maps"] == [cu12]


def test_a_cuda_library_mapped_before_any_load_fixes_the_major(world: World, tmp_path: Path) -> None:
    """torch, an extension's DT_NEEDED, or another package's embedded copy of the loader brought in
    the CUDA 12 runtime: a load without a major follows it, one asking for CUDA 13 is refused."""
    cudart12 = str(world.site / "nvidia/cuda_runtime/lib/libcudart.so.12")
    embedded = tmp_path / "otherpkg"
    shutil.copytree(Path(SRC) / "slimwheel" / "runtime", embedded / "_slimwheel_runtime")
    (embedded / "__init__.py").write_text("")
    out = _scenario(
        world.python,
        """
out["before"] = runtime.process_cuda_major()
import otherpkg._slimwheel_runtime as other  # a second copy of the loader, with its own registry
attempt("other", lambda: other.load("cudart", cuda=12))
out["after"] = runtime.process_cuda_major()
attempt("cu13", lambda: runtime.load("cudss", cuda=13))
attempt("cudss", lambda: runtime.load("cudss"))
""",
        cwd=tmp_path,
        pythonpath=(str(tmp_path),),
    )
    assert out["before"] is None
    assert out["other"]["path"] == cudart12
    assert out["after"] == 12
    assert (out["cudss"]["path"], out["cudss"]["cuda_major"]) == (
        str(world.site / "nvidia/cu12/lib/libcudss.so.1"),
        12,
    )
    conflict = out["cu13"]
    assert conflict["error"] == "CudaMajorConflictError"
    assert f"this process already uses CUDA 12 ({cudart12})" in conflict["message"]
    assert conflict["paths"][0] == cudart12


def test_a_copy_already_loaded_is_reported_not_loaded_again(world: World, tmp_path: Path) -> None:
    new = world.elsewhere / "new/libcudss.so.1"
    out = _scenario(
        world.python,
        f"""
ctypes.CDLL({str(new)!r}, mode=os.RTLD_GLOBAL)
attempt("cudss", lambda: runtime.load("cudss"))
attempt("exact", lambda: runtime.load("libcudss.so.1", min_version="1.1"))
out["maps"] = mapped("libcudss.so.1")
""",
        cwd=tmp_path,
    )
    assert out["cudss"]["how"] == "already loaded"
    assert (out["cudss"]["path"], out["cudss"]["library_version"]) == (str(new), "1.2.0")
    assert out["exact"]["path"] == str(new)
    assert out["maps"] == [str(new)]


def test_an_already_loaded_copy_of_the_wrong_major_or_too_old_is_an_error(
    world: World, tmp_path: Path
) -> None:
    cu12 = str(world.site / "nvidia/cu12/lib/libcudss.so.1")
    cu13 = str(world.site / "nvidia/cu13/lib/libcudss.so.1")
    wrong = _scenario(
        world.python,
        f"""
ctypes.CDLL({cu12!r})
attempt("cudss", lambda: runtime.load("cudss", cuda=13))
out["maps"] = mapped("libcudss.so.1")
""",
        cwd=tmp_path,
    )
    assert wrong["cudss"]["error"] == "CudaMajorConflictError"
    assert f"already has {cu12} loaded" in wrong["cudss"]["message"]
    assert cu13 in wrong["cudss"]["message"]
    assert wrong["maps"] == [cu12]  # no second copy

    old = str(world.elsewhere / "old/libcudss.so.1")
    too_old = _scenario(
        world.python,
        f'ctypes.CDLL({old!r})\nattempt("cudss", lambda: runtime.load("cudss", min_version="1.0"))',
        cwd=tmp_path,
    )
    assert too_old["cudss"]["error"] == "LibraryVersionError"
    assert old in too_old["cudss"]["message"]
    assert "reports version 0.9.0, below 1.0" in too_old["cudss"]["message"]
    assert cu13 in too_old["cudss"]["message"]


def test_override_naming_another_copy_than_the_loaded_one(world: World, tmp_path: Path) -> None:
    old = str(world.elsewhere / "old/libcudss.so.1")
    out = _scenario(
        world.python,
        f'ctypes.CDLL({old!r})\nattempt("cudss", lambda: runtime.load("cudss"))',
        cwd=tmp_path,
        env={"SLIMWHEEL_CUDSS_PATH": str(world.elsewhere / "new/libcudss.so.1")},
    )
    assert out["cudss"]["error"] == "LibraryConflictError"
    assert old in out["cudss"]["message"]


# --- errors -----------------------------------------------------------------------------------------------


def test_a_missing_library_lists_every_place_and_the_pip_command(world: World, tmp_path: Path) -> None:
    out = _scenario(
        world.python,
        """
attempt("any", lambda: runtime.load("cusolver"))
attempt("cu12", lambda: runtime.load("cusolver", cuda=12, min_version="11.7"))
""",
        cwd=tmp_path,
        env={"CONDA_PREFIX": str(tmp_path / "conda")},
    )
    message = out["any"]["message"]
    assert out["any"]["error"] == "LibraryNotFoundError"
    for place in (
        "SLIMWHEEL_CUSOLVER_PATH (unset)",
        str(world.site),
        str(tmp_path / "conda/lib"),
        "CUDA_HOME",
        "/etc/ld.so.cache",
    ):
        assert place in message
    assert "\n" not in message
    assert out["any"]["pip"] == "pip install 'nvidia-cusolver' (CUDA 12: pip install 'nvidia-cusolver-cu12')"
    assert out["cu12"]["pip"] == "pip install 'nvidia-cusolver-cu12>=11.7'"
    assert message.endswith(out["any"]["pip"])


def test_a_version_below_the_minimum(world: World, tmp_path: Path) -> None:
    out = _scenario(
        world.python,
        """
attempt("new", lambda: runtime.load("cudss", min_version="1.2"))
out["maps"] = mapped("libcudss.so.1")
attempt("ok", lambda: runtime.load("cudss", cuda=13, min_version="1.0.0"))
""",
        cwd=tmp_path,
        env={"LD_LIBRARY_PATH": str(world.system)},
    )
    message = out["new"]["message"]
    assert out["new"]["error"] == "LibraryVersionError"
    # The wheels' distribution versions rule them out before loading (1.0.0.35 names cuDSS 1.0.0);
    # the system copy has no distribution: it is loaded, asked, found too old, and unloaded again.
    assert "nvidia-cudss-cu13 1.0.0.35" in message
    assert "version 1.0.0.35 is below 1.2" in message
    assert f"{world.system / 'libcudss.so.1'} (reports version 1.1.0, below 1.2)" in message
    assert (
        out["new"]["pip"]
        == "pip install 'nvidia-cudss-cu13>=1.2' (CUDA 12: pip install 'nvidia-cudss-cu12>=1.2')"
    )
    assert out["maps"] == []
    assert out["ok"]["library_version"] == "1.0.0"  # cuDSS 1.0.0 is wheel 1.0.0.35


# --- preload --------------------------------------------------------------------------------------------


def test_preload_follows_the_manifest(world: World, tmp_path: Path) -> None:
    out = _scenario(
        world.python,
        """
attempt("plain", lambda: runtime.preload("mypkg"))
out["layers"] = [m.path for m in runtime.mapped_libraries("cudss_commlayer_nccl")]
attempt("with_layers", lambda: runtime.preload("mypkg", optional=["cudss_commlayer_nccl"]))
attempt("newer", lambda: runtime.preload("newpkg"))
attempt("absent", lambda: runtime.preload("not-installed"))
""",
        cwd=tmp_path,
        env={"LD_LIBRARY_PATH": str(world.system)},
    )
    lib = world.site / "nvidia/cu13/lib"
    assert [(x["path"], x["distribution"]) for x in out["plain"]] == [
        (str(lib / "libcudart.so.13"), "nvidia-cuda-runtime"),
        (str(lib / "libcudss.so.1"), "nvidia-cudss-cu13"),
    ]
    assert out["layers"] == []
    assert [x["soname"] for x in out["with_layers"]] == [
        "libcudart.so.13",
        "libcudss.so.1",
        "libcudss_commlayer_nccl.so.1",
    ]
    newer = out["newer"]
    assert newer["error"] == "LibraryVersionError"
    assert newer["pip"] == "pip install 'nvidia-cudss-cu13>=1.0.0.40,<2'"
    assert "version 1.0.0.35 is below 1.0.0.40" in newer["message"]
    assert out["absent"]["error"] == "ManifestNotFoundError"


def test_preload_of_several_majors_loads_one(world: World, tmp_path: Path) -> None:
    """A manifest of CUDA 12's and 13's runtimes, each behind its extra (repair --cuda 12,13): preload
    loads the major asked for, else the process's, else the one installed; both installed and the
    process on none, it says so and how out."""
    out = _scenario(
        world.python,
        """
attempt("asked", lambda: runtime.preload("multipkg", cuda=12))
attempt("unknown", lambda: runtime.preload("multipkg", cuda=11))
""",
        cwd=tmp_path,
    )
    assert [(x["path"], x["cuda_major"]) for x in out["asked"]] == [
        (str(world.site / "nvidia/cuda_runtime/lib/libcudart.so.12"), 12)
    ]
    assert out["unknown"]["error"] == "CudaMajorConflictError"
    assert "its manifest lists those of CUDA 12 and 13" in out["unknown"]["message"]
    both = _scenario(world.python, 'attempt("x", lambda: runtime.preload("multipkg"))', cwd=tmp_path)
    assert both["x"]["error"] == "CudaMajorConflictError"
    assert "the wheels of CUDA 12 and 13 are all installed" in both["x"]["message"]
    assert both["x"]["pip"] == "pip install 'multipkg[cu13]'"
    cu13 = str(world.site / "nvidia/cu13/lib/libcudart.so.13")
    process = _scenario(
        world.python,
        f'ctypes.CDLL({cu13!r})\nruntime.load("cudart")\nattempt("x", lambda: runtime.preload("multipkg"))',
        cwd=tmp_path,
    )
    assert [x["path"] for x in process["x"]] == [cu13]
    one = make_venv(tmp_path / "one")
    _pip(
        one,
        "--no-index",
        "--find-links",
        str(world.wheels),
        "--no-deps",
        "multipkg",
        "nvidia-cuda-runtime-cu12",
    )
    installed = _scenario(one, 'attempt("x", lambda: runtime.preload("multipkg"))', cwd=tmp_path)
    assert [x["soname"] for x in installed["x"]] == ["libcudart.so.12"]


def test_preload_with_the_distribution_missing_names_the_manifests_requirement(
    world: World, tmp_path: Path
) -> None:
    bare = make_venv(tmp_path / "bare")
    _pip(bare, "--no-index", "--find-links", str(world.wheels), "--no-deps", "mypkg")
    out = _scenario(bare, 'attempt("x", lambda: runtime.preload("mypkg", policy="wheel-only"))', cwd=tmp_path)
    assert out["x"]["error"] == "LibraryNotFoundError"
    assert out["x"]["pip"] == "pip install 'nvidia-cuda-runtime>=13.0.96,<14'"


def test_preload_of_a_repaired_wheel(
    elf_zoo: ElfZoo, index_server: Callable[..., IndexServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repair writes the manifest, pip installs the wheel and its providers from a 127.0.0.1 index,
    preload loads cuDSS from its wheel before the extension is imported."""
    providers = build_provider_wheels(elf_zoo, tmp_path / "index")
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(tmp_path / "no-user-catalog.json.gz"))
    catalog = tmp_path / "catalog.json.gz"
    write_catalog(learn_from_wheels(providers.all), catalog)
    init = b"import ctypes, os\nfrom slimwheel.runtime import preload\nLOADED = preload('solver')\n"
    init += b"_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), '_solver.so'))\n"
    init += b"def version():\n    return _lib.solver_cudss_version()\n"
    (tmp_path / "fat").mkdir()
    fat = make_wheel(
        tmp_path / "fat",
        "solver",
        "1.0",
        {"solver/_solver.so": elf_zoo.ext_dynamic.read_bytes(), "solver/__init__.py": init},
        tag="py3-none-manylinux_2_17_x86_64",
    )
    out = tmp_path / "wheelhouse"
    code = main(
        [
            "repair",
            str(fat),
            "-w",
            str(out),
            "--catalog",
            str(catalog),
            "--cuda",
            "13",
            "--isolated-environment",
        ]
    )
    assert code == 0
    (repaired,) = out.glob("*.whl")
    server = index_server(providers.directory)
    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, str(repaired), index_url=server.simple_url)
    assert installed.returncode == 0, installed.stderr
    result = _scenario(
        python,
        """
import solver
out["value"] = solver.version()
out["loaded"] = [info(x) for x in solver.LOADED]
out["maps"] = mapped("libcudss.so.1")
""",
        cwd=tmp_path,
    )
    assert result["value"] == 10000
    (cudss,) = result["loaded"]
    site = site_packages(python)
    assert cudss["path"] == str(site / "nvidia/cu13/lib/libcudss.so.1")
    assert (cudss["distribution"], cudss["version"], cudss["library_version"]) == (
        "nvidia-cudss-cu13",
        "1.0.0.35",
        "1.0.0",
    )
    assert result["maps"] == [cudss["path"]]


# --- doctor ---------------------------------------------------------------------------------------------


def test_doctor_json(world: World, tmp_path: Path) -> None:
    environment = {
        k: v for k, v in os.environ.items() if k not in STEERING and not k.startswith("SLIMWHEEL_")
    }
    environment["PYTHONPATH"] = str(world.site)
    environment["LD_LIBRARY_PATH"] = str(world.system)
    argv = [
        sys.executable,
        "-m",
        "slimwheel",
        "doctor",
        "cudss",
        "cudart",
        "cusolver",
        "--json",
        "--cuda",
        "12",
    ]
    process = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=tmp_path, env=environment)
    assert process.returncode == 1, process.stderr  # cusolver, named, is not found
    document = json.loads(process.stdout)
    assert document["schema"] == "slimwheel.doctor/1"
    cudss, cudart, cusolver = document["libraries"]
    paths = {row["path"]: row for row in cudss["candidates"]}
    cu12 = str(world.site / "nvidia/cu12/lib/libcudss.so.1")
    cu13 = str(world.site / "nvidia/cu13/lib/libcudss.so.1")
    assert paths[cu13]["rejected"] == "CUDA 13, but CUDA 12 was asked for"
    assert paths[cu12]["rejected"] is None
    assert paths[str(world.system / "libcudss.so.1")]["source"] == "system"
    assert cudss["would_load"] == cu12
    assert cudss["loaded_in"] == "child process"
    assert cudss["loaded"]["library_version"] == "1.0.0"
    assert cudss["mapped_by_load"] == [cu12]
    assert cudss["mapped_here"] == []
    assert cudart["loaded"]["library_version"] == "12.8"
    assert cusolver["would_load"] is None
    assert cusolver["load_error"].startswith("LibraryNotFoundError")

    text = subprocess.run(
        argv[:-3], capture_output=True, text=True, check=False, cwd=tmp_path, env=environment
    )
    assert "would load" in text.stdout
    assert "nvidia-cudss-cu13" in text.stdout
