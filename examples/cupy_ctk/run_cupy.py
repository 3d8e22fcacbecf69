"""Use each CUDA library CuPy links once (cuRAND, cuBLAS, cuSOLVER, cuFFT, cuSPARSE, NVRTC), then say
where the process mapped them from and where the loader resolves each extension module's DT_NEEDED.

    python run_cupy.py
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

_LIBRARIES = ("libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse", "libnvrtc", "libnvJitLink")
# Extension modules that link CUDA libraries, relative to site-packages, without the ABI suffix.
_MODULES = ("cupy_backends/cuda/libs/cublas", "cupy/cuda/cufft", "cupyx/_cusolver")


def main() -> None:
    say = sys.stdout.write
    cp: Any = importlib.import_module("cupy")
    sparse: Any = importlib.import_module("cupyx.scipy.sparse")
    say(f"cupy {cp.__version__} {cp.__file__}\n")
    a = cp.random.rand(256, 256, dtype=cp.float32)  # cuRAND
    b = a @ a.T + 256 * cp.eye(256, dtype=cp.float32)  # cuBLAS
    x = cp.linalg.solve(b, cp.ones(256, dtype=cp.float32))  # cuSOLVER
    say(f"solve residual {float(cp.abs(b @ x - 1).max())}\n")
    say(f"fft[1] {complex(cp.fft.fft(cp.arange(8, dtype=cp.complex64))[1])}\n")  # cuFFT
    m = sparse.csr_matrix(cp.eye(4, dtype=cp.float32) * 2)
    say(f"spmv {(m @ cp.ones(4, dtype=cp.float32)).tolist()}\n")  # cuSPARSE
    source = r'extern "C" __global__ void add1(float* x) { x[threadIdx.x] += 1.0f; }'
    kernel = cp.RawKernel(source, "add1")  # NVRTC
    y = cp.zeros(4, dtype=cp.float32)
    kernel((1,), (4,), (y,))
    say(f"nvrtc kernel {y.tolist()}\n")
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        mapped = sorted({line.split()[-1] for line in maps if any(name in line for name in _LIBRARIES)})
    for path in mapped:
        say(f"mapped {Path(path).resolve()}\n")
    site = Path(cp.__file__).parent.parent
    for module in _MODULES:
        (found,) = (site / module).parent.glob(f"{Path(module).name}.cpython-*.so")
        dynamic = subprocess.run(["readelf", "-d", found], capture_output=True, text=True, check=True).stdout
        rpath = [line.split("[")[-1].rstrip("]") for line in dynamic.splitlines() if "PATH)" in line]
        ldd = subprocess.run(["ldd", found], capture_output=True, text=True, check=True).stdout
        resolved = [line.split()[2] for line in ldd.splitlines() if any(name in line for name in _LIBRARIES)]
        say(f"{module}: RPATH {rpath} -> {resolved}\n")


if __name__ == "__main__":
    main()
