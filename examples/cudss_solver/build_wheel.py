"""Build the ``cudss_solver`` example into a wheel, linked against NVIDIA's pip wheels.

    python examples/cudss_solver/build_wheel.py -o DIR [--cudss-version V] [--runtime-version V]
                                                [--cuda-include DIR] [--json]

A fresh build as a project would make it: ``nvidia-cudss-cu13`` and ``nvidia-cuda-runtime`` are
fetched from the package index the way pip resolves it (slimwheel's IndexClient, cached under
slimwheel's download cache), and their headers and libraries are unpacked into a temporary folder.
gcc compiles ``cudss_solver.c`` against ``cudss.h`` from the cuDSS wheel and the CUDA runtime headers
of a CUDA toolkit (the runtime wheel's headers need ``crt/`` from another wheel), and links the full
sonames (``-l:libcudss.so.1 -l:libcudart.so.13``: the wheels ship no unversioned ``.so``), with no
RPATH. The wheel written is ``cudss_solver-0.1.0-cp310-abi3-linux_x86_64.whl``: the extension uses the
Python 3.10 limited API, so the same file imports on Python 3.10 to 3.14. ``slimwheel repair`` then
adds the Requires-Dist lines and the RPATH into ``nvidia/cu13/lib``.

Without a version, each NVIDIA wheel is the newest release that is not a pre-release. ``--json``
prints what was used (versions, files, include folder, the extension's DT_NEEDED) as one document.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from slimwheel.elf import read_elf_file
from slimwheel.index import Cache, DistributionFile, IndexClient, resolve_index_settings
from slimwheel.wheel import WheelWriter, date_time_from_environment

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cudss_solver.c"
PACKAGE = HERE / "src" / "cudss_solver"
NAME = "cudss_solver"
VERSION = "0.1.0"
TAG = "cp310-abi3-linux_x86_64"
EXTENSION = f"{NAME}/_cudss_solver.abi3.so"
CUDSS = "nvidia-cudss-cu13"
RUNTIME = "nvidia-cuda-runtime"
LIB_DIR = "nvidia/cu13/lib"
INCLUDE_DIR = "nvidia/cu13/include"
CUDSS_LIBRARY = "libcudss.so.1"
RUNTIME_LIBRARY = "libcudart.so.13"
# Reproducible by default; SOURCE_DATE_EPOCH overrides it.
DEFAULT_DATE_TIME = (2026, 1, 1, 0, 0, 0)
_MANYLINUX_X86_64 = re.compile(r"-(?:[^-]+\.)?manylinux[^-]*x86_64(?:\.[^-]+)?\.whl$")


class BuildError(Exception):
    """The build cannot go on; the message says why and what to do."""


@dataclass(frozen=True)
class Fetched:
    distribution: str
    version: str
    filename: str
    path: str


@dataclass(frozen=True)
class BuildResult:
    wheel: str
    size: int
    cudss: Fetched
    cuda_runtime: Fetched
    cuda_include: str
    compiler: str
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]


def pick_wheel(files: tuple[DistributionFile, ...], project: str, version: str | None) -> DistributionFile:
    """The manylinux x86_64 wheel of ``version``, else of the newest release that is not a pre-release."""
    candidates: list[tuple[Version, DistributionFile]] = []
    for file in files:
        if not file.is_wheel or file.is_yanked or not _MANYLINUX_X86_64.search(file.filename):
            continue
        try:
            parsed = Version(file.version or "")
        except InvalidVersion:
            continue
        if version is not None:
            if parsed == Version(version):
                candidates.append((parsed, file))
        elif not parsed.is_prerelease and not parsed.is_devrelease:
            candidates.append((parsed, file))
    if not candidates:
        wanted = f"version {version}" if version else "a final release"
        raise BuildError(f"the index lists no manylinux x86_64 wheel of {project} for {wanted}")
    newest = max(version for version, _ in candidates)
    return sorted((f for v, f in candidates if v == newest), key=lambda f: f.filename)[0]


def fetch(client: IndexClient, project: str, version: str | None) -> tuple[Fetched, Path]:
    page = client.project(project)
    file = pick_wheel(page.files, project, version)
    path = client.download(file)
    return Fetched(str(canonicalize_name(project)), file.version or "", file.filename, str(path)), path


def _has_runtime_headers(folder: Path) -> bool:
    return (folder / "cuda_runtime_api.h").is_file() and (folder / "crt" / "host_defines.h").is_file()


def _nvcc_include() -> Path | None:
    """The include folder nvcc itself uses (``nvcc --dryrun`` prints it), wrappers and symlinks aside."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "probe.cu"
        source.write_text("")
        try:
            process = subprocess.run(
                [nvcc, "--dryrun", "-c", str(source), "-o", str(Path(scratch) / "probe.o")],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    for line in (process.stderr + process.stdout).splitlines():
        match = re.search(r'INCLUDES="-I([^"]+)"', line)
        if match:
            return Path(os.path.normpath(match[1].strip()))
    top = Path(nvcc).resolve().parent.parent / "include"
    return top if top.is_dir() else None


def find_cuda_include(explicit: str | None) -> Path:
    """The CUDA runtime headers: --cuda-include, $CUDA_HOME or $CUDA_PATH, nvcc's own, /usr/local/cuda."""
    if explicit:
        folder = Path(explicit)
        if not _has_runtime_headers(folder):
            raise BuildError(f"--cuda-include {folder}: no cuda_runtime_api.h and crt/host_defines.h there")
        return folder
    candidates: list[tuple[str, Path]] = []
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            candidates.append((f"${variable}", Path(os.environ[variable]) / "include"))
    nvcc = _nvcc_include()
    if nvcc is not None:
        candidates.append(("nvcc --dryrun", nvcc))
    candidates.append(("the default toolkit", Path("/usr/local/cuda/include")))
    for _, folder in candidates:
        if _has_runtime_headers(folder):
            return folder
    looked = "; ".join(f"{where}: {folder}" for where, folder in candidates)
    raise BuildError(
        "no CUDA toolkit headers (cuda_runtime_api.h with crt/host_defines.h) found "
        f"(looked at {looked}); install a CUDA 13 toolkit, put its nvcc on PATH, or pass --cuda-include DIR"
    )


def unpack(wheel: Path, prefix: str, target: Path) -> None:
    """Members of ``wheel`` under ``prefix`` into ``target`` (paths kept), skipping unsafe names."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/")]
        if not names:
            raise BuildError(f"{wheel.name} has nothing under {prefix}")
        for name in names:
            if name.startswith("/") or ".." in name.split("/"):
                raise BuildError(f"{wheel.name}: unsafe member name {name!r}")
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(name) as source, destination.open("wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)


def compile_extension(work: Path, cuda_include: Path, output: Path) -> str:
    """gcc the extension; returns the compiler's version line."""
    gcc = shutil.which(os.environ.get("CC", "gcc"))
    if gcc is None:
        raise BuildError("gcc is not on PATH (or $CC names no program): a C compiler is needed")
    python_include = Path(sysconfig.get_paths()["include"])
    if not (python_include / "Python.h").is_file():
        raise BuildError(f"Python.h is missing from {python_include}: install Python's development headers")
    output.parent.mkdir(parents=True, exist_ok=True)
    lib_dir = work / LIB_DIR
    command = [
        gcc,
        "-O2",
        "-fPIC",
        "-shared",
        "-std=c11",
        "-D_POSIX_C_SOURCE=200809L",
        "-Wall",
        "-Wextra",
        "-fvisibility=hidden",
        f"-I{python_include}",
        f"-I{work / INCLUDE_DIR}",
        f"-I{cuda_include}",
        str(SOURCE),
        "-o",
        str(output),
        f"-L{lib_dir}",
        f"-l:{CUDSS_LIBRARY}",
        f"-l:{RUNTIME_LIBRARY}",
        "-lm",
    ]
    process = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    if process.returncode != 0:
        raise BuildError(f"gcc failed ({process.returncode}):\n{' '.join(command)}\n{process.stderr}")
    if process.stderr.strip():
        sys.stderr.write(process.stderr)
    version = subprocess.run([gcc, "--version"], capture_output=True, text=True, check=False).stdout
    return (version.splitlines() or ["gcc"])[0]


def write_wheel(extension: Path, out_dir: Path) -> Path:
    dist_info = f"{NAME}-{VERSION}.dist-info"
    metadata = "\n".join(
        [
            "Metadata-Version: 2.1",
            f"Name: {NAME}",
            f"Version: {VERSION}",
            "Summary: cuDSS from NVIDIA's pip wheels through a limited-API C extension (slimwheel example)",
            "Requires-Python: >=3.10",
            "",
        ]
    )
    wheel_file = "\n".join(
        [
            "Wheel-Version: 1.0",
            "Generator: slimwheel-example-build (0.1.0)",
            "Root-Is-Purelib: false",
            f"Tag: {TAG}",
            "",
        ]
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{NAME}-{VERSION}-{TAG}.whl"
    date_time = date_time_from_environment(os.environ) or DEFAULT_DATE_TIME
    with WheelWriter(target, date_time=date_time) as writer:
        for name in ("__init__.py", "_cudss_solver.pyi", "py.typed"):
            writer.add_file(f"{NAME}/{name}", PACKAGE / name, mode=0o644)
        writer.add_file(EXTENSION, extension, mode=0o755)
        writer.add_bytes(f"{dist_info}/METADATA", metadata.encode())
        writer.add_bytes(f"{dist_info}/WHEEL", wheel_file.encode())
        writer.close(f"{dist_info}/RECORD")
    return target


def build(
    out_dir: Path,
    *,
    cudss_version: str | None = None,
    runtime_version: str | None = None,
    cuda_include: str | None = None,
) -> BuildResult:
    include = find_cuda_include(cuda_include)
    with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
        cudss, cudss_wheel = fetch(client, CUDSS, cudss_version)
        runtime, runtime_wheel = fetch(client, RUNTIME, runtime_version)
    with tempfile.TemporaryDirectory(prefix="cudss-solver-build-") as scratch:
        work = Path(scratch)
        unpack(cudss_wheel, f"{INCLUDE_DIR}/", work)
        unpack(cudss_wheel, f"{LIB_DIR}/{CUDSS_LIBRARY}", work)
        unpack(runtime_wheel, f"{LIB_DIR}/{RUNTIME_LIBRARY}", work)
        extension = work / "build" / EXTENSION
        compiler = compile_extension(work, include, extension)
        facts = read_elf_file(extension, symbols=False)
        for soname in (CUDSS_LIBRARY, RUNTIME_LIBRARY):
            if soname not in facts.needed:
                raise BuildError(
                    f"the extension does not need {soname} (DT_NEEDED: {', '.join(facts.needed)})"
                )
        wheel = write_wheel(extension, out_dir)
    return BuildResult(
        wheel=str(wheel),
        size=wheel.stat().st_size,
        cudss=cudss,
        cuda_runtime=runtime,
        cuda_include=str(include),
        compiler=compiler,
        needed=tuple(facts.needed),
        rpath=tuple(facts.rpath),
        runpath=tuple(facts.runpath),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-o", "--out-dir", type=Path, default=Path("dist"), help="where the wheel goes")
    parser.add_argument("--cudss-version", help=f"the {CUDSS} release to build against (default: newest)")
    parser.add_argument("--runtime-version", help=f"the {RUNTIME} release (default: newest)")
    parser.add_argument("--cuda-include", help="the CUDA toolkit's include folder (default: found)")
    parser.add_argument("--json", action="store_true", help="print what was built as JSON")
    args = parser.parse_args(argv)
    try:
        result = build(
            args.out_dir,
            cudss_version=args.cudss_version,
            runtime_version=args.runtime_version,
            cuda_include=args.cuda_include,
        )
    except BuildError as error:
        sys.stderr.write(f"build_wheel.py: error: {error}\n")
        return 1
    if args.json:
        sys.stdout.write(json.dumps(asdict(result), indent=2) + "\n")
    else:
        sys.stdout.write(
            f"wrote {result.wheel} ({result.size} bytes) against {CUDSS} {result.cudss.version} and "
            f"{RUNTIME} {result.cuda_runtime.version}; DT_NEEDED {', '.join(result.needed)}; "
            f"RPATH {':'.join(result.rpath) or '(none)'}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
