"""Run a command as a child process and read its wall time and peak memory.

Two memory figures: ``peak_rss_mib`` is ``ru_maxrss`` from ``wait4``, the largest peak of any single
process of the tree (the kernel reports the biggest, not the sum); ``tree_rss_mib`` is the largest
sum of the resident sets of the whole tree (the command, its worker processes, patchelf...) seen by
sampling ``/proc`` every few milliseconds, which is what "every process" costs the machine at once.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Measurement", "measure", "median_of"]

_SAMPLE_SECONDS = 0.01
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Measurement:
    seconds: float
    peak_rss_mib: float
    returncode: int
    tree_rss_mib: float = 0.0


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, through /proc/<pid>/task/<tid>/children."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            tasks = list(Path(f"/proc/{current}/task").glob("*/children"))
        except OSError:
            continue  # the process ended while it was listed
        for task in tasks:
            try:
                pending += [int(child) for child in task.read_text().split()]
            except OSError:
                continue  # the process ended meanwhile
    return found


def _rss_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


class _Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, sum(_rss_bytes(p) for p in _tree(self.pid)))
            self.done.wait(_SAMPLE_SECONDS)


def measure(argv: Sequence[str]) -> Measurement:
    start = time.perf_counter()
    process = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = _Sampler(process.pid)
    sampler.start()
    # stderr is drained by the kernel buffer only: commands here write a few lines at most.
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.stderr is not None:
        process.stderr.close()
    return Measurement(elapsed, usage.ru_maxrss / 1024, process.returncode, sampler.peak / 2**20)


def median_of(argv: Sequence[str], repeat: int) -> Measurement:
    runs = [measure(argv) for _ in range(repeat)]
    return Measurement(
        statistics.median(r.seconds for r in runs),
        max(r.peak_rss_mib for r in runs),
        max(r.returncode for r in runs),
        max(r.tree_rss_mib for r in runs),
    )
