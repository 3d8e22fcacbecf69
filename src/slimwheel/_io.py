"""Small pieces shared by slimwheel's own read-only file objects."""

from __future__ import annotations

import io

__all__ = ["seek_position"]


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
