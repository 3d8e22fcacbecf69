"""slimwheel.wheel.splice: re-deflating around edits and reusing the original compressed bits.

Every output is decoded by two independent inflaters (zlib's and ISA-L's) and compared with the
content the patches make; the original streams come from zlib at several levels and memory levels
(small blocks, stored blocks for random data), so block boundaries fall at every bit offset.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import pytest
from isal import isal_zlib

from slimwheel.wheel.inflate import InflateError
from slimwheel.wheel.splice import (
    _DYNAMIC,
    _FIXED,
    BLOCK_INFLATERS,
    SPLICE_AVAILABLE,
    BlockInflater,
    SpliceStats,
    _padding,
    splice_deflate,
)

pytestmark = pytest.mark.skipif(not SPLICE_AVAILABLE, reason="no zlib shared library to load")


@pytest.fixture(params=BLOCK_INFLATERS, ids=lambda inflater: inflater.name.split()[0])
def inflater(request: pytest.FixtureRequest) -> BlockInflater:
    """Each inflate that loads here walks the original: zlib-ng's (the default) and the system's zlib."""
    return request.param  # type: ignore[no-any-return]


_FINAL_EMPTY_FIXED = (0b011, 10)  # BFINAL 1, BTYPE 01, end-of-block
_FEW_VALUES = bytes(b"\x00\x01\x02\xff"[i % 4] for i in range(256))  # random bytes -> runs of four values


def _deflate(content: bytes, level: int = 6, mem_level: int = 8) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, mem_level)
    return compressor.compress(content) + compressor.flush()


def _content(rng: random.Random, size: int) -> bytes:
    """Code-like text, runs of a few byte values and random bytes (stored blocks), mixed."""
    parts: list[bytes] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.3:
            part = rng.randbytes(rng.randint(1, 150_000))
        elif kind < 0.6:
            part = rng.randbytes(rng.randint(1, 20_000)).translate(_FEW_VALUES)
        else:
            part = b"symbol_%d(" % rng.randint(0, 999) * rng.randint(1, 2_000)
        parts.append(part)
        total += len(part)
    return b"".join(parts)[:size]


def _expected(content: bytes, patches: list[tuple[int, bytes]], appended: bytes) -> bytes:
    edited = bytearray(content)
    for offset, data in patches:
        edited[offset : offset + len(data)] = data
    return bytes(edited) + appended


def _splice(
    raw: bytes,
    content: bytes,
    patches: list[tuple[int, bytes]],
    appended: bytes,
    chunk: int = 65_536,
    inflater: BlockInflater | None = None,
) -> tuple[bytes, bytes, SpliceStats]:
    seen: list[bytes | memoryview] = []
    stats = SpliceStats()
    pieces = splice_deflate(
        [raw[i : i + chunk] for i in range(0, len(raw), chunk)],
        size=len(content),
        crc=zlib.crc32(content),
        patches=patches,
        appended=appended,
        on_content=seen.append,
        stats=stats,
        inflater=inflater,
    )
    out = b"".join(pieces)
    return out, b"".join(seen), stats


def _inflated_both_ways(raw: bytes) -> bytes:
    by_zlib = zlib.decompressobj(-zlib.MAX_WBITS)
    content = by_zlib.decompress(raw)
    assert by_zlib.eof, "zlib did not reach the final block"
    assert isal_zlib.decompressobj(-isal_zlib.MAX_WBITS).decompress(raw) == content, "ISA-L disagrees"
    return content


def test_zlib_ng_walks_first_where_its_package_is_installed() -> None:
    """The dependency is there to be used: zlib-ng inflates these libraries 1.5 times as fast."""
    pytest.importorskip("zlib_ng")
    assert [inflater.name.split()[0] for inflater in BLOCK_INFLATERS][:1] == ["zlib-ng"]


def test_empty_blocks_reach_every_bit_offset_and_decode_to_nothing() -> None:
    for start in range(8):
        for goal in range(8):
            blocks = _padding(0, start) + _padding(start, goal)
            value = count = 0
            for block_value, block_count in [*blocks, _FINAL_EMPTY_FIXED]:
                value |= block_value << count
                count += block_count
            assert (sum(n for _, n in _padding(start, goal)) + start) % 8 == goal
            raw = value.to_bytes((count + 7) // 8, "little")
            assert _inflated_both_ways(raw) == b""
    assert (_FIXED[1], _DYNAMIC[1] % 8) == (10, 7)


@pytest.mark.parametrize("seed", range(40))
def test_random_edits_of_random_streams_decode_to_the_edited_content(
    seed: int, inflater: BlockInflater
) -> None:
    rng = random.Random(seed)
    size = rng.choice([0, 1, 37, 40_000, 300_000, 1_500_000])
    content = _content(rng, size)
    raw = _deflate(content, level=rng.choice([0, 1, 6, 9]), mem_level=rng.choice([1, 8, 9]))
    patches = []
    for _ in range(rng.randint(0, 5) if size else 0):
        offset = rng.randrange(size)
        patches.append((offset, rng.randbytes(rng.randint(1, min(300, size - offset)))))
    appended = rng.randbytes(rng.choice([0, 0, 1, 9_000]))
    chunk = rng.choice([1, 997, 65_536]) if len(raw) < 50_000 else rng.choice([997, 65_536])
    out, seen, _ = _splice(raw, content, patches, appended, chunk=chunk, inflater=inflater)
    expected = _expected(content, patches, appended)
    assert seen == expected
    assert _inflated_both_ways(out) == expected


def test_an_edit_near_the_start_reuses_the_rest_and_keeps_the_size(inflater: BlockInflater) -> None:
    rng = random.Random(7)
    content = _content(rng, 4_000_000)
    raw = _deflate(content)
    patches = [(16, b"\x00" * 48), (2_000_000, b"$ORIGIN/../nvidia\x00")]
    out, _, stats = _splice(raw, content, patches, b"", inflater=inflater)
    assert _inflated_both_ways(out) == _expected(content, patches, b"")
    assert stats.spans == 2
    assert stats.redeflated < 1_000_000
    assert stats.reused + stats.redeflated == len(content)
    assert abs(len(out) - len(raw)) < 200  # a few empty blocks and a sync flush per span


def test_appended_bytes_re_deflate_only_the_final_block(inflater: BlockInflater) -> None:
    rng = random.Random(8)
    content = _content(rng, 3_000_000)
    raw = _deflate(content)
    appended = rng.randbytes(5_000)
    out, _, stats = _splice(raw, content, [], appended, inflater=inflater)
    assert _inflated_both_ways(out) == content + appended
    assert stats.spans == 1
    assert stats.redeflated < 600_000


def test_many_appended_megabytes_are_handed_on_in_pieces(inflater: BlockInflater) -> None:
    # A moved .dynstr is tens of MB (26 MB in mxnet-cu112's libmxnet.so): handed on whole, the span
    # that re-deflates it and the inflate that proves the span each held another copy.
    rng = random.Random(11)
    content = _content(rng, 200_000)
    appended = _content(rng, 3 << 20)
    seen: list[int] = []
    out = b"".join(
        splice_deflate(
            [_deflate(content)],
            size=len(content),
            crc=zlib.crc32(content),
            patches=[(10, b"HEAD")],
            appended=appended,
            on_content=lambda piece: seen.append(len(piece)),
            inflater=inflater,
        )
    )
    assert _inflated_both_ways(out) == _expected(content, [(10, b"HEAD")], appended)
    assert sum(seen) == len(content) + len(appended)
    assert max(seen) <= 1 << 20


def test_no_edit_gives_the_original_stream_bit_for_bit(inflater: BlockInflater) -> None:
    content = _content(random.Random(9), 500_000)
    raw = _deflate(content)
    out, _, stats = _splice(raw, content, [], b"", inflater=inflater)
    assert out == raw
    assert stats.spans == 0


@pytest.mark.parametrize("damage", ["flipped", "truncated", "crc", "size"])
def test_damaged_input_is_an_inflate_error(damage: str, inflater: BlockInflater) -> None:
    content = _content(random.Random(10), 200_000)
    raw = _deflate(content)
    size, crc = len(content), zlib.crc32(content)
    if damage == "flipped":
        raw = raw[:1000] + bytes([raw[1000] ^ 0xFF]) + raw[1001:]
    elif damage == "truncated":
        raw = raw[: len(raw) // 2]
    elif damage == "crc":
        crc ^= 1
    else:
        size -= 1
    with pytest.raises(InflateError):
        b"".join(
            splice_deflate(
                [raw],
                size=size,
                crc=crc,
                patches=[(5, b"x")],
                appended=b"",
                on_content=lambda _: None,
                inflater=inflater,
            )
        )


def test_a_patch_outside_the_content_is_refused() -> None:
    raw = _deflate(b"abc")
    with pytest.raises(ValueError, match="outside"):
        next(
            splice_deflate(
                [raw], size=3, crc=0, patches=[(2, b"xy")], appended=b"", on_content=lambda _: None
            )
        )


@pytest.mark.parametrize("appended", [b"", b"\x7fappended"])
def test_a_span_that_does_not_decode_to_its_content_is_an_error_not_a_member(
    monkeypatch: pytest.MonkeyPatch, appended: bytes
) -> None:
    """Each re-deflated span is inflated again as it is made. A compressor primed with other bytes
    than the 32 KiB before the span (real zlib, a window one byte off) makes back-references to the
    wrong bytes: caught there, before the member is finished, whatever its CRC-32 would say."""
    content = b"".join(b"symbol_%d(" % i for i in range(200_000))  # many blocks, matches everywhere
    raw = _deflate(content)
    real = zlib.compressobj

    def wrongly_primed(*args: Any, **kwargs: Any) -> zlib._Compress:
        if "zdict" in kwargs:  # the window one byte off: every match into it points one byte wrong
            kwargs["zdict"] = bytes(kwargs["zdict"])[1:] + b"?"
        return real(*args, **kwargs)

    monkeypatch.setattr(zlib, "compressobj", wrongly_primed)
    with pytest.raises(InflateError, match="re-deflated span decodes to"):
        _splice(raw, content, [(1_200_000, b"NEW")], appended)
    monkeypatch.undo()
    out, _, stats = _splice(raw, content, [(1_200_000, b"NEW")], appended)  # rightly primed: no error
    assert stats.spans == (2 if appended else 1)  # appended bytes re-deflate the final block too
    assert _inflated_both_ways(out) == _expected(content, [(1_200_000, b"NEW")], appended)
