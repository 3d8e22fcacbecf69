"""Read wheels in place (local files or seekable remote file objects): members, metadata, RECORD;
write new ones (raw member copies, added files, RECORD) atomically."""

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
from slimwheel.wheel.view import (
    ChunkCallback,
    KeepRanges,
    MemberView,
    MissingRangeError,
    SavedRanges,
    ViewBuilder,
)
from slimwheel.wheel.writer import (
    ZIP_DATE_TIME_MAX,
    ZIP_DATE_TIME_MIN,
    DateTime,
    WheelWriter,
    date_time_from_environment,
)

__all__ = [
    "ACCEPTED_HASH_ALGORITHMS",
    "CHUNK_SIZE",
    "SIGNATURE_FILE_NAMES",
    "SPOOL_MEMORY_LIMIT",
    "VIEW_HEAD",
    "VIEW_TAIL",
    "ZIP_DATE_TIME_MAX",
    "ZIP_DATE_TIME_MIN",
    "ChunkCallback",
    "DateTime",
    "KeepRanges",
    "MemberView",
    "MissingRangeError",
    "RecordEntry",
    "SavedRanges",
    "ViewBuilder",
    "Wheel",
    "WheelMember",
    "WheelWriter",
    "date_time_from_environment",
    "decode_digest",
    "encode_digest",
    "parse_record",
]
