"""A zip's central directory, read and written without an object per member kept by the way.

Reading: ``read_central_directory`` finds the end records as zipfile does (the classic one at the end
or before a comment, the zip64 ones before it) and yields each entry's fields as it is unpacked from
the directory's bytes, read in one piece. zipfile builds a ``ZipInfo`` for each entry and keeps them
(some 380 bytes a member while a directory is parsed, a second of parsing for 100,000 members); the
caller here keeps what it needs. The checks and the readings are zipfile's (``_EndRecData``,
``_RealGetContents``, ``ZipInfo._decodeExtra``): the same archives are read the same way or refused.

Writing: zipfile writes the central directory from a list of ``ZipInfo`` objects kept until the
archive is closed: some 500 bytes a member with what comes with them (a wheel of 100,000 files held
50 MB of them). Here each entry is packed into a ``PieceBuffer`` (past 4 MiB, a temporary file) when
its member is complete, about 80 bytes a member, and written with the end records at the close. The
layout is zipfile's own (APPNOTE 4.3.12 to 4.3.16), field for field, so an archive comes out as
``ZipFile.close`` would write it: zip64 extra fields only for sizes or offsets past ``ZIP64_LIMIT``,
zip64 end records only for more than 65,535 entries or a directory past it.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

from slimwheel.wheel._pieces import PieceBuffer

__all__ = [
    "ZIP64_LIMIT",
    "CentralDirectoryWriter",
    "CentralEntry",
    "DirectoryTooLargeError",
    "NoEndRecordError",
    "ZipDirectoryError",
    "read_central_directory",
]

# zipfile's thresholds (the reader takes the 0xFFFFFFFF sentinels, so any value up to them is valid
# zip; these keep the output what zipfile writes).
ZIP64_LIMIT = (1 << 31) - 1
_COUNT_LIMIT = (1 << 16) - 1
_SIZE_SENTINEL = 0xFFFFFFFF
_ZIP64_VERSION = 45
_METHOD_VERSIONS = {zipfile.ZIP_BZIP2: 46, zipfile.ZIP_LZMA: 63}
_UTF8_NAME_FLAG = 0x800
_ZIP64_EXTRA_ID = 1

_CENTRAL_ENTRY = struct.Struct("<4s4B4HL2L5H2L")
_CENTRAL_ENTRY_MAGIC = b"PK\x01\x02"
_END = struct.Struct("<4s4H2LH")
_END_MAGIC = b"PK\x05\x06"
_END64 = struct.Struct("<4sQ2H2L4Q")
_END64_MAGIC = b"PK\x06\x06"
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64_LOCATOR_MAGIC = b"PK\x06\x07"
_MAX_COMMENT = (1 << 16) - 1
_MAX_EXTRACT_VERSION = 63  # what zipfile can extract (LZMA)
_ZIP64_SIZE_SENTINELS = (0xFFFF_FFFF_FFFF_FFFF, _SIZE_SENTINEL)
_Q = struct.Struct("<Q")
_EXTRA_HEADER = struct.Struct("<HH")


class ZipDirectoryError(zipfile.BadZipFile):
    """The end records or the central directory are not a zip's."""


class NoEndRecordError(ZipDirectoryError):
    """No end of central directory record: not a zip, or one whose end is missing."""


class DirectoryTooLargeError(ZipDirectoryError):
    """The central directory is bigger than the caller reads (``max_size``): not damaged, refused."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"its central directory is {size:,} bytes, over the {limit:,} read")
        self.size = size
        self.limit = limit


class CentralEntry(NamedTuple):
    """One central directory entry's fields, as zipfile reads them."""

    name: str  # decoded: UTF-8 when flag bit 11 is set, else cp437
    name_size: int  # the name's bytes in the entry
    flag_bits: int
    compress_type: int
    crc: int
    compress_size: int
    file_size: int
    header_offset: int  # corrected as zipfile corrects it for data before the archive
    external_attr: int
    date_time: tuple[int, int, int, int, int, int]


