"""RECORD, a wheel's manifest: one ``path,algorithm=digest,size`` CSV line per file it installs."""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from slimwheel.errors import WheelError

__all__ = [
    "ACCEPTED_HASH_ALGORITHMS",
    "RECORD_HINT",
    "RecordEntry",
    "decode_digest",
    "encode_digest",
    "parse_record",
    "record_line_problem",
    "record_mismatch",
]

# The wheel spec forbids md5 and sha1; these are the remaining ones every Python's hashlib has
# (shake_* need a length and never appear in RECORD).
ACCEPTED_HASH_ALGORITHMS = frozenset(
    {
        "sha224",
        "sha256",
        "sha384",
        "sha512",
        "sha3_224",
        "sha3_256",
        "sha3_384",
        "sha3_512",
        "blake2b",
        "blake2s",
    }
)

_DIGEST_SIZES = {name: hashlib.new(name).digest_size for name in ACCEPTED_HASH_ALGORITHMS}
# urlsafe_b64decode silently drops characters outside the alphabet, so check the form first.
_URLSAFE_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")
# A zip member holds fewer than 2**64 bytes (ZIP64): 20 digits. More is no size (and int() refuses
# strings of over 4300 digits with a ValueError).
MAX_SIZE_DIGITS = 20
_QUOTED_MAX = 60  # a field quoted in an error message is cut to this many characters
# What to do about a wheel whose RECORD does not vouch for its files. Not `wheel unpack`: it checks
# RECORD as it reads, and stops at the first mismatch or malformed line.
RECORD_HINT = (
    "rebuild the wheel; if its files are known to be right, unzip it into a folder and run "
    "`wheel pack` on that folder, which writes a RECORD that matches them"
)


def encode_digest(raw: bytes) -> str:
    """Raw digest bytes -> the urlsafe base64 form without padding that RECORD uses."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_digest(text: str) -> bytes | None:
    """RECORD's digest text -> raw bytes; None if it is not urlsafe base64."""
    if not _URLSAFE_BASE64.fullmatch(text):
        return None
    unpadded = text.rstrip("=")
    try:
        return base64.urlsafe_b64decode(unpadded + "=" * (-len(unpadded) % 4))
    except (binascii.Error, ValueError):
        return None


@dataclass(frozen=True, slots=True)  # slots: a RECORD may have 100,000 lines
class RecordEntry:
    """One RECORD line. RECORD lists itself (and may list signatures) without hash and size."""

    path: str
    hash_algorithm: str | None  # lower case, e.g. "sha256"
    hash_digest: str | None  # urlsafe base64 without padding, as RECORD spells it
    size: int | None

    @property
    def sha256_hex(self) -> str | None:
        """The digest in hex when the algorithm is sha256 (None otherwise, or if it is malformed)."""
        if self.hash_algorithm != "sha256" or self.hash_digest is None:
            return None
        raw = decode_digest(self.hash_digest)
        if raw is None or len(raw) != hashlib.sha256().digest_size:
            return None
        return raw.hex()

    def digest_matches(self, raw: bytes) -> bool:
        """Whether ``raw`` (a digest computed with ``hash_algorithm``) is the one RECORD names."""
        return self.hash_digest is not None and encode_digest(raw) == self.hash_digest.rstrip("=")


def parse_record(
    data: bytes | Iterable[bytes],
    source: str,
    *,
    max_entries: int | None = None,
    shared_path: Callable[[str], str] | None = None,
) -> tuple[RecordEntry, ...]:
    """Parse RECORD's bytes, whole or in pieces as they are inflated (the text is never held whole:
    20 MB for a RECORD of 200,000 files). ``source`` names the wheel in the WheelError raised for a
    malformed line or text that is not UTF-8.

    ``max_entries``: more lines than this (blank ones aside) is a WheelError, raised as soon as the
    line after the last allowed one is read: millions of tiny lines (``a,,``) would otherwise cost
    gigabytes of RecordEntry objects.

    ``shared_path``: given a line's path, an equal string already held (the member's name), so that
    a wheel of 100,000 files keeps each path once, not once per member and once per RECORD line.
    """
    reader = csv.reader(_lines([data] if isinstance(data, bytes) else data, source))
    entries: list[RecordEntry] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank lines
            entry = _parse_row(row, reader.line_num, source, shared_path)
            if max_entries is not None and len(entries) >= max_entries:
                raise WheelError(
                    source,
                    f"RECORD has more than {max_entries} lines, more than the wheel could list "
                    f"(line {reader.line_num} and on)",
                )
            entries.append(entry)
    except csv.Error as exc:
        raise WheelError(source, f"RECORD line {reader.line_num} is not valid CSV: {exc}") from exc
    return tuple(entries)


