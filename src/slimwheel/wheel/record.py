"""RECORD, a wheel's manifest: one ``path,algorithm=digest,size`` CSV line per file it installs."""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import io
import re
from dataclasses import dataclass

from slimwheel.errors import WheelError

__all__ = [
    "ACCEPTED_HASH_ALGORITHMS",
    "RecordEntry",
    "decode_digest",
    "encode_digest",
    "parse_record",
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

# urlsafe_b64decode silently drops characters outside the alphabet, so check the form first.
_URLSAFE_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")


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


@dataclass(frozen=True)
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


def parse_record(data: bytes, source: str) -> tuple[RecordEntry, ...]:
    """Parse RECORD's bytes. ``source`` names the wheel in the WheelError raised for a malformed line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WheelError(source, f"RECORD is not UTF-8 text (byte {exc.start})") from exc
    # newline="" keeps \r\n for the csv module, which handles quoting across line ends itself.
    reader = csv.reader(io.StringIO(text, newline=""))
    entries: list[RecordEntry] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank lines
            entries.append(_parse_row(row, reader.line_num, source))
    except csv.Error as exc:
        raise WheelError(source, f"RECORD line {reader.line_num} is not valid CSV: {exc}") from exc
    return tuple(entries)


def _parse_row(row: list[str], line: int, source: str) -> RecordEntry:
    if len(row) != 3:
        raise WheelError(source, f"RECORD line {line} has {len(row)} fields, expected 3 (path,hash,size)")
    path, hash_text, size_text = row
    if not path:
        raise WheelError(source, f"RECORD line {line} has an empty path")
    algorithm: str | None = None
    digest: str | None = None
    if hash_text:
        algorithm_text, sep, digest = hash_text.partition("=")
        algorithm = algorithm_text.lower()
        raw = decode_digest(digest) if sep and algorithm else None
        if raw is None:
            raise WheelError(
                source, f"RECORD line {line}: {hash_text!r} is not algorithm=urlsafe-base64-digest"
            )
        if algorithm in ACCEPTED_HASH_ALGORITHMS and len(raw) != hashlib.new(algorithm).digest_size:
            raise WheelError(
                source, f"RECORD line {line}: the {algorithm} digest of {path} has the wrong length"
            )
    size: int | None = None
    if size_text:
        if not size_text.isascii() or not size_text.isdigit():
            raise WheelError(
                source, f"RECORD line {line}: size {size_text!r} of {path} is not a whole number"
            )
        size = int(size_text)
    return RecordEntry(path, algorithm, digest, size)
