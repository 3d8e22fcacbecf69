"""``MemberView``: random access to the start and end of a member without extracting it.

An ELF reader needs the header at the start of a library and the section headers, ``.dynamic`` and
symbol tables near its end; the gigabyte of code in between can be scanned as it streams past
(``on_chunk``) instead of being kept. A stored member's view is a window onto the archive (every byte
readable, nothing copied); a compressed member's view keeps its first ``head`` and last ``tail`` bytes
in memory, or all of it when it is no bigger than ``head + tail``.
"""

from __future__ import annotations

import bisect
import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from slimwheel._io import merge_ranges, seek_position
from slimwheel.errors import SlimwheelError
from slimwheel.wheel.streams import ArchiveWindow

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = [
    "ChunkCallback",
    "KeepRanges",
    "MemberView",
    "MissingRangeError",
    "SavedRanges",
    "ViewBuilder",
    "seen_by",
]

ChunkCallback = Callable[[int, bytes], None]  # (offset in the member, inflated bytes), in order


def seen_by(chunks: Iterable[bytes], on_chunk: ChunkCallback | None) -> Iterator[bytes]:
    """``chunks`` (a member's content from its start), each handed to ``on_chunk`` with its offset
    as it passes."""
    offset = 0
    for chunk in chunks:
        if on_chunk is not None:
            on_chunk(offset, chunk)
        offset += len(chunk)
        yield chunk


# Given the member's first bytes, the extra (offset, length) ranges to keep: an ELF file's program
# headers, at its start, say where .dynamic and the notes are, which may sit in the middle.
KeepRanges = Callable[[bytes], Iterable[tuple[int, int]]]


class MissingRangeError(SlimwheelError):
    """A read from a MemberView needs bytes it did not keep; read them through ``seekable_member``."""

    def __init__(self, name: str, offset: int, length: int) -> None:
        super().__init__(
            f"{name}: bytes {offset} to {offset + length} were not kept in memory by member_view",
            hint="read them through Wheel.seekable_member",
        )
        self.name = name
        self.offset = offset
        self.length = length


