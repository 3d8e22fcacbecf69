"""Run-time loading of the real cuDSS wheel: slimwheel.runtime against cuda-pathfinder and plain ctypes.

    scripts/run-bench benchmarks/bench_runtime.py [--repeat 10] [--venv DIR]

Builds (once, kept under ~/.cache/slimwheel-bench/runtime-venv) a venv where pip, with its normal
configuration and cache, installs ``nvidia-cudss-cu13`` with its real dependencies and the newest
``cuda-pathfinder`` (1.9 or newer is needed: 1.8 cannot find cuDSS 1.x). slimwheel's runtime is
standard library only; a ``.pth`` file in the venv puts this checkout's ``src`` on ``sys.path`` for
every process measured, so each starts the same way. Bytecode is written and read under
~/.cache/slimwheel-bench/runtime-pycache (``PYTHONPYCACHEPREFIX``) for every module alike, so no
process compiles source, as after a pip install, and nothing is written into the checkout.

Each way of loading runs in a fresh process, interleaved, after one warm-up round. Two times are kept:
the work itself (``time.perf_counter()`` around the imports and the load, printed by the process) and
the whole process's wall time (start to exit, read by this script). The floor is
``ctypes.CDLL(<absolute path>, mode=RTLD_GLOBAL)``, whose dependencies glibc finds the same way as in
the other two (cuDSS's RPATH finds cuBLAS and NVRTC in the venv).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

PROJECT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = Path.home() / ".cache" / "slimwheel-bench" / "runtime-venv"
# Compiled bytecode for every process measured, kept outside the checkout: with PYTHONDONTWRITEBYTECODE
# set (as on the development machine) each process would compile slimwheel's source again.
PYCACHE = Path.home() / ".cache" / "slimwheel-bench" / "runtime-pycache"
PATHFINDER_MINIMUM = Version("1.9")

TIMED = """
import time
_start = time.perf_counter()
{work}
print((time.perf_counter() - _start) * 1000)
"""

LIB_PATH = """
import sysconfig
print(sysconfig.get_paths()["purelib"] + "/nvidia/cu13/lib/libcudss.so.1")
"""


@dataclass(frozen=True)
class Way:
    label: str
    command: str  # what the table shows
    work: str  # the Python statements timed


@dataclass(frozen=True)
class Run:
    work_ms: float
    process_ms: float


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLIMWHEEL_")}
    for variable in (
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "LD_LIBRARY_PATH",
        "CUDA_HOME",
        "CUDA_PATH",
        "CONDA_PREFIX",
    ):
        env.pop(variable, None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def _prepare_venv(venv_dir: Path) -> Path:
    sys.path.insert(0, str(PROJECT))
    from tests.support.venvs import make_venv, site_packages

    python = venv_dir / "bin" / "python"
    if not python.exists():
        python = make_venv(venv_dir)
    # pip with its normal configuration and cache; -U for the newest cuda-pathfinder pip offers.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "-q",
         "install", "-U", "nvidia-cudss-cu13", "cuda-pathfinder"],
        check=True,
        timeout=1800,
    )  # fmt: skip
    (site_packages(python) / "slimwheel-src.pth").write_text(f"{PROJECT / 'src'}\n")
    return python


def _output(python: Path, code: str) -> str:
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True, env=_env(), timeout=120
    ).stdout.strip()


def _run(python: Path, way: Way) -> Run:
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(python), "-c", TIMED.format(work=way.work)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert process.stdout is not None
    assert process.stderr is not None
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, _ = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.stdout.close()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{way.label} failed:\n{err.decode(errors='replace')}")
    return Run(float(out.decode().split()[-1]), elapsed * 1000)


def _measure(python: Path, ways: list[Way], repeat: int) -> dict[str, tuple[float, float]]:
    for way in ways:  # warm-up: page cache, .pyc files
        _run(python, way)
    runs: dict[str, list[Run]] = {way.label: [] for way in ways}
    for _ in range(repeat):
        for way in ways:  # interleaved, so the machine's load drifts over all of them alike
            runs[way.label].append(_run(python, way))
    return {
        label: (statistics.median(r.work_ms for r in done), statistics.median(r.process_ms for r in done))
        for label, done in runs.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args()
    python = _prepare_venv(args.venv)
    versions = _output(
        python,
        "from importlib.metadata import version as v; "
        "print(v('cuda-pathfinder'), v('nvidia-cudss-cu13'), v('nvidia-cublas'), v('nvidia-cuda-nvrtc'))",
    ).split()
    pathfinder = Version(versions[0])
    library = _output(python, LIB_PATH)
    floor_work = f"import ctypes, os\nctypes.CDLL({library!r}, mode=os.RTLD_GLOBAL)"
    loads = [
        Way("ctypes.CDLL (floor)", "ctypes.CDLL('<venv>/.../nvidia/cu13/lib/libcudss.so.1', RTLD_GLOBAL)",
            floor_work),
        Way("slimwheel.runtime", 'import slimwheel.runtime; slimwheel.runtime.load("cudss")',
            'import slimwheel.runtime\nslimwheel.runtime.load("cudss")'),
        Way("cuda-pathfinder",
            'from cuda.pathfinder import load_nvidia_dynamic_lib; load_nvidia_dynamic_lib("cudss")',
            'from cuda.pathfinder import load_nvidia_dynamic_lib\nload_nvidia_dynamic_lib("cudss")'),
    ]  # fmt: skip
    imports = [
        Way("import ctypes", "import ctypes", "import ctypes"),
        Way("import slimwheel.runtime", "import slimwheel.runtime", "import slimwheel.runtime"),
        Way("import cuda.pathfinder", "from cuda.pathfinder import load_nvidia_dynamic_lib",
            "from cuda.pathfinder import load_nvidia_dynamic_lib"),
        Way("interpreter only", "pass", "pass"),
    ]  # fmt: skip
    load_times = _measure(python, loads, args.repeat)
    import_times = _measure(python, imports, args.repeat)

    print(
        f"Python {sys.version.split()[0]}; cuda-pathfinder {versions[0]}, nvidia-cudss-cu13 {versions[1]}, "
        f"nvidia-cublas {versions[2]}, nvidia-cuda-nvrtc {versions[3]}; median of {args.repeat} runs each"
    )
    if pathfinder < PATHFINDER_MINIMUM:
        print(
            f"WARNING: cuda-pathfinder {pathfinder} is older than {PATHFINDER_MINIMUM}: "
            "it cannot find cuDSS 1.x"
        )
    print()
    print("| loading cuDSS | command | import + load | vs floor | whole process | vs floor |")
    print("|---|---|---|---|---|---|")
    floor_work_ms, floor_process_ms = load_times[loads[0].label]
    for way in loads:
        work_ms, process_ms = load_times[way.label]
        print(
            f"| {way.label} | `{way.command}` | {work_ms:.1f} ms | {work_ms / floor_work_ms:.2f}x "
            f"| {process_ms:.1f} ms | {process_ms / floor_process_ms:.2f}x |"
        )
    print()
    print("| import alone | command | import | whole process |")
    print("|---|---|---|---|")
    for way in imports:
        work_ms, process_ms = import_times[way.label]
        print(f"| {way.label} | `{way.command}` | {work_ms:.1f} ms | {process_ms:.1f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
