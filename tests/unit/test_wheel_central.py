"""slimwheel.wheel.central: the central directory packed entry by entry is the one zipfile writes."""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimwheel.wheel import central
from slimwheel.wheel.central import ZIP64_LIMIT, CentralDirectoryWriter, read_central_directory

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
    "make_infos",
    [
        pytest.param(list, id="empty"),
        pytest.param(lambda: [make_info("pkg/a.py", method=zipfile.ZIP_STORED, size=7)], id="stored"),
        pytest.param(
            lambda: [make_info("pkg/ünïcode/名前.so", flags=0x2)], id="utf-8 name, compression bits"
        ),
        pytest.param(lambda: [make_info("pkg/b.bz2", method=zipfile.ZIP_BZIP2)], id="bzip2 version"),
        pytest.param(lambda: [make_info("pkg/c.xz", method=zipfile.ZIP_LZMA)], id="lzma version"),
        pytest.param(
            lambda: [make_info("pkg/zip64-header.so", zip64_header=True)], id="zip64 local header only"
        ),
        pytest.param(
            lambda: [
                make_info("pkg/huge.so", size=ZIP64_LIMIT + 1, compressed=ZIP64_LIMIT - 5, zip64_header=True)
            ],
            id="zip64 sizes",
        ),
        pytest.param(lambda: [make_info("pkg/far.so", offset=ZIP64_LIMIT + 1)], id="zip64 offset"),
        pytest.param(
            lambda: [
                make_info("pkg/all.so", size=5 << 32, compressed=4 << 32, offset=6 << 32, zip64_header=True)
            ],
            id="zip64 sizes and offset",
        ),
        pytest.param(
            lambda: [make_info(f"pkg/m{n}.py", offset=n * 50) for n in range(70_000)], id="70000 entries"
        ),
    ],
)
def test_the_central_directory_is_the_one_zipfile_writes(
    make_infos: Callable[[], list[zipfile.ZipInfo]],
) -> None:
    infos = make_infos()
    assert by_central(infos) == by_zipfile(infos)


def many_members(count: int) -> bytes:
    """A zip of ``count`` empty stored members, written here (zipfile takes 40 s for 66,000)."""
    file = io.BytesIO()
    central = CentralDirectoryWriter()
    for index in range(count):
        info = make_info(f"m{index}.py", method=zipfile.ZIP_STORED, size=0, compressed=0, offset=file.tell())
        info.CRC = 0  # of no content
        file.write(info.FileHeader())
        central.add(info)
    central.write(file)
    return file.getvalue()


def test_a_directory_of_more_than_65535_entries_is_read_back_by_zipfile() -> None:
    """zip64 end records: the count does not fit the classic end record."""
    with zipfile.ZipFile(io.BytesIO(many_members(66_000))) as archive:
        names = archive.namelist()
        assert len(names) == 66_000
        assert names[65_999] == "m65999.py"
        assert archive.testzip() is None


# -- reading ------------------------------------------------------------------------------------


