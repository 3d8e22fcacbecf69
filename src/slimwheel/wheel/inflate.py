"""Inflate and check the raw data of zip members: isal's deflate when it imports, else zlib's.

``isal.isal_zlib`` (python-isal, Intel ISA-L) has zlib's API and inflates about twice as fast; its
CRC-32 is about ten times faster than zlib's. Both are optional speed-ups: results are the same bytes.

The functions here take the member's raw bytes as an iterable of chunks (read from the archive by the
caller) and yield the checked content. Failures of the data itself (corrupt deflate data, wrong
CRC-32, wrong size) raise ``InflateError``, a ValueError, which ``wheel_errors`` turns into a
WheelError naming the member.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "INFLATE_CHUNK_SIZE",
    "USING_ISAL",
    "Decompressor",
    "DecompressorFactory",
    "InflateError",
    "check_stored",
    "check_stored_whole",
    "check_whole",
    "crc32",
    "inflate",
    "inflate_whole",
    "new_decompressor",
    "zlib_decompressor",
]

INFLATE_CHUNK_SIZE = 1024 * 1024  # at most this many inflated bytes per chunk, by default


class Decompressor(Protocol):
    """What ``zlib.decompressobj(-15)`` and ``isal.isal_zlib.decompressobj(-15)`` both return."""

    @property
    def unconsumed_tail(self) -> bytes: ...

    @property
    def eof(self) -> bool: ...

    def decompress(self, data: ReadableBuffer, /, max_length: int = 0) -> bytes: ...

    def flush(self, length: int = ..., /) -> bytes: ...


DecompressorFactory = Callable[[], Decompressor]


class InflateError(ValueError):
    """A member's data does not inflate, or does not match its CRC-32 or size."""


def zlib_decompressor() -> Decompressor:
    """A raw-deflate (no zlib header) decompressor from the standard library."""
    return zlib.decompressobj(-zlib.MAX_WBITS)


def _isal() -> tuple[DecompressorFactory, Callable[[ReadableBuffer, int], int], type[Exception]] | None:
    try:
        from isal import isal_zlib
    except ImportError:  # not installed, or no wheel for this machine
        return None

    def isal_decompressor() -> Decompressor:
        return isal_zlib.decompressobj(-isal_zlib.MAX_WBITS)

    # The stub types ``error`` as an instance; it is the exception class.
    return isal_decompressor, isal_zlib.crc32, cast("type[Exception]", isal_zlib.error)


_ISAL = _isal()
USING_ISAL = _ISAL is not None
new_decompressor: DecompressorFactory = _ISAL[0] if _ISAL else zlib_decompressor
crc32: Callable[[ReadableBuffer, int], int] = _ISAL[1] if _ISAL else zlib.crc32
_DECOMPRESS_ERRORS: tuple[type[Exception], ...] = (zlib.error, _ISAL[2]) if _ISAL else (zlib.error,)


def inflate(
    compressed: Iterable[bytes],
    *,
    size: int,
    crc: int,
    chunk_size: int = INFLATE_CHUNK_SIZE,
    decompressor_factory: DecompressorFactory | None = None,
) -> Iterator[bytes]:
    """Inflate raw deflate data, yielding chunks of at most ``chunk_size`` bytes.

    Never inflates more than ``size`` bytes (a member that claims to be small cannot blow up memory);
    at the end checks that exactly ``size`` bytes came out and that their CRC-32 is ``crc``. As with
    zipfile, bytes after the end of the deflate stream are ignored, and so is a stream that stops
    without its final block once it has given every byte.
    ``decompressor_factory`` defaults to ``new_decompressor`` (isal when it imports, else zlib).
    """
    decompressor = (decompressor_factory or new_decompressor)()
    produced = 0
    running_crc = 0
    pieces = itertools.chain(compressed, [b""])  # b"": drain what the decompressor holds back
    for piece in pieces:
        data = piece
        while not decompressor.eof:
            try:
                out = decompressor.decompress(data, chunk_size)
            except _DECOMPRESS_ERRORS as exc:
                raise InflateError(f"corrupt deflate data ({_describe(exc)})") from exc
            if not out:
                break  # it took all the input it could use: it needs more
            data = decompressor.unconsumed_tail
            produced = _count(produced, len(out), size)
            running_crc = crc32(out, running_crc)
            yield out
    if produced < size and not decompressor.eof:
        raise InflateError(f"the deflate data ends early, after {produced} of {size} bytes")
    _check_end(produced, running_crc, size, crc)


def inflate_whole(raw: bytes, *, size: int, crc: int) -> bytes:
    """``inflate`` for a member whose raw data is all in hand: the same checks, in one call."""
    decompressor = new_decompressor()
    try:
        content = decompressor.decompress(raw, size + 1)  # one byte more than it may give: too much
    except _DECOMPRESS_ERRORS as exc:
        raise InflateError(f"corrupt deflate data ({_describe(exc)})") from exc
    _count(0, len(content), size)
    if len(content) < size and not decompressor.eof:
        raise InflateError(f"the deflate data ends early, after {len(content)} of {size} bytes")
    _check_end(len(content), crc32(content, 0), size, crc)
    return content


def check_stored_whole(raw: bytes, *, size: int, crc: int) -> bytes:
    """``check_stored`` for a member whose bytes are all in hand."""
    _check_end(_count(0, len(raw), size), crc32(raw, 0), size, crc)
    return raw


def check_whole(raw: bytes, *, deflated: bool, size: int, crc: int) -> bytes:
    """A member's content from its stored bytes, all in hand: inflated (``deflated``) or as it is,
    its size and CRC-32 checked."""
    if deflated:
        return inflate_whole(raw, size=size, crc=crc)
    return check_stored_whole(raw, size=size, crc=crc)


def check_stored(raw: Iterable[bytes], *, size: int, crc: int) -> Iterator[bytes]:
    """Pass a stored member's chunks through, checking their size and CRC-32 at the end."""
    produced = 0
    running_crc = 0
    for chunk in raw:
        produced = _count(produced, len(chunk), size)
        running_crc = crc32(chunk, running_crc)
        yield chunk
    _check_end(produced, running_crc, size, crc)


def _count(produced: int, more: int, size: int) -> int:
    total = produced + more
    if total > size:
        raise InflateError(f"holds more than the {size} bytes the central directory gives")
    return total


def _check_end(produced: int, running_crc: int, size: int, crc: int) -> None:
    if produced != size:
        raise InflateError(f"holds {produced} bytes, the central directory gives {size}")
    if running_crc != crc:
        raise InflateError(
            f"bad CRC-32: the content has {running_crc:08x}, the central directory says {crc:08x}"
        )


def _describe(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
