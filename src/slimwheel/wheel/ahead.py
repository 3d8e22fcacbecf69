"""Run a producer of chunks one step ahead of its consumer, on a thread.

Inflating (zlib, ISA-L, zlib through ctypes) and hashing (hashlib) both release the GIL on big
buffers, so a member's next chunks can be read and inflated while the caller hashes, patches or
deflates the current one: inflating and hashing a 271 MiB library went from 0.59-0.71 s to
0.46-0.52 s on two cores. Used where the consumer's memory stays flat (the splice of an edited
member): chunks made on one thread and freed on another grow glibc's per-thread arenas, and a
reader that keeps chunks (``member_view``) rose from about 100 to 170 MiB with it, so it does not.
The producer must not share a file object with what the consumer does meanwhile.

``HashBehind`` is the other way round: a hash fed on the caller's thread and computed on its own, for
a pass whose caller has other work (the first pass over a member, which hashes every byte for RECORD
while it builds a view of the member's ends; a splice, which hashes the new content while it writes).
The chunks are made and freed on the caller's thread, so no arena grows.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Generator, Iterable
from types import TracebackType
from typing import TypeVar, cast

__all__ = ["HashBehind", "ahead"]

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


class HashBehind:
    """sha256 of the chunks given to ``update``, computed on a thread (hashlib releases the GIL on
    big buffers) at most ``depth`` chunks behind. Use it as a context manager: leaving stops the
    thread, whether or not ``digest`` was asked for."""

    def __init__(self, depth: int = 8) -> None:
        self._hash = hashlib.sha256()
        self._chunks: queue.Queue[bytes | memoryview | None] = queue.Queue(depth)
        self._worker: threading.Thread | None = None

    def __enter__(self) -> HashBehind:
        self._worker = threading.Thread(target=self._run, name="slimwheel-hash", daemon=True)
        self._worker.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop()

    def _run(self) -> None:
        while (chunk := self._chunks.get()) is not None:
            self._hash.update(chunk)

    def update(self, chunk: bytes | memoryview) -> None:
        """Hash ``chunk`` after those before it; it must not change afterwards (bytes, and views
        of them, do not)."""
        if self._worker is None:
            raise RuntimeError("HashBehind.update outside its with block")
        self._chunks.put(chunk)

    def digest(self) -> bytes:
        """The digest of every chunk given; no more may be given after."""
        self._stop()
        return self._hash.digest()

    def _stop(self) -> None:
        if self._worker is not None:
            self._chunks.put(None)
            self._worker.join()
            self._worker = None
