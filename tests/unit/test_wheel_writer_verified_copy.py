"""A raw copy is verified as it streams: the stored bytes are checked against their CRC-32 and hashed
against the source's RECORD line, and the RECORD line written is always computed from the bytes.
A member that fails is never published: nothing appears under the final name."""

from __future__ import annotations

import base64
import hashlib
import zipfile
import zlib
from pathlib import Path

import pytest

from slimwheel.errors import WheelError
from slimwheel.wheel import RecordEntry, Wheel, WheelWriter
from tests.support.fixtures_wheel import (
    compressible_bytes,
    data_offset,
    patch_central_directory,
    rewrite_wheel,
)
from tests.support.wheels import make_wheel, record_hash

NAME = "demo-lib"
DIST_INFO = "demo_lib-1.0.dist-info"
RECORD = f"{DIST_INFO}/RECORD"
DATA = "demo_lib/data.bin"
CONTENT = compressible_bytes(3 * 1024 * 1024 + 5, seed=21)  # several chunks, deflated or stored
SMALL = compressible_bytes(20_000, seed=22)  # read with its local header in one read, checked whole
SIZES = pytest.mark.parametrize("content", [CONTENT, SMALL], ids=["streamed", "read whole"])


def _source(tmp_path: Path, compression: int = zipfile.ZIP_DEFLATED, content: bytes = CONTENT) -> Path:
    directory = tmp_path / "in"
    directory.mkdir(exist_ok=True)
    return make_wheel(directory, NAME, "1.0", {DATA: content}, compression=compression)


def _copy(source: Path, out: Path, record: RecordEntry | None = None, *, use_record: bool = True) -> None:
    with Wheel.open(source) as wheel, WheelWriter(out) as writer:
        entries = {entry.path: entry for entry in wheel.record()}
        for member in wheel.members:
            if member.name == RECORD:
                continue
            line = entries.get(member.name)
            if member.name == DATA and record is not None:
                line = record
            writer.copy_raw(wheel, member.name, record=line if use_record else None)
        writer.close(RECORD)


def _out_dir(tmp_path: Path) -> Path:
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    return out_dir


def _digest(algorithm: str, data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()


@SIZES
@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_bad_crc_is_found_while_copying_and_nothing_is_published(
    compression: int, content: bytes, tmp_path: Path
) -> None:
    """The data is intact as RECORD hashes it, but the CRC-32 the archive gives is wrong: zipfile -t
    would fail the output, so the copy fails instead."""
    source = patch_central_directory(_source(tmp_path, compression, content), DATA, crc=zlib.crc32(b"other"))
    out_dir = _out_dir(tmp_path)
    with pytest.raises(WheelError, match=rf"cannot copy {DATA}: bad CRC-32") as caught:
        _copy(source, out_dir / source.name)
    assert caught.value.path == str(source)
    assert list(out_dir.iterdir()) == []


@SIZES
@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_flipped_byte_is_found_by_the_crc(compression: int, content: bytes, tmp_path: Path) -> None:
    source = _source(tmp_path, compression, content)
    offset = data_offset(source, DATA) + 1000
    data = bytearray(source.read_bytes())
    data[offset] ^= 0x01
    source.write_bytes(bytes(data))
    out_dir = _out_dir(tmp_path)
    with pytest.raises(WheelError, match=rf"cannot copy {DATA}: (bad CRC-32|corrupt deflate data|holds)"):
        _copy(source, out_dir / source.name)
    assert list(out_dir.iterdir()) == []


@SIZES
def test_content_that_does_not_match_its_record_line_is_refused(content: bytes, tmp_path: Path) -> None:
    """Same size and a consistent CRC-32, other bytes than RECORD hashed: only the hash tells."""
    source = _source(tmp_path, content=content)
    altered = bytearray(content)
    altered[12345] ^= 0xFF
    rewrite_wheel(source, replace={DATA: bytes(altered)})  # RECORD keeps the old hash
    out_dir = _out_dir(tmp_path)
    with pytest.raises(WheelError, match=rf"hash mismatch for {DATA}: RECORD says sha256=") as caught:
        _copy(source, out_dir / source.name)
    assert record_hash(bytes(altered)).removeprefix("sha256=") in str(caught.value)
    assert list(out_dir.iterdir()) == []


def _copy_all_after_a_bad_crc(source: Path, out: Path) -> None:
    with Wheel.open(source) as wheel, WheelWriter(out) as writer:
        entries = {entry.path: entry for entry in wheel.record()}
        with pytest.raises(WheelError, match="bad CRC-32"):
            writer.copy_raw(wheel, DATA, record=entries[DATA])
        for member in wheel.members:
            if member.name not in (DATA, RECORD):
                writer.copy_raw(wheel, member.name, record=entries[member.name])
        writer.close(RECORD)


def test_a_member_read_whole_is_refused_before_it_is_written(tmp_path: Path) -> None:
    """A bad member whose stored bytes come in one read is found before any of it is written: the
    writer goes on, and the wheel it writes without that member is whole."""
    source = patch_central_directory(_source(tmp_path, content=SMALL), DATA, crc=zlib.crc32(b"other"))
    out = _out_dir(tmp_path) / source.name
    _copy_all_after_a_bad_crc(source, out)
    with Wheel.open(out) as written:
        written.verify()
        assert not written.has_member(DATA)


def test_a_member_found_bad_while_it_streams_breaks_the_writer(tmp_path: Path) -> None:
    """Part of it is written by then: nothing more is taken, and nothing is published."""
    source = patch_central_directory(_source(tmp_path, content=CONTENT), DATA, crc=zlib.crc32(b"other"))
    out = _out_dir(tmp_path) / source.name
    with pytest.raises(ValueError, match=r"an earlier write to .* failed"):
        _copy_all_after_a_bad_crc(source, out)
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (RecordEntry(DATA, None, None, len(CONTENT)), f"RECORD has no hash for {DATA}"),
        (RecordEntry(DATA, "md5", _digest("md5", CONTENT), len(CONTENT)), f"RECORD hashes {DATA} with md5"),
        (RecordEntry(DATA, "sha1", _digest("sha1", CONTENT), len(CONTENT)), "with sha1"),
        (
            RecordEntry(DATA, "sha256", _digest("sha256", CONTENT), len(CONTENT) + 1),
            f"size mismatch for {DATA}: RECORD says {len(CONTENT) + 1} bytes",
        ),
    ],
)
def test_an_unusable_record_line_is_refused_before_anything_is_written(
    line: RecordEntry, message: str, tmp_path: Path
) -> None:
    source = _source(tmp_path)
    out = _out_dir(tmp_path) / source.name
    with Wheel.open(source) as wheel, WheelWriter(out) as writer:
        with pytest.raises(WheelError, match=message):
            writer.copy_raw(wheel, DATA, record=line)
        # Nothing was written: the writer goes on, and the next copy (no line to compare) is fine.
        entries = {entry.path: entry for entry in wheel.record()}
        writer.copy_raw(wheel, DATA, record=None)
        for name in (f"{DIST_INFO}/METADATA", f"{DIST_INFO}/WHEEL"):
            writer.copy_raw(wheel, name, record=entries[name])
        writer.close(RECORD)
    with Wheel.open(out) as copied:
        copied.verify()


