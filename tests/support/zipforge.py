"""A zip writer whose every field can lie: what the fuzz suite builds hostile wheels with.

``zipfile`` always writes a consistent archive; a fuzzer needs the opposite. Here a wheel is a list
of ``Entry`` (name, content, compression) plus per-entry overrides of what the local header and the
central directory say (CRC, sizes, name, extra field, offset, flags, mode, ZIP64), and ``write_zip``
lays them out. With no override the result is a valid archive that ``zipfile`` reads back.

Content can be ``Zeros(n)``: n zero bytes that are never held in memory, deflated by repeating one
flushed block (a 1.5 GiB METADATA becomes a 1.5 MB member), so a zip bomb costs the test nothing.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "DEFLATED",
    "STORED",
    "Entry",
    "Zeros",
    "entries_from_zip",
    "write_zip",
]

STORED = 0
DEFLATED = 8
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_EOCD = struct.Struct("<4sHHHHIIH")
_ZIP64_EOCD = struct.Struct("<4sQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<4sIQI")
_DOS_DATE = ((2020 - 1980) << 9) | (1 << 5) | 1  # 2020-01-01
_UTF8_FLAG = 0x800
_CHUNK = 1 << 20
_U32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Zeros:
    """``prefix`` then zero bytes, ``size`` bytes in all, the zeros never materialised."""

    size: int
    prefix: bytes = b""


Content = bytes | Zeros


def _crc(content: Content) -> int:
    if isinstance(content, bytes):
        return zlib.crc32(content)
    crc, left, chunk = zlib.crc32(content.prefix), content.size - len(content.prefix), bytes(_CHUNK)
    while left >= _CHUNK:
        crc = zlib.crc32(chunk, crc)
        left -= _CHUNK
    return zlib.crc32(bytes(left), crc)


def _size(content: Content) -> int:
    return len(content) if isinstance(content, bytes) else content.size


def _deflate(content: Content) -> bytes:
    if isinstance(content, bytes):
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        return compressor.compress(content) + compressor.flush()
    # A full flush resets the dictionary and ends on a byte boundary, so the same block can be
    # repeated: the stream stays valid and never references data before its own block.
    head_compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = head_compressor.compress(content.prefix) + head_compressor.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(content.size - len(content.prefix), _CHUNK)
    block_compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = block_compressor.compress(bytes(_CHUNK)) + block_compressor.flush(zlib.Z_FULL_FLUSH)
    tail_compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    tail = tail_compressor.compress(bytes(rest)) + tail_compressor.flush()
    return head + block * whole + tail


def _stored(content: Content) -> bytes:
    return (
        content if isinstance(content, bytes) else content.prefix + bytes(content.size - len(content.prefix))
    )


@dataclass
class Entry:
    """One member and what its headers claim. ``None`` overrides mean "the true value"."""

    name: str
    content: Content
    method: int = DEFLATED
    # Written as the data: the true compressed bytes unless given (a method that lies about them).
    raw_data: bytes | None = None
    name_bytes: bytes | None = None  # the name as written in both headers (bad encodings)
    local_name_bytes: bytes | None = None  # a different name in the local header only
    flags: int | None = None
    crc: int | None = None
    local_crc: int | None = None
    compress_size: int | None = None
    local_compress_size: int | None = None
    file_size: int | None = None
    local_file_size: int | None = None
    local_extra: bytes = b""
    central_extra: bytes = b""
    zip64: bool = False  # sizes and offset as 0xFFFFFFFF with a ZIP64 extra field
    external_attr: int = 0o644 << 16
    create_system: int = 3
    offset_delta: int = 0  # the central directory's header offset lies by this much
    version_needed: int | None = None
    comment: bytes = b""

    def encoded_name(self) -> bytes:
        if self.name_bytes is not None:
            return self.name_bytes
        return self.name.encode("utf-8", "surrogateescape")

    def data(self) -> bytes:
        if self.raw_data is not None:
            return self.raw_data
        return _deflate(self.content) if self.method == DEFLATED else _stored(self.content)


@dataclass
class Archive:
    """Overrides of the end records. ``zip64_end`` writes a ZIP64 end record and locator too."""

    comment: bytes = b""
    zip64_end: bool = False
    count: int | None = None
    count_on_disk: int | None = None
    cd_size: int | None = None
    cd_offset: int | None = None
    comment_length: int | None = None
    disk: int = 0
    prefix: bytes = b""  # bytes before the first local header (a self-extracting stub)
    extra_end: list[bytes] = field(default_factory=list)  # appended after the end record


def _flags(entry: Entry, name: bytes) -> int:
    if entry.flags is not None:
        return entry.flags
    try:
        name.decode("ascii")
    except UnicodeDecodeError:
        return _UTF8_FLAG
    return 0


def _zip64_extra(values: Sequence[int]) -> bytes:
    return struct.pack("<HH", 0x0001, 8 * len(values)) + b"".join(struct.pack("<Q", v) for v in values)


def write_zip(entries: Iterable[Entry], archive: Archive | None = None) -> bytes:
    """Lay out ``entries`` as local headers and data, then the central directory and end records."""
    archive = archive or Archive()
    out = bytearray(archive.prefix)
    central = bytearray()
    count = 0
    for entry in entries:
        count += 1
        name = entry.encoded_name()
        local_name = entry.local_name_bytes if entry.local_name_bytes is not None else name
        data = entry.data()
        crc = _crc(entry.content)
        true_size, true_compressed = _size(entry.content), len(data)
        flags = _flags(entry, name)
        version = entry.version_needed if entry.version_needed is not None else (45 if entry.zip64 else 20)
        offset = len(out)
        local_extra = entry.local_extra
        local_sizes = (
            entry.local_compress_size if entry.local_compress_size is not None else true_compressed,
            entry.local_file_size if entry.local_file_size is not None else true_size,
        )
        if entry.zip64:
            local_extra = _zip64_extra([local_sizes[1], local_sizes[0]]) + local_extra
            local_sizes = (_U32, _U32)
        out += _LOCAL.pack(
            b"PK\x03\x04",
            version,
            flags,
            entry.method,
            0,
            _DOS_DATE,
            (
                entry.local_crc
                if entry.local_crc is not None
                else (entry.crc if entry.crc is not None else crc)
            )
            & _U32,
            local_sizes[0] & _U32,
            local_sizes[1] & _U32,
            len(local_name) & 0xFFFF,
            len(local_extra) & 0xFFFF,
        )
        out += local_name + local_extra + data
        sizes = (
            entry.compress_size if entry.compress_size is not None else true_compressed,
            entry.file_size if entry.file_size is not None else true_size,
        )
        header_offset = offset + entry.offset_delta
        central_extra = entry.central_extra
        if entry.zip64:
            central_extra = _zip64_extra([sizes[1], sizes[0], max(header_offset, 0)]) + central_extra
            sizes, header_offset = (_U32, _U32), _U32
        central += _CENTRAL.pack(
            b"PK\x01\x02",
            (entry.create_system << 8) | 20,
            version,
            flags,
            entry.method,
            0,
            _DOS_DATE,
            (entry.crc if entry.crc is not None else crc) & _U32,
            sizes[0] & _U32,
            sizes[1] & _U32,
            len(name) & 0xFFFF,
            len(central_extra) & 0xFFFF,
            len(entry.comment) & 0xFFFF,
            0,
            0,
            entry.external_attr & _U32,
            header_offset & _U32,
        )
        central += name + central_extra + entry.comment
    cd_offset = len(out)
    out += central
    cd_size = len(central)
    if archive.zip64_end:
        end64 = len(out)
        out += _ZIP64_EOCD.pack(
            b"PK\x06\x06",
            44,
            (3 << 8) | 45,
            45,
            archive.disk,
            archive.disk,
            archive.count_on_disk if archive.count_on_disk is not None else count,
            archive.count if archive.count is not None else count,
            archive.cd_size if archive.cd_size is not None else cd_size,
            archive.cd_offset if archive.cd_offset is not None else cd_offset,
        )
        out += _ZIP64_LOCATOR.pack(b"PK\x06\x07", 0, end64, 1)
        eocd_count = eocd_disk_count = 0xFFFF
        eocd_size = eocd_offset = _U32
    else:
        eocd_count = archive.count if archive.count is not None else count
        eocd_disk_count = archive.count_on_disk if archive.count_on_disk is not None else eocd_count
        eocd_size = archive.cd_size if archive.cd_size is not None else cd_size
        eocd_offset = archive.cd_offset if archive.cd_offset is not None else cd_offset
    out += _EOCD.pack(
        b"PK\x05\x06",
        archive.disk & 0xFFFF,
        archive.disk & 0xFFFF,
        eocd_disk_count & 0xFFFF,
        eocd_count & 0xFFFF,
        eocd_size & _U32,
        eocd_offset & _U32,
        (archive.comment_length if archive.comment_length is not None else len(archive.comment)) & 0xFFFF,
    )
    out += archive.comment
    for tail in archive.extra_end:
        out += tail
    return bytes(out)


def entries_from_zip(data: bytes) -> list[Entry]:
    """The members of a valid archive as ``Entry`` values (content inflated, method and mode kept)."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [
            Entry(
                name=info.filename,
                content=archive.read(info),
                method=DEFLATED if info.compress_type == zipfile.ZIP_DEFLATED else STORED,
                external_attr=info.external_attr,
            )
            for info in archive.infolist()
        ]
