"""A zip's central directory written as bytes, an entry as each member is written.

zipfile writes the central directory from a list of ``ZipInfo`` objects kept until the archive is
closed: some 500 bytes a member with what comes with them (a wheel of 100,000 files held 50 MB of
them). Here each entry is packed into one growing ``bytearray`` when its member is complete, about
80 bytes a member, and written with the end records at the close. The layout is zipfile's own
(APPNOTE 4.3.12 to 4.3.16), field for field, so an archive comes out as ``ZipFile.close`` would
write it: zip64 extra fields only for sizes or offsets past ``ZIP64_LIMIT``, zip64 end records only
for more than 65,535 entries or a directory past it.
"""

from __future__ import annotations

import struct
import zipfile
from typing import BinaryIO

__all__ = ["ZIP64_LIMIT", "CentralDirectoryWriter"]

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


class CentralDirectoryWriter:
    """The central directory of an archive being written: ``add`` each member once its local header
    is final, then ``write`` it after the last member."""

    def __init__(self) -> None:
        self._entries = bytearray()
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
        self._entries += _CENTRAL_ENTRY.pack(
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
        self._entries += name
        self._entries += extra
        self._count += 1

    def write(self, file: BinaryIO) -> None:
        """Write the entries at ``file``'s position, then the end records (zip64 ones when needed)."""
        start = file.tell()
        file.write(self._entries)
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
