"""Re-deflate a member only around its edits, reusing the original compressed bits everywhere else.

An ELF edit changes a few hundred bytes of a library of hundreds of MB (the ELF header, ``.dynamic``,
``.dynstr``, an appended segment at the end). Deflating the whole library again costs seconds (ISA-L)
to minutes (zlib), and comes out bigger than the builder's deflate (BENCHMARKS.md: ISA-L's level 2 is
1.1% bigger than the zlib level 6 NVIDIA used). Here the original deflate stream is walked block by
block (``inflate(Z_BLOCK)`` of zlib-ng or zlib, through ctypes: Python's zlib does not expose it)
and:

* a block is **reused**, its compressed bits copied as they are, when no edited byte lies inside it or
  in the 32 KiB before it (a back-reference reaches at most 32 KiB back, so it decodes to the same
  bytes in the new stream);
* the other blocks are **re-deflated** as runs ("spans"), with zlib primed with the 32 KiB before the
  span (``zdict``), and ended with ``Z_SYNC_FLUSH``, or ``Z_FINISH`` at the end of the member, where
  the appended bytes go too.

Reused bits must sit at the same bit offset modulo 8 as in the original (a stored block pads to a
byte boundary, so shifting it would break it), and zlib's output must start on a byte boundary. Between
the two, empty blocks move the output to the bit offset needed: an empty fixed-Huffman block is 10
bits, an empty dynamic-Huffman block (complete codes, as RFC 1951 allows) is 95 bits; one of the latter
and up to three of the former reach any offset modulo 8. They decode to nothing.

What the new stream decodes to is proven as it is made, not assumed: each span is inflated again
(primed with the same 32 KiB) and must give back its content (size and CRC-32), else an
InflateError; the reused bits decode as before because they and the 32 KiB before them are the
original's. So the member's CRC-32 and RECORD hash, computed from the new content, hold for the
bytes written, and a reader of the output (repair's check) may take the content as given.

Memory stays near ``HOLD_LIMIT``: the content and compressed bytes of the block being decided. A
block bigger than that is re-deflated rather than held. The new content is handed to a callback
chunk by chunk (the caller hashes it for RECORD and the CRC-32); the original's size and CRC-32 are
checked at the end (``InflateError``).

Without zlib-ng (the ``zlib-ng`` package) or a loadable zlib (``libz.so.1``), ``SPLICE_AVAILABLE`` is
False and callers deflate the whole content instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from slimwheel._io import merge_ranges, overwrite
from slimwheel.wheel.ahead import ahead
from slimwheel.wheel.inflate import InflateError, crc32

__all__ = [
    "BLOCK_INFLATERS",
    "HOLD_LIMIT",
    "SPAN_LEVEL",
    "SPLICE_AVAILABLE",
    "Appended",
    "BlockInflater",
    "SpliceStats",
    "appended_pieces",
    "splice_deflate",
]

WINDOW = 32 << 10  # deflate's window: how far back a block may reach
HOLD_LIMIT = 16 << 20  # content of one undecided block kept before it is re-deflated rather than held
SPAN_LEVEL = 6  # zlib's level for the re-deflated spans (what most builders use)
_OUT_SIZE = 1 << 20  # inflated bytes per zlib call at most

_Z_OK, _Z_STREAM_END, _Z_NEED_DICT, _Z_BUF_ERROR = 0, 1, 2, -5
_Z_BLOCK = 5
_AT_BOUNDARY = 128  # z_stream.data_type: inflate stopped just after a block's end
_IN_LAST_BLOCK = 64  # z_stream.data_type: the block being (or just) decoded is the final one


class _ZStream(ctypes.Structure):
    """zlib's ``z_stream`` and zlib-ng's ``zng_stream``: the same layout on LP64 (Linux, where
    repair edits ELF files) up to ``data_type``, the last field read here."""

    _fields_ = (
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_size_t),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_size_t),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong),
        ("reserved", ctypes.c_ulong),
    )


@dataclass(frozen=True)
class BlockInflater:
    """A loaded inflate that can stop at each deflate block's end (``inflate(Z_BLOCK)``): zlib-ng's,
    through the ``zlib-ng`` package's extension (its ``zng_`` functions are exported), inflates
    these libraries about 1.5 times as fast as zlib 1.2's (BENCHMARKS.md); the system's zlib
    otherwise. Python's zlib modules expose neither ``Z_BLOCK`` nor ``data_type``. The functions
    are looked up once: ``inflate`` runs once per block, thousands of times per library."""

    name: str
    init: Callable[[_ZStream], int]  # inflateInit2 for raw deflate (no header), on this stream
    inflate: Callable[[Any, int], int]  # inflate(z_stream *, flush)
    end: Callable[[Any], int]  # inflateEnd(z_stream *)


def _zlib_ng() -> BlockInflater | None:
    try:
        from zlib_ng import zlib_ng  # optional: the system's zlib serves without it

        library = ctypes.CDLL(zlib_ng.__file__)
        init, inflate, end = library.zng_inflateInit2, library.zng_inflate, library.zng_inflateEnd
    except (ImportError, OSError, AttributeError):
        return None
    init.argtypes = (ctypes.c_void_p, ctypes.c_int)
    inflate.argtypes = (ctypes.c_void_p, ctypes.c_int)
    end.argtypes = (ctypes.c_void_p,)
    return BlockInflater("zlib-ng", lambda stream: int(init(ctypes.byref(stream), -15)), inflate, end)


def _system_zlib() -> BlockInflater | None:
    for name in ("libz.so.1", ctypes.util.find_library("z")):
        if not name:
            continue
        try:
            library = ctypes.CDLL(name)
            library.zlibVersion.restype = ctypes.c_char_p
            library.inflateInit2_.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int)
            library.inflate.argtypes = (ctypes.c_void_p, ctypes.c_int)
            library.inflateEnd.argtypes = (ctypes.c_void_p,)
            version = library.zlibVersion()
        except (OSError, AttributeError):
            continue
        # inflate(Z_BLOCK) and data_type's boundary bit are there since zlib 1.2.3.
        if tuple(int(part) for part in version.decode().split(".")[:3] if part.isdigit()) >= (1, 2, 3):
            init = library.inflateInit2_

            def init_raw(stream: _ZStream, init: Any = init, version: bytes = version) -> int:
                return int(init(ctypes.byref(stream), -15, version, ctypes.sizeof(stream)))

            return BlockInflater(f"zlib {version.decode()}", init_raw, library.inflate, library.inflateEnd)
    return None


# Every one that loads, the fastest first (tests run the splice with each).
BLOCK_INFLATERS = tuple(inflater for inflater in (_zlib_ng(), _system_zlib()) if inflater is not None)
SPLICE_AVAILABLE = bool(BLOCK_INFLATERS)


@dataclass(frozen=True)
class _Raw:
    """Compressed bytes about to be inflated."""

    data: bytes


@dataclass(frozen=True)
class _Content:
    """Inflated bytes of the current block."""

    data: bytes


@dataclass(frozen=True)
class _Boundary:
    """The current block ended; the next starts at ``bit`` of the compressed stream."""

    bit: int


@dataclass(frozen=True)
class _End:
    """The stream ended after ``consumed`` compressed bytes."""

    consumed: int


def _walk(
    raw: Iterable[bytes], inflater: BlockInflater
) -> Generator[_Raw | _Content | _Boundary | _End, None, None]:
    """Inflate raw deflate data, telling each compressed chunk before its bytes are inflated and
    each block boundary."""
    stream = _ZStream()
    if inflater.init(stream) != _Z_OK:
        raise MemoryError(f"{inflater.name}'s inflateInit2 failed")
    out = ctypes.create_string_buffer(_OUT_SIZE)
    out_address = ctypes.addressof(out)
    try:
        for chunk in raw:
            if not chunk:
                continue
            yield _Raw(chunk)
            held = ctypes.c_char_p(chunk)  # points into ``chunk``, which outlives the calls
            stream.next_in = ctypes.cast(held, ctypes.c_void_p)
            stream.avail_in = len(chunk)
            while True:
                stream.next_out = out_address
                stream.avail_out = _OUT_SIZE
                code = inflater.inflate(ctypes.byref(stream), _Z_BLOCK)
                produced = _OUT_SIZE - stream.avail_out
                if code not in (_Z_OK, _Z_STREAM_END, _Z_BUF_ERROR):
                    message = stream.msg.decode(errors="replace") if stream.msg else f"zlib error {code}"
                    raise InflateError(f"corrupt deflate data ({message})")
                if produced:
                    yield _Content(ctypes.string_at(out_address, produced))
                if code == _Z_STREAM_END:
                    yield _End(stream.total_in)
                    return
                if stream.data_type & _AT_BOUNDARY:
                    if not stream.data_type & _IN_LAST_BLOCK:  # after the final block, _End comes next
                        bits = stream.data_type & 63  # bits of the last byte taken in but not yet used
                        yield _Boundary(stream.total_in * 8 - bits)
                    continue  # the next call goes on, or says it needs input
                if stream.avail_in == 0 and produced < _OUT_SIZE:
                    break  # it needs more input
        raise InflateError(f"the deflate data ends early, after {stream.total_out} bytes")
    finally:
        inflater.end(ctypes.byref(stream))


def _batched(events: Generator[_Raw | _Content | _Boundary | _End, None, None]) -> Iterator[list[Any]]:
    """Events in lists of about ``_OUT_SIZE`` bytes of content: a block ends every few tens of KB,
    and handing each event over between threads on its own costs more than inflating it."""
    batch: list[Any] = []
    size = 0
    with closing(events):
        for event in events:
            batch.append(event)
            if isinstance(event, _Content):
                size += len(event.data)
                if size >= _OUT_SIZE:
                    yield batch
                    batch, size = [], 0
    if batch:
        yield batch


class _Bits:
    """The output bit stream: whole bytes go out as they are made, fewer than 8 bits wait."""

    def __init__(self) -> None:
        self.value = 0
        self.count = 0  # bits waiting, 0-7

    def put(self, value: int, count: int) -> bytes:
        """Append ``count`` bits (deflate's order: least significant first); the whole bytes made."""
        self.value |= value << self.count
        self.count += count
        whole = self.count // 8
        made = (self.value & ((1 << (whole * 8)) - 1)).to_bytes(whole, "little") if whole else b""
        self.value >>= whole * 8
        self.count -= whole * 8
        return made

    def copy(self, raw: memoryview, first_bit: int, end_bit: int) -> bytes:
        """Append bits [first_bit, end_bit) of ``raw``; the waiting bits must be as many as
        ``first_bit % 8`` (bits keep their offset modulo 8)."""
        assert self.count == first_bit % 8
        first_byte, end_byte = first_bit // 8, end_bit // 8
        if first_byte == end_byte:
            low = raw[first_byte] & ((1 << (end_bit % 8)) - 1) & ~((1 << self.count) - 1)
            self.value |= low
            self.count = end_bit % 8
            return b""
        head = bytes([self.value | (raw[first_byte] & ~((1 << self.count) - 1) & 0xFF)])
        middle = bytes(raw[first_byte + 1 : end_byte])
        self.count = end_bit % 8
        self.value = raw[end_byte] & ((1 << self.count) - 1) if self.count else 0
        return head + middle

    def flush(self) -> bytes:
        """The last partial byte, padded with zero bits."""
        made = bytes([self.value]) if self.count else b""
        self.value = self.count = 0
        return made


def _empty_fixed_block() -> tuple[int, int]:
    # BFINAL 0, BTYPE 01, end-of-block (fixed code 256: seven 0 bits).
    return 0b010, 10


def _empty_dynamic_block(code_length_codes: int) -> tuple[int, int]:
    """An empty block with dynamic codes, all complete: literal 0 and end-of-block one bit each, two
    distance codes of one bit each. ``code_length_codes`` (18 or 19) changes its length by 3 bits."""
    value = 0
    count = 0

    def put(field: int, width: int) -> None:
        nonlocal value, count
        value |= field << count
        count += width

    put(0, 1)  # BFINAL
    put(2, 2)  # BTYPE: dynamic
    put(0, 5)  # HLIT: 257 literal/length codes
    put(1, 5)  # HDIST: 2 distance codes
    put(code_length_codes - 4, 4)  # HCLEN
    order = (16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15)
    for symbol in order[:code_length_codes]:
        put(1 if symbol in (1, 18) else 0, 3)
    # Code-length code: symbol 1 -> "0", symbol 18 -> "1" (canonical: by symbol value).
    put(0, 1)  # literal 0: length 1
    put(1, 1)
    put(138 - 11, 7)  # literals 1-138: length 0
    put(1, 1)
    put(117 - 11, 7)  # literals 139-255: length 0
    put(0, 1)  # end-of-block (256): length 1
    put(0, 1)  # distance 0: length 1
    put(0, 1)  # distance 1: length 1
    put(1, 1)  # end-of-block: literal 0 is "0", 256 is "1"
    return value, count


_FIXED = _empty_fixed_block()
_DYNAMIC = _empty_dynamic_block(19)  # 95 bits, 7 modulo 8


def _padding(from_bit: int, to_bit: int) -> list[tuple[int, int]]:
    """Empty blocks taking the output from offset ``from_bit`` to ``to_bit`` modulo 8."""
    step = (to_bit - from_bit) % 8
    blocks: list[tuple[int, int]] = []
    if step % 2:
        blocks.append(_DYNAMIC)
        step = (step - _DYNAMIC[1]) % 8
    blocks.extend([_FIXED] * (step // 2))
    return blocks


@dataclass
class SpliceStats:
    """What a splice did: bytes of content re-deflated and reused, and spans made."""

    redeflated: int = 0
    reused: int = 0
    spans: int = 0


# Bytes to append after the original content: one bytes object, or its pieces in order.
Appended = bytes | tuple[bytes, ...]


def appended_pieces(appended: Appended) -> tuple[bytes, ...]:
    """``appended`` as pieces in order (a bytes object is one piece)."""
    return (appended,) if isinstance(appended, bytes) else appended


def splice_deflate(
    raw: Iterable[bytes],
    *,
    size: int,
    crc: int,
    patches: Sequence[tuple[int, bytes]],
    appended: Appended,
    on_content: Callable[[bytes | memoryview], None],
    on_original: Callable[[bytes], None] | None = None,
    stats: SpliceStats | None = None,
    inflater: BlockInflater | None = None,
) -> Iterator[bytes]:
    """The raw deflate data of the original content (``raw``: its raw deflate data; ``size`` bytes
    of CRC-32 ``crc``, checked at the end) with ``patches`` (offset, bytes) written over it and
    ``appended`` after it (bytes, or pieces of them in order). ``on_content`` sees the new content in
    order, once; ``on_original`` the
    original content (to hash it against RECORD). ``inflater``: which of ``BLOCK_INFLATERS`` walks
    the original (the first, the fastest, by default)."""
    if inflater is None:
        if not BLOCK_INFLATERS:
            raise RuntimeError("splice_deflate needs zlib's shared library; check SPLICE_AVAILABLE first")
        inflater = BLOCK_INFLATERS[0]
    for offset, data in patches:
        if offset < 0 or offset + len(data) > size:
            raise ValueError(f"a patch at {offset} of {len(data)} bytes lies outside the {size} bytes")
    splicer = _Splicer(patches, appended, on_content, stats if stats is not None else SpliceStats())
    position = 0
    running_crc = 0
    # Read and inflated on a thread (zlib releases the GIL) while this one hashes and re-deflates;
    # handed over in batches (a 981 MiB library: 4.7 s, not 6.0 s, with 42,000 blocks).
    with closing(ahead(_batched(_walk(raw, inflater)))) as batches:
        for event in itertools.chain.from_iterable(batches):
            if isinstance(event, _Raw):
                splicer.held_raw.extend(event.data)
            elif isinstance(event, _Content):
                data = event.data
                if position + len(data) > size:
                    raise InflateError(f"holds more than the {size} bytes the central directory gives")
                running_crc = crc32(data, running_crc)
                if on_original is not None:
                    on_original(data)
                yield from splicer.content(position, data)
                position += len(data)
            elif isinstance(event, _Boundary):
                yield from splicer.boundary(event.bit, position)
            else:
                yield from splicer.end(event.consumed * 8)
    if position != size:
        raise InflateError(f"holds {position} bytes, the central directory gives {size}")
    if running_crc != crc:
        raise InflateError(
            f"bad CRC-32: the content has {running_crc:08x}, the central directory says {crc:08x}"
        )


class _Splicer:
    """The new stream, block by block: each block of the original is reused or re-deflated."""

    def __init__(
        self,
        patches: Sequence[tuple[int, bytes]],
        appended: Appended,
        on_content: Callable[[bytes | memoryview], None],
        stats: SpliceStats,
    ) -> None:
        # Edited byte ranges, merged; the patches in order (a later one wins where two overlap).
        self._dirty = merge_ranges(sorted((offset, offset + len(data)) for offset, data in patches if data))
        self._patches = [(offset, data) for offset, data in patches if data]
        # Pieces, never joined: a moved .dynstr is tens of MB, and its pieces are the old table itself.
        self._appended = appended_pieces(appended)
        self._on_content = on_content
        self._stats = stats
        self._out = _Bits()
        self.held_raw = bytearray()  # compressed bytes from byte ``_raw_base`` of the original on
        self._raw_base = 0
        self._window = b""  # the last WINDOW bytes of content so far
        self._window_before = b""  # ... before the current block: a span starting there is primed with it
        self._block_start = 0  # content offset of the current block
        self._block_bit = 0  # its first bit in the original stream
        self._block: list[bytes] = []  # its new content while undecided
        self._block_size = 0
        self._redeflating = False  # the current block is re-deflated
        self._span: zlib._Compress | None = None  # zlib's compressor of the open span
        self._span_check: zlib._Decompress | None = None  # inflates what the span made, to prove it
        self._span_in = (0, 0)  # CRC-32 and size of the content given to the span
        self._span_out = (0, 0)  # ... of what its output inflates to

    def _touches(self, low: int, high: int) -> bool:
        """An edited byte lies in [low - WINDOW, high)."""
        return any(a < high and b > low - WINDOW for a, b in self._dirty)

    def content(self, position: int, data: bytes) -> Iterator[bytes]:
        new = overwrite(position, data, self._patches)
        self._on_content(new)
        end = position + len(data)
        if self._redeflating:
            yield self._span_compress(new)
            self._stats.redeflated += len(new)
        else:
            self._block.append(new)
            self._block_size += len(new)
            if self._touches(self._block_start, end) or self._block_size > HOLD_LIMIT:
                yield from self._start_redeflating()
        self._window = (self._window + new)[-WINDOW:] if len(new) < WINDOW else new[-WINDOW:]

    def boundary(self, end_bit: int, position: int) -> Iterator[bytes]:
        """The current block ended at bit ``end_bit``; the next starts at content ``position``."""
        if not self._redeflating:
            yield from self._reuse(end_bit)
        drop = end_bit // 8 - self._raw_base  # the compressed bytes before the next block
        del self.held_raw[:drop]
        self._raw_base += drop
        self._block_start, self._block_bit, self._window_before = position, end_bit, self._window
        self._block, self._block_size, self._redeflating = [], 0, False

    def end(self, end_bit: int) -> Iterator[bytes]:
        """The final block ended (``end_bit`` rounded up to a byte)."""
        if any(self._appended) and not self._redeflating:
            yield from self._start_redeflating()
        if not self._redeflating:
            yield from self._reuse(end_bit)
        if self._span is not None:
            # In pieces: appended bytes can be tens of MB (a moved .dynstr), and a span's output is
            # inflated again to prove it, which would hold another copy of them whole.
            for whole in self._appended:
                appended = memoryview(whole)  # pieces of it, not copies: a watch may keep them
                for start in range(0, len(appended), _OUT_SIZE):
                    piece = appended[start : start + _OUT_SIZE]
                    self._on_content(piece)
                    yield self._span_compress(piece)
                self._stats.redeflated += len(appended)
            yield self._span_close(zlib.Z_FINISH)
        yield self._out.flush()

    def _reuse(self, end_bit: int) -> Iterator[bytes]:
        """Copy the current block's compressed bits, after closing the span before it."""
        if self._span is not None:
            yield self._span_close(zlib.Z_SYNC_FLUSH)
            yield b"".join(self._out.put(v, n) for v, n in _padding(0, self._block_bit))
        view = memoryview(self.held_raw)
        base = self._raw_base * 8
        yield self._out.copy(view, self._block_bit - base, end_bit - base)
        view.release()
        self._stats.reused += self._block_size

    def _start_redeflating(self) -> Iterator[bytes]:
        """Re-deflate the current block: open a span at its start unless one is open."""
        self._redeflating = True
        if self._span is None:
            yield b"".join(self._out.put(v, n) for v, n in _padding(self._out.count, 0))
            zdict = self._window_before
            self._span = (
                zlib.compressobj(SPAN_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, zdict=zdict)
                if zdict
                else zlib.compressobj(SPAN_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
            )
            self._span_check = (
                zlib.decompressobj(-zlib.MAX_WBITS, zdict=zdict)
                if zdict
                else zlib.decompressobj(-zlib.MAX_WBITS)
            )
            self._span_in = self._span_out = (0, 0)
            self._stats.spans += 1
        for piece in self._block:
            yield self._span_compress(piece)
        self._stats.redeflated += self._block_size
        self._block, self._block_size = [], 0

    # A re-deflated span is inflated again as it is made (its content is small next to the member:
    # the blocks around the edits), so that what the new stream decodes to is known, not assumed:
    # the reused bits decode as before by construction (same bits, same 32 KiB before them).

    def _span_compress(self, content: bytes | memoryview) -> bytes:
        assert self._span is not None
        crc, size = self._span_in
        self._span_in = (crc32(content, crc), size + len(content))
        return self._span_checked(self._span.compress(content))

    def _span_close(self, mode: int) -> bytes:
        assert self._span is not None
        assert self._span_check is not None
        made = self._span_checked(self._span.flush(mode))
        self._span = None
        if self._span_out != self._span_in or (mode == zlib.Z_FINISH and not self._span_check.eof):
            raise InflateError(
                f"a re-deflated span decodes to {self._span_out[1]} bytes of CRC-32 {self._span_out[0]:08x}, "
                f"not its {self._span_in[1]} bytes of CRC-32 {self._span_in[0]:08x} (a slimwheel bug: "
                "please report it)"
            )
        return made

    def _span_checked(self, compressed: bytes) -> bytes:
        assert self._span_check is not None
        content = self._span_check.decompress(compressed)
        crc, size = self._span_out
        self._span_out = (crc32(content, crc), size + len(content))
        return compressed
