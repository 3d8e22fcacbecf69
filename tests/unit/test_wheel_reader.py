"""The wheel reader on real wheels: what it reads, what it refuses, and how little it reads to open."""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.tags import Tag

from slimwheel.errors import WheelError
from slimwheel.wheel import RecordEntry, Wheel, WheelMember, parse_record
from tests.support.fixtures_wheel import (
    BIG_STORED_MEMBER,
    CountingFile,
    RawMember,
    add_raw_members,
    cuda_wheel_contents,
    cut_bytes,
    data_offset,
    patch_bytes,
    rewrite_wheel,
)
from tests.support.wheels import make_wheel, many_files_wheel

DIST_INFO = "nvidia_cudss_cu13-1.0.0.35.dist-info"
DATA = "nvidia_cudss_cu13-1.0.0.35.data"
RECORD = f"{DIST_INFO}/RECORD"
STORED_LIB = "nvidia/cu13/lib/libcudss.so.0"
DEFLATED_LIB = f"{DATA}/platlib/nvidia/cu13/lib/libcudss_mtlayer_gomp.so.0"
HEADER = "nvidia/cu13/include/cudss.h"


def refusal(path: Path) -> str:
    """The reason Wheel.open gives for refusing ``path``."""
    with pytest.raises(WheelError) as caught:
        Wheel.open(path)
    assert caught.value.path == str(path)
    assert "\n" not in str(caught.value)
    return caught.value.reason


def edit_record(path: Path, edit: dict[str, str | None]) -> Path:
    """Replace (or with None drop) RECORD lines by path, leaving the members alone."""
    with zipfile.ZipFile(path) as archive:
        lines = archive.read(RECORD).decode().splitlines()
    edited: list[str] = []
    for line in lines:
        member = line.split(",", 1)[0]
        if member not in edit:
            edited.append(line)
        elif (replacement := edit[member]) is not None:
            edited.append(replacement)
    return rewrite_wheel(path, replace={RECORD: ("\n".join(edited) + "\n").encode()})


def record_line(path: Path, member: str) -> str:
    with zipfile.ZipFile(path) as archive:
        lines = archive.read(RECORD).decode().splitlines()
    return next(line for line in lines if line.startswith(f"{member},"))


# -- what an intact wheel reads as ---------------------------------------------------------------


def test_names_and_tags_come_from_the_file_name(cuda_wheel: Path) -> None:
    with Wheel.open(cuda_wheel) as wheel:
        assert wheel.filename == "nvidia_cudss_cu13-1.0.0.35-py3-none-manylinux_2_17_x86_64.whl"
        assert wheel.distribution == "nvidia-cudss-cu13"
        assert wheel.version == "1.0.0.35"
        assert wheel.build_tag == ()
        assert wheel.tags == frozenset({Tag("py3", "none", "manylinux_2_17_x86_64")})
        assert wheel.platform_tags == ("manylinux_2_17_x86_64",)
        assert wheel.dist_info == DIST_INFO
        assert wheel.data_dir == DATA
        assert wheel.file_size == cuda_wheel.stat().st_size


def test_members_mirror_the_central_directory_in_zip_order(cuda_wheel: Path) -> None:
    with zipfile.ZipFile(cuda_wheel) as archive:
        infos = archive.infolist()
    with Wheel.open(cuda_wheel) as wheel:
        assert [member.name for member in wheel.members] == [info.filename for info in infos]
        stored = wheel.member(STORED_LIB)
        info = next(info for info in infos if info.filename == STORED_LIB)
        assert stored == WheelMember(
            name=STORED_LIB,
            file_size=1_500_000,
            compress_size=1_500_000,
            compress_type=zipfile.ZIP_STORED,
            crc=info.CRC,
            header_offset=info.header_offset,
            external_attr=info.external_attr,
            date_time=info.date_time,
        )
        assert stored.is_stored
        assert stored.unix_mode == 0o644
        assert not stored.is_dir
        assert wheel.member(DEFLATED_LIB).compress_type == zipfile.ZIP_DEFLATED
        assert wheel.has_member(HEADER)
        assert not wheel.has_member("nvidia/cu13/lib/libmissing.so")
        with pytest.raises(WheelError, match="no member 'nvidia/missing'"):
            wheel.member("nvidia/missing")
        with pytest.raises(WheelError, match="no member"):
            wheel.read_member("nvidia/missing")


