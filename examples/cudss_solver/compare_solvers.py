"""The torch binding beside scipy and cupyx on one GPU: the n^3 Poisson system, three solvers.

    python examples/cudss_solver/compare_solvers.py [--n 100] [--n 40] [--repeat 2] [--timeout 120]
                                                    [--host-threads N] [--max-residual 1e-10]

For each n: the 7-point 3D Laplacian (SPD, n^3 unknowns) built with scipy.sparse, b = A * ones, then

- ``cudss_solver_torch.solve_with_info`` on a ``torch.sparse_csr_tensor`` on the GPU (the upper
  triangle, ``matrix_type="spd"``, ``view="upper"``), on torch's current stream, ``--repeat`` times
  with cuDSS's host threading layer off and then on (``libcudss_mtlayer_gomp.so.1`` from the cuDSS
  wheel, found and loaded by ``slimwheel.runtime``; ``--threading env`` uses ``CUDSS_THREADING_LIB``
  instead): the time of each phase, the process's CPU time over the call (threads show as CPU time
  above the wall time), and the relative residual ||b - A x|| / ||b|| in float64 on the host;
- ``scipy.sparse.linalg.spsolve`` (CPU) on the full matrix in CSC, in a child process;
- ``cupyx.scipy.sparse.linalg.spsolve`` (GPU) on the full matrix in CSR, in a child process.

A child that takes longer than ``--timeout`` seconds is stopped and reported as such (SuperLU and
cuSOLVER's sparse QR are far from cuDSS's nested dissection on a 3D grid). Prints a table and one JSON
line with everything; exits 1 when a cuDSS residual of the first n is not below --max-residual.
``--baseline scipy|cupyx --n N`` is the child's entry point.
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def module(name: str) -> Any:
    """numpy, scipy, torch, cupy: on the GPU machine, not where this file is type-checked."""
    return importlib.import_module(name)


def poisson3d(n: int) -> Any:
    """The full 7-point Laplacian of n^3 unknowns (6 on the diagonal), CSR float64, x fastest."""
    sp = module("scipy.sparse")
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    eye = sp.identity(n, format="csr")
    a = sp.kron(eye, sp.kron(eye, one)) + sp.kron(eye, sp.kron(one, eye)) + sp.kron(one, sp.kron(eye, eye))
    return a.tocsr()


def residual(a: Any, x: Any, b: Any) -> float:
    np = module("numpy")

    return float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))


def run_baseline(kind: str, n: int) -> dict[str, Any]:
    """One solve by scipy (CPU) or cupyx (GPU), timed without building or uploading the matrix."""
    np = module("numpy")
    a = poisson3d(n)
    b = a @ np.ones(a.shape[0])
    if kind == "scipy":
        csc = a.tocsc()
        started = time.perf_counter()
        x = module("scipy.sparse.linalg").spsolve(csc, b)
        seconds = time.perf_counter() - started
        version = module("scipy").__version__
    else:
        cupy, csp = module("cupy"), module("cupyx.scipy.sparse")
        cupy_spsolve = module("cupyx.scipy.sparse.linalg").spsolve

        a_gpu, b_gpu = csp.csr_matrix(a), cupy.asarray(b)
        cupy.cuda.Device().synchronize()
        started = time.perf_counter()
        x_gpu = cupy_spsolve(a_gpu, b_gpu)
        cupy.cuda.Device().synchronize()
        seconds = time.perf_counter() - started
        x = cupy.asnumpy(x_gpu)
        version = cupy.__version__
    return {"solver": kind, "version": version, "n": n, "seconds": seconds, "residual": residual(a, x, b)}


def baseline(kind: str, n: int, timeout: float) -> dict[str, Any]:
    """``run_baseline`` in a child process, stopped after ``timeout`` seconds."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--baseline", kind, "--n", str(n)]
    started = time.perf_counter()
    try:
        process = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"solver": kind, "n": n, "timed_out_after": timeout}
    wall = time.perf_counter() - started
    if process.returncode != 0:
        lines = (process.stderr or process.stdout).strip().splitlines()
        return {"solver": kind, "n": n, "failed": lines[-1] if lines else f"exit {process.returncode}"}
    result: dict[str, Any] = json.loads(process.stdout.strip().splitlines()[-1])
    result["process_seconds"] = wall
    return result


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def torch_runs(n: int, repeat: int, threading: bool | str, host_threads: int) -> list[dict[str, Any]]:
    np, sp, torch = module("numpy"), module("scipy.sparse"), module("torch")
    binding = module("cudss_solver_torch")

    a = poisson3d(n)
    upper = sp.triu(a, format="csr")
    b = a @ np.ones(a.shape[0])
    device = torch.device("cuda")
    a_t = torch.sparse_csr_tensor(
        torch.from_numpy(upper.indptr.astype(np.int32)),
        torch.from_numpy(upper.indices.astype(np.int32)),
        torch.from_numpy(upper.data),
        size=upper.shape,
    ).to(device)
    b_t = torch.from_numpy(b).to(device)
    torch.cuda.synchronize()
    runs = []
    for setting in (False, threading):
        for run in range(1, repeat + 1):
            cpu, started = cpu_seconds(), time.perf_counter()
            x, info = binding.solve_with_info(
                a_t, b_t, matrix_type="spd", view="upper", threading=setting,
                host_threads=host_threads,
            )  # fmt: skip
            torch.cuda.synchronize()
            wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
            x_host = x.cpu().numpy()
            runs.append({
                "solver": "cudss_solver_torch", "n": n, "run": run, "threading": info.threading_layer,
                "analysis": info.analysis, "factorization": info.factorization, "solve": info.solve,
                "wall": wall, "cpu": cpu, "lu_nnz": info.lu_nnz, "residual": residual(a, x_host, b),
                "max_error": float(np.abs(x_host - 1.0).max()),
            })  # fmt: skip
    return runs


