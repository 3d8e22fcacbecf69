"""The wheel writer on real wheels: raw copies keep every stored byte, added members get RECORD lines,
the output is reproducible, and a failure never leaves a file (whole or partial) under the final name."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from slimwheel.errors import InputError, UsageError, WheelError
from slimwheel.wheel import (
    CHUNK_SIZE,
    ZIP_DATE_TIME_MAX,
    ZIP_DATE_TIME_MIN,
    DateTime,
    RecordEntry,
    Wheel,
    WheelWriter,
    date_time_from_environment,
    parse_record,
)
from slimwheel.wheel.inflate import crc32
from tests.support.fixtures_wheel import (
    CountingFile,
    compressible_bytes,
    make_mixed_wheel,
    pseudo_random_bytes,
    raw_member_data,
)
from tests.support.wheels import make_wheel, many_files_wheel, record_hash

NAME = "demo-lib"
VERSION = "1.0"
DIST_INFO = "demo_lib-1.0.dist-info"
RECORD = f"{DIST_INFO}/RECORD"
OUT_NAME = "demo_lib-1.0-py3-none-any.whl"
BIG = "demo_lib/lib/libbig.so"  # 9 MiB of random bytes, deflated (so it stays 9 MiB)
STORED = "demo_lib/lib/libstored.so"
SCRIPT = "demo_lib-1.0.data/scripts/demo-run"  # mode 0o755 and its own date_time in the source
SCRIPT_DATE = (2023, 6, 7, 8, 9, 10)
WHEN = (2024, 2, 3, 4, 5, 6)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def restamp(path: Path, name: str, *, mode: int, date_time: DateTime) -> Path:
    """Rewrite a zip with one member's mode and date_time changed (content, order, RECORD kept)."""
    rewritten = path.with_suffix(".restamp")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rewritten, "w") as target:
        for info in source.infolist():
            copy = zipfile.ZipInfo(
                info.filename, date_time=date_time if info.filename == name else info.date_time
            )
            copy.external_attr = (mode << 16) if info.filename == name else info.external_attr
            copy.create_system = 3
            copy.compress_type = info.compress_type
            target.writestr(copy, source.read(info))
    rewritten.replace(path)
    return path


@pytest.fixture
def source_wheel(tmp_path: Path) -> Path:
    """Deflated and stored members, one over 8 MiB, one executable with its own date_time."""
    directory = tmp_path / "in"
    directory.mkdir()
    files = {
        "demo_lib/__init__.py": b"VERSION = '1.0'\n",
        "demo_lib/data/table.bin": compressible_bytes(200_000, seed=3),
        BIG: pseudo_random_bytes(9 * 1024 * 1024, seed=7),
        STORED: compressible_bytes(300_000, seed=4),
        SCRIPT: b"#!/bin/sh\necho demo\n",
    }
    path = make_mixed_wheel(directory, NAME, VERSION, files, stored=[STORED])
    return restamp(path, SCRIPT, mode=0o100755, date_time=SCRIPT_DATE)


def copy_everything(source: Path, out: Path, *, date_time: DateTime | None = None) -> None:
    """Raw-copy every member but RECORD with its source RECORD line, then write RECORD."""
    with Wheel.open(source) as wheel, WheelWriter(out, date_time=date_time) as writer:
        entries = {entry.path: entry for entry in wheel.record()}
        for member in wheel.members:
            if member.name != RECORD:
                writer.copy_raw(wheel, member.name, record=entries[member.name])
        writer.close(RECORD)


def check_wheel(path: Path) -> None:
    """Both zipfile and our reader accept it, RECORD and all."""
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
    with Wheel.open(path) as wheel:
        wheel.verify()


def add_dist_info(writer: WheelWriter) -> None:
    """The METADATA and WHEEL files a wheel needs (our reader refuses one without them)."""
    writer.add_bytes(f"{DIST_INFO}/METADATA", b"Metadata-Version: 2.1\nName: demo-lib\nVersion: 1.0\n")
    writer.add_bytes(f"{DIST_INFO}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")


