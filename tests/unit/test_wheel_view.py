"""member_view and the raw-stream inflater on real wheels: what is kept, what is refused, and memory."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import re
import shutil
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from slimwheel.errors import SlimwheelError, WheelError
from slimwheel.wheel import MemberView, MissingRangeError, Wheel
from slimwheel.wheel.inflate import (
    USING_ISAL,
    Decompressor,
    DecompressorFactory,
    InflateError,
    inflate,
    new_decompressor,
    zlib_decompressor,
)
from tests.support.fixtures_wheel import (
    BIG_STORED_MEMBER,
    CountingFile,
    RawMember,
    add_raw_members,
    compressible_bytes,
    data_offset,
    make_mixed_wheel,
    patch_central_directory,
    pseudo_random_bytes,
    raw_member_data,
)
from tests.support.wheels import make_wheel

KIB = 1024
MIB = 1024 * KIB
HEAD = 256 * KIB
TAIL = 512 * KIB
DEFLATED = "viewlib/lib/libdeflated.so.1"  # 3 MiB, deflates to about half
STORED = "viewlib/lib/libstored.so.1"  # 3 MiB, stored
SMALL = "viewlib/lib/libsmall.so.1"  # 700 KiB deflated: below HEAD + TAIL
RANDOM = "viewlib/lib/librandom.so.1"  # 2 MiB of incompressible bytes, deflated (stored blocks)
EMPTY = "viewlib/lib/empty.txt"
BIG = "biglib/lib/libbig.so.1"  # 60 MiB deflated


def view_contents() -> dict[str, bytes]:
    return {
        DEFLATED: compressible_bytes(3 * MIB + 12_345, seed=11),
        STORED: compressible_bytes(3 * MIB + 999, seed=12),
        SMALL: compressible_bytes(700 * KIB, seed=13),
        RANDOM: pseudo_random_bytes(2 * MIB, seed=14),
        EMPTY: b"",
        "viewlib/__init__.py": b"",
    }


@pytest.fixture(scope="module")
def contents() -> dict[str, bytes]:
    return view_contents()


@pytest.fixture(scope="module")
def pristine_view_wheel(tmp_path_factory: pytest.TempPathFactory, contents: dict[str, bytes]) -> Path:
    return make_mixed_wheel(
        tmp_path_factory.mktemp("view-wheel"),
        "viewlib",
        "1.0",
        contents,
        stored=[STORED],
        tag="py3-none-manylinux_2_28_x86_64",
    )


@pytest.fixture
def view_wheel(pristine_view_wheel: Path, tmp_path: Path) -> Path:
    """A fresh copy, safe to damage."""
    copy = tmp_path / pristine_view_wheel.name
    shutil.copyfile(pristine_view_wheel, copy)
    return copy


@pytest.fixture(scope="module")
def big_deflated_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_wheel(
        tmp_path_factory.mktemp("big-deflated"),
        "biglib",
        "1.0",
        {BIG: pseudo_random_bytes(60 * MIB, seed=21)},
        tag="py3-none-manylinux_2_28_x86_64",
    )


def test_the_wheel_is_what_the_tests_assume(pristine_view_wheel: Path, contents: dict[str, bytes]) -> None:
    with zipfile.ZipFile(pristine_view_wheel) as archive:
        assert archive.getinfo(STORED).compress_type == zipfile.ZIP_STORED
        deflated = archive.getinfo(DEFLATED)
        assert deflated.compress_type == zipfile.ZIP_DEFLATED
        assert deflated.compress_size < 0.6 * len(contents[DEFLATED])
        assert len(contents[SMALL]) < HEAD + TAIL < len(contents[DEFLATED])


# -- what a view reads ------------------------------------------------------------------------------


@pytest.mark.parametrize("member", [DEFLATED, STORED, RANDOM], ids=["deflated", "stored", "random"])
def test_head_and_tail_read_as_the_real_bytes(
    pristine_view_wheel: Path, contents: dict[str, bytes], member: str
) -> None:
    content = contents[member]
    size = len(content)
    with Wheel.open(pristine_view_wheel) as wheel, wheel.member_view(member, head=HEAD, tail=TAIL) as view:
        assert isinstance(view, MemberView)
        assert isinstance(view, io.RawIOBase)
        assert view.size == size
        assert view.name == member
        assert view.readable()
        assert view.seekable()
        assert view.read(64) == content[:64]
        assert view.tell() == 64
        view.seek(HEAD - 100)
        assert view.read(100) == content[HEAD - 100 : HEAD]
        assert view.seek(-16, os.SEEK_END) == size - 16
        assert view.read() == content[-16:]
        assert view.read(10) == b""
        view.seek(size - TAIL)
        assert view.read(TAIL) == content[-TAIL:]
        view.seek(size - 100)
        assert view.read(1000) == content[-100:]  # short only at the end
        view.seek(-200, os.SEEK_CUR)
        assert view.read(50) == content[size - 200 : size - 150]
        view.seek(size + 50)
        assert view.read(1) == b""
        buffer = bytearray(32)
        view.seek(8)
        assert view.readinto(buffer) == 32
        assert bytes(buffer) == content[8:40]
        with pytest.raises(ValueError, match="negative seek"):
            view.seek(-1)
        with pytest.raises(ValueError, match="whence"):
            view.seek(0, 7)
        if member == STORED:
            assert view.kept_ranges == ((0, size),)
        else:
            assert view.kept_ranges == ((0, HEAD), (size - TAIL, size))
    assert view.closed
    with pytest.raises(ValueError, match="closed"):
        view.read(1)


@pytest.mark.parametrize("member", [DEFLATED, RANDOM], ids=["deflated", "random"])
def test_a_middle_read_raises_missing_range(pristine_view_wheel: Path, member: str) -> None:
    with Wheel.open(pristine_view_wheel) as wheel, wheel.member_view(member, head=HEAD, tail=TAIL) as view:
        size = view.size
        middle = size // 2
        assert view.has_range(0, HEAD)
        assert view.has_range(size - TAIL, TAIL)
        assert view.has_range(size - 10, 1000)  # past the end counts as present
        assert view.has_range(size + 5, 10)
        assert view.has_range(middle, 0)
        assert not view.has_range(middle, 1)
        assert not view.has_range(HEAD - 1, 2)  # one byte over the head boundary
        assert not view.has_range(size - TAIL - 1, 2)
        assert not view.has_range(0, size)
        with pytest.raises(ValueError, match="negative"):
            view.has_range(-1, 4)
        view.seek(middle)
        with pytest.raises(MissingRangeError) as caught:
            view.read(16)
        assert (caught.value.name, caught.value.offset, caught.value.length) == (member, middle, 16)
        assert isinstance(caught.value, SlimwheelError)
        assert not isinstance(caught.value, WheelError)
        assert "\n" not in str(caught.value)
        assert "seekable_member" in str(caught.value)
        assert view.tell() == middle  # a refused read does not move
        view.seek(HEAD - 8)
        with pytest.raises(MissingRangeError):
            view.read(16)
        view.seek(0)
        with pytest.raises(MissingRangeError):
            view.read()  # readall needs the middle too
        # The fallback the error names reads it.
        with wheel.seekable_member(member) as file:
            file.seek(middle)
            assert len(file.read(16)) == 16


def test_stored_members_are_a_window_that_reads_anywhere(big_stored_wheel: Path) -> None:
    with (
        CountingFile(big_stored_wheel) as counting,
        Wheel.from_fileobj(counting, big_stored_wheel.name) as wheel,
        wheel.member_view(BIG_STORED_MEMBER, head=KIB, tail=KIB) as view,
    ):
        assert counting.bytes_read < 64 * KIB  # nothing inflated or copied up front
        before = counting.bytes_read
        assert view.has_range(0, view.size)
        view.seek(10 * MIB)
        assert view.read(8) == bytes(8)
        view.seek(-8, os.SEEK_END)
        assert view.read() == bytes(8)
        assert counting.bytes_read - before < 64 * KIB


@pytest.mark.parametrize("member", [SMALL, EMPTY])
def test_small_members_are_kept_whole(
    pristine_view_wheel: Path, contents: dict[str, bytes], member: str
) -> None:
    content = contents[member]
    with Wheel.open(pristine_view_wheel) as wheel, wheel.member_view(member, head=HEAD, tail=TAIL) as view:
        assert view.size == len(content)
        assert view.has_range(0, len(content))
        assert view.read() == content
        view.seek(len(content) // 2)
        assert view.read(100) == content[len(content) // 2 :][:100]
        assert view.kept_ranges == (((0, len(content)),) if content else ())


def test_default_head_and_tail_keep_a_few_mebibytes_whole(
    pristine_view_wheel: Path, contents: dict[str, bytes]
) -> None:
    with Wheel.open(pristine_view_wheel) as wheel, wheel.member_view(DEFLATED) as view:
        assert view.kept_ranges == ((0, len(contents[DEFLATED])),)
        assert view.read() == contents[DEFLATED]


def test_head_plus_tail_exactly_the_size_is_whole(
    pristine_view_wheel: Path, contents: dict[str, bytes]
) -> None:
    size = len(contents[DEFLATED])
    with Wheel.open(pristine_view_wheel) as wheel:
        with wheel.member_view(DEFLATED, head=size - 1000, tail=1000) as view:
            assert view.kept_ranges == ((0, size),)
        with wheel.member_view(DEFLATED, head=size - 1000, tail=999) as view:
            assert view.kept_ranges == ((0, size - 1000), (size - 999, size))
            assert not view.has_range(size - 1000, 1)
        with wheel.member_view(DEFLATED, head=0, tail=0) as view:
            assert view.kept_ranges == ()
            assert view.read(0) == b""
            with pytest.raises(MissingRangeError):
                view.read(1)
        with pytest.raises(ValueError, match="negative"), wheel.member_view(DEFLATED, head=-1):
            pass


# -- on_chunk ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("member", [DEFLATED, STORED, RANDOM, SMALL, EMPTY])
def test_on_chunk_sees_every_byte_once_in_order(
    pristine_view_wheel: Path, contents: dict[str, bytes], member: str
) -> None:
    seen: list[tuple[int, bytes]] = []
    with (
        Wheel.open(pristine_view_wheel) as wheel,
        wheel.member_view(member, head=HEAD, tail=TAIL, on_chunk=lambda o, d: seen.append((o, d))) as view,
    ):
        assert view.size == len(contents[member])
    expected = 0
    for offset, data in seen:
        assert offset == expected
        assert 0 < len(data) <= MIB
        expected += len(data)
    assert expected == len(contents[member])
    reassembled = hashlib.sha256(b"".join(data for _, data in seen)).hexdigest()
    assert reassembled == hashlib.sha256(contents[member]).hexdigest()


def test_on_chunk_errors_propagate_unchanged(pristine_view_wheel: Path) -> None:
    def refuse(offset: int, data: bytes) -> None:
        raise ValueError(f"caller refuses chunk at {offset} ({len(data)} bytes)")

    with Wheel.open(pristine_view_wheel) as wheel:
        for member in (DEFLATED, STORED):
            with (
                pytest.raises(ValueError, match="caller refuses chunk at 0"),
                wheel.member_view(member, on_chunk=refuse),
            ):
                pass
        assert wheel.read_member(SMALL)  # the wheel is still usable


# -- damage -----------------------------------------------------------------------------------------


def test_corrupt_deflate_data_is_a_wheel_error(view_wheel: Path) -> None:
    middle = data_offset(view_wheel, DEFLATED) + 700_000
    with view_wheel.open("r+b") as file:
        file.seek(middle)
        original = file.read(64)
        file.seek(middle)
        file.write(bytes(byte ^ 0x5A for byte in original))
    with Wheel.open(view_wheel) as wheel:
        with pytest.raises(WheelError) as caught, wheel.member_view(DEFLATED, head=HEAD, tail=TAIL):
            pass
        assert caught.value.reason.startswith(f"cannot read {DEFLATED}: ")
        assert "\n" not in str(caught.value)
        for read in (wheel.read_member, lambda name: b"".join(wheel.iter_member_chunks(name))):
            with pytest.raises(WheelError, match=re.escape(f"cannot read {DEFLATED}")):
                read(DEFLATED)
        with wheel.open_member(DEFLATED) as stream, pytest.raises(WheelError, match=re.escape(DEFLATED)):
            stream.read()


@pytest.mark.parametrize("member", [DEFLATED, STORED, SMALL])
def test_a_crc_mismatch_is_a_wheel_error(view_wheel: Path, member: str) -> None:
    with zipfile.ZipFile(view_wheel) as archive:
        crc = archive.getinfo(member).CRC
    patch_central_directory(view_wheel, member, crc=crc ^ 0x1)
    with Wheel.open(view_wheel) as wheel:
        with pytest.raises(WheelError, match=re.escape(f"cannot read {member}: bad CRC-32")):
            wheel.read_member(member)
        with pytest.raises(WheelError, match="bad CRC-32"):
            wheel.verify()
        if member == STORED:
            # A stored view reads nothing up front, so it checks nothing, as seekable_member; with
            # on_chunk it reads the whole member and checks it.
            with wheel.member_view(member) as view:
                assert view.read(4) == compressible_bytes(8, seed=12)[:4]
            with (
                pytest.raises(WheelError, match="bad CRC-32"),
                wheel.member_view(member, on_chunk=lambda _o, _d: None),
            ):
                pass
        else:
            with (
                pytest.raises(WheelError, match="bad CRC-32"),
                wheel.member_view(member, head=HEAD, tail=TAIL),
            ):
                pass
            with pytest.raises(WheelError, match="bad CRC-32"), wheel.seekable_member(member):
                pass


def test_a_member_that_inflates_past_its_claimed_size_is_refused(view_wheel: Path) -> None:
    # A "zip bomb" in miniature: the central directory says 1000 bytes, the data holds 3 MiB.
    patch_central_directory(view_wheel, DEFLATED, file_size=1000)
    with Wheel.open(view_wheel) as wheel:
        with (
            pytest.raises(WheelError, match="holds more than the 1000 bytes"),
            wheel.member_view(DEFLATED),
        ):
            pass
        with pytest.raises(WheelError, match="holds more than the 1000 bytes"):
            wheel.read_member(DEFLATED)


def test_a_member_that_inflates_short_of_its_claimed_size_is_refused(view_wheel: Path) -> None:
    with zipfile.ZipFile(view_wheel) as archive:
        size = archive.getinfo(DEFLATED).file_size
    patch_central_directory(view_wheel, DEFLATED, file_size=size + 1)
    with Wheel.open(view_wheel) as wheel:
        with pytest.raises(WheelError, match=f"holds {size} bytes, the central directory gives {size + 1}"):
            wheel.read_member(DEFLATED)
        with pytest.raises(WheelError, match="holds"), wheel.member_view(DEFLATED, head=HEAD, tail=TAIL):
            pass


def test_deflate_data_cut_short_is_refused(view_wheel: Path) -> None:
    with zipfile.ZipFile(view_wheel) as archive:
        compress_size = archive.getinfo(DEFLATED).compress_size
    patch_central_directory(view_wheel, DEFLATED, compress_size=compress_size // 2)
    with Wheel.open(view_wheel) as wheel:
        with pytest.raises(WheelError, match="the deflate data ends early"):
            wheel.read_member(DEFLATED)
        with pytest.raises(WheelError, match="ends early"), wheel.member_view(DEFLATED, head=HEAD, tail=TAIL):
            pass


def test_a_local_header_that_disagrees_with_the_directory(view_wheel: Path) -> None:
    for member in (DEFLATED, STORED):
        with zipfile.ZipFile(view_wheel) as archive:
            name_at = archive.getinfo(member).header_offset + 30
        with view_wheel.open("r+b") as file:
            file.seek(name_at)
            file.write(b"X")
    with Wheel.open(view_wheel) as wheel:
        for member in (DEFLATED, STORED):
            with pytest.raises(WheelError, match="local header names 'Xiewlib"), wheel.member_view(member):
                pass


def test_a_wheel_that_shrank_after_opening(pristine_view_wheel: Path) -> None:
    data = pristine_view_wheel.read_bytes()
    buffer = io.BytesIO(data)
    with Wheel.from_fileobj(buffer, pristine_view_wheel.name) as wheel:
        buffer.truncate(data_offset(pristine_view_wheel, DEFLATED) + 100_000)
        with pytest.raises(WheelError, match="ends inside"), wheel.member_view(DEFLATED):
            pass


def test_a_closed_wheel_refuses_views(pristine_view_wheel: Path) -> None:
    wheel = Wheel.open(pristine_view_wheel)
    wheel.close()
    with pytest.raises(WheelError, match="closed"), wheel.member_view(DEFLATED):
        pass


def test_bzip2_members_still_read_through_zipfile(view_wheel: Path) -> None:
    content = compressible_bytes(300_000, seed=31)
    add_raw_members(view_wheel, [RawMember("viewlib/extra.bin", content, zipfile.ZIP_BZIP2)])
    with Wheel.open(view_wheel) as wheel:
        assert wheel.read_member("viewlib/extra.bin") == content
        with wheel.member_view("viewlib/extra.bin", head=1000, tail=1000) as view:
            assert view.read(10) == content[:10]
            view.seek(-10, os.SEEK_END)
            assert view.read() == content[-10:]


# -- the inflater: isal and zlib give the same result ------------------------------------------------


def _decompressor_factory(name: str) -> DecompressorFactory:
    """zlib's and isal's, named explicitly (no global switched), and the default one."""
    if name == "zlib":
        return zlib_decompressor
    if name == "default":
        return new_decompressor
    pytest.importorskip("isal")
    from isal import isal_zlib

    def isal_decompressor() -> Decompressor:
        return isal_zlib.decompressobj(-15)

    return isal_decompressor


def _raw_pieces(raw: bytes, size: int) -> list[bytes]:
    return [raw[start : start + size] for start in range(0, len(raw), size)]


@pytest.mark.parametrize("factory_name", ["zlib", "isal", "default"])
@pytest.mark.parametrize("member", [DEFLATED, RANDOM, SMALL, EMPTY])
def test_inflate_with_each_decompressor_gives_the_same_bytes(
    pristine_view_wheel: Path, contents: dict[str, bytes], member: str, factory_name: str
) -> None:
    factory = _decompressor_factory(factory_name)
    content = contents[member]
    raw = raw_member_data(pristine_view_wheel, member)
    crc = zlib.crc32(content)
    for raw_piece_size, chunk_size in [(MIB, MIB), (7_777, 100_000), (1 * MIB, 4096)]:
        chunks = list(
            inflate(
                _raw_pieces(raw, raw_piece_size),
                size=len(content),
                crc=crc,
                chunk_size=chunk_size,
                decompressor_factory=factory,
            )
        )
        assert all(0 < len(chunk) <= chunk_size for chunk in chunks)
        assert b"".join(chunks) == content
    seen: list[bytes] = []
    view = MemberView.from_chunks(
        member,
        len(content),
        inflate(_raw_pieces(raw, MIB), size=len(content), crc=crc, decompressor_factory=factory),
        head=HEAD,
        tail=TAIL,
        on_chunk=lambda _offset, data: seen.append(data),
    )
    with view:
        assert b"".join(seen) == content
        head = HEAD if len(content) > HEAD + TAIL else len(content)
        assert view.read(head) == content[:head]
        if len(content) > TAIL:
            view.seek(-TAIL, os.SEEK_END)
            assert view.read() == content[-TAIL:]


@pytest.mark.parametrize("factory_name", ["zlib", "isal"])
def test_inflate_with_each_decompressor_refuses_the_same_damage(
    pristine_view_wheel: Path, contents: dict[str, bytes], factory_name: str
) -> None:
    factory = _decompressor_factory(factory_name)
    content = contents[DEFLATED]
    raw = bytearray(raw_member_data(pristine_view_wheel, DEFLATED))
    crc = zlib.crc32(content)

    def run(data: bytes, *, size: int = len(content), crc: int = crc) -> None:
        for _ in inflate(_raw_pieces(data, MIB), size=size, crc=crc, decompressor_factory=factory):
            pass

    run(bytes(raw))  # intact
    with pytest.raises(InflateError, match="bad CRC-32"):
        run(bytes(raw), crc=crc ^ 1)
    with pytest.raises(InflateError, match="ends early"):
        run(bytes(raw[: len(raw) // 2]))
    with pytest.raises(InflateError, match="holds more than the 100 bytes"):
        run(bytes(raw), size=100)
    with pytest.raises(InflateError, match=r"^corrupt deflate data \(.+\)$"):
        run(bytes([raw[0] | 0b110]) + bytes(raw[1:]))  # block type 3 does not exist
    raw[700_000:700_064] = bytes(byte ^ 0x5A for byte in raw[700_000:700_064])
    with pytest.raises(InflateError, match=r"^(corrupt deflate data|bad CRC-32|holds \d+ bytes)"):
        run(bytes(raw))
    assert issubclass(InflateError, ValueError)


def test_isal_is_used_when_it_imports() -> None:
    isal_installed = importlib.util.find_spec("isal") is not None
    assert isal_installed is USING_ISAL
    assert (new_decompressor is zlib_decompressor) == (not USING_ISAL)


def test_from_chunks_refuses_chunks_that_disagree_with_the_size() -> None:
    with pytest.raises(ValueError, match="more than 10 bytes"):
        MemberView.from_chunks("m", 10, [b"x" * 6, b"x" * 6], head=2, tail=2)
    with pytest.raises(ValueError, match="hold 6 bytes, not 10"):
        MemberView.from_chunks("m", 10, [b"x" * 6], head=2, tail=2)


def test_a_chunk_spanning_head_and_tail_is_cut_right() -> None:
    content = bytes(range(256)) * 4
    view = MemberView.from_chunks("m", len(content), [content[:10], content[10:]], head=100, tail=100)
    with view:
        assert view.kept_ranges == ((0, 100), (924, 1024))
        assert view.read(100) == content[:100]
        view.seek(924)
        assert view.read() == content[924:]
        view.seek(5)
        assert view.read(20) == content[5:25]  # across two kept chunks


# -- memory -----------------------------------------------------------------------------------------


def test_memory_stays_far_below_the_member_size(big_deflated_wheel: Path) -> None:
    expected_head = pseudo_random_bytes(MIB, seed=21)
    with Wheel.open(big_deflated_wheel) as wheel:
        assert wheel.member(BIG).compress_type == zipfile.ZIP_DEFLATED
        assert wheel.member(BIG).file_size == 60 * MIB
        tracemalloc.start()
        try:
            with wheel.member_view(BIG, head=MIB, tail=MIB) as view:
                assert view.read(MIB) == expected_head
                view.seek(-MIB, os.SEEK_END)
                assert len(view.read()) == MIB
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * MIB, f"peak {peak / MIB:.1f} MiB while viewing a 60 MiB member"


def test_an_extended_view_reads_across_the_first_pass_s_ranges_and_stops_early() -> None:
    content = bytes(range(256)) * 64  # 16 KiB
    view = MemberView.from_chunks("lib.so", len(content), [content], head=1024, tail=1024)
    taken: list[int] = []

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(content), 512):
            taken.append(start)
            yield content[start : start + 512]

    # Unsorted, overlapping what is held, one past the end: as an analysis asks after a miss.
    extended = view.extended(chunks(), [(3000, 100), (900, 2100), (16000, 1000)])
    with extended:
        assert extended.kept_ranges == ((0, 3100), (15360, 16384))
        extended.seek(500)
        assert extended.read(2600) == content[500:3100]  # across the head and what was added
        with pytest.raises(MissingRangeError):
            extended.read(1)
    assert taken[-1] < 3100  # stopped after the last byte the first view lacked
    with pytest.raises(ValueError, match="before byte"):
        view.extended(iter([content[:1000]]), [(1024, 2000)])


def test_a_stored_member_s_view_cannot_be_extended(pristine_view_wheel: Path) -> None:
    with Wheel.open(pristine_view_wheel) as wheel:
        stored = next(m for m in wheel.members if m.compress_type == zipfile.ZIP_STORED and m.file_size)
        with (
            wheel.member_view(stored.name, head=16, tail=16) as view,
            pytest.raises(ValueError, match="stored"),
        ):
            view.extended(iter([b""]), [(0, 1)])


def test_read_hands_a_whole_piece_over_and_copies_part_of_one_once() -> None:
    first, second = bytes(range(256)) * 64, b"z" * 5000
    view = MemberView("m", 30000, pieces=[(0, first), (20000, second)])
    assert view.read(len(first)) is first  # immutable: no copy needed
    view.seek(10)
    assert view.read(100) == first[10:110]
    view.seek(20000)
    assert view.read(5000) is second
    view.seek(20100)
    assert view.read(200) == second[100:300]
    view.seek(16000)
    with pytest.raises(MissingRangeError):
        view.read(1000)  # runs from the first piece into what was not kept
    whole = MemberView("w", 3, pieces=[(0, b"abc")])
    assert whole.read() == b"abc"
    assert whole.read(-1) == whole.read(5) == b""  # at the end
    whole.seek(1)
    assert whole.readall() == b"bc"