def test_metadata_wheel_info_and_requires_dist(cuda_wheel: Path) -> None:
    with Wheel.open(cuda_wheel) as wheel:
        metadata = wheel.metadata()
        assert metadata["Name"] == "nvidia-cudss-cu13"
        assert metadata["Version"] == "1.0.0.35"
        assert wheel.metadata() is metadata  # cached
        assert wheel.metadata_bytes().startswith(b"Metadata-Version: 2.1\n")
        assert wheel.requires_dist() == (
            "nvidia-cublas-cu13>=13.0",
            'nvidia-cuda-runtime-cu13; platform_system == "Linux"',
        )
        info = wheel.wheel_info()
        assert info["Wheel-Version"] == "1.0"
        assert info["Root-Is-Purelib"] == "false"
        assert info.get_all("Tag") == ["py3-none-manylinux_2_17_x86_64"]


def test_record_entries_and_sha256_hex(cuda_wheel: Path) -> None:
    contents = cuda_wheel_contents()
    with Wheel.open(cuda_wheel) as wheel:
        record = wheel.record()
        assert wheel.record() is record  # cached
        by_path = {entry.path: entry for entry in record}
        header = by_path[HEADER]
        assert header.hash_algorithm == "sha256"
        assert header.size == len(contents[HEADER])
        assert header.sha256_hex == hashlib.sha256(contents[HEADER]).hexdigest()
        assert "=" not in (header.hash_digest or "")
        assert by_path[RECORD] == RecordEntry(RECORD, None, None, None)
        assert by_path[RECORD].sha256_hex is None
    assert RecordEntry("a", "sha512", "AAAA", 1).sha256_hex is None
    assert RecordEntry("a", "sha256", "not base64!", 1).sha256_hex is None


def test_read_and_stream_members(cuda_wheel: Path) -> None:
    contents = cuda_wheel_contents()
    with Wheel.open(cuda_wheel) as wheel:
        assert wheel.read_member(HEADER) == contents[HEADER]
        assert wheel.read_member(STORED_LIB) == contents[STORED_LIB]
        with wheel.open_member(DEFLATED_LIB) as stream:
            pieces = [stream.read(100_000) for _ in range(13)]
            assert stream.read() == b""
        assert b"".join(pieces) == contents[DEFLATED_LIB]
        assert b"".join(wheel.iter_member_chunks(DEFLATED_LIB, 300_000)) == contents[DEFLATED_LIB]


def test_a_wheel_opened_for_some_members_reads_them_without_its_central_directory(
    cuda_wheel: Path, tmp_path: Path
) -> None:
    """An analysis worker opens the wheel its parent opened, for the members it is given: their
    directory entries come with them, so the central directory (tensorflow's 24,000 entries, 18 MiB
    a process) is not read again. Here it is destroyed, and they still read, CRC-checked."""
    contents = cuda_wheel_contents()
    with Wheel.open(cuda_wheel) as wheel:
        members = [wheel.member(STORED_LIB), wheel.member(DEFLATED_LIB)]
    data = bytearray(cuda_wheel.read_bytes())
    directory = data.rfind(b"PK\x01\x02", 0, data.rfind(b"PK\x05\x06"))
    data[directory - 1 :] = b"\0" * (len(data) - directory + 1)  # no directory, no end record
    broken = tmp_path / cuda_wheel.name
    broken.write_bytes(bytes(data))
    assert "zip" in refusal(broken)
    with Wheel.open_members(broken, members) as opened:
        assert opened.members == tuple(members)
        assert opened.read_member(STORED_LIB) == contents[STORED_LIB]
        assert b"".join(opened.iter_member_chunks(DEFLATED_LIB)) == contents[DEFLATED_LIB]
        with pytest.raises(WheelError, match="no member"):
            opened.read_member(HEADER)
        with pytest.raises(WheelError, match=r"no \.dist-info was read"):
            _ = opened.dist_info
    # Bytes that are not what the entries say are refused as in any read.
    corrupt = bytearray(data)
    corrupt[members[1].header_offset + 200] ^= 0xFF
    broken.write_bytes(bytes(corrupt))
    with Wheel.open_members(broken, members) as opened, pytest.raises(WheelError):
        b"".join(opened.iter_member_chunks(DEFLATED_LIB))


