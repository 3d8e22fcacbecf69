"""Run a producer of chunks one step ahead of its consumer, on a thread.

Inflating (zlib, ISA-L, zlib through ctypes) and hashing (hashlib) both release the GIL on big
buffers, so a member's next chunks can be read and inflated while the caller hashes, patches or
deflates the current one: inflating and hashing a 271 MiB library went from 0.59-0.71 s to
0.46-0.52 s on two cores. Used where the consumer's memory stays flat (the splice of an edited
member): chunks made on one thread and freed on another grow glibc's per-thread arenas, and a
reader that keeps chunks (``member_view``) rose from about 100 to 170 MiB with it, so it does not.
The producer must not share a file object with what the consumer does meanwhile.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterable
from typing import TypeVar, cast

__all__ = ["ahead"]

T = TypeVar("T")

_END = object()
_POLL = 0.1  # seconds between looks at the stop flag while the queue is full


def ahead(items: Iterable[T], depth: int = 4) -> Generator[T, None, None]:
    """``items``, produced on a thread at most ``depth`` ahead of the consumer. An exception of
    the producer is raised here, in order; closing this iterator early stops the producer."""
    slots: queue.Queue[object] = queue.Queue(depth)
    stop = threading.Event()

    def offer(item: object) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=_POLL)
            except queue.Full:
                continue
            return True
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(item):
                    return
        except BaseException as exc:  # noqa: BLE001 (handed to the consumer, raised there)
            offer(_Raised(exc))
            return
        offer(_END)

    worker = threading.Thread(target=produce, name="slimwheel-ahead", daemon=True)
    worker.start()
    try:
        while True:
            item = slots.get()
            if item is _END:
                return
            if isinstance(item, _Raised):
                raise item.exception
            yield cast(T, item)
    finally:
        stop.set()
        worker.join()
        close = getattr(items, "close", None)
        if close is not None:
            close()


class _Raised:
    def __init__(self, exception: BaseException) -> None:
        self.exception = exception
