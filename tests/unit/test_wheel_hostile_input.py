"""Hostile inputs to the wheel reader and the run-time loader (issue 9): every refusal is one WheelError
(or InputError) line, never a ValueError, a MemoryError or a read that blocks forever."""

from __future__ import annotations

import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from slimwheel.errors import ElfError, InputError, WheelError
from slimwheel.sources import open_source
from slimwheel.wheel import Wheel, parse_record
from slimwheel.wheel.reader import (
    DIRECTORY_LIMIT,
    MEMBER_LIMIT,
    RECORD_EXTRA_LINES,
    RECORD_LIMIT,
    TEXT_MEMBER_LIMIT,
)
from tests.support.fixtures_wheel import CountingFile, patch_central_directory
from tests.support.wheels import make_wheel

DIST_INFO = "hostile-1.0.dist-info"
RECORD = f"{DIST_INFO}/RECORD"
METADATA = f"{DIST_INFO}/METADATA"
BLOCKING_TIMEOUT = 20.0  # seconds an open may take before the test calls it blocked


def _wheel(tmp_path: Path) -> Path:
    return make_wheel(tmp_path, "hostile", "1.0", {"hostile/__init__.py": b"VALUE = 1\n"})


def _edited(path: Path, edits: Mapping[str, Callable[[bytes], bytes]]) -> Path:
    """Rewrite ``path`` with some members' bytes edited (deflated, RECORD left as edited)."""
    with zipfile.ZipFile(path) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    for name, edit in edits.items():
        contents[name] = edit(contents[name])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return path


def _refusal(path: Path) -> WheelError:
    with pytest.raises(WheelError) as caught, Wheel.open(path) as wheel:
        wheel.record()
    assert "\n" not in str(caught.value)
    return caught.value


# -- 1. RECORD's size field ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["9" * 5000, "0" * 4999 + "1" + "0" * 30, "1" * 21])
def test_a_size_of_thousands_of_digits_is_a_wheel_error(size: str) -> None:
    data = f"pkg/a.py,,{size}\n".encode()
    with pytest.raises(WheelError, match=r"RECORD line 1: size '\d+(\.\.\.)?' of pkg/a.py has \d+ digits"):
        parse_record(data, "x.whl")


def test_sizes_up_to_twenty_digits_and_leading_zeros_are_read() -> None:
    data = f"a,,{2**64 - 1}\nb,,{'0' * 5000}7\n".encode()
    assert [entry.size for entry in parse_record(data, "x.whl")] == [2**64 - 1, 7]


def test_a_wheel_whose_record_has_a_huge_size_is_refused(tmp_path: Path) -> None:
    wheel = _edited(_wheel(tmp_path), {RECORD: lambda r: r.replace(b",10\n", b"," + b"9" * 5000 + b"\n", 1)})
    refusal = _refusal(wheel)
    assert "5000 digits" in refusal.reason
    assert len(str(refusal)) < 400  # the field is quoted cut short


# -- 2. caps on text members ----------------------------------------------------------------------


def test_metadata_over_its_cap_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    padding = b"Description: " + b"x" * TEXT_MEMBER_LIMIT + b"\n"
    wheel = _edited(_wheel(tmp_path), {METADATA: lambda m: m + padding})
    assert wheel.stat().st_size < 1 << 20
    with CountingFile(wheel) as counting, Wheel.from_fileobj(counting, wheel.name) as opened:
        before = counting.bytes_read
        with pytest.raises(WheelError, match=f"{METADATA} is too big to read: it inflates to") as caught:
            opened.metadata()
        assert counting.bytes_read - before < 4096  # refused from the central directory's size
        with pytest.raises(WheelError, match="too big"):
            opened.requires_dist()
        assert opened.read_member("hostile/__init__.py") == b"VALUE = 1\n"  # the rest stays readable
    assert "(16 MiB)" in str(caught.value)