@pytest.mark.parametrize("member", [STORED_LIB, DEFLATED_LIB], ids=["stored", "deflated"])
def test_seekable_member_reads_anywhere(cuda_wheel: Path, member: str) -> None:
    content = cuda_wheel_contents()[member]
    assert len(content) > 1024 * 1024
    with Wheel.open(cuda_wheel) as wheel, wheel.seekable_member(member) as file:
        assert file.seekable()
        assert file.seek(-16, os.SEEK_END) == len(content) - 16
        assert file.read() == content[-16:]
        assert file.read(10) == b""
        file.seek(0)
        assert file.read(64) == content[:64]
        file.seek(len(content) - 100)
        assert file.read(1000) == content[-100:]
        file.seek(1_048_576)
        file.seek(10, os.SEEK_CUR)
        assert file.tell() == 1_048_586
        assert file.read(5) == content[1_048_586:1_048_591]
        file.seek(len(content) + 50)
        assert file.read(1) == b""


def test_stored_seekable_member_is_a_window_not_a_copy(big_stored_wheel: Path) -> None:
    with (
        CountingFile(big_stored_wheel) as counting,
        Wheel.from_fileobj(counting, big_stored_wheel.name) as wheel,
        wheel.seekable_member(BIG_STORED_MEMBER) as file,
    ):
        before = counting.bytes_read
        file.seek(-8, os.SEEK_END)
        assert file.read() == bytes(8)
        assert counting.bytes_read - before < 64 * 1024


def test_installed_path_maps_purelib_and_platlib_to_site_packages(cuda_wheel: Path) -> None:
    with Wheel.open(cuda_wheel) as wheel:
        assert wheel.installed_path(DEFLATED_LIB) == "nvidia/cu13/lib/libcudss_mtlayer_gomp.so.0"
        purelib = f"{DATA}/purelib/nvidia_cudss_extra/__init__.py"
        assert wheel.installed_path(purelib) == "nvidia_cudss_extra/__init__.py"
        # The other schemes land in the environment's prefix, three folders above site-packages.
        assert wheel.installed_path(f"{DATA}/scripts/cudss-info") == "../../../bin/cudss-info"
        assert wheel.installed_path(f"{DATA}/data/lib/libx.so") == "../../../lib/libx.so"
        assert wheel.installed_path(STORED_LIB) == STORED_LIB
        assert wheel.installed_path(f"{DIST_INFO}/METADATA") == f"{DIST_INFO}/METADATA"


# -- file objects and lifetime --------------------------------------------------------------------


def test_from_fileobj_reads_an_in_memory_wheel(cuda_wheel: Path) -> None:
    buffer = io.BytesIO(cuda_wheel.read_bytes())
    url = f"https://example.invalid/packages/{cuda_wheel.name}"
    with Wheel.from_fileobj(buffer, url) as wheel:
        assert wheel.filename == cuda_wheel.name
        assert wheel.distribution == "nvidia-cudss-cu13"
        wheel.verify()
        with wheel.seekable_member(STORED_LIB) as file:
            file.seek(-4, os.SEEK_END)
            assert file.read() == cuda_wheel_contents()[STORED_LIB][-4:]
        with pytest.raises(WheelError) as caught:
            wheel.read_member("absent")
        assert caught.value.path == url
    assert not buffer.closed  # the caller's file object stays open


def test_from_fileobj_closes_only_when_told(cuda_wheel: Path) -> None:
    with cuda_wheel.open("rb") as kept_open:
        Wheel.from_fileobj(kept_open, cuda_wheel.name).close()
        assert not kept_open.closed
    with cuda_wheel.open("rb") as handed_over:
        wheel = Wheel.from_fileobj(handed_over, cuda_wheel.name, closefd=True)
        wheel.close()
        wheel.close()  # idempotent
        assert handed_over.closed
    with pytest.raises(WheelError, match="closed"):
        wheel.read_member(HEADER)


