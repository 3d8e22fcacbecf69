"""Write a wheel: members copied raw from another wheel or added from bytes and files, RECORD last.

A raw copy moves a member's stored bytes as they are (no recompressing), streamed in CHUNK_SIZE
pieces, keeping its compression method, CRC-32, sizes, external attributes and date_time: a 1 GB
library costs one read and one write. It is verified on the way: the stored bytes are inflated as they
pass (isal when installed) to check their CRC-32 and to hash them against the source's RECORD line, so
a damaged or altered member is never published, and every RECORD line written is computed from the
bytes (sha256 and size), never copied. New content is deflated here with the standard library's zlib
(deterministic for a given zlib build), hashed for RECORD while it is written.

The archive is written to a temporary file next to the final one (``.<name>.<random>.tmp``) and only
renamed onto the final path (after an fsync) when the ``with`` block ends cleanly after ``close``:
a failure at any point leaves no file under the final name, and an older file there untouched. The
temporary file is locked (``flock``) while it is written; one that a killed writer left is free, and
the next writer into that folder removes it (``slimwheel._scratch``).

Local headers are built by ``zipfile.ZipInfo.FileHeader``, and the central directory (zip64 records
included, when members or offsets pass 2 GiB or members number over 65,535) is packed entry by entry
as zipfile would write it (``slimwheel.wheel.central``), so no ``ZipInfo`` is kept per member; this
module decides what goes where. The output is
reproducible: the same calls (same inputs, date_time and compresslevel) give the same bytes, since
every entry has a fixed creator system (Unix), no extra fields (no extended timestamps) and no
comment, and no data descriptors are used.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import itertools
import os
import re
import secrets
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Protocol, cast

from slimwheel._scratch import lock_new_file, release, remove_abandoned_files
from slimwheel.errors import InputError, UsageError, WheelError
from slimwheel.wheel._pieces import PieceBuffer
from slimwheel.wheel.ahead import HashBehind
from slimwheel.wheel.central import ZIP64_LIMIT, CentralDirectoryWriter
from slimwheel.wheel.deflate import SMALL_CONTENT, deflate_pieces
from slimwheel.wheel.inflate import InflateError, check_stored, check_whole, crc32, inflate
from slimwheel.wheel.reader import CHUNK_SIZE, Wheel, WheelMember, _hostile_name_problem
from slimwheel.wheel.record import (
    RECORD_HINT,
    RecordEntry,
    encode_digest,
    record_line_problem,
    record_mismatch,
)
from slimwheel.wheel.splice import SPLICE_AVAILABLE, Appended, appended_pieces, splice_deflate

__all__ = [
    "ZIP_DATE_TIME_MAX",
    "ZIP_DATE_TIME_MIN",
    "DateTime",
    "WheelWriter",
    "date_time_from_environment",
]

DateTime = tuple[int, int, int, int, int, int]  # year, month, day, hour, minute, second, as zipfile has it

# What a zip (MS-DOS) timestamp can hold: 7 bits of years from 1980, seconds in steps of two.
ZIP_DATE_TIME_MIN: DateTime = (1980, 1, 1, 0, 0, 0)
ZIP_DATE_TIME_MAX: DateTime = (2107, 12, 31, 23, 59, 58)
_UTC = datetime.timezone.utc
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_MIN_SECONDS = int((datetime.datetime(*ZIP_DATE_TIME_MIN, tzinfo=_UTC) - _EPOCH).total_seconds())
_MAX_SECONDS = int((datetime.datetime(*ZIP_DATE_TIME_MAX, tzinfo=_UTC) - _EPOCH).total_seconds())
_WHOLE_NUMBER = re.compile(r"-?[0-9]+")

_UNIX_CREATOR = 3  # create_system: external_attr's high 16 bits are a Unix mode (installers read them)
# General purpose bits a raw copy keeps: 1 and 2 are the compression options (LZMA's bit 1 says the
# data ends with an end-of-stream marker). Bit 3 (data descriptor) is dropped since the local header
# written here holds the sizes; zipfile sets bit 11 (UTF-8 name) itself from the name.
_KEPT_FLAG_BITS = 0x6
# zipfile's own rule for a member whose compressed size is not known before it is written: deflate
# can grow incompressible data a little, so give it zip64 sizes well before 4 GiB.
_ZIP64_MARGIN = 1.05
_CHECKED_WHOLE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # what check_whole reads
_RECORD_PATH = re.compile(r"[^/]+\.dist-info/RECORD")
_TEMPORARY_ATTEMPTS = 16  # random names tried before giving up (a clash is already unlikely)
# The temporary files of wheels, as _create_temporary names them: those left by killed writers go.
_ABANDONED_TEMPORARY = re.compile(r"\..+\.whl\.[0-9a-f]{12}\.tmp")


def date_time_from_environment(environ: Mapping[str, str]) -> DateTime | None:
    """The date_time ``SOURCE_DATE_EPOCH`` asks for (UTC), or None when it is unset or empty.

    Pass ``os.environ`` (or any mapping): the writer never reads the environment itself. Values
    outside what a zip can hold are clamped to 1980-01-01 00:00:00 and 2107-12-31 23:59:58. A value
    that is not a whole number of seconds is a UsageError, as the reproducible-builds convention asks
    (a build should fail rather than silently ignore it).
    """
    text = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not text:
        return None
    if not _WHOLE_NUMBER.fullmatch(text):
        raise UsageError(
            f"SOURCE_DATE_EPOCH={text!r} is not a whole number of seconds",
            hint="set it to a Unix timestamp, or unset it",
        )
    seconds = min(max(int(text), _MIN_SECONDS), _MAX_SECONDS)
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    return (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


class WheelWriter:
    """Write a wheel file; use it as a context manager, and call ``close(record_path)`` inside it.

    ::

        with WheelWriter(out_path, date_time=when) as writer:
            writer.copy_raw(source, "pkg/lib.so", record=source_record_entry)
            writer.add_bytes("pkg-1.0.dist-info/METADATA", metadata)
            writer.close("pkg-1.0.dist-info/RECORD")

    ``close`` writes RECORD (one line per member, in member order, then ``record_path,,``) and the
    central directory; leaving the ``with`` block cleanly then fsyncs the temporary file and renames
    it onto ``path``. Leaving it by an exception, or without having called ``close`` (a ValueError
    then), removes the temporary file instead. A write that fails halfway (a source wheel that ends
    early, a full disk) breaks the writer: every later call raises ValueError.

    ``date_time`` stamps added members and RECORD (copied members keep their own); None means
    1980-01-01 00:00:00. Callers choose it explicitly, typically
    ``date_time_from_environment(os.environ)`` and otherwise the newest date_time among the input
    wheel's members, so the same input gives the same bytes.

    Errors: a member name that is unsafe (empty, absolute, with a ``..`` component, a backslash or a
    NUL) or already written is a WheelError naming ``path``, as is a failed write or rename (OSError
    underneath); a file ``add_file`` cannot read is an InputError naming that file; misuse (any call
    outside the ``with`` block, after ``close`` or after a failed write, a RECORD entry for another
    path, a malformed ``record_path``) is a ValueError.
    """

    def __init__(
        self,
        path: Path,
        *,
        date_time: DateTime | None = None,
        compresslevel: int = 6,
    ) -> None:
        if not (compresslevel == -1 or 0 <= compresslevel <= 9):
            raise ValueError(f"compresslevel must be -1 or 0..9, not {compresslevel}")
        self._path = Path(path)
        self._date_time = _clamp_date_time(date_time or ZIP_DATE_TIME_MIN)
        self._compresslevel = compresslevel
        self._temporary: Path | None = None
        self._file: BinaryIO | None = None
        self._central = CentralDirectoryWriter()
        self._names: set[str] = set()
        self._record_lines = _RecordLines()
        self._closed = False  # close() wrote RECORD and the central directory
        self._broken: str | None = None  # why the temporary file can no longer become a wheel

    @property
    def path(self) -> Path:
        """The final path."""
        return self._path

    @property
    def date_time(self) -> DateTime:
        """The date_time of added members and RECORD."""
        return self._date_time

    # -- the with block ----------------------------------------------------------------------------

    def __enter__(self) -> WheelWriter:
        if self._temporary is not None:
            raise ValueError(f"a WheelWriter for {self._path} can be entered only once")
        self._temporary, self._file = self._create_temporary()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if exc_type is None and self._closed:
                self._commit()
                return
            self._discard()
            if exc_type is None:
                raise ValueError(
                    f"the with block writing {self._path} ended without close(record_path): nothing was "
                    "written"
                )
        finally:
            self._let_go_of_buffers()

    # -- members -----------------------------------------------------------------------------------

    def copy_raw(
        self, source: Wheel, name: str, *, record: RecordEntry | None, content_sha256: bytes | None = None
    ) -> None:
        """Copy member ``name`` of ``source`` as stored: same compressed bytes, compression method,
        CRC-32, sizes, external attributes, compression option bits and date_time.

        The copy is verified as it streams, never recompressed: the stored bytes are inflated on the
        way to check their CRC-32 and size against the central directory and to hash them. ``record``
        is the source's RECORD line for the member: the content must match it (an accepted hash, the
        same digest, the same size), else a WheelError naming the source wheel and the member. None
        means the source's RECORD has no line to compare (a directory entry; or a caller that checked
        the member otherwise): the content is still checked against its CRC-32.

        ``content_sha256``: the sha256 of the member's content, from a reader that inflated this very
        file's member whole and checked its CRC-32 (a repair's analysis: ``Wheel.identity`` tells it
        is the same file). A deflated member whose ``record`` line is sha256 is then checked against
        it before anything is written and copied without inflating; else it is ignored.

        The RECORD line written is computed from the content, ``sha256=<digest>,<size>``, whatever
        algorithm the source's line used (none for a directory entry). A failure before anything is
        written (a bad local header, a RECORD line that cannot match; any failure of a member whose
        stored bytes come in one read, 256 KiB or less, as they are checked before they are
        written) leaves the writer usable; one found while a bigger member streams (a bad CRC, a
        hash mismatch) breaks it, as the temporary file then holds a member that must not be
        published.
        """
        self._check_open()
        if record is not None and record.path != name:
            raise ValueError(f"the RECORD entry given for {name!r} is for {record.path!r}")
        self._check_name(name)
        member = source.member(name)
        label = _source_label(source)
        if record is not None:
            problem = record_line_problem(record, member.file_size)
            if problem is not None:
                raise WheelError(label, problem, hint=RECORD_HINT)
        info = self._new_info(name, _clamp_date_time(member.date_time), member.external_attr)
        info.compress_type = member.compress_type
        info.flag_bits = member.flag_bits & _KEPT_FLAG_BITS
        info.CRC = member.crc
        info.compress_size = member.compress_size
        info.file_size = member.file_size
        raw = source.iter_raw_chunks(name, CHUNK_SIZE)
        # The first read checks the source's local header: a bad one fails before anything is
        # written, leaving the writer usable.
        first = next(raw, b"")
        if (
            content_sha256 is not None
            and record is not None
            and record.hash_algorithm == "sha256"
            and member.compress_type == zipfile.ZIP_DEFLATED
        ):
            if not record.digest_matches(content_sha256):
                raise record_mismatch(label, record, content_sha256)
            with self._writing(name) as file:
                info.header_offset = file.tell()
                file.write(info.FileHeader())
                for _ in _written(file, first, raw):
                    pass
            self._register(info, RecordEntry(name, "sha256", encode_digest(content_sha256), member.file_size))
            return
        hashers = [hashlib.sha256()]
        if record is not None and record.hash_algorithm not in (None, "sha256"):
            hashers.append(hashlib.new(record.hash_algorithm))
        if len(first) == member.compress_size and member.compress_type in _CHECKED_WHOLE:
            # All of it in hand (most members are small files): checked before anything is written.
            try:
                deflated = member.compress_type == zipfile.ZIP_DEFLATED
                content = check_whole(first, deflated=deflated, size=member.file_size, crc=member.crc)
            except InflateError as exc:
                raise WheelError(label, f"cannot copy {name}: {exc}") from exc
            for hasher in hashers:
                hasher.update(content)
            if record is not None and not record.digest_matches(hashers[-1].digest()):
                raise record_mismatch(label, record, hashers[-1].digest())
            with self._writing(name) as file:
                info.header_offset = file.tell()
                file.write(info.FileHeader())
                file.write(first)
        else:
            self._copy_streaming(
                source, member, info, itertools.chain([first], raw), hashers=hashers, record=record
            )
        written = (
            None
            if member.is_dir
            else RecordEntry(name, "sha256", encode_digest(hashers[0].digest()), member.file_size)
        )
        self._register(info, written)

    def _copy_streaming(
        self,
        source: Wheel,
        member: WheelMember,
        info: zipfile.ZipInfo,
        raw: Iterator[bytes],
        *,
        hashers: list[hashlib._Hash],
        record: RecordEntry | None,
    ) -> None:
        """copy_raw's stored bytes written as they are read, their content hashed as it passes."""
        label = _source_label(source)
        with self._writing(member.name) as file:
            info.header_offset = file.tell()
            # Sizes are known: FileHeader adds zip64 sizes exactly when they pass 4 GiB.
            file.write(info.FileHeader())
            for chunk in _content_of_raw_copy(source, member, _written(file, next(raw, b""), raw), label):
                for hasher in hashers:
                    hasher.update(chunk)
            if record is not None and not record.digest_matches(hashers[-1].digest()):
                raise record_mismatch(label, record, hashers[-1].digest())

    def add_bytes(self, name: str, data: bytes, *, mode: int = 0o644) -> None:
        """Add a file with content ``data`` and permission bits ``mode``, deflated."""
        self._check_open()
        self._check_name(name, file=True)
        view = memoryview(data)
        chunks = (view[start : start + CHUNK_SIZE] for start in range(0, len(view), CHUNK_SIZE))
        self._add(name, chunks, len(data), _check_mode(mode))

    def add_file(self, name: str, path: Path, *, mode: int | None = None) -> None:
        """Add the regular file at ``path`` (streamed, deflated).

        With ``mode`` None the permission bits become 0o755 when the file has any executable bit and
        0o644 otherwise: the executable bit is kept, the umask that created the file is not (so the
        output does not depend on it).
        """
        self._check_open()
        self._check_name(name, file=True)
        file_path = Path(path)
        try:
            # Checked before opening: opening a FIFO for reading would wait for a writer.
            if not stat.S_ISREG(file_path.stat().st_mode):
                raise InputError(str(file_path), "not a regular file")
            handle = file_path.open("rb")
        except OSError as exc:
            raise InputError(str(file_path), f"cannot open: {exc.strerror or exc}") from exc
        with handle:
            try:
                status = os.fstat(handle.fileno())  # the file opened, should it have been replaced
            except OSError as exc:
                raise InputError(str(file_path), f"cannot read: {exc.strerror or exc}") from exc
            if mode is None:
                mode = 0o755 if status.st_mode & 0o111 else 0o644
            chunks = _read_chunks(handle, file_path, status.st_size)
            # A big file (a library patchelf edited) is deflated in pieces on two threads.
            self._add(name, chunks, status.st_size, _check_mode(mode), fast=status.st_size > SMALL_CONTENT)

    def add_stream(self, name: str, chunks: Iterable[bytes], size: int, *, mode: int) -> None:
        """Add a file whose content ``chunks`` yields (``size`` bytes, else a ValueError and a broken
        writer), deflated by ``slimwheel.wheel.deflate`` (ISA-L on two threads): for big content
        made on the fly, such as a library edited as it streams out of another wheel (content of
        ``SMALL_CONTENT`` bytes or less with zlib's level 6, smaller). Memory stays at a few pieces of
        4 MiB whatever the size."""
        self._check_open()
        self._check_name(name, file=True)
        self._add(name, _exactly(chunks, size, name), size, _check_mode(mode), fast=True)

    def add_spliced(
        self,
        source: Wheel,
        name: str,
        *,
        patches: Sequence[tuple[int, bytes]],
        appended: Appended,
        mode: int,
        record: RecordEntry | None = None,
        on_content: Callable[[bytes | memoryview], None] | None = None,
        content_sha256: bytes | None = None,
    ) -> None:
        """Add member ``name`` of ``source`` with ``patches`` ((offset, bytes), later ones winning
        where they overlap) written over its content and ``appended`` after it, re-deflating only
        around the changes (``slimwheel.wheel.splice``): every other compressed bit is the
        source's, so the member comes out the size it was and costs an inflate, not a deflate.

        Only for a deflated member, and only where ``SPLICE_AVAILABLE``. The source's CRC-32 and
        size are checked as it streams, and its content against ``record`` (its line in the source's
        RECORD) when given: a mismatch is a WheelError naming the source (and breaks the writer, as
        a member is half written). ``on_content`` sees the new content in order, once.
        ``content_sha256``: the source member's content sha256, as for :meth:`copy_raw`: with a
        sha256 ``record`` it is checked against it before anything is written, and the old content
        is then not hashed again (only the new, for the new RECORD line)."""
        self._check_open()
        self._check_name(name, file=True)
        if record is not None and record.path != name:
            raise ValueError(f"the RECORD entry given for {name!r} is for {record.path!r}")
        member = source.member(name)
        if not SPLICE_AVAILABLE or member.compress_type != zipfile.ZIP_DEFLATED:
            raise ValueError(
                f"{name} cannot be spliced (deflated: {member.compress_type == 8}, zlib loaded: "
                f"{SPLICE_AVAILABLE}); add its content with add_stream"
            )
        label = _source_label(source)
        if record is not None:
            problem = record_line_problem(record, member.file_size)
            if problem is not None:
                raise WheelError(label, problem, hint=RECORD_HINT)
        algorithm = record.hash_algorithm if record else None
        if content_sha256 is not None and record is not None and algorithm == "sha256":
            if not record.digest_matches(content_sha256):
                raise record_mismatch(label, record, content_sha256)
            algorithm = None  # proven: the splice hashes the new content only
        # The old and the new content agree up to the first patch (patchelf'd libraries keep their
        # tables near the end: most of a file): with sha256 on both sides, that part is hashed once.
        common = min((offset for offset, data in patches if data), default=member.file_size)
        twin = _TwinHash(common) if algorithm == "sha256" else None
        original = None if algorithm is None or twin is not None else hashlib.new(algorithm)
        raw = source.iter_raw_chunks(name, CHUNK_SIZE)
        first = next(raw, b"")  # reads the source's local header: a bad one leaves the writer usable

        def produce(consume: Callable[[bytes | memoryview], None]) -> Iterator[bytes]:
            def seen(chunk: bytes | memoryview) -> None:
                consume(chunk)
                if on_content is not None:
                    on_content(chunk)

            try:
                yield from splice_deflate(
                    itertools.chain([first], raw),
                    size=member.file_size,
                    crc=member.crc,
                    patches=patches,
                    appended=appended,
                    on_content=seen if on_content is not None else consume,
                    on_original=twin.original if twin else original.update if original else None,
                )
            except InflateError as exc:
                raise WheelError(label, f"cannot copy {name}: {exc}") from exc
            digest = twin.original_digest() if twin else original.digest() if original else None
            if record is not None and digest is not None and not record.digest_matches(digest):
                raise record_mismatch(label, record, digest)

        size = member.file_size + sum(map(len, appended_pieces(appended)))
        if twin is not None:
            self._add_deflated(name, produce, size, _check_mode(mode), content_hash=twin)
            return
        # The new content hashed on a thread: this one writes and splices meanwhile.
        with HashBehind() as new_content_hash:
            self._add_deflated(name, produce, size, _check_mode(mode), content_hash=new_content_hash)

    def close(self, record_path: str) -> None:
        """Write RECORD as the last member (``record_path``, e.g. ``pkg-1.0.dist-info/RECORD``) and the
        central directory. The file appears under its final name when the ``with`` block ends."""
        self._check_open()
        if not _RECORD_PATH.fullmatch(record_path):
            raise ValueError(f"{record_path!r} is not a RECORD path (<name>-<version>.dist-info/RECORD)")
        self._check_name(record_path, file=True)
        self._record_lines.add(RecordEntry(record_path, None, None, None))
        # RECORD's text is deflated from the pieces it was written in, never joined whole.
        lines = self._record_lines
        self._add(record_path, lines.pieces(), len(lines), 0o644, record=False)
        with self._writing("the central directory") as file:
            self._central.write(file)
        self._let_go_of_buffers()
        self._closed = True

    # -- internals ---------------------------------------------------------------------------------

    def _add(
        self,
        name: str,
        chunks: Iterable[bytes | memoryview],
        size: int,
        mode: int,
        *,
        record: bool = True,
        fast: bool = False,
    ) -> None:
        """Deflate ``chunks`` into a new member, hashing them for its RECORD line (unless not
        ``record``). ``size``, the content's size, decides zip64 before anything is written.
        ``fast``: deflate with ``deflate_pieces`` instead of zlib at ``compresslevel``."""

        def produce(consume: Callable[[bytes | memoryview], None]) -> Iterator[bytes]:
            if fast:
                yield from deflate_pieces(_seen(chunks, consume), small=size <= SMALL_CONTENT)
                return
            compressor = zlib.compressobj(self._compresslevel, zlib.DEFLATED, -zlib.MAX_WBITS)
            for chunk in chunks:
                consume(chunk)
                yield compressor.compress(chunk)
            yield compressor.flush()

        self._add_deflated(name, produce, size, mode, record=record)

    def _add_deflated(
        self,
        name: str,
        produce: Callable[[Callable[[bytes | memoryview], None]], Iterable[bytes]],
        size: int,
        mode: int,
        *,
        record: bool = True,
        content_hash: _ContentHash | None = None,
    ) -> None:
        """Write a deflated member whose raw deflate data ``produce(consume)`` yields, calling
        ``consume`` with the content in order (hashed here for the RECORD line and the CRC-32, by
        ``content_hash`` when given: a sha256 that may already hold part of it)."""
        info = self._new_info(name, self._date_time, (stat.S_IFREG | mode) << 16)
        info.compress_type = zipfile.ZIP_DEFLATED
        zip64 = size * _ZIP64_MARGIN > ZIP64_LIMIT
        hasher: _ContentHash = content_hash if content_hash is not None else hashlib.sha256()
        crc = 0
        length = 0

        def consume(chunk: bytes | memoryview) -> None:
            nonlocal crc, length
            hasher.update(chunk)
            crc = crc32(chunk, crc)
            length += len(chunk)

        with self._writing(name) as file:
            info.header_offset = file.tell()
            file.write(info.FileHeader(zip64))  # a placeholder of the final header's length
            data_start = file.tell()
            for piece in produce(consume):
                file.write(piece)
            if length != size:
                raise ValueError(f"the content of {name} holds {length} bytes, not the {size} announced")
            end = file.tell()
            info.CRC = crc
            info.file_size = length
            info.compress_size = end - data_start
            file.seek(info.header_offset)
            file.write(info.FileHeader(zip64))
            file.seek(end)
        entry = RecordEntry(name, "sha256", encode_digest(hasher.digest()), length)
        self._register(info, entry if record else None)

    def _new_info(self, name: str, date_time: DateTime, external_attr: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=date_time)
        info.create_system = _UNIX_CREATOR
        info.external_attr = external_attr
        info.CRC = 0  # ZipInfo leaves it unset until a member is written; FileHeader needs it
        return info

    def _register(self, info: zipfile.ZipInfo, record: RecordEntry | None) -> None:
        # Both buffers may write to their temporary files (a wheel of very many files).
        with self._writing(f"the entries of {info.filename}"):
            self._central.add(info)  # info goes: nothing is kept per member but its entry's bytes
            if record is not None:
                self._record_lines.add(record)
        self._names.add(info.filename)

    def _let_go_of_buffers(self) -> None:
        self._central.close()
        self._record_lines.close()

    def _check_open(self) -> None:
        if self._file is None:
            state = "finished" if self._temporary is not None else "not entered yet"
            raise ValueError(f"the WheelWriter for {self._path} is {state}: use it inside its with block")
        if self._closed:
            raise ValueError(f"{self._path} is closed: nothing can be added after close()")
        if self._broken is not None:
            raise ValueError(f"an earlier write to {self._path} failed ({self._broken}); start again")

    def _check_name(self, name: str, *, file: bool = False) -> None:
        problem = _hostile_name_problem(name)
        if problem is None and name in self._names:
            problem = "the wheel already has a member of that name"
        if problem is None and file and name.endswith("/"):
            problem = "a file name cannot end with '/'"
        if problem is not None:
            raise WheelError(str(self._path), f"cannot add member {name!r}: {problem}")

    @contextmanager
    def _writing(self, what: str) -> Iterator[BinaryIO]:
        """The temporary file, for writing ``what``; any failure inside breaks the writer, since the
        file then ends with part of a member. OSErrors become WheelErrors naming the final path."""
        assert self._file is not None  # every caller ran _check_open
        try:
            yield self._file
        except OSError as exc:
            self._broken = f"writing {what}"
            raise WheelError(str(self._path), f"cannot write {what}: {exc.strerror or exc}") from exc
        except BaseException as exc:
            self._broken = f"writing {what}: {type(exc).__name__}"
            raise

    def _create_temporary(self) -> tuple[Path, BinaryIO]:
        # Not tempfile.mkstemp: its files are mode 0o600, where a wheel should get the usual 0o666
        # less the umask, which os.open applies.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_BINARY", 0)
        # The temporary file is locked while it is written (see slimwheel._scratch): those of writers
        # that were killed are free, and removed here.
        remove_abandoned_files(self._path.parent, _ABANDONED_TEMPORARY)
        for _ in range(_TEMPORARY_ATTEMPTS):
            candidate = self._path.parent / f".{self._path.name}.{secrets.token_hex(6)}.tmp"
            try:
                descriptor = os.open(candidate, flags, 0o666)
                if not lock_new_file(descriptor, candidate):
                    os.close(descriptor)  # taken for a leftover in the instant before the lock
                    continue
            except FileExistsError:
                continue
            except OSError as exc:
                raise WheelError(
                    str(self._path), f"cannot create a temporary file next to it: {exc.strerror or exc}"
                ) from exc
            return candidate, os.fdopen(descriptor, "wb")
        raise WheelError(str(self._path), "cannot create a temporary file next to it: every name was taken")

    def _commit(self) -> None:
        # Both set by __enter__, which every path here follows.
        assert self._file is not None
        assert self._temporary is not None
        try:
            self._file.flush()
            os.fsync(self._file.fileno())  # the data is on disk before the name points at it
            self._temporary.replace(self._path)  # atomic: the old file or the new one, never half
            release(self._file.fileno())
            self._file.close()  # lets go of the lock, once the temporary name is gone
        except OSError as exc:
            self._discard()
            raise WheelError(str(self._path), f"cannot write: {exc.strerror or exc}") from exc
        except BaseException:
            self._discard()
            raise
        self._file = None
        _sync_directory(self._path.parent)

    def _discard(self) -> None:
        if self._temporary is not None:
            with suppress(OSError):
                self._temporary.unlink(missing_ok=True)  # while still locked: never taken for a leftover
        if self._file is not None:
            with suppress(OSError):  # already failing, or a file never to be used
                release(self._file.fileno())
                self._file.close()
            self._file = None


