"""Small pieces shared by slimwheel's own file objects and streamed edits."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

__all__ = ["merge_ranges", "overwrite", "seek_position"]


def seek_position(offset: int, whence: int, current: int, size: int) -> int:
    """The absolute position a ``seek(offset, whence)`` asks for; ValueError as ``io.BytesIO`` raises."""
    if whence == io.SEEK_SET:
        position = offset
    elif whence == io.SEEK_CUR:
        position = current + offset
    elif whence == io.SEEK_END:
        position = size + offset
    else:
        raise ValueError(f"invalid whence ({whence})")
    if position < 0:
        raise ValueError(f"negative seek position {position}")
    return position


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted (start, end) ranges with touching and overlapping ones joined."""
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def overwrite(offset: int, chunk: bytes, patches: Sequence[tuple[int, bytes]]) -> bytes:
    """``chunk`` (bytes [offset, offset + len(chunk)) of a file) with the parts of ``patches``
    ((file offset, bytes), in order: a later one wins where two overlap) that fall inside it written
    over it; ``chunk`` itself when none does."""
    end = offset + len(chunk)
    touching = [(start, data) for start, data in patches if start < end and start + len(data) > offset]
    if not touching:
        return chunk
    edited = bytearray(chunk)
    for start, data in touching:
        low, high = max(start, offset), min(start + len(data), end)
        edited[low - offset : high - offset] = data[low - start : high - start]
    return bytes(edited)