def read_central_directory(
    fileobj: BinaryIO, *, max_size: int | None = None
) -> tuple[int, Iterator[CentralEntry]]:
    """Where the central directory of the zip in ``fileobj`` starts, and its entries, read and unpacked
    a piece at a time as the iterator runs (``fileobj`` must stay open until then). Raises
    NoEndRecordError when there is no end record, DirectoryTooLargeError when the directory is over
    ``max_size`` bytes (nothing of it read), ZipDirectoryError when the records or an entry are
    damaged (at once, or as the entries are read), OSError when reading fails (at once, or as the
    entries are read)."""
    end = _find_end_record(fileobj)
    size, offset, location, zip64 = end
    if max_size is not None and size > max_size:
        raise DirectoryTooLargeError(size, max_size)
    # Data before the archive (a self-extractor's stub) shifts every offset: zipfile corrects them.
    shift = location - size - offset
    if zip64:
        shift -= _END64.size + _END64_LOCATOR.size
    start = offset + shift
    if start < 0:
        raise ZipDirectoryError("Bad offset for central directory")
    return start, _entries(_Window(fileobj, start, size), size, shift)


class _Window:
    """The directory's bytes, read a piece at a time as the entries are unpacked (a wheel of 200,000
    files has an 18 MB directory; read whole, its one buffer also left glibc's heap in holes), and
    read as ``fileobj.read(size)`` would give them: short where the file ends early."""

    def __init__(self, fileobj: BinaryIO, start: int, size: int) -> None:
        self._fileobj = fileobj
        self._start = start
        self._size = size
        self.buffer = b""
        self.base = 0  # where ``buffer`` starts in the directory
        self._ended = False  # the file ended before ``size`` bytes

    def load(self, position: int, length: int) -> None:
        """Make ``buffer`` hold the ``length`` bytes at ``position`` (fewer where the directory's
        bytes end), letting go of those before ``position``."""
        end = min(position + length, self._size)
        loaded = max(self.base + len(self.buffer), position)  # a comment skipped is not read
        pieces = [self.buffer[position - self.base :]]
        while loaded < end and not self._ended:
            self._fileobj.seek(self._start + loaded)  # others read the file between entries
            piece = self._fileobj.read(min(max(_WINDOW, end - loaded), self._size - loaded))
            self._ended = not piece
            pieces.append(piece)
            loaded += len(piece)
        self.buffer = b"".join(pieces)
        self.base = position


_WINDOW = 1 << 20
_ENTRY_AHEAD = 512  # bytes made ready at an entry's start: its fixed 46, and most names and extras


def _entries(directory: _Window, size: int, shift: int) -> Iterator[CentralEntry]:
    unpack_entry = _CENTRAL_ENTRY.unpack_from
    entry_size = _CENTRAL_ENTRY.size
    position = 0
    stamps: dict[tuple[int, int], tuple[int, int, int, int, int, int]] = {}
    modes: dict[int, int] = {}
    buffer, base = directory.buffer, directory.base
    while position < size:
        at = position - base
        if at + _ENTRY_AHEAD > len(buffer):
            directory.load(position, _ENTRY_AHEAD)
            buffer, base, at = directory.buffer, directory.base, 0
        if at + entry_size > len(buffer):
            raise ZipDirectoryError("Truncated central directory")
        fields = unpack_entry(buffer, at)
        if fields[0] != _CENTRAL_ENTRY_MAGIC:
            raise ZipDirectoryError("Bad magic number for central directory")
        flag_bits, compress_type, time, day, crc, compress_size, file_size = fields[5:12]
        name_size, extra_size, comment_size = fields[12:15]
        if fields[3] > _MAX_EXTRACT_VERSION:
            raise ZipDirectoryError(f"zip file version {fields[3] / 10:.1f}")
        header_offset = fields[18]
        name_at = at + entry_size
        if name_at + name_size + extra_size > len(buffer):
            directory.load(position, entry_size + name_size + extra_size)
            buffer, base, at = directory.buffer, directory.base, 0
            name_at = entry_size
        raw_name = buffer[name_at : name_at + name_size]
        name = raw_name.decode("utf-8" if flag_bits & _UTF8_NAME_FLAG else "cp437")
        if extra_size:
            extra = buffer[name_at + name_size : name_at + name_size + extra_size]
            file_size, compress_size, header_offset = _zip64_fields(
                extra, file_size, compress_size, header_offset
            )
        position += entry_size + name_size + extra_size + comment_size
        # Members made in one build mostly share a time stamp: one tuple serves them all.
        date_time = stamps.get((day, time))
        if date_time is None:
            date_time = stamps[day, time] = (
                (day >> 9) + 1980,
                (day >> 5) & 0xF,
                day & 0x1F,
                time >> 11,
                (time >> 5) & 0x3F,
                (time & 0x1F) * 2,
            )
        # And their modes: one int object (32 bytes) serves every 0o644 file, not one each.
        external_attr = modes.setdefault(fields[17], fields[17])
        yield CentralEntry(
            name,
            len(raw_name),
            flag_bits,
            compress_type,
            crc,
            compress_size,
            file_size,
            header_offset + shift,
            external_attr,
            date_time,
        )


