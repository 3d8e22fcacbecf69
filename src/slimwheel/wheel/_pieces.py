"""Bytes appended a little at a time until they are megabytes, held in pieces of a fixed size."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["PIECE_SIZE", "PieceBuffer"]

PIECE_SIZE = 1 << 20


class PieceBuffer:
    """An append-only buffer kept as pieces of about PIECE_SIZE bytes, joined once each, never grown.

    A ``bytearray`` grown to 10 MB by appends is moved by ``realloc`` each time it outgrows its block,
    and every block it leaves is a hole of that size in the C heap: writing a wheel of 100,000 files,
    the central directory's and RECORD's buffers left 30 MB free but held (glibc's ``mallinfo2``),
    which the process's resident size counts."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self._parts: list[bytes] = []
        self._parts_size = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, data: bytes) -> None:
        self._parts.append(data)
        self._parts_size += len(data)
        self._size += len(data)
        if self._parts_size >= PIECE_SIZE:
            self._pieces.append(b"".join(self._parts))
            self._parts.clear()
            self._parts_size = 0

    def pieces(self) -> Iterator[bytes]:
        """The bytes so far, in order, in pieces of about PIECE_SIZE (the last one shorter)."""
        yield from self._pieces
        if self._parts:
            yield b"".join(self._parts)