def _source_label(source: Wheel) -> str:
    """How errors name a source wheel: its path when it was opened from one."""
    return str(source.local_path) if source.local_path is not None else source.filename


def _written(file: BinaryIO, first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """Write a member's stored bytes to ``file`` as they pass."""
    yield from _write_through(file, first)
    for chunk in rest:
        yield from _write_through(file, chunk)


def _write_through(file: BinaryIO, chunk: bytes) -> Iterator[bytes]:
    if chunk:
        file.write(chunk)
        yield chunk


def _content_of_raw_copy(
    source: Wheel, member: WheelMember, raw: Iterator[bytes], label: str
) -> Iterator[bytes]:
    """The content of a member whose stored bytes ``raw`` yields (and writes), checked against its
    CRC-32 and size: inflated here for a deflated member, passed through for a stored one. zipfile
    inflates bzip2 and LZMA members, rare in wheels: for those the stored bytes are copied first,
    then read a second time for their content."""
    try:
        if member.compress_type == zipfile.ZIP_STORED:
            yield from check_stored(raw, size=member.file_size, crc=member.crc)
        elif member.compress_type == zipfile.ZIP_DEFLATED:
            yield from inflate(raw, size=member.file_size, crc=member.crc, chunk_size=CHUNK_SIZE)
        else:
            for _ in raw:
                pass
            yield from source.iter_member_chunks(member.name)
    except InflateError as exc:
        raise WheelError(label, f"cannot copy {member.name}: {exc}") from exc


def _seen(
    chunks: Iterable[bytes | memoryview], consume: Callable[[bytes | memoryview], None]
) -> Iterator[bytes | memoryview]:
    for chunk in chunks:
        consume(chunk)
        yield chunk


def _exactly(chunks: Iterable[bytes], size: int, name: str) -> Iterator[bytes]:
    """``chunks``, which must hold ``size`` bytes (zip64 was decided from that size)."""
    length = 0
    for chunk in chunks:
        length += len(chunk)
        if length > size:
            raise ValueError(f"the content of {name} holds more than the {size} bytes announced")
        yield chunk
    if length != size:
        raise ValueError(f"the content of {name} holds {length} bytes, not the {size} announced")


def _read_chunks(handle: BinaryIO, path: Path, size: int) -> Iterator[bytes]:
    """A file's content in CHUNK_SIZE pieces; it must still hold the ``size`` bytes it had when
    opened (zip64 was decided from that size)."""
    length = 0
    while True:
        try:
            chunk = handle.read(CHUNK_SIZE)
        except OSError as exc:
            raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from exc
        if not chunk:
            break
        length += len(chunk)
        yield chunk
    if length != size:
        raise InputError(str(path), f"changed while it was read: it had {size} bytes, then {length}")


def _check_mode(mode: int) -> int:
    if not 0 <= mode <= 0o7777:
        raise ValueError(f"mode must be permission bits (0 to 0o7777), not {mode:#o}")
    return mode


def _clamp_date_time(date_time: DateTime) -> DateTime:
    """A zip timestamp holds years 1980 to 2107: anything earlier or later is clamped."""
    if date_time < ZIP_DATE_TIME_MIN:
        return ZIP_DATE_TIME_MIN
    if date_time > ZIP_DATE_TIME_MAX:
        return ZIP_DATE_TIME_MAX
    return date_time


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable. Best effort: only POSIX can open a directory for fsync, and
    some file systems refuse it; the file is complete under its final name either way."""
    if os.name != "posix":
        return
    with suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


class _RecordLines:
    """RECORD's text, a line written as each member is: a wheel of 100,000 files holds 10 MB of text
    here (in pieces: ``PieceBuffer``), not 100,000 entries and then their text as well."""

    def __init__(self) -> None:
        self._text = PieceBuffer()
        # The csv module quotes a path holding a comma or a quote, as installers' csv readers expect.
        self._csv = csv.writer(self, lineterminator="\n")

    def write(self, line: str) -> None:  # for csv.writer
        self._text.append(line.encode("utf-8"))

    def add(self, entry: RecordEntry) -> None:
        digest = f"{entry.hash_algorithm}={entry.hash_digest}" if entry.hash_algorithm else ""
        self._csv.writerow([entry.path, digest, "" if entry.size is None else str(entry.size)])

    def __len__(self) -> int:
        return len(self._text)

    def pieces(self) -> Iterator[bytes]:
        """The text so far, in pieces of about a MiB."""
        return self._text.pieces()

    def close(self) -> None:
        self._text.close()


class _ContentHash(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...
    def digest(self) -> bytes: ...


class _TwinHash:
    """The sha256 of a member's old content (``original``, fed first for each range) and of its new
    content (``update``, the same ranges with patches applied) where both agree on their first
    ``common`` bytes: those are hashed once, then the hash is forked."""

    def __init__(self, common: int) -> None:
        self._common = common
        self._shared = hashlib.sha256()
        self._old: hashlib._Hash | None = None
        self._new: hashlib._Hash | None = None
        self._old_seen = 0
        self._new_seen = 0
        if common <= 0:  # a patch at the very start (or an empty member): nothing to share
            self._old, self._new = self._shared.copy(), self._shared.copy()

    def original(self, data: bytes | memoryview) -> None:
        shared = max(0, min(len(data), self._common - self._old_seen))
        if shared:
            self._shared.update(data[:shared])
        self._old_seen += len(data)
        if self._old is None and self._old_seen >= self._common:
            self._old, self._new = self._shared.copy(), self._shared.copy()
        if shared < len(data):
            cast("hashlib._Hash", self._old).update(data[shared:])

    def update(self, data: bytes | memoryview) -> None:
        """The new content: what lies in the common part was hashed by ``original`` already."""
        skip = max(0, min(len(data), self._common - self._new_seen))
        self._new_seen += len(data)
        if skip < len(data):
            if self._new is None:  # no original byte came first: nothing was shared
                raise RuntimeError("the new content ran ahead of the original")
            self._new.update(data[skip:])

    def original_digest(self) -> bytes:
        return (self._shared if self._old is None else self._old).digest()

    def digest(self) -> bytes:
        return (self._shared if self._new is None else self._new).digest()
