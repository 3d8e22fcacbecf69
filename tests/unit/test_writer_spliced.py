"""``WheelWriter.add_spliced`` hashes the part the old and the new content share once, and still
checks the old content against the source's RECORD and writes the new content's RECORD line."""

from __future__ import annotations

import base64
import hashlib
import random
import zipfile
from pathlib import Path

import pytest

from slimwheel.errors import WheelError
from slimwheel.wheel import Wheel
from slimwheel.wheel.splice import SPLICE_AVAILABLE
from slimwheel.wheel.writer import WheelWriter
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(not SPLICE_AVAILABLE, reason="needs zlib's shared library")

NAME = "pkg/libbig.so"
SIZE = 3 << 20


def _content() -> bytes:
    # Compressible, like a library: words from a small vocabulary.
    rng = random.Random(11)
    words = [bytes(rng.randrange(97, 123) for _ in range(rng.randrange(3, 12))) for _ in range(400)]
    out = bytearray()
    while len(out) < SIZE:
        out += rng.choice(words) + b" "
    return bytes(out[:SIZE])


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _splice(
    tmp_path: Path,
    source: Path,
    patches: list[tuple[int, bytes]],
    appended: bytes,
    content_sha256: bytes | None = None,
) -> tuple[bytes, dict[str, str]]:
    target = tmp_path / "out" / source.name
    target.parent.mkdir(exist_ok=True)
    with Wheel.open(source) as wheel, WheelWriter(target) as writer:
        record = {entry.path: entry for entry in wheel.record()}
        writer.add_spliced(
            wheel,
            NAME,
            patches=patches,
            appended=appended,
            mode=0o755,
            record=record[NAME],
            content_sha256=content_sha256,
        )
        writer.close("pkg-1.0.dist-info/RECORD")
    with zipfile.ZipFile(target) as archive:
        lines = archive.read("pkg-1.0.dist-info/RECORD").decode().splitlines()
        written = archive.read(NAME)
    hashes = {line.split(",")[0]: line.split(",")[1] for line in lines}
    return written, hashes


@pytest.mark.parametrize(
    ("patches", "appended"),
    [
        ([(SIZE - 5000, b"NEW-DYNSTR")], b""),  # near the end, as in a patchelf'd library
        ([(2 << 20, b"X" * 70_000)], b""),  # across chunk boundaries
        ([(0, b"\x7fELF")], b""),  # at the very start: nothing shared
        ([], b"appended table"),  # nothing overwritten: all of the old content is shared
        ([(SIZE - 1, b"!")], b"tail"),
        ([(100, b"a"), (SIZE - 10, b"b")], b""),
    ],
    ids=["near-end", "across-chunks", "at-start", "appended-only", "last-byte", "two"],
)
def test_the_new_content_and_its_record_line(
    tmp_path: Path, patches: list[tuple[int, bytes]], appended: bytes
) -> None:
    content = _content()
    source = make_wheel(tmp_path, "pkg", "1.0", {NAME: content})
    expected = bytearray(content)
    for offset, data in patches:
        expected[offset : offset + len(data)] = data
    expected += appended
    written, hashes = _splice(tmp_path, source, patches, appended)
    assert written == bytes(expected)
    assert hashes[NAME] == f"sha256={_digest(bytes(expected))}"


@pytest.mark.parametrize("where", [1000, SIZE - 3000], ids=["in-the-shared-part", "after-the-patch"])
def test_old_content_that_does_not_match_record_is_refused(tmp_path: Path, where: int) -> None:
    """The shared part is hashed once, for both: a damaged byte there must still fail the source's
    RECORD line, as one after the patch must."""
    content = _content()
    source = make_wheel(tmp_path, "pkg", "1.0", {NAME: content})
    damaged = bytearray(content)
    damaged[where] ^= 1
    # The same member, altered, under the RECORD line of the original.
    tampered = tmp_path / "tampered" / source.name
    tampered.parent.mkdir()
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(tampered, "w", zipfile.ZIP_DEFLATED) as out:
        for info in original.infolist():
            data = bytes(damaged) if info.filename == NAME else original.read(info)
            out.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    with pytest.raises(WheelError, match="RECORD"):
        _splice(tmp_path, tampered, [(SIZE - 2000, b"patch")], b"")


def test_a_given_digest_of_the_old_content_is_what_is_checked(tmp_path: Path) -> None:
    """With the analysis's digest the old content is not hashed again: the right one gives the same
    member and line as hashing does; a wrong one fails against RECORD before anything is written."""
    content = _content()
    source = make_wheel(tmp_path, "pkg", "1.0", {NAME: content})
    patches = [(SIZE - 5000, b"NEW-DYNSTR")]
    hashed = _splice(tmp_path, source, patches, b"tail")
    given = _splice(tmp_path, source, patches, b"tail", hashlib.sha256(content).digest())
    assert given == hashed
    (tmp_path / "out" / source.name).unlink()
    with pytest.raises(WheelError, match="RECORD"):
        _splice(tmp_path, source, patches, b"tail", hashlib.sha256(b"other").digest())
    assert not (tmp_path / "out" / source.name).exists()
