"""Read wheels in place (local files or seekable remote file objects): members, metadata, RECORD."""

from slimwheel.wheel.reader import (
    CHUNK_SIZE,
    SIGNATURE_FILE_NAMES,
    SPOOL_MEMORY_LIMIT,
    VIEW_HEAD,
    VIEW_TAIL,
    Wheel,
    WheelMember,
)
from slimwheel.wheel.record import (
    ACCEPTED_HASH_ALGORITHMS,
    RecordEntry,
    decode_digest,
    encode_digest,
    parse_record,
)
from slimwheel.wheel.view import ChunkCallback, MemberView, MissingRangeError

__all__ = [
    "ACCEPTED_HASH_ALGORITHMS",
    "CHUNK_SIZE",
    "SIGNATURE_FILE_NAMES",
    "SPOOL_MEMORY_LIMIT",
    "VIEW_HEAD",
    "VIEW_TAIL",
    "ChunkCallback",
    "MemberView",
    "MissingRangeError",
    "RecordEntry",
    "Wheel",
    "WheelMember",
    "decode_digest",
    "encode_digest",
    "parse_record",
]
