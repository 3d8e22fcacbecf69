"""Work over a wheel's big members on two threads: inflating (zlib, ISA-L) and hashing release the
GIL, so two members read at once take about the time of the bigger one. Each thread reads through
its own open of the wheel, since a :class:`~slimwheel.wheel.Wheel` reads through one file position.
Threads, not processes: the work hands back objects that a process would have to pickle, and a
second Python would cost 25 MiB more of the 200 MiB a PyTorch repair may take.

Used where each thread keeps little of what it reads (the output's re-read of the members repair
edited: their dynamic tables). Planning the edits on two threads was tried and taken out: the main
process of a PyTorch repair went from 167 to 223 MiB (two malloc arenas, each holding the 1 MiB
chunks its thread inflated), for 2 s of 48.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from slimwheel.wheel.reader import Wheel

__all__ = ["in_two_threads"]

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


def in_two_threads(
    wheel: Wheel,
    items: Sequence[_Item],
    *,
    size: Callable[[_Item], int],
    work: Callable[[Wheel, Sequence[_Item]], list[_Result]],
    min_bytes: int,
) -> list[_Result]:
    """``work(wheel, items)``'s results, in the order of ``items``: split in two shares of about
    equal ``size`` (largest first), the second done on a thread through another open of the wheel,
    when there are two items or more holding ``min_bytes`` in all and the wheel is a local file."""
    path = wheel.local_path
    if len(items) < 2 or sum(size(item) for item in items) < min_bytes or path is None:
        return work(wheel, items)
    shares: tuple[list[int], list[int]] = ([], [])
    loads = [0, 0]
    for index in sorted(range(len(items)), key=lambda i: -size(items[i])):
        lighter = loads.index(min(loads))
        shares[lighter].append(index)
        loads[lighter] += size(items[index])

    def second_share() -> list[_Result]:
        with Wheel.open(path) as second:
            return work(second, [items[i] for i in shares[1]])

    results: dict[int, _Result] = {}
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(second_share)
        results.update(zip(shares[0], work(wheel, [items[i] for i in shares[0]]), strict=True))
        results.update(zip(shares[1], other.result(), strict=True))
    return [results[i] for i in range(len(items))]
