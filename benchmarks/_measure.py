"""Run a command as a child process and read its wall time and peak memory (ru_maxrss) from wait4."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Measurement", "measure", "median_of"]


@dataclass(frozen=True)
class Measurement:
    seconds: float
    peak_rss_mib: float
    returncode: int


def measure(argv: Sequence[str]) -> Measurement:
    start = time.perf_counter()
    process = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.stderr is not None:
        process.stderr.close()
    return Measurement(elapsed, usage.ru_maxrss / 1024, process.returncode)


def median_of(argv: Sequence[str], repeat: int) -> Measurement:
    runs = [measure(argv) for _ in range(repeat)]
    return Measurement(
        statistics.median(r.seconds for r in runs),
        max(r.peak_rss_mib for r in runs),
        max(r.returncode for r in runs),
    )