class MemberView(io.RawIOBase):
    """A read-only, seekable file of a member's uncompressed bytes, some of which may be missing.

    Reads return exactly the bytes asked for (fewer only at the end of the member) or raise
    MissingRangeError when any of them was not kept; ``has_range`` tells beforehand. Seeking past the
    end is allowed, and reading there returns b"" as with any file.
    """

    def __init__(
        self,
        name: str,
        size: int,
        *,
        window: ArchiveWindow | None = None,
        pieces: Iterable[tuple[int, bytes | memoryview]] = (),
    ) -> None:
        """Prefer ``Wheel.member_view``, ``MemberView.of_window`` or ``MemberView.from_chunks``.
        ``pieces`` are (offset, bytes) pairs in increasing, non-overlapping order."""
        super().__init__()
        self.name = name
        self.size = size
        self._window = window
        self._pieces = [(start, memoryview(data).cast("B")) for start, data in pieces if len(data)]
        self._starts = [start for start, _ in self._pieces]
        self._ranges = merge_ranges((start, start + len(data)) for start, data in self._pieces)
        self._position = 0

    @classmethod
    def of_window(cls, name: str, window: ArchiveWindow, size: int) -> MemberView:
        """Every byte readable, straight from the archive (a stored member)."""
        return cls(name, size, window=window)

    @classmethod
    def from_chunks(
        cls,
        name: str,
        size: int,
        chunks: Iterable[bytes],
        *,
        head: int,
        tail: int,
        on_chunk: ChunkCallback | None = None,
        keep: KeepRanges | None = None,
    ) -> MemberView:
        """Consume ``chunks`` (the member's content, in order, ``size`` bytes in all), keeping bytes
        [0, head) and [size - tail, size), or all of them when ``size <= head + tail``; ``on_chunk``
        sees every chunk first. Raises ValueError when the chunks hold more or fewer than ``size``
        bytes (the Wheel's chunks are checked before they get here). See :class:`ViewBuilder`."""
        builder = ViewBuilder(name, size, head=head, tail=tail, keep=keep)
        for chunk in seen_by(chunks, on_chunk):
            builder.feed(chunk)
        return builder.finish()

    # -- what is there -----------------------------------------------------------------------------

    @property
    def kept_ranges(self) -> tuple[tuple[int, int], ...]:
        """The readable byte ranges as (start, end) pairs, in order."""
        if self._window is not None:
            return ((0, self.size),) if self.size else ()
        return tuple(self._ranges)

    def has_range(self, offset: int, length: int) -> bool:
        """Whether reading ``length`` bytes at ``offset`` would succeed (bytes past the end count as
        present: reads there come back short, as from any file)."""
        if offset < 0 or length < 0:
            raise ValueError(f"negative offset or length ({offset}, {length})")
        length = min(length, self.size - offset)
        if length <= 0 or self._window is not None:
            return True
        return any(start <= offset and offset + length <= end for start, end in self._ranges)

    def extended(self, chunks: Iterable[bytes | memoryview], ranges: Iterable[tuple[int, int]]) -> MemberView:
        """A new view holding this one's bytes and the (offset, length) ``ranges``, taken from
        ``chunks`` (the member's content from its start, in order), which are read only as far as
        the last byte this view lacks: a table a first pass did not keep near the start of a member
        of hundreds of MB (mxnet-cu112's 26 MB ``.dynstr``, past a 16 MiB head) costs a short read,
        not another pass. Nothing is checked (the first pass checked the member's CRC-32); a
        ValueError when the chunks end before the last range. The caller closes ``chunks``."""
        self._check_open()
        if self._window is not None:
            raise ValueError(f"{self.name}: a view of a stored member holds every byte already")
        bounded = sorted((max(0, offset), min(self.size, offset + length)) for offset, length in ranges)
        wanted = _without(merge_ranges(r for r in bounded if r[0] < r[1]), self._ranges)
        stop = wanted[-1][1] if wanted else 0
        builder = ViewBuilder(
            self.name, self.size, head=0, tail=0, keep=lambda _: [(low, high - low) for low, high in wanted]
        )
        for chunk in chunks if wanted else ():
            builder.feed(chunk)
            if builder.offset >= stop:
                break
        if builder.offset < stop:
            raise ValueError(f"{self.name}: the chunks end at {builder.offset}, before byte {stop}")
        pieces = sorted([*self._pieces, *builder.take()], key=lambda piece: piece[0])
        return MemberView(self.name, self.size, pieces=pieces)

    # -- file object -------------------------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._check_open()
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._check_open()
        self._position = seek_position(offset, whence, self._position, self.size)
        return self._position

    def readinto(self, buffer: WriteableBuffer) -> int:
        self._check_open()
        view = memoryview(buffer).cast("B")
        wanted = min(len(view), self.size - self._position)
        if wanted <= 0:
            return 0
        if self._window is not None:
            self._window.seek(self._position)
            count = self._window.readinto(view[:wanted])  # all of it, or a WheelError
        else:
            self._copy_kept(self._position, view[:wanted])
            count = wanted
        self._position += count
        return count

    def read(self, size: int | None = -1) -> bytes:
        """``size`` bytes from the position (the rest when negative or None). Bytes one kept piece
        holds are copied once, straight from it (or not at all: a whole piece that is a bytes object
        is that object), where RawIOBase's read copies twice, into a buffer and then into bytes:
        with the saved tables, that held a 47 MB .dynstr three times over at once."""
        self._check_open()
        if size is None or size < 0:
            return self.readall()
        wanted = min(size, self.size - self._position)
        if wanted <= 0:
            return b""
        index = bisect.bisect_right(self._starts, self._position) - 1
        if self._window is None and index >= 0:
            start, data = self._pieces[index]
            begin = self._position - start
            if begin + wanted <= len(data):
                self._position += wanted
                whole = data.obj
                if begin == 0 and wanted == len(data) and type(whole) is bytes and len(whole) == wanted:
                    return whole
                return bytes(data[begin : begin + wanted])
        buffer = bytearray(wanted)
        count = self.readinto(buffer)
        del buffer[count:]
        return bytes(buffer)

    def readall(self) -> bytes:
        """The rest of the member, in one piece (MissingRangeError if any of it was not kept)."""
        self._check_open()
        return self.read(max(0, self.size - self._position))

    def close(self) -> None:
        if not self.closed:
            try:
                if self._window is not None:
                    self._window.close()
            finally:
                self._pieces = []
                self._starts = []
                self._ranges = []
                super().close()

    def _copy_kept(self, offset: int, target: memoryview) -> None:
        length = len(target)
        if not self.has_range(offset, length):
            raise MissingRangeError(self.name, offset, length)
        index = bisect.bisect_right(self._starts, offset) - 1
        done = 0
        while done < length:
            start, data = self._pieces[index]
            begin = offset + done - start
            count = min(len(data) - begin, length - done)
            target[done : done + count] = data[begin : begin + count]
            done += count
            index += 1

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed MemberView")


