"""Bytes appended a little at a time until they are megabytes: held in pieces of a fixed size, and
past a few MiB in an anonymous temporary file."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["MEMORY_LIMIT", "PIECE_SIZE", "PieceBuffer"]

PIECE_SIZE = 1 << 20
MEMORY_LIMIT = 4 << 20  # more goes to the temporary file: a wheel of 24,000 files never gets there


class PieceBuffer:
    """An append-only buffer kept as pieces of about PIECE_SIZE bytes, joined once each, never grown;
    pieces past ``memory_limit`` bytes go to an anonymous temporary file (gone when it is closed, or
    when the process dies). Close it after use.

    Why pieces: a ``bytearray`` grown to 10 MB by appends is moved by ``realloc`` each time it
    outgrows its block, and every block it leaves is a hole of that size in the C heap: writing a
    wheel of 100,000 files, the central directory's and RECORD's buffers left 30 MB free but held
    (glibc's ``mallinfo2``), which the process's resident size counts. Why the file: the two hold
    about 200 bytes for each member; a wheel of 200,000 files made them 40 MB of a repair's peak.
    Writing to the file can raise OSError (a full disk)."""

    def __init__(self, *, memory_limit: int = MEMORY_LIMIT) -> None:
        self._memory_limit = memory_limit
        self._pieces: list[bytes] = []
        self._in_memory = 0
        self._spilled: BinaryIO | None = None
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
            self._keep(b"".join(self._parts))
            self._parts.clear()
            self._parts_size = 0

    def _keep(self, piece: bytes) -> None:
        if self._spilled is None and self._in_memory + len(piece) <= self._memory_limit:
            self._pieces.append(piece)
            self._in_memory += len(piece)
            return
        if self._spilled is None:
            self._spilled = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._spilled.write(piece)

    def pieces(self) -> Iterator[bytes]:
        """The bytes so far, in order, in pieces of at most about PIECE_SIZE."""
        yield from self._pieces
        if self._spilled is not None:
            self._spilled.flush()
            self._spilled.seek(0)
            while piece := self._spilled.read(PIECE_SIZE):
                yield piece
            self._spilled.seek(0, 2)  # appends go on at the end
        if self._parts:
            yield b"".join(self._parts)

    @property
    def spilled(self) -> bool:
        """Whether part of it is in the temporary file."""
        return self._spilled is not None

    def close(self) -> None:
        """Let go of the temporary file, if there is one (and of the pieces)."""
        self._pieces.clear()
        self._parts.clear()
        if self._spilled is not None:
            self._spilled.close()
            self._spilled = None