def test_refusal_closes_a_file_it_was_told_to_close(tmp_path: Path) -> None:
    bogus = tmp_path / "pkg-1.0-py3-none-any.whl"
    bogus.write_text("not a zip")
    with bogus.open("rb") as file:
        with pytest.raises(WheelError):
            Wheel.from_fileobj(file, bogus.name, closefd=True)
        assert file.closed


def test_an_unseekable_file_object_is_refused() -> None:
    read_end, write_end = os.pipe()
    os.close(write_end)
    with open(read_end, "rb") as pipe:  # noqa: PTH123  (a pipe has no path)
        with pytest.raises(WheelError, match="not seekable"):
            Wheel.from_fileobj(pipe, "pkg-1.0-py3-none-any.whl")
        assert not pipe.closed


def test_opening_reads_only_the_central_directory(big_stored_wheel: Path) -> None:
    with (
        CountingFile(big_stored_wheel) as counting,
        Wheel.from_fileobj(counting, big_stored_wheel.name) as wheel,
    ):
        assert wheel.file_size > 20 * 1024 * 1024
        assert wheel.member(BIG_STORED_MEMBER).file_size == 20 * 1024 * 1024
        assert counting.bytes_read < 16 * 1024
        wheel.verify()
        # verify streams each member once: the whole file, not twice over.
        assert wheel.file_size <= counting.bytes_read < wheel.file_size + 1024 * 1024


# -- refusals when opening ------------------------------------------------------------------------


def test_a_text_file_is_not_a_wheel(tmp_path: Path) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    path.write_text("Hello, this is not a zip archive.\n" * 10)
    assert refusal(path) == "not a zip archive"


def test_an_empty_file_is_not_a_wheel(tmp_path: Path) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    path.write_bytes(b"")
    assert "empty file" in refusal(path)


def test_a_missing_file(tmp_path: Path) -> None:
    assert "cannot open" in refusal(tmp_path / "pkg-1.0-py3-none-any.whl")


@pytest.mark.parametrize(
    "kept",
    [lambda size: size // 2, lambda size: size - 10, lambda _size: 100],
    ids=["half", "end-record-cut", "first-header-only"],
)
def test_a_truncated_wheel_is_refused(cuda_wheel: Path, kept: Callable[[int], int]) -> None:
    data = cuda_wheel.read_bytes()
    cuda_wheel.write_bytes(data[: kept(len(data))])
    assert refusal(cuda_wheel).startswith("truncated zip archive")


@pytest.mark.parametrize("where", ["member-data", "central-directory"])
def test_bytes_cut_from_the_middle_are_noticed(cuda_wheel: Path, where: str) -> None:
    with zipfile.ZipFile(cuda_wheel) as archive:
        central_directory = archive.start_dir
    start = data_offset(cuda_wheel, STORED_LIB) + 1000 if where == "member-data" else central_directory + 100
    cut_bytes(cuda_wheel, start, 60)
    assert refusal(cuda_wheel).startswith("damaged zip archive")


@pytest.mark.parametrize(
    "filename",
    [
        "nvidia_cudss_cu13.whl",
        "nvidia_cudss_cu13-1.0.0.35.whl",
        "nvidia_cudss_cu13-not.a.version-py3-none-any.whl",
        "nvidia_cudss_cu13-1.0.0.35-py3-none-manylinux_2_17_x86_64.zip",
        "nvidia-cudss-cu13-1.0.0.35-py3-none-any.whl",
    ],
)
def test_a_bad_wheel_file_name_is_refused(cuda_wheel: Path, filename: str) -> None:
    renamed = cuda_wheel.with_name(filename)
    cuda_wheel.rename(renamed)
    assert refusal(renamed).startswith("not a valid wheel file name")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("/etc/passwd", "absolute path"),
        ("C:\\Windows\\evil.dll", "backslash"),
        ("C:/Windows/evil.dll", "absolute path"),
        ("c:evil.dll", "absolute path"),
        ("../evil.py", "'..' component"),
        ("nvidia/../../evil.py", "'..' component"),
        ("nvidia/cu13\\lib\\evil.so", "backslash"),
    ],
)
def test_hostile_member_names_are_refused(cuda_wheel: Path, name: str, problem: str) -> None:
    add_raw_members(cuda_wheel, [RawMember(name, b"boom")])
    reason = refusal(cuda_wheel)
    assert reason.startswith(f"unsafe member name {name!r}")
    assert problem in reason


