"""The analysis's worker process: a real child of a real parent, killed with it.

A repair killed while its worker inflates half of a PyTorch wheel used to leave the worker running
(and inflating) until its share was done. The worker now asks the kernel to kill it when its parent
goes (PR_SET_PDEATHSIG): here a parent analysing a wheel of two 300 MB members is SIGKILLed while
its worker reads, and the worker must be gone within seconds, even stopped (SIGSTOP) so that it cannot
finish on its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.elfbuild import compile_shared
from tests.support.wheels import make_wheel

REPO = Path(__file__).resolve().parents[2]
WAIT = 60.0  # seconds to see the worker start
GONE_WITHIN = 15.0  # seconds the worker may take to die after its parent
_PADDING = 300 << 20  # zeros after each library: inflating them takes the worker a while

ANALYSE = """
import sys
from slimwheel.analysis import analyse_wheel
from slimwheel.catalog.model import Catalog
from slimwheel.wheel import Wheel
with Wheel.open(sys.argv[1]) as wheel:
    analyse_wheel(wheel, Catalog(()), jobs=2, parallel_bytes=1)
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _reads(pid: int, path: Path) -> bool:
    """The worker itself (past exec: between fork and exec the child still holds its parent's open
    files, the wheel among them) has the wheel open, so it has asked to die with its parent."""
    try:
        if b"slimwheel.analysis._worker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return False
        return any(str(fd.readlink()) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_the_worker_dies_with_a_killed_parent(tmp_path: Path) -> None:
    library = compile_shared(
        tmp_path / "libbig.so", {"big.c": "int big(void) { return 1; }"}, soname="libbig.so"
    )
    padded = library.read_bytes() + bytes(_PADDING)
    files = {"big/libone.so": padded, "big/libtwo.so": padded}
    wheel = make_wheel(tmp_path, "big", "1.0", files, tag="py3-none-linux_x86_64").resolve()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    parent = subprocess.Popen([sys.executable, "-c", ANALYSE, str(wheel)], env=env)
    worker = None
    try:
        deadline = time.monotonic() + WAIT
        while worker is None and time.monotonic() < deadline and parent.poll() is None:
            worker = next((c for c in _children(parent.pid) if _reads(c, wheel)), None)
            time.sleep(0.002)
        assert worker is not None, "the worker was never seen reading the wheel"
        os.kill(worker, signal.SIGSTOP)  # it cannot finish its share and exit by itself now
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + GONE_WITHIN
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker), f"worker {worker} outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if worker is not None and _alive(worker):
            os.kill(worker, signal.SIGKILL)