def _zip64_fields(
    extra: bytes, file_size: int, compress_size: int, header_offset: int
) -> tuple[int, int, int]:
    """The sizes and offset with the zip64 extra field's values where the entry holds sentinels
    (zipfile's ``_decodeExtra``); a field that claims more bytes than the extra data holds is damage."""
    while len(extra) >= _EXTRA_HEADER.size:
        kind, length = _EXTRA_HEADER.unpack_from(extra)
        if length + _EXTRA_HEADER.size > len(extra):
            raise ZipDirectoryError(f"Corrupt extra field {kind:04x} (size={length})")
        if kind == _ZIP64_EXTRA_ID:
            data = extra[_EXTRA_HEADER.size : _EXTRA_HEADER.size + length]
            field = ""
            try:
                if file_size in _ZIP64_SIZE_SENTINELS:
                    field = "File size"
                    (file_size,) = _Q.unpack_from(data)
                    data = data[8:]
                if compress_size == _SIZE_SENTINEL:
                    field = "Compress size"
                    (compress_size,) = _Q.unpack_from(data)
                    data = data[8:]
                if header_offset == _SIZE_SENTINEL:
                    field = "Header offset"
                    (header_offset,) = _Q.unpack_from(data)
            except struct.error:
                raise ZipDirectoryError(f"Corrupt zip64 extra field. {field} not found.") from None
        extra = extra[length + _EXTRA_HEADER.size :]
    return file_size, compress_size, header_offset


def _find_end_record(fileobj: BinaryIO) -> tuple[int, int, int, bool]:
    """(directory size, directory offset, where the end record is, whether zip64 records gave the
    size and offset), as zipfile's ``_EndRecData`` finds them: the end record last in the file, or
    the last one in the final 64 KiB and 22 bytes (after it, a comment)."""
    file_size = fileobj.seek(0, 2)
    if file_size >= _END.size:
        fileobj.seek(file_size - _END.size)
        tail = fileobj.read(_END.size)
        if tail.startswith(_END_MAGIC) and tail.endswith(b"\0\0"):
            return _with_zip64(fileobj, _END.unpack(tail), file_size - _END.size)
    search_start = max(file_size - _MAX_COMMENT - 1 - _END.size, 0)
    fileobj.seek(search_start)
    tail = fileobj.read()
    found = tail.rfind(_END_MAGIC)
    if found < 0 or found + _END.size > len(tail):
        raise NoEndRecordError("File is not a zip file")
    return _with_zip64(fileobj, _END.unpack_from(tail, found), search_start + found)


def _with_zip64(
    fileobj: BinaryIO, end: tuple[bytes, int, int, int, int, int, int, int], location: int
) -> tuple[int, int, int, bool]:
    size, offset = end[5], end[6]
    locator_at = location - _END64_LOCATOR.size
    if locator_at < 0:
        return size, offset, location, False
    fileobj.seek(locator_at)
    locator = fileobj.read(_END64_LOCATOR.size)
    if len(locator) != _END64_LOCATOR.size or not locator.startswith(_END64_LOCATOR_MAGIC):
        return size, offset, location, False
    _magic, disk, _relative_offset, disks = _END64_LOCATOR.unpack(locator)
    if disk != 0 or disks > 1:
        raise ZipDirectoryError("zipfiles that span multiple disks are not supported")
    record_at = locator_at - _END64.size
    if record_at < 0:  # zipfile's seek there fails, and it takes the file for no zip
        raise NoEndRecordError("File is not a zip file")
    fileobj.seek(record_at)
    record = fileobj.read(_END64.size)
    if len(record) != _END64.size or not record.startswith(_END64_MAGIC):
        return size, offset, location, False
    fields = _END64.unpack(record)
    return fields[8], fields[9], location, True