_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _lines(pieces: Iterable[bytes], source: str) -> Iterator[str]:
    """The lines of the text in ``pieces``, with their ends, split as ``io.StringIO(text,
    newline="")`` splits it (at \r\n, \r or \n: the csv module handles quoting across line ends
    itself), each decoded as it is reached. The line ends are bytes no other UTF-8 character holds,
    so the lines are UTF-8 exactly when the whole text is; a line cut between two pieces, or a \r
    that may be followed by \n, waits for the next piece."""
    pending = b""
    at = 0  # where ``pending`` starts in the text, for the error's byte offset
    for piece in pieces:
        data = pending + piece if pending else piece
        taken = 0
        for match in _LINE.finditer(data):
            if match.end() == len(data) and not data.endswith(b"\n"):
                break  # no line end yet, or a \r whose \n may come next
            yield _decoded(match.group(), at + match.start(), source)
            taken = match.end()
        pending = data[taken:]
        at += taken
    for match in _LINE.finditer(pending):
        yield _decoded(match.group(), at + match.start(), source)


def _decoded(line: bytes, at: int, source: str) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WheelError(source, f"RECORD is not UTF-8 text (byte {at + exc.start})") from exc


def _parse_row(
    row: list[str], line: int, source: str, shared_path: Callable[[str], str] | None
) -> RecordEntry:
    if len(row) != 3:
        raise WheelError(source, f"RECORD line {line} has {len(row)} fields, expected 3 (path,hash,size)")
    path, hash_text, size_text = row
    if shared_path is not None:
        path = shared_path(path)
    quoted_path = _quoted(path, repr_=False)
    if not path:
        raise WheelError(source, f"RECORD line {line} has an empty path")
    algorithm: str | None = None
    digest: str | None = None
    if hash_text:
        algorithm_text, sep, digest = hash_text.partition("=")
        algorithm = sys.intern(algorithm_text.lower())  # one "sha256" for every line
        length = _digest_length(digest) if sep and algorithm else None
        if length is None:
            raise WheelError(source, _malformed_hash(line, quoted_path, hash_text), hint=RECORD_HINT)
        if algorithm in _DIGEST_SIZES and length != _DIGEST_SIZES[algorithm]:
            raise WheelError(
                source,
                f"RECORD line {line}: the {algorithm} digest of {quoted_path} has the wrong length",
                hint=RECORD_HINT,
            )
    size: int | None = None
    if size_text:
        if not size_text.isascii() or not size_text.isdigit():
            raise WheelError(
                source,
                f"RECORD line {line}: size {_quoted(size_text)} of {quoted_path} is not a whole number",
            )
        digits = size_text.lstrip("0") or "0"
        if len(digits) > MAX_SIZE_DIGITS:
            raise WheelError(
                source,
                f"RECORD line {line}: size {_quoted(size_text)} of {quoted_path} has {len(digits)} "
                "digits, too big for any file (a zip member holds fewer than 2**64 bytes)",
            )
        size = int(digits)
    return RecordEntry(path, algorithm, digest, size)


def _digest_length(text: str) -> int | None:
    """How many bytes ``decode_digest(text)`` gives, or None where it gives None, without decoding:
    checked for each of a RECORD's lines (100,000 of them in a big wheel)."""
    if not _URLSAFE_BASE64.fullmatch(text):
        return None
    characters = len(text.rstrip("="))
    if characters % 4 == 1:  # no whole byte in the last character: base64 refuses it
        return None
    return characters * 3 // 4


def _malformed_hash(line: int, quoted_path: str, hash_text: str) -> str:
    problem = f"RECORD line {line}: {_quoted(hash_text)} is not algorithm=urlsafe-base64-digest"
    bare = decode_digest(hash_text) if "=" not in hash_text.rstrip("=") else None
    if bare is not None and len(bare) in _DIGEST_SIZES.values():
        # mlx-cuda 0.30.0 lists mlx/lib/libmlx.so this way: a digest, with no "sha256=" before it.
        problem += f" (the hash of {quoted_path} names no algorithm)"
    return problem


def _quoted(text: str, *, repr_: bool = True) -> str:
    """A field for an error message: its repr (or itself), cut short when it is long."""
    if len(text) > _QUOTED_MAX:
        text = f"{text[:_QUOTED_MAX]}..."
    return repr(text) if repr_ else text


def record_line_problem(record: RecordEntry, file_size: int) -> str | None:
    """What makes a member's RECORD line unusable before its content is read (no hash, a hash the
    wheel specification does not accept, a size other than the member's), or None."""
    name = record.path
    if record.hash_algorithm is None or record.hash_digest is None:
        return f"RECORD has no hash for {name}"
    if record.hash_algorithm not in ACCEPTED_HASH_ALGORITHMS:
        return (
            f"RECORD hashes {name} with {record.hash_algorithm}, which the wheel specification does not "
            "accept (sha256 or stronger)"
        )
    if record.size is not None and record.size != file_size:
        return f"size mismatch for {name}: RECORD says {record.size} bytes, the wheel holds {file_size}"
    return None


def record_mismatch(label: str, record: RecordEntry, digest: bytes) -> WheelError:
    """The error for content of ``label``'s member ``record.path`` whose digest is ``digest``,
    not the one its RECORD line gives."""
    algorithm = record.hash_algorithm
    return WheelError(
        label,
        f"hash mismatch for {record.path}: RECORD says {algorithm}={record.hash_digest}, the content "
        f"hashes to {algorithm}={encode_digest(digest)} (damaged or altered after it was built)",
        hint=RECORD_HINT,
    )
