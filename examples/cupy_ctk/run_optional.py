"""CuPy repaired with ``--optional cutensor --optional nccl``: what its METADATA asks pip for, then NCCL
(installed) used for one all-reduce and cuTENSOR (not installed) asked for, and where the process
mapped NCCL from.

    python run_optional.py
"""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path
from typing import Any


def main() -> None:
    say = sys.stdout.write
    for line in importlib.metadata.requires("cupy-cuda13x") or ():
        if "cutensor" in line or "nccl" in line:
            say(f"Requires-Dist: {line}\n")
    cp: Any = importlib.import_module("cupy")
    say(f"cupy {cp.__version__}: {float((cp.arange(4.0) @ cp.arange(4.0)).get())} (cuBLAS)\n")
    nccl: Any = importlib.import_module("cupy.cuda.nccl")
    communicator = nccl.NcclCommunicator.initAll([0])[0]
    buffer = cp.arange(4, dtype=cp.float32)
    communicator.allReduce(buffer.data.ptr, buffer.data.ptr, 4, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, 0)
    cp.cuda.Stream.null.synchronize()
    say(f"nccl {nccl.get_version()}: all-reduce over 1 rank {buffer.tolist()}\n")
    try:
        importlib.import_module("cupy_backends.cuda.libs.cutensor")
        say("cutensor: loaded\n")
    except ImportError as error:
        say(f"cutensor: {type(error).__name__}: {str(error).splitlines()[0]}\n")
    with Path("/proc/self/maps").open(encoding="utf-8") as maps:
        mapped = sorted({line.split()[-1] for line in maps if "libnccl" in line or "libcutensor" in line})
    for path in mapped:
        say(f"mapped {Path(path).resolve()}\n")
    site = Path(cp.__file__).parent.parent
    for module in ("nccl", "cutensor"):
        (found,) = (site / "cupy_backends/cuda/libs").glob(f"{module}.cpython-*.so")
        dynamic = subprocess.run(["readelf", "-d", found], capture_output=True, text=True, check=True).stdout
        rpath = [line.split("[")[-1].rstrip("]") for line in dynamic.splitlines() if "PATH)" in line]
        say(f"cupy_backends/cuda/libs/{module}: RPATH {rpath}\n")


if __name__ == "__main__":
    main()