def test_metadata_at_its_cap_is_read(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        size = archive.getinfo(METADATA).file_size
    wheel = _edited(wheel, {METADATA: lambda m: m + b"x" * (TEXT_MEMBER_LIMIT - size)})
    with Wheel.open(wheel) as opened:
        assert len(opened.metadata_bytes()) == TEXT_MEMBER_LIMIT
        assert opened.metadata()["Name"] == "hostile"


def test_record_over_its_cap_is_refused(tmp_path: Path) -> None:
    wheel = _edited(_wheel(tmp_path), {RECORD: lambda r: r + b"\n" * RECORD_LIMIT})
    refusal = _refusal(wheel)
    assert refusal.reason.startswith(f"{RECORD} is too big to read: it inflates to ")
    assert refusal.reason.endswith(f"bytes, and at most {RECORD_LIMIT} (32 MiB) are read of a text member")


def test_a_member_that_inflates_past_its_claimed_size_is_cut_at_the_limit(tmp_path: Path) -> None:
    """The central directory claims a small METADATA: the data inflating to more stops at the claim."""
    wheel = _edited(_wheel(tmp_path), {METADATA: lambda m: m + b"x" * (TEXT_MEMBER_LIMIT * 2)})
    with zipfile.ZipFile(wheel) as archive:
        crc = archive.getinfo(METADATA).CRC
    patch_central_directory(wheel, METADATA, file_size=1000, crc=crc)
    with Wheel.open(wheel) as opened, pytest.raises(WheelError, match="more than the 1000 bytes"):
        opened.metadata_bytes()


def test_read_member_limit_counts_the_bytes_as_they_come(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    with Wheel.open(wheel) as opened:
        assert opened.read_member("hostile/__init__.py", limit=10) == b"VALUE = 1\n"
        with pytest.raises(WheelError, match="too big to read: it inflates to 10 bytes, and at most 9"):
            opened.read_member("hostile/__init__.py", limit=9)


def test_millions_of_tiny_record_lines_are_refused(tmp_path: Path) -> None:
    wheel = _edited(_wheel(tmp_path), {RECORD: lambda r: r + b"a,,\n" * 2_000_000})
    refusal = _refusal(wheel)
    assert refusal.reason.startswith(f"RECORD has more than {4 + RECORD_EXTRA_LINES} lines")


def _empty_members_zip(path: Path, count: int) -> Path:
    """A zip of ``count`` empty stored members, its records packed directly (zipfile takes 5 s for
    250,000), the end record in zip64 form as zipfile writes it past 65,535 entries."""
    local = struct.Struct("<4s5H3L2H")
    central = struct.Struct("<4s6H3L5H2L")
    with path.open("wb") as out:
        entries = bytearray()
        for number in range(count):
            name = b"m/%d" % number
            offset = out.tell()
            out.write(local.pack(b"PK\x03\x04", 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0) + name)
            entries += central.pack(
                b"PK\x01\x02", 20, 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0, 0, 0, 0, 0, offset
            )
            entries += name
        start = out.tell()
        out.write(entries)
        end64_at = out.tell()
        out.write(
            struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(entries), start)
        )
        out.write(struct.pack("<4sLQL", b"PK\x06\x07", 0, end64_at, 1))
        out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
    return path


def test_a_zip_of_more_members_than_any_wheel_is_refused_at_the_limit(tmp_path: Path) -> None:
    """A 92 MB zip of a million empty members took 380 MB and 9 s to refuse (no .dist-info): each
    member costs a table row. Past MEMBER_LIMIT it is one line, the rows read so far let go."""
    at_limit = _empty_members_zip(tmp_path / "ok-1.0-py3-none-any.whl", MEMBER_LIMIT)
    with pytest.raises(WheelError, match=r"no \.dist-info"), Wheel.open(at_limit):
        pass
    over = _empty_members_zip(tmp_path / "many-1.0-py3-none-any.whl", MEMBER_LIMIT + 1)
    with pytest.raises(WheelError) as caught, Wheel.open(over):
        pass
    assert caught.value.reason == (
        f"more than {MEMBER_LIMIT:,} members: no real wheel comes close (refused as hostile)"
    )


def test_a_central_directory_over_its_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    data = bytearray(wheel.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<L", data, end + 12, DIRECTORY_LIMIT + 1)  # the directory's size
    wheel.write_bytes(bytes(data))
    with pytest.raises(WheelError) as caught, Wheel.open(wheel):
        pass
    assert caught.value.reason == (
        f"its central directory is {DIRECTORY_LIMIT + 1:,} bytes, over the {DIRECTORY_LIMIT:,} read: "
        "no real wheel's comes close (refused as hostile)"
    )


def test_a_damaged_record_is_refused_as_damaged_not_by_the_line_it_garbled(tmp_path: Path) -> None:
    """RECORD is parsed as it is inflated, so a garbled line is met before the CRC-32 is known: the
    refusal still names the damage, as when the whole member was read first. Its first 500 lines
    (over 256 KiB deflated: streamed) pass; a bad one follows; the CRC-32 is another's."""
    noise = random.Random(0)
    lines = b"".join(b"hostile/%s.py,,\n" % noise.randbytes(600).hex().encode() for _ in range(500))
    wheel = _edited(_wheel(tmp_path), {RECORD: lambda r: r + lines + b"only,two\n" + lines})
    with zipfile.ZipFile(wheel) as archive:
        crc = archive.getinfo(RECORD).CRC
    patch_central_directory(wheel, RECORD, crc=crc ^ 1)
    assert "bad CRC-32" in _refusal(wheel).reason
    patch_central_directory(wheel, RECORD, crc=crc)
    assert _refusal(wheel).reason.startswith("RECORD line 505 has 2 fields")


def test_a_few_record_lines_for_missing_files_still_parse(tmp_path: Path) -> None:
    missing = b"".join(b"hostile/gone%d.py,,\n" % number for number in range(10))
    wheel = _edited(_wheel(tmp_path), {RECORD: lambda r: r + missing})
    with Wheel.open(wheel) as opened:
        assert len(opened.record()) == 14
        with pytest.raises(WheelError, match="which is not in the wheel"):
            opened.verify()


# -- 3. files that are not regular files ---------------------------------------------------------


def _without_blocking(opener: Callable[[], object], fifo: Path) -> BaseException | None:
    """Run ``opener`` in a thread; if it blocks on the FIFO, open the FIFO's writing end to free it
    and fail."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            opener()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BLOCKING_TIMEOUT)
    if thread.is_alive():
        descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # a reader waits: this frees it
        os.close(descriptor)
        thread.join(BLOCKING_TIMEOUT)
        pytest.fail(f"opening the FIFO {fifo} blocked")
    return outcome[0]


@pytest.mark.parametrize("name", ["fifo-1.0-py3-none-any.whl", "plain.so"])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    os.mkfifo(path)
    openers: list[Callable[[], object]] = [lambda: open_source(path)]
    if name.endswith(".whl"):
        openers.append(lambda: Wheel.open(path))
    for opener in openers:
        error = _without_blocking(opener, path)
        assert isinstance(error, InputError), error
        assert error.reason == "a FIFO (named pipe), not a regular file"


def test_devices_sockets_and_folders_named_like_wheels_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder-1.0-py3-none-any.whl"
    folder.mkdir()
    sock_path = tmp_path / "sock-1.0-py3-none-any.whl"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        for path, what in (
            (Path(os.devnull), "a character device"),
            (sock_path, "a socket"),
            (folder, "a directory"),
        ):
            with pytest.raises(WheelError) as caught:
                Wheel.open(path)
            assert caught.value.reason == f"{what}, not a regular file"
        with pytest.raises(InputError, match="a socket, not a regular file"):
            open_source(sock_path)


def test_a_symlink_to_a_wheel_is_followed(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    link = tmp_path / "link" / wheel.name
    link.parent.mkdir()
    link.symlink_to(wheel)
    with Wheel.open(link) as opened:
        assert opened.distribution == "hostile"
        assert opened.read_member("hostile/__init__.py") == b"VALUE = 1\n"


# -- 4. names that are not a wheel's ----------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".WHL", ".Whl"])
def test_an_upper_case_whl_is_not_a_wheel(tmp_path: Path, suffix: str) -> None:
    wheel = _wheel(tmp_path)
    renamed = wheel.rename(wheel.with_suffix(suffix))
    for opener in (Wheel.open, open_source):
        with pytest.raises(InputError) as caught:
            opener(renamed)
        assert caught.value.reason == (
            "not a valid wheel file name: it must end in .whl, in lower case (pip and packaging do not "
            f"take {suffix!r} for a wheel)"
        )


def test_a_wheel_named_zip_is_a_zip_archive_not_an_elf_file(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    renamed = wheel.rename(wheel.with_suffix(".zip"))
    with pytest.raises(ElfError) as caught:
        open_source(renamed)
    assert caught.value.reason == "a zip archive, not an ELF file (a wheel's name must end in .whl)"
    with pytest.raises(WheelError, match=r"not a valid wheel file name: it must end in \.whl$"):
        Wheel.open(renamed)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(ElfError, match=r"not an ELF file$"):
        open_source(text)


# -- 4. a stored member whose CRC does not match --------------------------------------------------


def test_check_crc_reads_a_stored_member_through(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        "hostile",
        "1.0",
        {"hostile/data.bin": b"\x7fELF" + bytes(range(256)) * 64},
        compression=zipfile.ZIP_STORED,
    )
    with Wheel.open(wheel) as opened:
        opened.check_crc("hostile/data.bin")
    with zipfile.ZipFile(wheel) as archive:
        crc = archive.getinfo("hostile/data.bin").CRC
    patch_central_directory(wheel, "hostile/data.bin", crc=crc ^ 1)
    with Wheel.open(wheel) as opened:
        with opened.seekable_member("hostile/data.bin") as stream:
            assert stream.read(4) == b"\x7fELF"  # a window checks nothing
        with pytest.raises(WheelError, match=r"cannot read hostile/data\.bin: bad CRC-32"):
            opened.check_crc("hostile/data.bin")


# -- 5. the run-time loader with nothing installed -------------------------------------------------


_LOAD_NOTHING = """
import ctypes, json, sys
from slimwheel.runtime import load
from slimwheel.runtime._index import WheelIndex
try:
    ctypes.CDLL("libcudss.so.1")
except OSError:
    pass
else:
    print(json.dumps({"installed": True}))
    sys.exit()
try:
    load("libcudss.so.1", index=WheelIndex([]))
except Exception as exc:
    out = {"type": type(exc).__name__, "message": str(exc), "paths": list(exc.paths)}
    print(json.dumps({**out, "searched": list(exc.searched)}))
"""


def test_load_with_nothing_installed_says_no_copy_found() -> None:
    """In a fresh process: one where a test loaded a stand-in libcudss.so.1 finds it by soname."""
    steering = (
        "LD_LIBRARY_PATH",
        "CONDA_PREFIX",
        "CUDA_HOME",
        "CUDA_PATH",
        "SLIMWHEEL_CUDSS_PATH",
        "LD_PRELOAD",
    )
    env = {key: value for key, value in os.environ.items() if key not in steering}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_NOTHING],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    result = json.loads(done.stdout)
    if result.get("installed"):  # pragma: no cover - a machine with cuDSS installed system-wide
        pytest.skip("libcudss.so.1 is installed on this machine")
    assert result["type"] == "LibraryNotFoundError"
    assert result["message"].startswith("cannot load libcudss.so.1: no copy found.")
    assert "dlopen refused" not in result["message"]
    assert result["paths"] == []
    assert result["searched"][-1].endswith("nothing (dlopen by soname found no libcudss.so.1 either)")
