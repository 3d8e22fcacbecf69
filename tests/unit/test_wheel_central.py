"""slimwheel.wheel.central: the central directory packed entry by entry is the one zipfile writes."""

from __future__ import annotations

import io
import zipfile

import pytest

from slimwheel.wheel.central import ZIP64_LIMIT, CentralDirectoryWriter

START = 1234  # where the central directory starts: the members before it are not needed here


def make_info(
    name: str,
    *,
    size: int = 10,
    compressed: int = 7,
    offset: int = 0,
    method: int = zipfile.ZIP_DEFLATED,
    flags: int = 0,
    zip64_header: bool = False,
) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2024, 5, 17, 13, 45, 31))
    info.create_system = 3
    info.external_attr = 0o100755 << 16
    info.compress_type = method
    info.flag_bits = flags
    info.CRC = 0xDEADBEEF
    info.file_size = size
    info.compress_size = compressed
    info.header_offset = offset
    info.FileHeader(zip64_header)  # as the writer does: it raises the versions for zip64 sizes
    return info


def by_zipfile(infos: list[zipfile.ZipInfo]) -> bytes:
    file = io.BytesIO()
    file.write(bytes(START))
    archive = zipfile.ZipFile(file, "w")
    archive.filelist.extend(infos)
    archive.close()
    return file.getvalue()[START:]


def by_central(infos: list[zipfile.ZipInfo]) -> bytes:
    central = CentralDirectoryWriter()
    for info in infos:
        central.add(info)
    file = io.BytesIO()
    file.write(bytes(START))
    central.write(file)
    assert len(central) == len(infos)
    return file.getvalue()[START:]


@pytest.mark.parametrize(
    "infos",
    [
        pytest.param([], id="empty"),
        pytest.param([make_info("pkg/a.py", method=zipfile.ZIP_STORED, size=7)], id="stored"),
        pytest.param([make_info("pkg/ünïcode/名前.so", flags=0x2)], id="utf-8 name, compression bits"),
        pytest.param([make_info("pkg/b.bz2", method=zipfile.ZIP_BZIP2)], id="bzip2 version"),
        pytest.param([make_info("pkg/c.xz", method=zipfile.ZIP_LZMA)], id="lzma version"),
        pytest.param([make_info("pkg/zip64-header.so", zip64_header=True)], id="zip64 local header only"),
        pytest.param(
            [make_info("pkg/huge.so", size=ZIP64_LIMIT + 1, compressed=ZIP64_LIMIT - 5, zip64_header=True)],
            id="zip64 sizes",
        ),
        pytest.param([make_info("pkg/far.so", offset=ZIP64_LIMIT + 1)], id="zip64 offset"),
        pytest.param(
            [make_info("pkg/all.so", size=5 << 32, compressed=4 << 32, offset=6 << 32, zip64_header=True)],
            id="zip64 sizes and offset",
        ),
        pytest.param([make_info(f"pkg/m{n}.py", offset=n * 50) for n in range(70_000)], id="70000 entries"),
    ],
)
def test_the_central_directory_is_the_one_zipfile_writes(infos: list[zipfile.ZipInfo]) -> None:
    assert by_central(infos) == by_zipfile(infos)


def test_a_directory_of_more_than_65535_entries_is_read_back_by_zipfile() -> None:
    """zip64 end records: the count does not fit the classic end record."""
    file = io.BytesIO()
    central = CentralDirectoryWriter()
    for index in range(66_000):
        info = make_info(f"m{index}.py", method=zipfile.ZIP_STORED, size=0, compressed=0, offset=file.tell())
        info.CRC = 0  # of no content
        file.write(info.FileHeader())
        central.add(info)
    central.write(file)
    with zipfile.ZipFile(file) as archive:
        names = archive.namelist()
        assert len(names) == 66_000
        assert names[65_999] == "m65999.py"
        assert archive.testzip() is None