def _without(ranges: list[tuple[int, int]], held: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the merged (start, end) ``ranges`` outside the merged ``held`` ones, in order."""
    left: list[tuple[int, int]] = []
    for start, end in ranges:
        low = start
        for held_start, held_end in held:
            if held_end <= low or held_start >= end:
                continue
            if held_start > low:
                left.append((low, held_start))
            low = max(low, held_end)
            if low >= end:
                break
        if low < end:
            left.append((low, end))
    return left


class ViewBuilder:
    """A :class:`MemberView` made from content handed in chunk by chunk (``feed``), for a caller that
    sees the content go by (a writer) rather than pulls it: keeps bytes [0, head) and
    [size - tail, size), or all of them when ``size <= head + tail``, and the ranges ``keep`` names
    from the first chunk.

    The kept chunks are referenced, not copied (a chunk cut by a range boundary is kept whole behind a
    memoryview, unless less than half of it is kept: that part is copied), so memory is at most the
    kept bytes plus a chunk per range."""

    def __init__(self, name: str, size: int, *, head: int, tail: int, keep: KeepRanges | None = None) -> None:
        if head < 0 or tail < 0 or size < 0:
            raise ValueError(f"negative size, head or tail ({size}, {head}, {tail})")
        self.name = name
        self.size = size
        self.offset = 0  # content fed so far
        keep_below, keep_from = (size, size) if size <= head + tail else (head, size - tail)
        self._spans = merge_ranges([(0, keep_below), (keep_from, size)])
        self._keep = None if keep_below >= size else keep
        self._pieces: list[tuple[int, memoryview]] = []

    def feed(self, chunk: bytes | memoryview) -> None:
        """The next ``len(chunk)`` bytes of the content (ValueError past ``size``)."""
        offset = self.offset
        end = offset + len(chunk)
        if end > self.size:
            raise ValueError(f"{self.name}: the chunks hold more than {self.size} bytes")
        if self._keep is not None:
            keep, self._keep = self._keep, None
            extra = [(start, start + length) for start, length in keep(bytes(chunk)) if length > 0]
            self._spans = merge_ranges(sorted([*self._spans, *extra]))
        for span_start, span_end in self._spans:
            low, high = max(span_start, offset), min(span_end, end)
            if low < high:
                part = memoryview(chunk)[low - offset : high - offset]
                # A small part is copied: a view would keep the whole chunk (1 MiB) alive.
                self._pieces.append((low, part if 2 * len(part) >= len(chunk) else memoryview(bytes(part))))
        self.offset = end

    def finish(self) -> MemberView:
        """The view (ValueError when fewer than ``size`` bytes were fed)."""
        if self.offset != self.size:
            raise ValueError(f"{self.name}: the chunks hold {self.offset} bytes, not {self.size}")
        return MemberView(self.name, self.size, pieces=self.take())

    def take(self) -> list[tuple[int, memoryview]]:
        """The (offset, bytes) pieces kept so far, in order, handed over: the builder keeps none."""
        pieces, self._pieces = self._pieces, []
        return pieces


_SAVE_PIECE = 1 << 20  # bytes copied at a time into a SavedRanges file


@dataclass(frozen=True)
class SavedRanges:
    """Byte ranges of a member's content saved to a file (``path``: the ranges' bytes one after
    another), so that a later step reads them without inflating the member again: the tables an
    analysis read, for the edit that repair plans next. Plain data: it crosses process boundaries."""

    name: str
    size: int  # the member's content size
    path: str
    ranges: tuple[tuple[int, int], ...]  # (offset, length), in order, not overlapping

    @classmethod
    def save(
        cls, name: str, size: int, content: BinaryIO, ranges: Iterable[tuple[int, int]], path: Path
    ) -> SavedRanges:
        """Write the bytes of ``ranges`` of member ``name`` (``size`` bytes) that ``content`` (a
        :class:`MemberView`, or a file holding all of it) holds to ``path`` (replaced; the parts of
        ranges a view lacks are left out)."""
        wanted = merge_ranges(sorted((start, start + length) for start, length in ranges if length > 0))
        held = content.kept_ranges if isinstance(content, MemberView) else ((0, size),)
        saved: list[tuple[int, int]] = []
        with path.open("wb") as handle:
            for start, end in wanted:
                for held_start, held_end in held:
                    low, high = max(start, held_start), min(end, held_end, size)
                    if low < high:
                        content.seek(low)
                        for start_of_piece in range(low, high, _SAVE_PIECE):  # no copy of a whole table
                            handle.write(content.read(min(_SAVE_PIECE, high - start_of_piece)))
                        saved.append((low, high - low))
        return cls(name, size, str(path), tuple(saved))

    def open(self) -> MemberView:
        """A view holding the saved ranges (read into memory); an OSError when the file is gone."""
        pieces: list[tuple[int, bytes | memoryview]] = []
        with Path(self.path).open("rb") as handle:
            # A bytes object per range, which a read of the whole range returns as it is.
            for offset, length in self.ranges:
                data = handle.read(length)
                if len(data) != length:
                    raise OSError(f"{self.path} ends inside the range saved at {offset}")
                pieces.append((offset, data))
            if handle.read(1):
                raise OSError(f"{self.path} holds more than the {sum(n for _, n in self.ranges)} bytes saved")
        return MemberView(self.name, self.size, pieces=pieces)
