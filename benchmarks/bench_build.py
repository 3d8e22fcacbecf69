"""Build the cudss_solver example through ``build-backend = "slimwheel.build"``: time and disk of an
isolated build (cold and warm pip cache) against a build without isolation, what the isolated
environment downloads, and what a link needs at the least.

    scripts/run-bench benchmarks/bench_build.py [--repeat N]

Each build is ``pip wheel`` of examples/cudss_solver into a fresh folder, timed as a whole (pip, the
build environment, scikit-build-core, CMake, gcc, the finishing repair), every process counted:

- ``no isolation``: ``--no-build-isolation`` in a venv that already has the build requirements;
- ``isolated, warm``: pip makes the build environment from its own (warm) cache;
- ``isolated, cold``: the same with an empty ``PIP_CACHE_DIR``; the size of that cache afterwards is
  what pip kept of its downloads (an index whose responses pip may not cache leaves it empty).

"What a link needs": the build requirements installed with their dependencies (what an isolated build
environment holds) against the distributions whose files the link reads (``--no-deps``): cuBLAS and
the rest of cuDSS's dependencies are in the first and never opened by the build.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._measure import Measurement, median_of

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cudss_solver"
# What the backend asks pip for on this example (CUDA 13, no .cu sources), and what the link reads.
BUILD_REQUIREMENTS = ("scikit-build-core>=0.10", "nvidia-cudss-cu13", "cuda-toolkit[cudart,crt]==13.*")
LINKED = ("nvidia-cudss-cu13", "nvidia-cuda-runtime==13.*", "nvidia-cuda-crt==13.*")


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    subprocess.run(argv, check=True, env=env)


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def _size_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


def _site(python: Path) -> Path:
    return next((python.parent.parent / "lib").glob("python3*/site-packages"))


def _pip_wheel(out: Path, *options: str, python: Path | None = None) -> list[str]:
    target = ["--python", str(python)] if python is not None else []  # pip wants it before "wheel"
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *target, "wheel",
            "--no-deps", "-w", str(out), *options, str(EXAMPLE)]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per warm case (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-build-") as scratch:
        tmp = Path(scratch)
        wheelhouse = tmp / "wheelhouse"
        _pip("wheel", "--no-deps", "-w", str(wheelhouse), str(ROOT))
        links = ["--find-links", str(wheelhouse)]

        full = _venv(tmp / "full")
        _pip("--python", str(full), "install", *links, "slimwheel", *BUILD_REQUIREMENTS)
        least = _venv(tmp / "least")
        _pip("--python", str(least), "install", "--no-deps", *LINKED)

        cases: list[tuple[str, Measurement, str]] = []
        no_isolation = _pip_wheel(tmp / "plain", "--no-build-isolation", python=full)
        plain = median_of(no_isolation, args.repeat)
        cases.append(("no isolation", plain, ""))
        warm = median_of(_pip_wheel(tmp / "warm", *links), args.repeat)
        cases.append(("isolated, warm pip cache", warm, ""))
        cache = tmp / "pip-cache"
        os.environ["PIP_CACHE_DIR"] = str(cache)
        try:
            cold = median_of(_pip_wheel(tmp / "cold", *links), 1)
        finally:
            del os.environ["PIP_CACHE_DIR"]
        cases.append(("isolated, cold pip cache", cold, f"pip cache afterwards: {_size_mib(cache):,.0f} MiB"))

        wheel = next((tmp / "plain").glob("*.whl"))
        print(f"example wheel: {wheel.name}, {wheel.stat().st_size:,} bytes\n")
        print("| build | wall s | peak RSS, whole tree MiB | note |")
        print("|---|---|---|---|")
        for label, measured, note in cases:
            status = "" if measured.returncode == 0 else f" (exit {measured.returncode})"
            print(f"| {label}{status} | {measured.seconds:.1f} | {measured.tree_rss_mib:.0f} | {note} |")
        full_mib, least_mib = _size_mib(_site(full) / "nvidia"), _size_mib(_site(least) / "nvidia")
        print()
        print("| build environment: nvidia/ | MiB |")
        print("|---|---|")
        print(f"| the build requirements with their dependencies (an isolated build's) | {full_mib:,.0f} |")
        print(f"| only what the link reads ({', '.join(LINKED)}, --no-deps) | {least_mib:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
