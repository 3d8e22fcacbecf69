"""File objects over wheel members that report every read failure as a WheelError.

``zipfile`` and the file object under it fail with half a dozen exception types (BadZipFile on a bad
CRC or header, zlib.error on corrupt deflate data, EOFError on truncation, OSError from a remote
read...). Callers such as the ELF reader should only ever see WheelError, so every read goes through
``wheel_errors``.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

from slimwheel._io import seek_position
from slimwheel.errors import WheelError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = [
    "READ_ERRORS",
    "ArchiveWindow",
    "ChunkStream",
    "GuardedStream",
    "describe_error",
    "wheel_errors",
]


def _read_errors() -> tuple[type[Exception], ...]:
    errors: tuple[type[Exception], ...] = (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        struct.error,
        zlib.error,
        ValueError,  # also UnicodeDecodeError on a member name, and I/O on a closed file
        NotImplementedError,  # compression methods zipfile lacks
    )
    try:
        import lzma
    except ImportError:  # a Python built without liblzma cannot read LZMA members at all
        return errors
    return (*errors, lzma.LZMAError)


READ_ERRORS: tuple[type[Exception], ...] = _read_errors()


def describe_error(exc: BaseException) -> str:
    """One line for an exception, naming its type when its message is empty."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


@contextmanager
def wheel_errors(source: str, action: str) -> Iterator[None]:
    """Turn a read failure inside the block into ``WheelError(source, "<action>: <cause>")``."""
    try:
        yield
    except READ_ERRORS as exc:
        raise WheelError(source, f"{action}: {describe_error(exc)}") from exc


class GuardedStream(io.RawIOBase):
    """A forward-only reader over an open zipfile member that raises WheelError on any failure."""

    def __init__(self, inner: IO[bytes], source: str, member: str) -> None:
        super().__init__()
        self._inner = inner
        self._source = source
        self._member = member

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        with wheel_errors(self._source, f"cannot read {self._member}"):
            data = self._inner.read(len(view))
        view[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        # One call instead of RawIOBase's loop of small reads.
        with wheel_errors(self._source, f"cannot read {self._member}"):
            return self._inner.read()

    def close(self) -> None:
        if not self.closed:
            try:
                self._inner.close()
            finally:
                super().close()


class ChunkStream(io.RawIOBase):
    """A forward-only reader over a generator of chunks (which raises WheelError itself on failure)."""

    def __init__(self, chunks: Generator[bytes, None, None]) -> None:
        super().__init__()
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        if not view:
            return 0
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        count = min(len(view), len(self._pending))
        view[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count

    def readall(self) -> bytes:
        parts = [bytes(self._pending), *self._chunks]
        self._pending = memoryview(b"")
        return b"".join(parts)

    def close(self) -> None:
        if not self.closed:
            try:
                self._chunks.close()
            finally:
                super().close()


class ArchiveWindow(io.RawIOBase):
    """A seekable read-only view of ``length`` bytes at ``start`` of the archive file: no copy.

    Every read seeks first, so it can share the file object with zipfile (which does the same).
    """

    def __init__(self, fileobj: IO[bytes], start: int, length: int, source: str, member: str) -> None:
        super().__init__()
        self._fileobj = fileobj
        self._start = start
        self._length = length
        self._position = 0
        self._source = source
        self._member = member

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._position = seek_position(offset, whence, self._position, self._length)
        return self._position

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        wanted = min(len(view), self._length - self._position)
        if wanted <= 0:
            return 0
        with wheel_errors(self._source, f"cannot read {self._member}"):
            self._fileobj.seek(self._start + self._position)
            data = self._fileobj.read(wanted)
        if len(data) != wanted:
            raise WheelError(self._source, f"the archive ends inside {self._member} (truncated download?)")
        view[:wanted] = data
        self._position += wanted
        return wanted