def zipfile_entries(data: bytes) -> tuple[int, list[tuple[object, ...]]] | str:
    """What zipfile reads from ``data``: the directory's start and each entry's fields, or the
    kind of error it raises."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.start_dir, [
                (
                    info.orig_filename,
                    info.flag_bits,
                    info.compress_type,
                    info.CRC,
                    info.compress_size,
                    info.file_size,
                    info.header_offset,
                    info.external_attr,
                    info.date_time,
                )
                for info in archive.infolist()
            ]
    except (zipfile.BadZipFile, NotImplementedError, ValueError, struct.error):
        return "error"


def central_entries(data: bytes) -> tuple[int, list[tuple[object, ...]]] | str:
    try:
        start, entries = read_central_directory(io.BytesIO(data))
        return start, [
            (
                entry.name,
                entry.flag_bits,
                entry.compress_type,
                entry.crc,
                entry.compress_size,
                entry.file_size,
                entry.header_offset,
                entry.external_attr,
                entry.date_time,
            )
            for entry in entries
        ]
    except (zipfile.BadZipFile, ValueError, struct.error):
        return "error"


def small_zip(*, comment: bytes = b"", members: int = 3, prefix: bytes = b"") -> bytes:
    file = io.BytesIO()
    file.write(prefix)
    with zipfile.ZipFile(file, "a" if prefix else "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for index in range(members):
            archive.writestr(f"pkg/módulo{index}.py" if index % 2 else f"pkg/m{index}.py", b"x = 1\n" * index)
        archive.comment = comment
    return file.getvalue()


def commented_members(count: int) -> bytes:
    """Entries with comments and extra fields of many lengths (a directory of several MiB, read a
    piece at a time: entries, names, extras and comments fall across the pieces' ends)."""
    file = io.BytesIO()
    with zipfile.ZipFile(file, "w") as archive:
        for index in range(count):
            info = zipfile.ZipInfo(f"pkg/{'n' * (index % 97 if index % 50 else 700)}{index}.py")
            info.comment = b"c" * (index * 7 % 301 if index % 100 else 20_000 + index * 37 % 40_000)
            info.extra = struct.pack("<HH", 0xCAFE, index % 53) + b"e" * (index % 53)
            archive.writestr(info, b"")
    return file.getvalue()


@pytest.mark.parametrize(
    "make_data",
    [
        pytest.param(small_zip, id="plain"),
        pytest.param(lambda: commented_members(20_000), id="comments and extras across pieces"),
        pytest.param(lambda: small_zip(comment=b"a comment PK"), id="comment"),
        pytest.param(
            lambda: small_zip(prefix=b"#!/bin/sh\nexec something\n" * 40), id="data before the archive"
        ),
        pytest.param(lambda: small_zip(members=0), id="no members"),
        pytest.param(lambda: many_members(66_000), id="zip64 end records"),
        pytest.param(lambda: b"", id="empty file"),
        pytest.param(lambda: b"PK\x05\x06" + bytes(18), id="only an end record"),
        pytest.param(lambda: b"not a zip at all" * 100, id="not a zip"),
        pytest.param(lambda: small_zip()[:-30], id="cut short"),
    ],
)
def test_the_directory_is_read_as_zipfile_reads_it(make_data: Callable[[], bytes]) -> None:
    data = make_data()
    assert central_entries(data) == zipfile_entries(data)


@pytest.mark.parametrize("window", [300, 4096])
def test_the_directory_read_in_small_pieces_is_read_as_zipfile_reads_it(
    window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces smaller than some entries, names and comments: every way an entry can straddle the end
    of what was read, many times over."""
    monkeypatch.setattr(central, "_WINDOW", window)
    data = commented_members(600)
    assert central_entries(data) == zipfile_entries(data)


def test_zip64_sizes_and_offsets_are_read_from_the_extra_field(tmp_path: Path) -> None:
    infos = [
        make_info("pkg/all.so", size=5 << 32, compressed=4 << 32, offset=6 << 32, zip64_header=True),
        make_info("pkg/small.py", offset=7 << 32),
    ]
    central = CentralDirectoryWriter()
    for info in infos:
        central.add(info)
    path = tmp_path / "sparse.zip"
    with path.open("wb") as file:
        file.seek(8 << 32)  # a sparse file: the directory starts past the members it names (none written)
        central.write(file)
    with path.open("rb") as file:
        start, entries = read_central_directory(file)
        found = [(entry.file_size, entry.compress_size, entry.header_offset) for entry in entries]
    assert start == 8 << 32
    assert found == [(5 << 32, 4 << 32, 6 << 32), (10, 7, 7 << 32)]


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_damaged_directory_is_read_or_refused_as_zipfile_does(data: st.DataObject) -> None:
    """Bytes of the directory and the end records overwritten at random: whatever zipfile makes of
    the result, the reader here makes of it too (the same entries, or an error)."""
    archive = bytearray(small_zip(members=4, comment=data.draw(st.sampled_from([b"", b"note"]))))
    directory_start = zipfile_entries(bytes(archive))
    assert not isinstance(directory_start, str)
    tail_start = directory_start[0]
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(tail_start, len(archive) - 1))
        archive[position] = data.draw(st.integers(0, 255))
    damaged = bytes(archive)
    assert central_entries(damaged) == zipfile_entries(damaged)