def test_a_nul_in_a_member_name_is_refused(cuda_wheel: Path) -> None:
    # zipfile cuts names at NUL when it reads them, hiding the trick; the reader must not.
    add_raw_members(cuda_wheel, [RawMember("nvidia/evilXname.py", b"boom")])
    patch_bytes(cuda_wheel, b"evilXname", b"evil\x00name")
    assert "NUL" in refusal(cuda_wheel)


def test_duplicate_member_names_are_refused(cuda_wheel: Path) -> None:
    add_raw_members(cuda_wheel, [RawMember(HEADER, b"#define CUDSS_VERSION 666\n")])
    assert refusal(cuda_wheel) == f"member {HEADER!r} appears more than once"


def test_symlink_members_are_refused(cuda_wheel: Path) -> None:
    link = RawMember(
        "nvidia/cu13/lib/libcudss.so", b"libcudss.so.0", external_attr=(stat.S_IFLNK | 0o777) << 16
    )
    add_raw_members(cuda_wheel, [link])
    assert "symbolic link" in refusal(cuda_wheel)


def test_a_wheel_without_dist_info_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pkg/__init__.py", b"")
    assert refusal(path) == "no .dist-info directory"


def test_two_dist_info_directories_are_refused(cuda_wheel: Path) -> None:
    add_raw_members(cuda_wheel, [RawMember("nvidia_cudss_cu12-1.0.dist-info/METADATA", b"Name: x\n")])
    assert refusal(cuda_wheel).startswith("more than one .dist-info directory")


@pytest.mark.parametrize("required", ["METADATA", "WHEEL", "RECORD"])
def test_missing_dist_info_files_are_refused(cuda_wheel: Path, required: str) -> None:
    rewrite_wheel(cuda_wheel, replace={f"{DIST_INFO}/{required}": None})
    assert refusal(cuda_wheel) == f"{DIST_INFO}/{required} is missing"


def test_dist_info_of_another_project_is_refused(tmp_path: Path) -> None:
    path = make_wheel(
        tmp_path, "nvidia-cublas-cu13", "13.0", {}, filename="nvidia_cudss_cu13-13.0-py3-none-any.whl"
    )
    assert "does not belong to nvidia-cudss-cu13" in refusal(path)


def test_dist_info_name_is_compared_normalised(tmp_path: Path) -> None:
    path = make_wheel(tmp_path, "Zope.Interface", "6.0", {}, filename="zope_interface-6.0-py3-none-any.whl")
    with Wheel.open(path) as wheel:
        assert wheel.distribution == "zope-interface"
        assert wheel.dist_info == "Zope.Interface-6.0.dist-info"
        wheel.verify()


# -- damage found when reading --------------------------------------------------------------------


def test_a_local_header_that_disagrees_with_the_directory(cuda_wheel: Path) -> None:
    for member in (HEADER, STORED_LIB):
        with zipfile.ZipFile(cuda_wheel) as archive:
            name_at = archive.getinfo(member).header_offset + 30
        with cuda_wheel.open("r+b") as file:
            file.seek(name_at)
            file.write(b"X")
    with Wheel.open(cuda_wheel) as wheel:  # opening reads no local header
        for read in (wheel.read_member, wheel.open_member):
            with pytest.raises(WheelError, match=r"cannot (read|open) nvidia/cu13/include/cudss\.h"):
                read(HEADER)
        with pytest.raises(WheelError, match="local header names 'Xvidia"), wheel.seekable_member(STORED_LIB):
            pass
        with pytest.raises(WheelError, match=re.escape(HEADER)):
            wheel.verify()


