"""Run kEDM's GPU algorithms on a logistic map and say what the process mapped for CUDA.

Prints one JSON object: what kEDM's Kokkos says of CUDA, the embedding dimension ``edim`` picks, a
simplex forecast's length and sum, the simplex and S-Map forecast skills (rho), CCM skills, and the
files mapped for the CUDA runtime and cuBLAS. Run it with the wheel as published and with the wheel
repaired: everything but the mapped files must agree.

    python run_kedm.py
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any


def _logistic(np: Any, n: int, r: float = 3.8, x0: float = 0.4) -> Any:
    series = np.empty(n, dtype=np.float32)
    x = x0
    for i in range(n):
        x = r * x * (1.0 - x)
        series[i] = x
    return series


def _mapped(pattern: str) -> list[str]:
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        files = {line.split()[-1] for line in maps if "/" in line}
    return sorted(str(Path(f).resolve()) for f in files if re.match(pattern, Path(f).name))


def main() -> None:
    np: Any = importlib.import_module("numpy")  # on the GPU machine, not where this is type-checked
    kedm: Any = importlib.import_module("kedm")
    x = _logistic(np, 2000)
    y = np.roll(x, 1) * 0.5 + 0.25  # a second series driven by the first
    lib, pred = x[:1000], x[1000:]
    best_e = int(kedm.edim(x, E_max=10))
    forecast = np.asarray(kedm.simplex(lib, pred, E=best_e))
    ccm = kedm.ccm(x, y, lib_sizes=[200, 1000], sample=4, E=best_e, seed=42)
    result = {
        "cuda": sorted(set(re.findall(r"KOKKOS_ENABLE_CUDA\S*|Kokkos::Cuda\b", kedm.get_kokkos_config()))),
        "edim": best_e,
        "simplex": [len(forecast), round(float(forecast.sum()), 4)],
        "rho_simplex": round(float(kedm.eval_simplex(lib, pred, E=best_e)), 6),
        "rho_smap": round(float(kedm.eval_smap(lib, pred, E=best_e, theta=2.0)), 6),
        "rho_ccm": [round(float(v), 6) for v in ccm],
        "libcudart": _mapped(r"libcudart"),
        "libcublas": _mapped(r"libcublas"),
    }
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