def describe(r: dict[str, Any]) -> str:
    """One result as a line of the table."""
    head = f"n={r['n']:<4} "
    if r["solver"] == "cudss_solver_torch":
        layer = "off" if r["threading"] == "off" else "on"
        return (
            f"{head}cuDSS (torch) threading {layer:<3} run {r['run']}: analysis {r['analysis']:8.3f} s, "
            f"factorization {r['factorization']:7.3f} s, solve {r['solve'] * 1e3:8.1f} ms, "
            f"wall {r['wall']:8.3f} s, CPU {r['cpu']:8.2f} s, residual {r['residual']:.2e}\n"
        )
    if "seconds" in r:
        return f"{head}{r['solver']:<5} spsolve: {r['seconds']:8.3f} s, residual {r['residual']:.2e}\n"
    why = r.get("failed") or f"timed out after {r['timed_out_after']:g} s"
    return f"{head}{r['solver']:<5} spsolve: {why}\n"


def mapped(*names: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {name: [] for name in names}
    with Path("/proc/self/maps").open() as maps:
        for line in maps:
            path = line.split()[-1]
            for name in names:
                if path.endswith("/" + name) and path not in found[name]:
                    found[name].append(path)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cuDSS through torch beside scipy and cupyx spsolve")
    parser.add_argument("--n", type=int, action="append", help="grid points per side (default: 100)")
    parser.add_argument("--repeat", type=int, default=2, help="cuDSS solves per setting (the first pays JIT)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for each scipy/cupyx solve")
    parser.add_argument("--threading", default="wheel", help="'wheel' (slimwheel.runtime) or 'env'")
    parser.add_argument("--host-threads", type=int, default=0, help="CUDSS_CONFIG_HOST_NTHREADS (0: cuDSS's)")
    parser.add_argument("--skip", action="append", default=[], choices=("scipy", "cupyx"))
    parser.add_argument("--max-residual", type=float, default=1e-10)
    parser.add_argument("--baseline", choices=("scipy", "cupyx"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = args.n or [100]
    if args.baseline:
        sys.stdout.write(json.dumps(run_baseline(args.baseline, sizes[0])) + "\n")
        return 0

    torch, cudss_solver = module("torch"), module("cudss_solver")
    out = sys.stdout
    threading = "env" if args.threading == "env" else True
    out.write(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name()}\n")
    out.write(
        f"cudss_solver from {Path(str(cudss_solver.__file__)).parent}, cuDSS {cudss_solver.cudss_version()}\n"
    )
    results: list[dict[str, Any]] = []
    for n in sizes:
        runs = torch_runs(n, max(args.repeat, 1), threading, args.host_threads)
        results += runs
        for kind in ("scipy", "cupyx"):
            if kind not in args.skip:
                results.append(baseline(kind, n, args.timeout))
    libraries = mapped(
        "libcudss.so.1", "libcudss_mtlayer_gomp.so.1", "libcudart.so.13", "libc10.so", "libgomp.so.1"
    )
    for name, paths in libraries.items():
        out.write(f"{name}: {', '.join(paths) or 'not loaded'}\n")
    out.writelines(describe(r) for r in results)
    out.write(json.dumps({"mapped": libraries, "results": results}) + "\n")
    first = [r["residual"] for r in results if r["solver"] == "cudss_solver_torch" and r["n"] == sizes[0]]
    if not max(first) < args.max_residual:
        sys.stderr.write(f"cuDSS residual {max(first):.3e} is not below {args.max_residual:.0e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