def test_corrupt_deflated_data_is_a_wheel_error(cuda_wheel: Path) -> None:
    middle = data_offset(cuda_wheel, DEFLATED_LIB) + 600_000
    with cuda_wheel.open("r+b") as file:
        file.seek(middle)
        original = file.read(64)
        file.seek(middle)
        file.write(bytes(byte ^ 0x5A for byte in original))
    with Wheel.open(cuda_wheel) as wheel:
        with pytest.raises(WheelError, match=re.escape(f"cannot read {DEFLATED_LIB}")):
            wheel.read_member(DEFLATED_LIB)
        with pytest.raises(WheelError), wheel.seekable_member(DEFLATED_LIB):
            pass
        with pytest.raises(WheelError, match=re.escape(DEFLATED_LIB)):
            wheel.verify()


def test_a_stored_member_cut_short_after_opening(cuda_wheel: Path) -> None:
    data = cuda_wheel.read_bytes()
    buffer = io.BytesIO(data)
    with Wheel.from_fileobj(buffer, cuda_wheel.name) as wheel, wheel.seekable_member(STORED_LIB) as file:
        buffer.truncate(data_offset(cuda_wheel, STORED_LIB) + 1000)  # the remote file shrank
        file.seek(500_000)
        with pytest.raises(WheelError, match="ends inside"):
            file.read(10)


# -- verify ---------------------------------------------------------------------------------------


def test_verify_accepts_an_intact_wheel_and_signature_files(cuda_wheel: Path) -> None:
    add_raw_members(cuda_wheel, [RawMember(f"{DIST_INFO}/RECORD.jws", b"{}"), RawMember("nvidia/cu13/", b"")])
    with Wheel.open(cuda_wheel) as wheel:
        assert wheel.member("nvidia/cu13/").is_dir
        wheel.verify()


def test_verify_names_a_hash_mismatch(cuda_wheel: Path) -> None:
    original = cuda_wheel_contents()[HEADER]
    rewrite_wheel(cuda_wheel, replace={HEADER: original.replace(b"1000", b"9999")})
    with (
        Wheel.open(cuda_wheel) as wheel,
        pytest.raises(WheelError, match=re.escape(f"hash mismatch for {HEADER}:")),
    ):
        wheel.verify()


def test_verify_names_the_first_mismatch_in_zip_order(cuda_wheel: Path) -> None:
    contents = cuda_wheel_contents()
    flipped = {name: bytes(reversed(contents[name])) for name in (STORED_LIB, DEFLATED_LIB)}
    rewrite_wheel(cuda_wheel, replace=flipped)
    with (
        Wheel.open(cuda_wheel) as wheel,
        pytest.raises(WheelError, match=re.escape(f"hash mismatch for {STORED_LIB}:")),
    ):
        wheel.verify()


def test_verify_names_a_size_mismatch(cuda_wheel: Path) -> None:
    line = record_line(cuda_wheel, HEADER)
    edit_record(cuda_wheel, {HEADER: line.rsplit(",", 1)[0] + ",5"})
    with Wheel.open(cuda_wheel) as wheel, pytest.raises(WheelError, match="size mismatch") as caught:
        wheel.verify()
    assert caught.value.reason == f"size mismatch for {HEADER}: RECORD says 5 bytes, the wheel holds 1080"


def test_verify_names_a_member_missing_from_record(cuda_wheel: Path) -> None:
    edit_record(cuda_wheel, {STORED_LIB: None})
    with Wheel.open(cuda_wheel) as wheel, pytest.raises(WheelError) as caught:
        wheel.verify()
    assert caught.value.reason == f"{STORED_LIB} is not listed in RECORD"


