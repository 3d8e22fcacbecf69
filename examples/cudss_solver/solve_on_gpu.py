"""Solve the 3D Poisson problem with the installed (repaired) cudss_solver wheel on a GPU.

    python examples/cudss_solver/solve_on_gpu.py [N] [--max-residual 1e-10]

N defaults to 100: 10^6 unknowns. ``--preload`` first calls
``slimwheel.runtime.preload("cudss-solver")`` (for an install the extension's RPATH cannot reach, such
as ``pip install --target``; a wheel repaired with ``--embed-loader`` does this itself at import) and
prints what it loaded and from where. Prints the cuDSS and CUDA versions, where libcudss and libcudart
were loaded from, the time of each phase and the relative residual ||b - A x|| / ||b|| of each run
(--repeat, default 2: the first pays one-time costs), then one JSON line with everything.
Exits 1 when a residual is not below --max-residual.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

PHASES = ("build_matrix", "context", "upload", "analysis", "factorization", "solve", "download", "residual")


def mapped_libraries(*names: str) -> dict[str, list[str]]:
    """The files of the named shared libraries mapped into this process, from /proc/self/maps."""
    found: dict[str, list[str]] = {name: [] for name in names}
    with Path("/proc/self/maps").open() as maps:
        for line in maps:
            path = line.split()[-1]
            for name in names:
                if path.endswith("/" + name) and path not in found[name]:
                    found[name].append(path)
    return found


def report(run: int, result: dict[str, Any], wall: float) -> None:
    out = sys.stdout
    out.write(
        f"run {run}: n={result['n']}, {result['unknowns']} unknowns, {result['nnz_upper']} stored entries "
        f"(upper triangle), {result['lu_nnz']} in the factors\n"
    )
    timings = result["timings"]
    for phase in PHASES:
        out.write(f"  {phase:<14} {timings[phase] * 1e3:10.2f} ms\n")
    out.write(f"  {'total (wall)':<14} {wall * 1e3:10.2f} ms\n")
    out.write(f"  relative residual ||b - Ax|| / ||b|| = {result['residual']:.3e}\n")
    out.write(f"  max |x - 1| = {result['max_error']:.3e}\n")


def preload() -> list[dict[str, Any]]:
    """slimwheel.runtime.preload of the package's manifest, before the extension module is imported."""
    from slimwheel.runtime import preload as preload_manifest

    loaded = preload_manifest("cudss-solver")
    for library in loaded:
        sys.stdout.write(
            f"preloaded {library.soname} ({library.how}) from {library.path}: {library.distribution} "
            f"{library.version}, library version {library.library_version}\n"
        )
    return [
        {"soname": library.soname, "path": library.path, "how": library.how.value,
         "distribution": library.distribution, "version": library.version,
         "library_version": library.library_version}
        for library in loaded
    ]  # fmt: skip


def import_solver() -> ModuleType:
    import cudss_solver

    return cudss_solver


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="solve the n^3 Poisson system with cuDSS")
    parser.add_argument("n", type=int, nargs="?", default=100, help="grid points per side (default 100)")
    parser.add_argument("--max-residual", type=float, default=1e-10)
    parser.add_argument(
        "--repeat", type=int, default=2, help="solves in this process (the first pays one-time costs)"
    )
    parser.add_argument(
        "--preload", action="store_true", help="slimwheel.runtime.preload('cudss-solver') before the import"
    )
    args = parser.parse_args(argv)
    out = sys.stdout
    preloaded = preload() if args.preload else []
    cudss_solver = import_solver()
    major, minor, patch = cudss_solver.cudss_version()
    out.write(f"cudss_solver {cudss_solver.__version__} from {Path(str(cudss_solver.__file__)).parent}\n")
    out.write(f"cuDSS {major}.{minor}.{patch}, CUDA runtime {cudss_solver.cuda_runtime_version()}\n")
    runs = []
    for run in range(1, max(args.repeat, 1) + 1):
        started = time.perf_counter()
        result = cudss_solver.solve_poisson3d(args.n)
        wall = time.perf_counter() - started
        if run == 1:
            out.write(f"CUDA driver {result['cuda_driver_version']}\n")
            for name, paths in mapped_libraries(
                "libcudss.so.1", "libcudart.so.13", "libcublas.so.13"
            ).items():
                out.write(f"{name}: {', '.join(paths) or 'not loaded'}\n")
        report(run, result, wall)
        runs.append({"wall_seconds": wall, **result})
    out.write(
        json.dumps({"cudss_version": [major, minor, patch], "preloaded": preloaded, "runs": runs}) + "\n"
    )
    worst = max(run["residual"] for run in runs)
    if not worst < args.max_residual:
        sys.stderr.write(f"residual {worst:.3e} is not below {args.max_residual:.0e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
