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

Big content that deflates well is deflated with zlib's level 6 as well, piece by piece: ISA-L's level
2 left compressible code 10-14% bigger than the zlib level 6 its builder used, so repairs that dropped
a few hundred KB grew the wheel (xformers 0.0.28.post3 +13.7%, spconv-cu120 2.3.6 +18.6%, ctranslate2
4.5.0 +7.3%). Each piece's first ``SAMPLE_SIZE`` bytes are deflated both ways; where the fast way
comes out more than ``SAMPLE_WORSE`` bigger, the whole piece is deflated again at level 6 and the
smaller kept. Packed device code (most of onnxruntime-gpu's 284 MB provider) deflates the same both
ways and keeps the fast path. Measured, one thread: xformers' ``_C.so`` (49 MiB) 0.3 s -> 3.6 s,
output +13.6% -> +0.04% of its input's; onnxruntime's provider 0.6 s -> 4.1 s, +1.0% -> +0.2% (15 of
68 pieces redone); spconv's ``core_cc`` (300 MiB) -> 25 s, +0.05%. Two threads halve the wall time.

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
    "SAMPLE_SIZE",
    "SAMPLE_WORSE",
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
SAMPLE_SIZE = 256 << 10  # deflated both ways to judge a piece: about 6% of level 6's cost on it
SAMPLE_WORSE = 1.03  # the fast way may be this much bigger on the sample before level 6 redoes it


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


_FAST, DEFLATE_LEVEL, USING_ISAL_DEFLATE = _compressor_factory()
_COMPRESS_SMALL = _with_zlib(SMALL_LEVEL)


def _compress_big(data: bytes, last: bool) -> bytes:
    """The fast way, unless level 6 does markedly better on this piece (see the module's docstring)."""
    fast = _FAST(data, last)
    sample = data[:SAMPLE_SIZE]
    if len(_FAST(sample, True)) <= len(_COMPRESS_SMALL(sample, True)) * SAMPLE_WORSE:
        return fast
    thorough = _COMPRESS_SMALL(data, last)
    return thorough if len(thorough) < len(fast) else fast


def deflate_pieces(
    chunks: Iterable[bytes | memoryview], *, piece_size: int = PIECE_SIZE, small: bool = False
) -> Iterator[bytes]:
    """Raw deflate data of the concatenated ``chunks``, in order; the chunks are consumed as the
    output is; an empty input gives one empty final block. ``small``: the content is at most
    ``SMALL_CONTENT`` bytes, deflated with zlib's ``SMALL_LEVEL`` (see the module's docstring)."""
    compress = _COMPRESS_SMALL if small else _compress_big
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