def test_verify_names_a_record_line_without_a_member(cuda_wheel: Path) -> None:
    rewrite_wheel(cuda_wheel, replace={HEADER: None})
    with Wheel.open(cuda_wheel) as wheel, pytest.raises(WheelError) as caught:
        wheel.verify()
    assert caught.value.reason == f"RECORD lists {HEADER}, which is not in the wheel"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (f"{HEADER},,", f"RECORD has no hash for {HEADER}"),
        (f"{HEADER},md5=1B2M2Y8AsgTpgAmY7PhCfg,1080", "which the wheel specification does not accept"),
    ],
)
def test_verify_needs_an_accepted_hash(cuda_wheel: Path, line: str, reason: str) -> None:
    edit_record(cuda_wheel, {HEADER: line})
    with Wheel.open(cuda_wheel) as wheel, pytest.raises(WheelError, match=reason):
        wheel.verify()


def test_verify_refuses_a_record_listing_a_member_twice(cuda_wheel: Path) -> None:
    line = record_line(cuda_wheel, HEADER)
    edit_record(cuda_wheel, {HEADER: f"{line}\n{line}"})
    with Wheel.open(cuda_wheel) as wheel, pytest.raises(WheelError, match="more than once"):
        wheel.verify()


# -- RECORD parsing -------------------------------------------------------------------------------


def test_parse_record_handles_quoting_blank_lines_and_crlf() -> None:
    digest = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
    data = f'"pkg/a,b.py",sha256={digest},0\r\n\r\npkg/c.py,SHA256={digest}=,0\r\nx.dist-info/RECORD,,\r\n'
    assert parse_record(data.encode(), "w.whl") == (
        RecordEntry("pkg/a,b.py", "sha256", digest, 0),
        RecordEntry("pkg/c.py", "sha256", f"{digest}=", 0),
        RecordEntry("x.dist-info/RECORD", None, None, None),
    )


def test_parse_record_splits_lines_as_a_newline_free_stream_does() -> None:
    """Lines end at \\r\\n, \\r or \\n, as ``io.StringIO(text, newline="")`` splits them for the csv
    module; a quoted path may hold a line end; other Unicode line breaks (\\x85, U+2028) are
    characters of a path, not line ends."""
    digest = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
    data = f'pkg/a.py,sha256={digest},0\rpkg/b\x85\u2028.py,,\n"pkg/c\r\nd.py",,\r\nx.dist-info/RECORD,,'
    assert parse_record(data.encode(), "w.whl") == (
        RecordEntry("pkg/a.py", "sha256", digest, 0),
        RecordEntry("pkg/b\x85\u2028.py", None, None, None),
        RecordEntry("pkg/c\r\nd.py", None, None, None),
        RecordEntry("x.dist-info/RECORD", None, None, None),
    )


def test_parse_record_holds_little_besides_its_entries() -> None:
    """A RECORD of 100,000 lines is 10 MB: its text was read through a StringIO, which holds four bytes
    a character (40 MB more at the peak, found on a wheel of 100,000 files); then line by line from
    the text decoded whole (1.13 times the RECORD's size more than the entries); now each line is
    decoded from the bytes (0.13 times)."""
    import tracemalloc

    digest = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
    data = "".join(f"pkg/module_{i:06d}.py,sha256={digest},1\n" for i in range(20_000)).encode()
    tracemalloc.start()
    try:
        entries = parse_record(data, "w.whl")
        kept = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        del entries
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        entries = parse_record(data, "w.whl")
        extra = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert len(entries) == 20_000
    # The entries themselves, and a line at a time: not the text, once or four times over.
    assert extra < (kept - baseline) + 0.5 * len(data), (extra, kept - baseline, len(data))


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("pkg/a.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU", "has 2 fields"),
        ("pkg/a.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,-1", "not a whole number"),
        ("pkg/a.py,sha256=47DEQpj8HBSa+/TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0", "not algorithm=urlsafe-base64"),
        # mlx-cuda 0.30.0's RECORD gives libmlx.so's sha256 digest with no "sha256=" before it.
        ("pkg/a.py,47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0", "the hash of pkg/a.py names no algorithm"),
        ("pkg/a.py,sha256=AAAA,0", "wrong length"),
        (",,", "empty path"),
    ],
)
def test_parse_record_refuses_malformed_lines(line: str, reason: str) -> None:
    with pytest.raises(WheelError, match=reason) as caught:
        parse_record(f"x.dist-info/RECORD,,\n{line}\n".encode(), "w.whl")
    assert caught.value.reason.startswith("RECORD line 2")