def names_in(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


# -- raw copies -------------------------------------------------------------------------------------


def test_raw_copy_of_every_member_keeps_their_stored_bytes(source_wheel: Path, tmp_path: Path) -> None:
    before = sha256_of(source_wheel)
    out = tmp_path / "out" / source_wheel.name
    out.parent.mkdir()
    copy_everything(source_wheel, out, date_time=WHEN)

    check_wheel(out)
    with Wheel.open(source_wheel) as source, Wheel.open(out) as copied:
        copied_members = {member.name: member for member in copied.members}
        # Zip order is kept, except that RECORD comes last.
        source_order = [member.name for member in source.members if member.name != RECORD]
        assert [member.name for member in copied.members] == [*source_order, RECORD]
        for member in source.members:
            if member.name == RECORD:
                continue
            copy = copied_members[member.name]
            # Everything but the position in the file is the source's.
            for field in ("file_size", "compress_size", "compress_type", "crc", "external_attr", "date_time"):
                assert getattr(copy, field) == getattr(member, field), (member.name, field)
            assert copy.flag_bits == member.flag_bits
            raw = raw_member_data(source_wheel, member.name)
            assert raw_member_data(out, member.name) == raw
            assert b"".join(source.iter_raw_chunks(member.name)) == raw
        assert copied.member(BIG).file_size == 9 * 1024 * 1024
        assert copied.member(BIG).compress_type == zipfile.ZIP_DEFLATED
        assert copied.member(STORED).is_stored
        assert copied.member(SCRIPT).unix_mode == 0o755
        assert copied.member(SCRIPT).date_time == SCRIPT_DATE
        # make_wheel's RECORD lists the other members in their zip order, then itself: the same lines.
        assert copied.read_member(RECORD) == source.read_member(RECORD)
        assert copied.member(RECORD).date_time == WHEN
    assert sha256_of(source_wheel) == before
    assert names_in(out.parent) == [out.name]


def test_raw_copy_writes_record_lines_computed_from_the_bytes(source_wheel: Path, tmp_path: Path) -> None:
    """The RECORD line of a raw copy is computed from its content (sha256, size), not copied from the
    caller's; None (nothing to compare against) still gets one."""
    out = tmp_path / OUT_NAME
    with Wheel.open(source_wheel) as wheel, WheelWriter(out) as writer:
        entries = {entry.path: entry for entry in wheel.record()}
        stored, script = wheel.read_member(STORED), wheel.read_member(SCRIPT)
        add_dist_info(writer)
        writer.copy_raw(wheel, STORED, record=entries[STORED])
        writer.copy_raw(wheel, SCRIPT, record=None)
        writer.close(RECORD)
    check_wheel(out)
    with Wheel.open(out) as copied:
        lines = {entry.path: entry for entry in copied.record()}
    for name, data in ((STORED, stored), (SCRIPT, script)):
        assert f"{lines[name].hash_algorithm}={lines[name].hash_digest}" == record_hash(data)
        assert lines[name].size == len(data)


def test_copying_a_big_stored_member_streams_it(tmp_path: Path) -> None:
    """64 MiB copied in CHUNK_SIZE reads, without holding the member in memory."""
    size = 64 * 1024 * 1024
    source = make_wheel(
        tmp_path, NAME, VERSION, {"demo_lib/blob.bin": bytes(size)}, compression=zipfile.ZIP_STORED
    )
    out = tmp_path / "out" / source.name
    out.parent.mkdir()

    class ReadSizes(CountingFile):
        """Also remembers the largest single read."""

        largest = 0

        def read(self, size: int | None = -1) -> bytes:
            data = super().read(size)
            self.largest = max(self.largest, len(data))
            return data

        def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
            count = super().readinto(buffer)
            self.largest = max(self.largest, count)
            return count

    fileobj = ReadSizes(source)
    with Wheel.from_fileobj(fileobj, source.name, closefd=True) as wheel:
        entries = {entry.path: entry for entry in wheel.record()}
        opened = fileobj.bytes_read
        tracemalloc.start()
        try:
            with WheelWriter(out) as writer:
                for member in wheel.members:
                    if member.name != RECORD:
                        writer.copy_raw(wheel, member.name, record=entries[member.name])
                writer.close(RECORD)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        copied = fileobj.bytes_read - opened
    assert peak < 16 * 1024 * 1024
    assert fileobj.largest <= CHUNK_SIZE
    assert size <= copied < size + 64 * 1024  # the member once, plus local headers
    check_wheel(out)


# -- added members --------------------------------------------------------------------------------


def test_added_bytes_and_files_get_hashed_record_lines(source_wheel: Path, tmp_path: Path) -> None:
    script = tmp_path / "tool.sh"
    script.write_bytes(b"#!/bin/sh\nexit 0\n")
    script.chmod(0o750)
    private = tmp_path / "notes.txt"
    private.write_bytes(compressible_bytes(3 * CHUNK_SIZE + 17, seed=9))  # several chunks
    private.chmod(0o600)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    metadata = b"Metadata-Version: 2.1\nName: demo-lib\nVersion: 1.0\n"
    added = {
        f"{DIST_INFO}/METADATA": metadata,
        "demo_lib/bin/tool.sh": script.read_bytes(),
        "demo_lib/notes.txt": private.read_bytes(),
        "demo_lib/empty": b"",
        "demo_lib/run.sh": b"#!/bin/sh\n",
        "demo_lib/with,comma.txt": b"quoted in RECORD",
    }
    out = tmp_path / OUT_NAME
    with Wheel.open(source_wheel) as wheel, WheelWriter(out, date_time=WHEN) as writer:
        entries = {entry.path: entry for entry in wheel.record()}
        writer.copy_raw(wheel, f"{DIST_INFO}/WHEEL", record=entries[f"{DIST_INFO}/WHEEL"])
        writer.add_bytes(f"{DIST_INFO}/METADATA", metadata)
        writer.add_file("demo_lib/bin/tool.sh", script)
        writer.add_file("demo_lib/notes.txt", private)
        writer.add_file("demo_lib/empty", empty)
        writer.add_bytes("demo_lib/run.sh", b"#!/bin/sh\n", mode=0o755)
        writer.add_bytes("demo_lib/with,comma.txt", b"quoted in RECORD")
        writer.close(RECORD)

    check_wheel(out)
    with Wheel.open(out) as result:
        record = {entry.path: entry for entry in result.record()}
        for name, data in added.items():
            member = result.member(name)
            assert result.read_member(name) == data
            assert member.compress_type == zipfile.ZIP_DEFLATED
            assert member.date_time == WHEN
            assert stat.S_ISREG(member.external_attr >> 16)
            entry = record[name]
            assert f"{entry.hash_algorithm}={entry.hash_digest}" == record_hash(data)
            assert entry.size == len(data)
        assert result.member("demo_lib/bin/tool.sh").unix_mode == 0o755  # executable stays executable
        assert result.member("demo_lib/notes.txt").unix_mode == 0o644  # not the umask's 0o600
        assert result.member("demo_lib/run.sh").unix_mode == 0o755
        assert result.member(f"{DIST_INFO}/METADATA").unix_mode == 0o644
        lines = result.read_member(RECORD).decode().splitlines()
    assert [line.split(",")[0] for line in lines][:2] == [f"{DIST_INFO}/WHEEL", f"{DIST_INFO}/METADATA"]
    assert '"demo_lib/with,comma.txt"' in lines[-2]
    assert lines[-1] == f"{RECORD},,"
    assert parse_record("\n".join(lines).encode(), "test")[-2].path == "demo_lib/with,comma.txt"


def test_add_file_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    out = tmp_path / OUT_NAME
    with WheelWriter(out) as writer:
        with pytest.raises(InputError, match="cannot open") as caught:
            writer.add_file("demo_lib/missing", tmp_path / "missing")
        assert caught.value.path == str(tmp_path / "missing")
        with pytest.raises(InputError, match="not a regular file"):
            writer.add_file("demo_lib/dir", tmp_path)
        add_dist_info(writer)  # nothing was written: the writer goes on
        writer.close(RECORD)
    with Wheel.open(out) as result:
        assert [member.name for member in result.members] == [
            f"{DIST_INFO}/METADATA",
            f"{DIST_INFO}/WHEEL",
            RECORD,
        ]


# -- reproducibility and dates ----------------------------------------------------------------------


def test_identical_calls_give_identical_bytes(source_wheel: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra.so"
    extra.write_bytes(compressible_bytes(500_000, seed=11))
    outputs = []
    for run, when in enumerate((WHEN, WHEN, (2024, 2, 3, 4, 5, 8))):
        out = tmp_path / f"run{run}" / source_wheel.name
        out.parent.mkdir()
        with Wheel.open(source_wheel) as wheel, WheelWriter(out, date_time=when) as writer:
            entries = {entry.path: entry for entry in wheel.record()}
            for member in wheel.members:
                if member.name != RECORD:
                    writer.copy_raw(wheel, member.name, record=entries[member.name])
            writer.add_file("demo_lib/extra.so", extra)
            writer.add_bytes("demo_lib/extra.txt", b"more\n")
            writer.close(RECORD)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0] != outputs[2]  # the date is in the headers, and nothing else changes between runs


def test_date_time_from_environment() -> None:
    assert date_time_from_environment({}) is None
    assert date_time_from_environment({"SOURCE_DATE_EPOCH": " "}) is None
    assert date_time_from_environment({"SOURCE_DATE_EPOCH": "1700000000"}) == (2023, 11, 14, 22, 13, 20)
    assert date_time_from_environment({"SOURCE_DATE_EPOCH": "315532800"}) == ZIP_DATE_TIME_MIN
    # Zip dates start in 1980 and end in 2107: anything outside is clamped.
    assert date_time_from_environment({"SOURCE_DATE_EPOCH": "0"}) == ZIP_DATE_TIME_MIN
    assert date_time_from_environment({"SOURCE_DATE_EPOCH": "-86400"}) == ZIP_DATE_TIME_MIN
    assert date_time_from_environment({"SOURCE_DATE_EPOCH": "99999999999999"}) == ZIP_DATE_TIME_MAX
    for bad in ("1.5", "yesterday", "1e9", "0x10"):
        with pytest.raises(UsageError, match="SOURCE_DATE_EPOCH"):
            date_time_from_environment({"SOURCE_DATE_EPOCH": bad})


def test_source_date_epoch_stamps_added_members(tmp_path: Path) -> None:
    when = date_time_from_environment({"SOURCE_DATE_EPOCH": "1700000000"})
    assert when is not None
    out = tmp_path / OUT_NAME
    with WheelWriter(out, date_time=when) as writer:
        assert writer.date_time == when
        writer.add_bytes("demo_lib/__init__.py", b"")
        writer.close(RECORD)
    with zipfile.ZipFile(out) as archive:
        assert [info.date_time for info in archive.infolist()] == [when, when]


def test_date_time_defaults_and_clamps(tmp_path: Path) -> None:
    assert WheelWriter(tmp_path / "a.whl").date_time == ZIP_DATE_TIME_MIN
    assert WheelWriter(tmp_path / "a.whl", date_time=(1970, 1, 1, 0, 0, 0)).date_time == ZIP_DATE_TIME_MIN
    assert WheelWriter(tmp_path / "a.whl", date_time=(2200, 1, 1, 0, 0, 0)).date_time == ZIP_DATE_TIME_MAX
    assert not list(tmp_path.iterdir())  # nothing is created before the with block


# -- failures ---------------------------------------------------------------------------------------


class BoomError(Exception):
    """Raised by a test inside the with block."""


def write(out: Path, body: Callable[[WheelWriter], None]) -> None:
    """Run ``body`` inside a WheelWriter's with block (so pytest.raises wraps a single call)."""
    with WheelWriter(out) as writer:
        body(writer)


def test_an_exception_inside_the_with_block_leaves_nothing(source_wheel: Path, tmp_path: Path) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    out = directory / source_wheel.name

    def copy_then_fail(writer: WheelWriter) -> None:
        writer.copy_raw(wheel, BIG, record=None)
        temporary = names_in(directory)
        assert len(temporary) == 1
        assert temporary[0].startswith(f".{out.name}.")
        assert "tmp" in temporary[0]
        raise BoomError

    with Wheel.open(source_wheel) as wheel, pytest.raises(BoomError):
        write(out, copy_then_fail)
    assert names_in(directory) == []


def test_an_exception_leaves_an_older_file_untouched(tmp_path: Path) -> None:
    out = tmp_path / OUT_NAME
    out.write_bytes(b"the previous wheel")

    def close_then_fail(writer: WheelWriter) -> None:
        writer.add_bytes("demo_lib/__init__.py", b"")
        writer.close(RECORD)  # even after close: only a clean end of the with block publishes it
        raise BoomError

    with pytest.raises(BoomError):
        write(out, close_then_fail)
    assert out.read_bytes() == b"the previous wheel"
    assert names_in(tmp_path) == [out.name]


def test_a_clean_end_replaces_an_older_file(tmp_path: Path) -> None:
    out = tmp_path / OUT_NAME
    out.write_bytes(b"the previous wheel")
    with WheelWriter(out) as writer:
        add_dist_info(writer)
        assert out.read_bytes() == b"the previous wheel"
        writer.close(RECORD)
        assert out.read_bytes() == b"the previous wheel"
    check_wheel(out)
    assert names_in(tmp_path) == [out.name]


def test_leaving_without_close_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / OUT_NAME
    with pytest.raises(ValueError, match="without close"):
        write(out, lambda writer: writer.add_bytes("demo_lib/__init__.py", b""))
    assert names_in(tmp_path) == []


def test_a_failed_copy_breaks_the_writer(source_wheel: Path, tmp_path: Path) -> None:
    """A source that ends inside a member (a file cut after opening) fails the copy halfway: the
    temporary file then holds half a member, so the writer refuses to go on."""
    source = tmp_path / "cut" / source_wheel.name
    source.parent.mkdir()
    source.write_bytes(source_wheel.read_bytes())
    out_dir = tmp_path / "out"
    out_dir.mkdir()

    def copy_cut_member(writer: WheelWriter) -> None:
        with pytest.raises(WheelError, match="ends inside"):
            writer.copy_raw(wheel, BIG, record=None)
        with pytest.raises(ValueError, match="earlier write"):
            writer.add_bytes("demo_lib/__init__.py", b"")
        with pytest.raises(ValueError, match="earlier write"):
            writer.close(RECORD)

    with Wheel.open(source) as wheel:
        os.truncate(source, wheel.member(BIG).header_offset + 4 * CHUNK_SIZE)
        with pytest.raises(ValueError, match="without close"):
            write(out_dir / source.name, copy_cut_member)
    assert names_in(out_dir) == []


def test_a_bad_local_header_in_the_source_writes_nothing(source_wheel: Path, tmp_path: Path) -> None:
    """The source's local header is read before anything is written: the writer goes on."""
    with Wheel.open(source_wheel) as wheel:
        offset = wheel.member(STORED).header_offset
    with source_wheel.open("r+b") as file:
        file.seek(offset)
        file.write(b"XXXX")  # no longer "PK\x03\x04"
    out = tmp_path / OUT_NAME
    with Wheel.open(source_wheel) as wheel, WheelWriter(out) as writer:
        with pytest.raises(WheelError, match="bad local header"):
            writer.copy_raw(wheel, STORED, record=None)
        add_dist_info(writer)
        writer.close(RECORD)
    check_wheel(out)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("/etc/passwd", "absolute"),
        ("C:/evil.dll", "absolute"),
        ("../escape.py", r"'\.\.'"),
        ("demo_lib/../../escape.py", r"'\.\.'"),
        ("demo_lib\\win.py", "backslash"),
        ("demo_lib/nul\x00.py", "NUL"),
        ("", "empty"),
        ("demo_lib/dir/", "cannot end with '/'"),
    ],
)
def test_unsafe_names_are_refused(tmp_path: Path, name: str, problem: str) -> None:
    out = tmp_path / OUT_NAME
    with WheelWriter(out) as writer:
        with pytest.raises(WheelError, match=problem) as caught:
            writer.add_bytes(name, b"x")
        assert caught.value.path == str(out)
        with pytest.raises(WheelError, match=problem):
            writer.add_file(name, out)  # the name is checked before the file is opened
        add_dist_info(writer)  # a refused name wrote nothing
        writer.close(RECORD)
    check_wheel(out)


