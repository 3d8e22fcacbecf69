"""Deflate a big member fast: ISA-L's level 2 over pieces compressed on two threads, pigz's way.

Measured on this project's 2-core machine on the 284 MB ``libonnxruntime_providers_cuda.so`` (see
BENCHMARKS.md): the standard library's zlib takes 10.5 s at level 6 and 7.7 s at level 1; ISA-L
(``isal``) takes 0.42 s at level 1, 0.64 s at level 2 (0.45 s on two threads) and 1.3 s at level 3,
for output 1.2%, 1.1% and 0.8% bigger than zlib's level 6. ISA-L releases the GIL while it
compresses, so pieces of ``PIECE_SIZE`` bytes are compressed on a small thread pool while the caller
inflates, patches and hashes the next ones. Each piece is a run of complete deflate blocks ending on
a byte boundary (``Z_SYNC_FLUSH``), the last one with the final block (``Z_FINISH``), so their
concatenation is one valid raw deflate stream; pieces do not share a window, which costs about 0.1%
at this piece size. Without isal (a platform with no wheel for it), zlib's level 1 is used the same way.

Small content (``SMALL_CONTENT`` bytes or less) is deflated with zlib's level 6 instead, still in
pieces on the same threads: ISA-L's levels lose most on small, well-compressed code. Measured on
torchvision 0.20.1's ``_C.so`` (7.4 MiB, deflated by its builder to 0.2718 of its size): ISA-L level 2
gives 0.3268 (+20%) in 0.03 s, level 3 0.3176, zlib level 6 0.2773 (+2%) in 0.25-0.5 s on one
thread; repaired, that wheel came out 12.6% bigger than its input with ISA-L, about 2% with zlib.

The output depends only on the content, the piece size and the isal (or zlib) build: not on the
number of threads or how the caller chunked the content.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = [
    "DEFLATE_LEVEL",
    "PIECE_SIZE",
    "SMALL_CONTENT",
    "SMALL_LEVEL",
    "USING_ISAL_DEFLATE",
    "deflate_pieces",
]

PIECE_SIZE = 4 << 20  # content compressed as one independent piece
_THREADS = 2  # this project's machines have 2 cores; more threads only queue
_AHEAD = 3  # pieces in flight at once: memory stays near (_AHEAD + 2) * PIECE_SIZE
SMALL_CONTENT = 16 << 20  # up to this size, zlib's level 6 costs at most about half a second
SMALL_LEVEL = 6


def _with_zlib(level: int) -> Callable[[bytes, bool], bytes]:
    def compress(data: bytes, last: bool) -> bytes:
        compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    return compress


def _compressor_factory() -> tuple[Callable[[bytes, bool], bytes], int, bool]:
    try:
        from isal import isal_zlib
    except ImportError:  # no wheel of isal for this machine
        return _with_zlib(1), 1, False
    isal_level = 2

    def with_isal(data: bytes, last: bool) -> bytes:
        compressor = isal_zlib.compressobj(isal_level, isal_zlib.DEFLATED, -isal_zlib.MAX_WBITS)
        flush = isal_zlib.Z_FINISH if last else isal_zlib.Z_SYNC_FLUSH
        return compressor.compress(data) + compressor.flush(flush)

    return with_isal, isal_level, True


_COMPRESS, DEFLATE_LEVEL, USING_ISAL_DEFLATE = _compressor_factory()
_COMPRESS_SMALL = _with_zlib(SMALL_LEVEL)


def deflate_pieces(
    chunks: Iterable[bytes | memoryview], *, piece_size: int = PIECE_SIZE, small: bool = False
) -> Iterator[bytes]:
    """Raw deflate data of the concatenated ``chunks``, in order; the chunks are consumed as the
    output is; an empty input gives one empty final block. ``small``: the content is at most
    ``SMALL_CONTENT`` bytes, deflated with zlib's ``SMALL_LEVEL`` (see the module's docstring)."""
    compress = _COMPRESS_SMALL if small else _COMPRESS
    with ThreadPoolExecutor(_THREADS, thread_name_prefix="slimwheel-deflate") as pool:
        pending: deque[Future[bytes]] = deque()
        buffer = bytearray()
        for chunk in chunks:
            buffer += chunk
            while len(buffer) > piece_size:  # keep at least one byte back: the last piece ends the stream
                pending.append(pool.submit(compress, bytes(buffer[:piece_size]), False))
                del buffer[:piece_size]
                while len(pending) >= _AHEAD:
                    yield pending.popleft().result()
        pending.append(pool.submit(compress, bytes(buffer), True))
        while pending:
            yield pending.popleft().result()