def test_another_accepted_algorithm_is_checked_and_the_output_says_sha256(tmp_path: Path) -> None:
    source = _source(tmp_path)
    out = _out_dir(tmp_path) / source.name
    _copy(source, out, RecordEntry(DATA, "sha512", _digest("sha512", CONTENT), len(CONTENT)))
    with Wheel.open(out) as copied:
        copied.verify()
        line = {entry.path: entry for entry in copied.record()}[DATA]
    assert (line.hash_algorithm, line.hash_digest, line.size) == (
        "sha256",
        _digest("sha256", CONTENT),
        len(CONTENT),
    )

    wrong = RecordEntry(DATA, "sha512", _digest("sha512", b"other"), len(CONTENT))
    with pytest.raises(WheelError, match=r"hash mismatch .* RECORD says sha512="):
        _copy(source, tmp_path / source.name, wrong)
    assert not (tmp_path / source.name).exists()


def test_without_record_lines_the_output_record_is_still_complete(tmp_path: Path) -> None:
    source = _source(tmp_path)
    out = _out_dir(tmp_path) / source.name
    _copy(source, out, use_record=False)
    with zipfile.ZipFile(out) as archive:
        assert archive.testzip() is None
    with Wheel.open(out) as copied:
        copied.verify()
        assert copied.read_member(DATA) == CONTENT


# -- a digest the caller already took of this very member (a repair's analysis) ----------------------


def _copy_with_digest(source: Path, out: Path, digest: bytes) -> None:
    with Wheel.open(source) as wheel, WheelWriter(out) as writer:
        entries = {entry.path: entry for entry in wheel.record()}
        for member in wheel.members:
            if member.name != RECORD:
                given = digest if member.name == DATA else None
                writer.copy_raw(wheel, member.name, record=entries[member.name], content_sha256=given)
        writer.close(RECORD)


def test_a_given_digest_spares_the_inflate_and_gives_the_same_output(tmp_path: Path) -> None:
    source = _source(tmp_path)
    out_dir = _out_dir(tmp_path)
    (out_dir / "a").mkdir()
    (out_dir / "b").mkdir()
    _copy(source, out_dir / "a" / source.name)
    _copy_with_digest(source, out_dir / "b" / source.name, hashlib.sha256(CONTENT).digest())
    assert (out_dir / "b" / source.name).read_bytes() == (out_dir / "a" / source.name).read_bytes()
    with Wheel.open(out_dir / "b" / source.name) as wheel:
        wheel.verify()


def test_a_given_digest_is_what_is_checked_against_record(tmp_path: Path) -> None:
    """The stored bytes are not inflated: a digest that does not match the RECORD line fails the copy
    before the member is written (so the digest is what was checked), and nothing is published."""
    source = _source(tmp_path)
    out_dir = _out_dir(tmp_path)
    with pytest.raises(WheelError, match=rf"{DATA}.*RECORD"):
        _copy_with_digest(source, out_dir / source.name, hashlib.sha256(b"other").digest())
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_given_digest_is_not_taken_where_the_copy_cannot_trust_it(compression: int, tmp_path: Path) -> None:
    """A stored member is read in place anyway, and a RECORD line of another algorithm cannot be
    checked with a sha256: those members are read as before, so a wrong digest changes nothing."""
    source = _source(tmp_path, compression)
    if compression == zipfile.ZIP_DEFLATED:
        line = f"{DATA},sha384={_digest('sha384', CONTENT)},{len(CONTENT)}"
        source = rewrite_wheel(source, replace={RECORD: _with_line(source, line)})
    out_dir = _out_dir(tmp_path)
    _copy_with_digest(source, out_dir / source.name, hashlib.sha256(b"other").digest())
    with Wheel.open(out_dir / source.name) as wheel:
        wheel.verify()
        (entry,) = [e for e in wheel.record() if e.path == DATA]
    assert entry.hash_digest == _digest("sha256", CONTENT)


def _with_line(source: Path, line: str) -> bytes:
    with Wheel.open(source) as wheel:
        text = wheel.read_member(RECORD).decode()
    kept = [row for row in text.splitlines() if not row.startswith(f"{DATA},")]
    return ("\n".join([*kept, line]) + "\n").encode()