def test_duplicate_names_are_refused(source_wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / OUT_NAME

    def add_twice(writer: WheelWriter) -> None:
        writer.copy_raw(wheel, STORED, record=None)
        with pytest.raises(WheelError, match="already has a member"):
            writer.copy_raw(wheel, STORED, record=None)
        with pytest.raises(WheelError, match="already has a member"):
            writer.add_bytes(STORED, b"x")
        writer.add_bytes(RECORD, b"not the real RECORD")
        with pytest.raises(WheelError, match="already has a member"):
            writer.close(RECORD)

    with Wheel.open(source_wheel) as wheel, pytest.raises(ValueError, match="without close"):
        write(out, add_twice)
    assert names_in(tmp_path) == ["in"]


def test_misuse_is_a_value_error(source_wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / OUT_NAME
    writer = WheelWriter(out)
    with pytest.raises(ValueError, match="not entered"):
        writer.add_bytes("demo_lib/a.py", b"")
    with pytest.raises(ValueError, match="compresslevel"):
        WheelWriter(out, compresslevel=10)
    with Wheel.open(source_wheel) as wheel, writer:
        with pytest.raises(ValueError, match="is for"):
            writer.copy_raw(wheel, STORED, record=RecordEntry(SCRIPT, None, None, None))
        with pytest.raises(WheelError, match="no member"):
            writer.copy_raw(wheel, "demo_lib/missing.so", record=None)
        with pytest.raises(ValueError, match="mode"):
            writer.add_bytes("demo_lib/a.py", b"", mode=0o10000)
        with pytest.raises(ValueError, match="not a RECORD path"):
            writer.close("RECORD")
        add_dist_info(writer)
        writer.close(RECORD)
        with pytest.raises(ValueError, match="after close"):
            writer.add_bytes("demo_lib/a.py", b"")
        with pytest.raises(ValueError, match="after close"):
            writer.close(RECORD)
    with pytest.raises(ValueError, match="finished"):
        writer.add_bytes("demo_lib/a.py", b"")
    with pytest.raises(ValueError, match="only once"), writer:
        pass
    check_wheel(out)


# -- zip64 ------------------------------------------------------------------------------------------


def zeros_deflated(mebibytes: int) -> bytes:
    """Raw deflate data for ``mebibytes`` MiB of zeros, built in a blink: one fully flushed block
    (which refers to nothing before it) repeated, then an empty final block."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = compressor.compress(bytes(1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return block * mebibytes + b"\x03\x00"


def write_zip(path: Path, members: list[tuple[zipfile.ZipInfo, bytes]]) -> Path:
    """A zip of members whose CRC, sizes and compressed data are given (zipfile would deflate 4 GiB)."""
    with path.open("wb") as file:
        for info, raw in members:
            info.header_offset = file.tell()
            file.write(info.FileHeader())
            file.write(raw)
        archive = zipfile.ZipFile(file, "w")
        archive.filelist.extend(info for info, _ in members)
        archive.close()
    return path


@pytest.mark.slow
def test_members_over_4_gib_are_copied_with_zip64_sizes(tmp_path: Path) -> None:
    """A member of 4.1 GiB (zeros, deflated to 4 MB) raw-copied: zipfile reads its zip64 sizes from
    the central directory and its local header, our reader inflates it all and checks CRC and hash
    (zipfile's testzip would take 8 s more to do the same)."""
    mebibytes = 4 * 1024 + 100
    size = mebibytes << 20
    huge = "demo_lib/huge.bin"
    zero_crc = 0
    sha = hashlib.sha256()
    chunk = bytes(1 << 20)
    for _ in range(mebibytes):
        zero_crc = crc32(chunk, zero_crc)  # isal's when installed: 50 times zlib's speed
        sha.update(chunk)
    digest = base64.urlsafe_b64encode(sha.digest()).rstrip(b"=").decode()
    small = {
        f"{DIST_INFO}/METADATA": b"Metadata-Version: 2.1\nName: demo-lib\nVersion: 1.0\n",
        f"{DIST_INFO}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data in small.items())
    small[RECORD] = f"{huge},sha256={digest},{size}\n{record}{RECORD},,\n".encode()
    members: list[tuple[zipfile.ZipInfo, bytes]] = []
    for name, data in small.items():
        info = zipfile.ZipInfo(name, date_time=WHEN)
        info.CRC, info.file_size, info.compress_size = zlib.crc32(data), len(data), len(data)
        members.append((info, data))
    info = zipfile.ZipInfo(huge, date_time=WHEN)
    info.compress_type = zipfile.ZIP_DEFLATED
    raw = zeros_deflated(mebibytes)
    info.CRC, info.file_size, info.compress_size = zero_crc, size, len(raw)
    members.insert(0, (info, raw))
    source = write_zip(tmp_path / OUT_NAME, members)

    out = tmp_path / "out" / OUT_NAME
    out.parent.mkdir()
    copy_everything(source, out)
    with zipfile.ZipFile(out) as archive:
        assert archive.getinfo(huge).file_size == size
        assert archive.getinfo(huge).compress_size == len(raw)
        with archive.open(huge) as stream:  # reads the local header
            assert stream.read(1 << 20) == bytes(1 << 20)
    assert raw_member_data(out, huge) == raw
    with Wheel.open(out) as wheel:
        wheel.verify()


def test_a_writer_holds_little_for_each_member_it_has_written(tmp_path: Path) -> None:
    """What a written member leaves behind until the close is its central directory entry, its
    RECORD line and its name (for duplicates): 272 bytes a member for 20,000 members. zipfile's
    ZipInfo kept for each, with the RECORD text in a bytearray, was 423."""
    count = 20_000
    source = many_files_wheel(tmp_path, count)
    out = tmp_path / "out"
    out.mkdir()
    with Wheel.open(source) as wheel:
        records = {entry.path: entry for entry in wheel.record()}
        tracemalloc.start()
        try:
            with WheelWriter(out / source.name) as writer:
                before = tracemalloc.get_traced_memory()[0]
                for member in wheel.members:
                    if member.name != f"{wheel.dist_info}/RECORD":
                        writer.copy_raw(wheel, member.name, record=records[member.name])
                held = (tracemalloc.get_traced_memory()[0] - before) / count
                writer.close(f"{wheel.dist_info}/RECORD")
        finally:
            tracemalloc.stop()
    with Wheel.open(out / source.name) as written:
        written.verify()
    assert held < 340, f"{held:.0f} bytes a member"
