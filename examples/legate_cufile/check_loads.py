"""Which files the installed legate's libraries map, then a task on the GPU.

run_on_device.sh runs it on the GPU machine once the repaired wheel is installed into the machine's
own Python, beside the NVIDIA wheels there (nvidia-cufile 1.15.1.6, nvidia-nccl-cu13 2.28.9).

    python check_loads.py
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any


def mapped(*names: str) -> list[str]:
    """The files of this process whose path holds one of ``names``."""
    with Path("/proc/self/maps").open() as maps:
        return sorted({line.split()[-1] for line in maps if any(name in line for name in names)})


def main() -> int:
    say = sys.stdout.write
    spec = importlib.util.find_spec("legate")
    if spec is None or spec.origin is None:
        say("legate is not installed\n")
        return 1
    site = str(Path(spec.origin).parent.parent)
    # libhdf5_vfd_gds needed the vendored libcufile-1ecaf17d.so.1.15.1; repaired, libcufile.so.0.
    ctypes.CDLL(f"{site}/legate/lib64/legate/deps/libhdf5_vfd_gds.so.1", mode=os.RTLD_NOW)
    ctypes.CDLL(f"{site}/legate/lib64/liblegate.so", mode=os.RTLD_NOW)
    for name in ("libcufile", "libcudart", "libnccl"):
        files = [path.replace(site, "SITE") for path in mapped(f"{name}.", f"{name}-")]
        say(f"{name}: {', '.join(files) or 'not mapped'}\n")

    os.environ.setdefault("LEGATE_CONFIG", "--gpus 1 --cpus 1 --sysmem 512 --fbmem 1024 --utility 1")
    start = time.perf_counter()
    core: Any = importlib.import_module("legate.core")
    np: Any = importlib.import_module("numpy")
    runtime = core.get_legate_runtime()
    say(f"machine: {runtime.machine}\n")
    store = runtime.create_store(core.types.int64, shape=(1000,))
    store.fill(7)
    runtime.issue_execution_fence(block=True)
    total = int(np.asarray(store.get_physical_store().get_inline_allocation()).sum())
    seconds = time.perf_counter() - start
    say(f"a store of 1000 int64 filled with 7: sum {total} ({seconds:.2f} s with start-up)\n")
    return 0 if total == 7000 else 1


if __name__ == "__main__":
    sys.exit(main())
