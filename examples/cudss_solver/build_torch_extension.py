"""Build the example package in place for this machine's torch, with gcc/g++ only (no CMake, no pip).

    python examples/cudss_solver/build_torch_extension.py -o OUT [--include DIR]... [--no-core]

For a machine whose torch is not the one a published wheel was built against (the extension is tied
to a torch minor): run it with the Python that has torch and the NVIDIA wheels installed. It writes
``OUT/cudss_solver_torch/`` (the torch package's Python files and ``_cudss_torch.so``) and, unless
``--no-core``, ``OUT/cudss_solver/`` (the core package's Python files and ``_cudss_solver.abi3.so``),
then ``PYTHONPATH=OUT`` imports them. The libraries are linked by absolute RPATH
to where they are found here (torch's ``torch/lib``, the NVIDIA wheels' ``nvidia/cu13/lib``): a local
build, not a wheel to ship. Headers: torch's own, and ``cudss.h``, ``cuda_runtime_api.h`` and
``crt/host_defines.h`` from the NVIDIA wheels on ``sys.path``, else ``$CUDA_HOME/include`` or
``/usr/local/cuda/include``, else the ``--include`` folders. Prints one JSON line saying what was used.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADERS = ("cudss.h", "cuda_runtime_api.h", "crt/host_defines.h")
LIBRARIES = ("libcudss.so.1", "libcudart.so.13")


class BuildError(Exception):
    """The build cannot go on; the message says why."""


def nvidia_folders() -> list[Path]:
    """``nvidia/cu13`` in each sys.path folder, then the system toolkit's, in that order."""
    found = [Path(entry) / "nvidia" / "cu13" for entry in sys.path if entry and Path(entry).is_dir()]
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            found.append(Path(os.environ[variable]))
    found.append(Path("/usr/local/cuda"))
    return [f for f in found if f.is_dir()]


def find_headers(extra: list[Path]) -> dict[str, Path]:
    places = [*(f / "include" for f in nvidia_folders()), *extra]
    found: dict[str, Path] = {}
    for header in HEADERS:
        for place in places:
            if (place / header).is_file():
                found[header] = place
                break
    missing = [h for h in HEADERS if h not in found]
    if missing:
        raise BuildError(
            f"not found: {', '.join(missing)} (looked in {', '.join(map(str, places))}); pass --include"
        )
    return found


def find_libraries() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for library in LIBRARIES:
        for folder in nvidia_folders():
            for sub in ("lib", "lib64"):
                if (folder / sub / library).is_file():
                    found.setdefault(library, folder / sub)
    missing = [name for name in LIBRARIES if name not in found]
    if missing:
        raise BuildError(
            f"not found: {', '.join(missing)} (install nvidia-cudss-cu13 and nvidia-cuda-runtime)"
        )
    return found


def compile_and_link(out: Path, extra_includes: list[Path], *, core: bool) -> dict[str, object]:
    # This machine's torch (not installed where this file is type-checked).
    torch = importlib.import_module("torch")
    include_paths = importlib.import_module("torch.utils.cpp_extension").include_paths

    headers = find_headers(extra_includes)
    libraries = find_libraries()
    package = _copy_package(out, "cudss_solver_torch")
    core_package = _copy_package(out, "cudss_solver") if core else None
    includes = [f"-I{p}" for p in dict.fromkeys([HERE, *headers.values()])]
    torch_lib = Path(str(torch.__file__)).parent / "lib"
    rpath = ",".join(f"-rpath,{p}" for p in dict.fromkeys([torch_lib, *libraries.values()]))
    nvidia = [f"-L{p}" for p in dict.fromkeys(libraries.values())] + [f"-l:{name}" for name in LIBRARIES]
    objects = out / "build"
    objects.mkdir(exist_ok=True)
    commands = [
        ["gcc", "-O2", "-fPIC", "-std=c11", "-Wall", *includes, "-c", str(HERE / "csr_solve.c"),
         "-o", str(objects / "csr_solve.o")],
        ["g++", "-O2", "-fPIC", "-std=c++17", "-shared", "-fvisibility=hidden",
         f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
         *includes, *(f"-I{p}" for p in include_paths()), str(HERE / "cudss_torch.cpp"),
         str(objects / "csr_solve.o"), "-o", str(package / "_cudss_torch.so"),
         f"-L{torch_lib}", "-lc10", "-ltorch", "-ltorch_cpu", *nvidia, f"-Wl,{rpath}"],
    ]  # fmt: skip
    if core_package is not None:
        python_include = sysconfig.get_paths()["include"]
        if not (Path(python_include) / "Python.h").is_file():
            raise BuildError(f"no Python.h in {python_include} (the core extension needs it): pass --no-core")
        commands.append(
            ["gcc", "-O2", "-fPIC", "-std=c11", "-shared", "-D_POSIX_C_SOURCE=200809L", f"-I{python_include}",
             *includes, str(HERE / "cudss_solver.c"), "-o", str(core_package / "_cudss_solver.abi3.so"),
             *nvidia, "-lm", f"-Wl,{rpath}"]
        )  # fmt: skip
    for command in commands:
        process = subprocess.run(command, capture_output=True, text=True, check=False)
        if process.returncode != 0:
            raise BuildError(f"{' '.join(command[:2])} ... failed:\n{process.stderr[-4000:]}")
    return {
        "package": str(package),
        "core_package": str(core_package) if core_package is not None else None,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "headers": {k: str(v) for k, v in headers.items()},
        "libraries": {k: str(v) for k, v in libraries.items()},
        "core": core,
    }


def _copy_package(out: Path, name: str) -> Path:
    """``OUT/<name>/`` with the Python files of ``src/<name>``."""
    package = out / name
    package.mkdir(parents=True, exist_ok=True)
    for source in (HERE / "src" / name).iterdir():
        if source.is_file() and source.suffix in (".py", ".pyi", ".typed"):
            shutil.copy2(source, package / source.name)
    return package


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="build cudss_solver for this machine's torch, in place")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--include", type=Path, action="append", default=[], help="another header folder")
    parser.add_argument("--no-core", action="store_true", help="only the torch extension")
    args = parser.parse_args(argv)
    try:
        built = compile_and_link(args.out.resolve(), args.include, core=not args.no_core)
    except BuildError as error:
        sys.stderr.write(f"build_torch_extension: {error}\n")
        return 1
    sys.stdout.write(json.dumps(built) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