def test_a_malformed_record_line_says_how_to_write_record_anew() -> None:
    """`wheel unpack` checks RECORD as it reads and stops at a malformed line or a mismatch, so the
    way out is to unzip the wheel and run `wheel pack` on the folder."""
    with pytest.raises(WheelError) as caught:
        parse_record(b"pkg/a.py,47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n", "w.whl")
    assert caught.value.hint is not None
    assert "unzip it" in caught.value.hint
    assert "`wheel pack`" in caught.value.hint
    assert "wheel unpack" not in caught.value.hint


def test_only_a_record_digest_of_a_known_length_is_called_a_hash_naming_no_algorithm() -> None:
    with pytest.raises(WheelError) as caught:
        parse_record(b"pkg/a.py,AAAA,0\n", "w.whl")
    assert caught.value.reason == "RECORD line 1: 'AAAA' is not algorithm=urlsafe-base64-digest"


def test_a_malformed_record_in_a_wheel_is_a_wheel_error(cuda_wheel: Path) -> None:
    rewrite_wheel(cuda_wheel, replace={RECORD: b"\xff\xfe not utf-8"})
    with Wheel.open(cuda_wheel) as wheel, pytest.raises(WheelError, match="RECORD is not UTF-8"):
        wheel.record()


def test_an_open_wheel_of_many_files_holds_little_per_file(tmp_path: Path) -> None:
    """A wheel may list 100,000 files: repair holds two directories and RECORDs at once, so each file
    costs well under a kilobyte (its name, offsets and RECORD line). Before the members shared their
    time stamp and took slots, 20,000 of them cost 780 bytes each here; then 526; now that RECORD's
    lines share the members' names, 470."""
    import tracemalloc

    count = 20_000
    path = many_files_wheel(tmp_path, count)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with Wheel.open(path) as wheel:
            records = wheel.record()
            per_file = (tracemalloc.get_traced_memory()[0] - before) / count
    finally:
        tracemalloc.stop()
    assert len(records) == count + 3
    assert not hasattr(wheel.members[0], "__dict__")
    assert not hasattr(records[0], "__dict__")
    assert wheel.members[0].date_time is wheel.members[-1].date_time  # one tuple, not 20,000
    assert records[0].hash_algorithm is records[-2].hash_algorithm
    by_name = {member.name: member for member in wheel.members}
    assert all(entry.path is by_name[entry.path].name for entry in records)  # one string per path
    assert per_file < 520, f"{per_file:.0f} bytes per file"


def test_opening_a_wheel_of_many_files_holds_little_more_than_it_keeps(tmp_path: Path) -> None:
    """The central directory is unpacked an entry at a time into the members kept: zipfile's reader
    built a ZipInfo for each entry first (343 bytes a member at the peak, over what is kept; now 75,
    the directory's own bytes)."""
    import tracemalloc

    count = 20_000
    path = many_files_wheel(tmp_path, count)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        with Wheel.open(path) as wheel:
            kept = tracemalloc.get_traced_memory()[0] - before
            peak = tracemalloc.get_traced_memory()[1] - before
            assert len(wheel.members) == count + 3
    finally:
        tracemalloc.stop()
    assert (peak - kept) / count < 150, f"{(peak - kept) / count:.0f} bytes a member over what is kept"


def test_a_requirement_longer_than_any_real_one_is_refused(tmp_path: Path) -> None:
    """pip spends minutes on a Requires-Dist of 10,000 version clauses: such METADATA is bad input."""
    long = "nvidia-cudss-cu13" + ">=1.0," * 1000 + "<2"
    path = make_wheel(tmp_path, "demo", "1.0", {"demo/__init__.py": b""}, requires=["numpy>=1.26", long])
    with Wheel.open(path) as wheel, pytest.raises(WheelError, match="a Requires-Dist of 6,019 characters"):
        wheel.requires_dist()
    fine = make_wheel(tmp_path, "fine", "1.0", {"fine/__init__.py": b""}, requires=["a" * 4000])
    with Wheel.open(fine) as wheel:
        assert wheel.requires_dist() == ("a" * 4000,)