class CentralDirectoryWriter:
    """The central directory of an archive being written: ``add`` each member once its local header
    is final, then ``write`` it after the last member; ``close`` it in any case. ``add`` and
    ``write`` can raise OSError (its temporary file)."""

    def __init__(self) -> None:
        self._entries = PieceBuffer()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, info: zipfile.ZipInfo) -> None:
        """The entry of a member whose local header ``info.FileHeader`` wrote last (which raised
        ``info``'s versions to 45 if it used zip64 sizes: the entry keeps them, as zipfile's does)."""
        day, time = _dos_date_time(info.date_time)
        sizes: list[int] = []
        file_size, compress_size = info.file_size, info.compress_size
        if file_size > ZIP64_LIMIT or compress_size > ZIP64_LIMIT:
            sizes += (file_size, compress_size)
            file_size = compress_size = _SIZE_SENTINEL
        header_offset = info.header_offset
        if header_offset > ZIP64_LIMIT:
            sizes.append(header_offset)
            header_offset = _SIZE_SENTINEL
        # The writer gives members no extra field and no comment: zip64's is the only extra field.
        extra = struct.pack(f"<HH{len(sizes)}Q", _ZIP64_EXTRA_ID, 8 * len(sizes), *sizes) if sizes else b""
        least_version = _ZIP64_VERSION if sizes else 0
        least_version = max(least_version, _METHOD_VERSIONS.get(info.compress_type, 0))
        name, flag_bits = _encoded_name(info.filename, info.flag_bits)
        self._entries.append(
            _CENTRAL_ENTRY.pack(
                _CENTRAL_ENTRY_MAGIC,
                max(least_version, info.create_version),
                info.create_system,
                max(least_version, info.extract_version),
                info.reserved,
                flag_bits,
                info.compress_type,
                time,
                day,
                info.CRC,
                compress_size,
                file_size,
                len(name),
                len(extra),
                0,  # comment length
                0,  # disk number
                info.internal_attr,
                info.external_attr,
                header_offset,
            )
            + name
            + extra
        )
        self._count += 1

    def close(self) -> None:
        """Let go of the entries (and the temporary file that holds those past a few MiB)."""
        self._entries.close()

    def write(self, file: BinaryIO) -> None:
        """Write the entries at ``file``'s position, then the end records (zip64 ones when needed)."""
        start = file.tell()
        for piece in self._entries.pieces():
            file.write(piece)
        size = len(self._entries)
        count, offset = self._count, start
        if count > _COUNT_LIMIT or offset > ZIP64_LIMIT or size > ZIP64_LIMIT:
            end64_offset = start + size
            file.write(_END64.pack(_END64_MAGIC, _END64.size - 12, 45, 45, 0, 0, count, count, size, offset))
            file.write(_END64_LOCATOR.pack(_END64_LOCATOR_MAGIC, 0, end64_offset, 1))
            count = min(count, 0xFFFF)
            size = min(size, _SIZE_SENTINEL)
            offset = min(offset, _SIZE_SENTINEL)
        file.write(_END.pack(_END_MAGIC, 0, 0, count, count, size, offset, 0))


def _dos_date_time(date_time: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    year, month, day, hour, minute, second = date_time
    return (year - 1980) << 9 | month << 5 | day, hour << 11 | minute << 5 | second // 2


def _encoded_name(name: str, flag_bits: int) -> tuple[bytes, int]:
    """The name's bytes and the flag bits, as zipfile encodes them: ASCII as it is, anything else in
    UTF-8 with bit 11 set."""
    try:
        return name.encode("ascii"), flag_bits
    except UnicodeEncodeError:
        return name.encode("utf-8"), flag_bits | _UTF8_NAME_FLAG
