"""Read a wheel in place: file name, central directory, metadata, RECORD and members; nothing is extracted.

Works on a local file or on any seekable binary file object (for example a remote file served by HTTP
range requests). Opening reads only the zip's end records and central directory, and checks what can
be checked from them: member names, duplicates, symlinks, entry layout and the ``.dist-info``
directory. Member data is read only when asked for.

Stored and deflated members are read from their raw bytes in the archive and inflated here (with
isal when it is installed, see ``inflate``), their size and CRC-32 checked at the end; zipfile only
opens the rare bzip2 and LZMA members.

A Wheel is meant for one thread at a time: member reads seek the shared file object.
"""

from __future__ import annotations

import email.message
import email.parser
import hashlib
import io
import os
import re
import stat
import struct
import tempfile
import zipfile
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, BinaryIO, cast

from packaging.utils import canonicalize_name, parse_wheel_filename

from slimwheel.errors import InputError, WheelError
from slimwheel.wheel.central import (
    CentralEntry,
    DirectoryTooLargeError,
    NoEndRecordError,
    read_central_directory,
)
from slimwheel.wheel.inflate import USING_ISAL, check_stored, check_whole, inflate
from slimwheel.wheel.record import (
    RECORD_HINT,
    RecordEntry,
    parse_record,
    record_line_problem,
    record_mismatch,
)
from slimwheel.wheel.streams import (
    READ_ERRORS,
    ArchiveWindow,
    ChunkStream,
    GuardedStream,
    describe_error,
    wheel_errors,
)
from slimwheel.wheel.view import ChunkCallback, KeepRanges, MemberView, seen_by

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from packaging.tags import Tag
    from packaging.utils import BuildTag

__all__ = [
    "CHUNK_SIZE",
    "DIRECTORY_LIMIT",
    "MEMBER_LIMIT",
    "RECORD_EXTRA_LINES",
    "RECORD_LIMIT",
    "REQUIREMENT_LIMIT",
    "SIGNATURE_FILE_NAMES",
    "SPOOL_MEMORY_LIMIT",
    "TEXT_MEMBER_LIMIT",
    "VIEW_HEAD",
    "VIEW_TAIL",
    "Wheel",
    "WheelMember",
    "describe_file_type",
    "not_a_wheel_name",
    "open_regular_file",
]

CHUNK_SIZE = 1024 * 1024  # hashing and copying stream members in pieces this big
SPOOL_MEMORY_LIMIT = 8 * 1024 * 1024  # decompressed members up to this size stay in memory
VIEW_HEAD = 32 << 20  # member_view keeps this much of the start of a compressed member...
VIEW_TAIL = 64 << 20  # ...and this much of its end
# Raw deflate data is read in pieces this big. Measured on a 553 MB wheel: with zlib, 1 MiB pieces
# inflate 25% slower than 256 KiB ones (copies of the unconsumed input); with isal, 256 KiB pieces
# are 10% slower than 1 MiB ones (more allocations).
_DEFLATED_READ_SIZE = 1024 * 1024 if USING_ISAL else 256 * 1024
SIGNATURE_FILE_NAMES = ("RECORD.jws", "RECORD.p7s")  # signatures over RECORD, which RECORD cannot hash
# Text members are read whole into memory, so each has a cap, checked against the size the central
# directory gives before anything is inflated (inflating never yields more than that size) and again
# as the chunks arrive. A 2 MB wheel can hold a METADATA that inflates to 1.5 GiB (read whole, that
# took 3.6 GiB, then MemoryError); over its cap it is a one-line error at once, nothing inflated.
# METADATA is the biggest of the others: its body is the project's README, and real ones stay below
# a few MB; WHEEL, entry_points.txt, top_level.txt and slimwheel.json are far smaller.
TEXT_MEMBER_LIMIT = 16 << 20
# RECORD has one line of about 100-150 bytes per file: 32 MiB is room for over 200,000 files, far more
# than real wheels hold (tens of thousands at most). Parsed, it costs about 300 MiB at most.
RECORD_LIMIT = 32 << 20
# RECORD lists each file once, so a correct one has no more lines than the wheel has members. A few
# lines for files that are missing are a broken wheel that ``verify`` names; far more is hostile: 32 MiB
# of ``a,,`` lines would parse into 8 million entries (gigabytes, a minute). With this bound the
# entries cost less memory than zipfile's own list of the members, read from the central directory.
RECORD_EXTRA_LINES = 1024
# A wheel's members are read into a table (about 250 bytes each, and as much again for RECORD), so their
# number is capped, and so is the central directory's size: a 92 MB zip of a million empty members took
# 375 MiB and over 6 s to refuse for having no .dist-info. Real wheels hold tens of thousands
# (tensorflow 2.21: 24,000 members, a 3 MB directory); at the cap a repair peaks at about 180 MiB
# (BENCHMARKS.md), and RECORD_LIMIT lists about as many files.
MEMBER_LIMIT = 200_000
DIRECTORY_LIMIT = 64 << 20
# A requirement line of real metadata is a name, a few version clauses and a marker: some hundred
# characters. One of 10,000 clauses (70 KB) keeps pip busy for minutes; such METADATA is refused.
REQUIREMENT_LIMIT = 4096

# Members of at most this many stored bytes are read with their local header in one read.
_ONE_READ = 256 * 1024
_EXTRA_ROOM = 64  # bytes read past the name for the local extra field (writers put 0 to 36 there)
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_HEADER_MAGIC = b"PK\x03\x04"
_UTF8_NAME_FLAG = 0x800
_ENCRYPTED_FLAG = 0x1
_READABLE_COMPRESSION = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflated",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}
_INFLATED_HERE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # others go through zipfile
_DRIVE_LETTER = re.compile(r"[A-Za-z]:")
_INSTALLED_SCHEMES = ("purelib", "platlib")  # .data schemes that land in site-packages itself
# Where the other schemes land, from site-packages (<prefix>/lib/pythonX.Y/site-packages in a venv, a
# --user or a system install, so <prefix> is three folders up): outside it, where no $ORIGIN entry
# into site-packages serves every Python.
_OUTSIDE_SCHEMES = {"data": "../../..", "scripts": "../../../bin", "headers": "../../../include"}


@dataclass(frozen=True, slots=True)  # slots: a wheel may list 100,000 of them
class WheelMember:
    """One central directory entry."""

    name: str  # archive path, forward slashes
    file_size: int  # uncompressed bytes
    compress_size: int  # stored bytes
    compress_type: int  # zipfile.ZIP_STORED, ZIP_DEFLATED, ...
    crc: int
    header_offset: int  # offset of the local file header in the .whl
    external_attr: int = 0  # high 16 bits: Unix mode, kept so a rewrite can preserve it
    date_time: tuple[int, int, int, int, int, int] = (1980, 1, 1, 0, 0, 0)
    flag_bits: int = 0  # general purpose bits (compression options...), kept by a raw copy

    @property
    def is_dir(self) -> bool:
        return self.name.endswith("/")

    @property
    def is_stored(self) -> bool:
        return self.compress_type == zipfile.ZIP_STORED

    @property
    def unix_mode(self) -> int:
        """Permission bits (0o755...) from the external attributes; 0 when the archiver set none."""
        return stat.S_IMODE(self.external_attr >> 16)


class Wheel:
    """An open wheel. Use ``Wheel.open(path)`` or ``Wheel.from_fileobj(fileobj, filename)``."""

    filename: str  # base file name
    distribution: str  # canonical project name, from the file name
    version: str  # normalised version, from the file name
    build_tag: BuildTag  # () or (number, rest), from the file name
    tags: frozenset[Tag]
    platform_tags: tuple[str, ...]
    members: tuple[WheelMember, ...]  # every central directory entry (directories too), in zip order
    file_size: int  # bytes in the whole .whl
    local_path: Path | None = None  # set by ``open``: lets other processes open the same file

    def __init__(
        self,
        fileobj: BinaryIO,
        filename: str,
        *,
        closefd: bool = False,
        source: str | None = None,
        members: Sequence[WheelMember] | None = None,
    ) -> None:
        """Prefer the classmethods. ``source`` names the wheel in errors (a path or URL; the file name
        by default). With ``closefd`` the file object is closed by ``close()``, or at once if opening
        fails. ``members``: see ``open_members``."""
        self._fileobj = fileobj
        self._closefd = closefd
        self._source = source or filename
        self._zip: zipfile.ZipFile | None = None
        self._closed = False
        self._metadata: email.message.Message | None = None
        self._wheel_info: email.message.Message | None = None
        self._record: tuple[RecordEntry, ...] | None = None
        self._data_dir: str | None = None
        try:
            self._load(filename, members)
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Wheel:
        """Open a local .whl file; ``close()`` closes it.

        Only a regular file (or a symbolic link to one) is opened: a FIFO, a device, a socket or a
        directory is refused with a WheelError, without blocking (a FIFO is opened O_NONBLOCK, so that
        no writer is waited for, and refused after ``fstat``).
        """
        file_path = Path(path)
        source = str(file_path)
        fileobj = open_regular_file(file_path, WheelError)
        wheel = cls(fileobj, file_path.name, closefd=True, source=source)
        wheel.local_path = file_path
        return wheel

    @classmethod
    def open_members(cls, path: str | os.PathLike[str], members: Sequence[WheelMember]) -> Wheel:
        """Open a local .whl to read ``members`` only, as ``open`` did in another process: the central
        directory is not read again, nor the archive checked again (an analysis worker: tensorflow
        2.21's 24,000 entries cost a process 18 MiB). Its RECORD, metadata and ``dist_info`` are not
        to be had; compare ``identity`` with the other process's to know it is the same file."""
        file_path = Path(path)
        fileobj = open_regular_file(file_path, WheelError)
        wheel = cls(fileobj, file_path.name, closefd=True, source=str(file_path), members=members)
        wheel.local_path = file_path
        return wheel

    @classmethod
    def from_fileobj(cls, fileobj: BinaryIO, filename: str, *, closefd: bool = False) -> Wheel:
        """Read a wheel from a seekable binary file object; ``filename`` is its .whl name (a path or
        URL is accepted: its last component is used). The file object stays open unless ``closefd``."""
        return cls(fileobj, filename, closefd=closefd)

    # -- opening ---------------------------------------------------------------------------------

    @property
    def identity(self) -> tuple[int, int, int, int] | None:
        """What tells this open file from another or a changed one: (device, inode, size, mtime in
        ns) by ``fstat``; None for a file object with no file descriptor. A process that opens the
        same path, or a later reader, compares it to know it reads the bytes this one read."""
        try:
            info = os.fstat(self._fileobj.fileno())
        except (AttributeError, OSError, io.UnsupportedOperation):
            return None
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)

    def _load(self, filename: str, members: Sequence[WheelMember] | None) -> None:
        self.filename = filename.replace("\\", "/").rsplit("/", 1)[-1]
        self._parse_file_name()
        self.file_size = self._measure()
        if self.file_size == 0:
            raise WheelError(self._source, "empty file, not a wheel")
        if members is not None:  # open_members: the other process read and checked the directory
            self.members = tuple(members)
            self._members_by_name = {member.name: member for member in self.members}
            self._dist_info = ""  # not looked for: dist_info refuses
            return
        start, entries = self._read_directory()
        read: list[WheelMember] = []
        by_name: dict[str, WheelMember] = {}
        name_sizes: list[int] = []  # for the layout check, let go after it
        for entry in entries:
            if len(read) == MEMBER_LIMIT:
                raise WheelError(
                    self._source,
                    f"more than {MEMBER_LIMIT:,} members: no real wheel comes close (refused as hostile)",
                )
            self._check_entry(entry)
            if entry.name in by_name:
                raise WheelError(self._source, f"member {entry.name!r} appears more than once")
            member = _member_from_entry(entry)
            read.append(member)
            by_name[entry.name] = member
            name_sizes.append(entry.name_size)
        self._check_layout(read, name_sizes, start)
        self.members = tuple(read)
        self._members_by_name = by_name
        self._dist_info = self._find_dist_info()

    def _parse_file_name(self) -> None:
        if not self.filename.endswith(".whl"):
            raise WheelError(self._source, not_a_wheel_name(self.filename))
        try:
            name, version, build, tags = parse_wheel_filename(self.filename)
        except ValueError as exc:  # InvalidWheelFilename, and InvalidVersion in older packaging
            raise WheelError(self._source, f"not a valid wheel file name: {describe_error(exc)}") from exc
        self.distribution = str(name)
        self.version = str(version)
        self.build_tag = build
        self.tags = tags
        self.platform_tags = tuple(sorted({tag.platform for tag in tags}))

    def _measure(self) -> int:
        with wheel_errors(self._source, "cannot read"):
            if not self._fileobj.seekable():
                raise WheelError(self._source, "cannot read a wheel from a file object that is not seekable")
            return self._fileobj.seek(0, io.SEEK_END)

    def _open_zip(self) -> zipfile.ZipFile:
        """zipfile's reader, for the rare bzip2 and LZMA members only (it reads the directory again)."""
        try:
            return zipfile.ZipFile(self._fileobj)
        except READ_ERRORS as exc:
            raise WheelError(self._source, self._explain_unreadable_zip(exc)) from exc

    def _read_directory(self) -> tuple[int, Iterator[CentralEntry]]:
        """Where the central directory starts, and its entries (``slimwheel.wheel.central``)."""
        try:
            start, entries = read_central_directory(self._fileobj, max_size=DIRECTORY_LIMIT)
        except DirectoryTooLargeError as exc:
            raise WheelError(
                self._source, f"{exc}: no real wheel's comes close (refused as hostile)"
            ) from exc
        except READ_ERRORS as exc:
            raise WheelError(self._source, self._explain_unreadable_zip(exc)) from exc
        return start, self._unpacked(entries)

    def _unpacked(self, entries: Iterator[CentralEntry]) -> Iterator[CentralEntry]:
        """The entries, a damaged one (found as it is unpacked) a WheelError."""
        while True:
            try:
                entry = next(entries, None)
            except READ_ERRORS as exc:
                raise WheelError(self._source, self._explain_unreadable_zip(exc)) from exc
            if entry is None:
                return
            yield entry

    def _explain_unreadable_zip(self, exc: Exception) -> str:
        try:
            self._fileobj.seek(0)
            head = self._fileobj.read(len(_LOCAL_HEADER_MAGIC))
        except READ_ERRORS:
            head = b""
        if head != _LOCAL_HEADER_MAGIC:
            return "not a zip archive"
        if isinstance(exc, NoEndRecordError) or (
            isinstance(exc, zipfile.BadZipFile) and str(exc) == "File is not a zip file"  # zipfile's words
        ):
            # No end of central directory record: the tail is missing.
            return "truncated zip archive: its end (the central directory) is missing"
        return f"damaged zip archive: {describe_error(exc)}"

    def _check_entry(self, entry: CentralEntry) -> None:
        name = entry.name
        problem = _hostile_name_problem(name)
        if problem:
            raise WheelError(self._source, f"unsafe member name {name!r}: {problem}")
        if stat.S_ISLNK(entry.external_attr >> 16):
            raise WheelError(self._source, f"member {name!r} is a symbolic link; wheels hold only files")
        if entry.flag_bits & _ENCRYPTED_FLAG:
            raise WheelError(self._source, f"member {name!r} is encrypted")
        if entry.compress_type not in _READABLE_COMPRESSION:
            raise WheelError(
                self._source, f"member {name!r} uses unsupported compression method {entry.compress_type}"
            )
        if entry.compress_type == zipfile.ZIP_STORED and entry.compress_size != entry.file_size:
            raise WheelError(
                self._source,
                f"damaged zip archive: stored member {name!r} has {entry.compress_size} bytes "
                f"but claims {entry.file_size}",
            )

    def _check_layout(
        self, members: list[WheelMember], name_sizes: list[int], central_directory_start: int
    ) -> None:
        """Every entry's header and data must fit before the next entry: catches a central directory
        that disagrees with the data (a cut-out middle, overlapping 'zip bomb' entries) without
        reading any local header. ``name_sizes``: each member's name length in bytes."""
        order = sorted(range(len(members)), key=lambda index: members[index].header_offset)
        for position, index in enumerate(order):
            member = members[index]
            following = order[position + 1] if position + 1 < len(order) else None
            limit = central_directory_start if following is None else members[following].header_offset
            # Local header + name + data; the extra field and data descriptor only add to this.
            end = member.header_offset + _LOCAL_HEADER.size + name_sizes[index] + member.compress_size
            if member.header_offset < 0:
                raise WheelError(
                    self._source,
                    f"damaged zip archive: the central directory places {member.name!r} before the "
                    "start of the file",
                )
            if end > limit:
                raise WheelError(
                    self._source,
                    f"damaged zip archive: entry {member.name!r} at offset {member.header_offset} "
                    "overlaps the next entry or the central directory",
                )

    def _find_dist_info(self) -> str:
        top_dirs = {name.split("/", 1)[0] for name in self._members_by_name if "/" in name}
        dist_infos = sorted(name for name in top_dirs if name.endswith(".dist-info"))
        if not dist_infos:
            raise WheelError(self._source, "no .dist-info directory")
        if len(dist_infos) > 1:
            raise WheelError(self._source, f"more than one .dist-info directory: {', '.join(dist_infos)}")
        dist_info = dist_infos[0]
        stem = dist_info.removesuffix(".dist-info")
        # The name part cannot hold '-' in a conforming wheel; rpartition is a fallback for old ones.
        candidates = {canonicalize_name(stem.partition("-")[0]), canonicalize_name(stem.rpartition("-")[0])}
        if self.distribution not in candidates:
            raise WheelError(
                self._source,
                f"{dist_info} does not belong to {self.distribution}, the project the file name names",
            )
        for required in ("METADATA", "WHEEL", "RECORD"):
            if f"{dist_info}/{required}" not in self._members_by_name:
                raise WheelError(self._source, f"{dist_info}/{required} is missing")
        return dist_info

    # -- lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the zip reader, and the file object when this Wheel opened it (or closefd was set)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._zip is not None:
                self._zip.close()
        finally:
            if self._closefd:
                self._fileobj.close()

    def __enter__(self) -> Wheel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Wheel {self.filename!r} ({len(self.members)} members)>"

    # -- names -----------------------------------------------------------------------------------

    @property
    def dist_info(self) -> str:
        """The .dist-info directory as the archive spells it: ``nvidia_cudss_cu13-1.0.0.35.dist-info``."""
        if not self._dist_info:
            raise WheelError(self._source, "opened for some of its members only: no .dist-info was read")
        return self._dist_info

    @property
    def data_dir(self) -> str:
        """The matching ``<name>-<version>.data`` directory (which may be absent from the archive)."""
        if self._data_dir is None:  # asked for each member: made once
            self._data_dir = self._dist_info.removesuffix(".dist-info") + ".data"
        return self._data_dir

    def member(self, name: str) -> WheelMember:
        try:
            return self._members_by_name[name]
        except KeyError:
            raise WheelError(self._source, f"no member {name!r} in the wheel") from None

    def has_member(self, name: str) -> bool:
        return name in self._members_by_name

    def installed_path(self, name: str) -> str:
        """Where ``name`` lands relative to site-packages: ``<x>.data/purelib/a/b`` and
        ``<x>.data/platlib/a/b`` become ``a/b``; ``<x>.data/data/lib/c.so`` lands in the environment's
        prefix, ``../../../lib/c.so`` (``scripts``: ``../../../bin``); other names stay as they are."""
        data_dir = self.data_dir
        if not name.startswith(data_dir) or name[len(data_dir) : len(data_dir) + 1] != "/":
            return name  # nearly every member: asked for each of them, so answered first
        for scheme in _INSTALLED_SCHEMES:
            prefix = f"{data_dir}/{scheme}/"
            if name.startswith(prefix):
                return name[len(prefix) :]
        for scheme, base in _OUTSIDE_SCHEMES.items():
            prefix = f"{data_dir}/{scheme}/"
            if name.startswith(prefix):
                return f"{base}/{name[len(prefix) :]}"
        return name

    # -- dist-info files -------------------------------------------------------------------------

    def metadata_bytes(self) -> bytes:
        """METADATA's bytes (at most TEXT_MEMBER_LIMIT; a bigger one is a WheelError)."""
        return self.read_member(f"{self._dist_info}/METADATA", limit=TEXT_MEMBER_LIMIT)

    def metadata(self) -> email.message.Message:
        """METADATA parsed as email headers (cached; treat it as read-only)."""
        if self._metadata is None:
            self._metadata = _parse_headers(self.metadata_bytes())
        return self._metadata

    def requires_dist(self) -> tuple[str, ...]:
        """METADATA's Requires-Dist values. One longer than REQUIREMENT_LIMIT characters is a
        WheelError: no requirement is that long, and pip spends minutes on one of 10,000 clauses."""
        values = self.metadata().get_all("Requires-Dist") or []
        requirements = tuple(str(value).strip() for value in values)
        for requirement in requirements:
            if len(requirement) > REQUIREMENT_LIMIT:
                raise WheelError(
                    self._source,
                    f"METADATA has a Requires-Dist of {len(requirement):,} characters "
                    f"({requirement[:40]}...): at most {REQUIREMENT_LIMIT:,} are read",
                )
        return requirements

    def wheel_info(self) -> email.message.Message:
        """The WHEEL file parsed as email headers (cached; treat it as read-only)."""
        if self._wheel_info is None:
            wheel_file = self.read_member(f"{self._dist_info}/WHEEL", limit=TEXT_MEMBER_LIMIT)
            self._wheel_info = _parse_headers(wheel_file)
        return self._wheel_info

    def record(self) -> tuple[RecordEntry, ...]:
        """RECORD's lines, parsed (cached). RECORD may hold at most RECORD_LIMIT bytes, and at most
        RECORD_EXTRA_LINES lines more than the wheel has members; more is a WheelError."""
        if self._record is None:
            most = len(self.members) + RECORD_EXTRA_LINES
            # Parsed as it is inflated (a RECORD of 200,000 files is 20 MB of text, held twice when
            # read whole); a line it cannot parse is told only once the member's CRC is known good,
            # so that damage is named as damage.
            with closing(self._limited_content(f"{self._dist_info}/RECORD", RECORD_LIMIT)) as pieces:
                try:
                    self._record = parse_record(
                        pieces, self._source, max_entries=most, shared_path=self._member_name
                    )
                except WheelError:
                    for _piece in pieces:
                        pass
                    raise
        return self._record

    def _member_name(self, path: str) -> str:
        """The member's own name string when ``path`` names a member (for parse_record's sharing)."""
        member = self._members_by_name.get(path)
        return path if member is None else member.name

    # -- member data -----------------------------------------------------------------------------

    def read_member(self, name: str, *, limit: int | None = None) -> bytes:
        """A member's whole content (checked against its CRC).

        ``limit``: a member bigger than this many bytes is a WheelError, raised from the size the
        central directory gives before anything is read (and checked again as the data streams in),
        so a member that inflates to gigabytes never reaches memory. Pass TEXT_MEMBER_LIMIT (or
        RECORD_LIMIT) when reading a text member whole.
        """
        with closing(self._limited_content(name, limit)) as pieces:
            return b"".join(pieces)

    def _limited_content(self, name: str, limit: int | None) -> Generator[bytes, None, None]:
        """A member's content in pieces, CRC-checked after the last; over ``limit`` bytes (by the
        central directory's size before anything is read, then as the pieces come) a WheelError."""
        member = self._member_to_read(name)
        if limit is not None and member.file_size > limit:
            raise WheelError(self._source, _too_big(name, member.file_size, limit))
        if _in_one_read(member):
            yield self._checked_whole(member, self._whole_raw(member, "cannot read"), f"cannot read {name}")
            return
        total = 0
        with closing(self._content(member, "cannot read")) as chunks:
            for chunk in chunks:
                total += len(chunk)
                if limit is not None and total > limit:
                    raise WheelError(self._source, _too_big(name, total, limit, at_least=True))
                yield chunk

    def check_crc(self, name: str) -> None:
        """Read a member through once, streaming, and check its size and CRC-32 (a WheelError if they
        do not match). ``seekable_member`` and ``member_view`` read a stored member in place and check
        nothing; this is how a reader of stored members proves it read intact bytes."""
        member = self._member_to_read(name)
        with closing(self._content(member, "cannot read")) as chunks:
            for _chunk in chunks:
                pass

    def open_member(self, name: str) -> BinaryIO:
        """A forward-only stream of a member's content (CRC checked at the end); close it after use.
        A small member (256 KiB stored or less) is read and checked as it is opened."""
        member = self._member_to_read(name)
        if _in_one_read(member):
            # A small member is read and checked at once (the code of a package of 100,000 files).
            raw = self._whole_raw(member, "cannot open")
            return io.BytesIO(self._checked_whole(member, raw, f"cannot read {name}"))
        if member.compress_type in _INFLATED_HERE:
            return io.BufferedReader(ChunkStream(self._content(member, "cannot open")))
        with wheel_errors(self._source, f"cannot open {name}"):
            stream = self._zip_open(member)
        return io.BufferedReader(GuardedStream(stream, self._source, name))

    def seekable_member(
        self, name: str, *, on_chunk: ChunkCallback | None = None
    ) -> AbstractContextManager[BinaryIO]:
        """A seekable read-only file of a member's content, for random access (ELF parsing).

        A stored member is a window onto the archive itself (no copy, no CRC check: ``verify`` does
        that); a compressed one is decompressed into a SpooledTemporaryFile, which keeps small members
        in memory and moves big ones to disk. ``on_chunk(offset, data)`` sees every byte of the
        member once, in order, before the file is handed out (a stored member is then read once,
        CRC-checked, as by ``member_view``).
        """
        return self._seekable_member(name, on_chunk)

    @contextmanager
    def _seekable_member(self, name: str, on_chunk: ChunkCallback | None) -> Iterator[BinaryIO]:
        member = self._member_to_read(name)
        if member.compress_type == zipfile.ZIP_STORED:
            if on_chunk is not None:
                self._feed_stored(member, on_chunk)
            window = ArchiveWindow(
                self._fileobj, self._data_offset(member), member.compress_size, self._source, name
            )
            with io.BufferedReader(window) as reader:
                yield reader
            return
        # Small members stay in memory, big ones go to an anonymous temporary file. (Not
        # SpooledTemporaryFile: before Python 3.11 it has no seekable(), which file readers ask.)
        small = member.file_size <= SPOOL_MEMORY_LIMIT
        spool: BinaryIO = io.BytesIO() if small else cast(BinaryIO, tempfile.TemporaryFile())  # noqa: SIM115
        with spool:  # closes either kind
            # Read failures are WheelErrors already; this names a full temporary disk the same way.
            with closing(self._content(member, "cannot read")) as chunks:
                for chunk in seen_by(chunks, on_chunk):
                    with wheel_errors(self._source, f"cannot unpack {name} to a temporary file"):
                        spool.write(chunk)
            spool.seek(0)
            yield spool

    def member_view(
        self,
        name: str,
        *,
        head: int = VIEW_HEAD,
        tail: int = VIEW_TAIL,
        on_chunk: ChunkCallback | None = None,
        keep: KeepRanges | None = None,
    ) -> AbstractContextManager[MemberView]:
        """A seekable read-only view of a member's start and end, without writing anything to disk.

        A stored member's view is a window onto the archive, as with ``seekable_member``: every byte
        can be read. A compressed member is inflated once, on entering, streaming: only bytes
        [0, head) and [size - tail, size) are kept in memory (all of it when the member is no
        bigger than ``head + tail``), so memory stays below ``head + tail`` plus a few CHUNK_SIZE
        pieces whatever the member's size, and its CRC-32 and size are checked. Reading bytes that
        were not kept raises MissingRangeError (read those through ``seekable_member``);
        ``view.has_range`` tells beforehand. A compressed member's errors (corrupt data, bad CRC)
        are raised on entering.

        ``on_chunk(offset, data)`` sees every byte of the member once, in order, in chunks of at
        most CHUNK_SIZE, before the view is handed out; for a stored member it makes the view read
        the whole member once (CRC-checked), where otherwise nothing is read up front.
        """
        return self._member_view(name, head, tail, on_chunk, keep)

    @contextmanager
    def _member_view(
        self, name: str, head: int, tail: int, on_chunk: ChunkCallback | None, keep: KeepRanges | None
    ) -> Iterator[MemberView]:
        member = self._member_to_read(name)
        if head < 0 or tail < 0:
            raise ValueError(f"head and tail must not be negative ({head}, {tail})")
        if member.compress_type == zipfile.ZIP_STORED:
            start = self._data_offset(member)
            if on_chunk is not None:
                self._feed_stored(member, on_chunk)
            window = ArchiveWindow(self._fileobj, start, member.compress_size, self._source, name)
            view = MemberView.of_window(name, window, member.file_size)
        else:
            with closing(self._content(member, "cannot read")) as chunks:
                view = MemberView.from_chunks(
                    name, member.file_size, chunks, head=head, tail=tail, on_chunk=on_chunk, keep=keep
                )
        with view:
            yield view

    def _feed_stored(self, member: WheelMember, on_chunk: ChunkCallback) -> None:
        """Hand a stored member's bytes to ``on_chunk``, reading it once (CRC-checked)."""
        with closing(self._content(member, "cannot read", start=self._data_offset(member))) as chunks:
            for _ in seen_by(chunks, on_chunk):
                pass

    def iter_member_chunks(self, name: str, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """A member's content in pieces of at most ``chunk_size`` bytes (CRC checked at the end)."""
        member = self._member_to_read(name)
        with closing(self._content(member, "cannot read", chunk_size)) as chunks:
            yield from chunks

    def raw_span(self, name: str) -> tuple[int, int]:
        """Where a member's stored bytes (raw deflate data for a deflated member) sit in the archive:
        (offset, length), the local header read and checked. For a remote wheel, the range to fetch
        in one request to stream the member."""
        member = self._member_to_read(name)
        return self._data_offset(member), member.compress_size

    def iter_raw_chunks(self, name: str, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """A member's bytes exactly as the archive stores them (raw deflate data for a deflated
        member), in pieces of at most ``chunk_size``, unchecked: for copying it into another zip
        without recompressing. The local header is read (and checked) on the first ``next``."""
        member = self._member_to_read(name)
        if member.compress_size <= min(_ONE_READ, chunk_size):
            yield self._whole_raw(member, "cannot read")  # one read for the header and the data
            return
        yield from self._raw_chunks(member, self._data_offset(member), chunk_size)

    def checked_record(self) -> dict[str, RecordEntry]:
        """RECORD's lines by path, once RECORD is known to vouch for every file without reading any
        content: each file (RECORD itself and its signatures aside) has exactly one line, with a hash
        the wheel specification accepts and, where given, the size the central directory gives; and
        every line names a member. Otherwise a WheelError naming the member and what is wrong."""
        exempt = self.unrecorded()
        entries: dict[str, RecordEntry] = {}
        for entry in self.record():
            if entry.path in entries:
                raise WheelError(self._source, f"RECORD lists {entry.path} more than once", hint=RECORD_HINT)
            entries[entry.path] = entry
        for member in self.members:
            if member.is_dir or member.name in exempt:
                continue
            if member.name not in entries:
                empty = " (RECORD lists no file at all)" if not set(entries) - exempt else ""
                raise WheelError(
                    self._source, f"{member.name} is not listed in RECORD{empty}", hint=RECORD_HINT
                )
            problem = record_line_problem(entries[member.name], member.file_size)
            if problem is not None:
                raise WheelError(self._source, problem, hint=RECORD_HINT)
        for path in entries:
            if path not in exempt and path not in self._members_by_name:
                raise WheelError(
                    self._source, f"RECORD lists {path}, which is not in the wheel", hint=RECORD_HINT
                )
        return entries

    def verify(self) -> None:
        """Check every member against RECORD; raise WheelError naming the first problem.

        The cheap checks come first (:meth:`checked_record`); then each member is hashed in zip
        order, streamed in CHUNK_SIZE pieces. RECORD itself and its signatures are exempt.
        """
        entries = self.checked_record()
        exempt = self.unrecorded()
        for member in self.members:
            if member.is_dir or member.name in exempt:
                continue
            entry = entries[member.name]
            algorithm = cast(str, entry.hash_algorithm)  # checked_record made sure
            hasher = hashlib.new(algorithm)
            for chunk in self.iter_member_chunks(member.name):
                hasher.update(chunk)
            if not entry.digest_matches(hasher.digest()):
                raise record_mismatch(self._source, entry, hasher.digest())

    def unrecorded(self) -> set[str]:
        """RECORD and its signatures: the members RECORD cannot hash."""
        return {f"{self._dist_info}/{name}" for name in ("RECORD", *SIGNATURE_FILE_NAMES)}

    # -- internals -------------------------------------------------------------------------------

    def _member_to_read(self, name: str) -> WheelMember:
        if self._closed:
            raise WheelError(self._source, f"cannot read {name}: the wheel is closed")
        member = self._members_by_name.get(name)
        if member is None:
            raise WheelError(self._source, f"no member {name!r} in the wheel")
        return member

    def _content(
        self, member: WheelMember, action: str, chunk_size: int = CHUNK_SIZE, start: int | None = None
    ) -> Generator[bytes, None, None]:
        """A member's content in checked chunks of at most ``chunk_size`` bytes; every failure is a
        WheelError starting with ``<action> <name>:``. The local header is read at once (so opening
        fails early), the data when the generator runs."""
        name = member.name
        if member.compress_type not in _INFLATED_HERE:
            return self._zip_chunks(member, action, chunk_size)
        if start is None and _in_one_read(member) and member.file_size <= chunk_size:
            # Most members of a wheel are small files: one read for the local header and the data,
            # one call to inflate, where the general path below costs ten times as much a member.
            return self._whole(member, self._whole_raw(member, action), f"{action} {name}")
        if start is None:
            try:
                start = self._data_offset(member)
            except WheelError as exc:
                raise WheelError(self._source, f"{action} {name}: {exc.reason}") from exc
        if member.compress_type == zipfile.ZIP_STORED:
            checked = check_stored(
                self._raw_chunks(member, start, chunk_size), size=member.file_size, crc=member.crc
            )
        else:
            checked = inflate(
                self._raw_chunks(member, start, _DEFLATED_READ_SIZE),
                size=member.file_size,
                crc=member.crc,
                chunk_size=chunk_size,
            )
        return self._guarded(checked, f"{action} {name}")

    def _whole(self, member: WheelMember, raw: bytes, action: str) -> Generator[bytes, None, None]:
        """A small member's content, checked in one piece, when the generator runs."""
        content = self._checked_whole(member, raw, action)
        if content:
            yield content

    def _checked_whole(self, member: WheelMember, raw: bytes, action: str) -> bytes:
        try:
            deflated = member.compress_type == zipfile.ZIP_DEFLATED
            return check_whole(raw, deflated=deflated, size=member.file_size, crc=member.crc)
        except READ_ERRORS as exc:
            raise WheelError(self._source, f"{action}: {describe_error(exc)}") from exc

    def _whole_raw(self, member: WheelMember, action: str) -> bytes:
        """A member's stored bytes and its local header (checked as ``_data_offset`` checks it), read
        together: for members of at most _ONE_READ stored bytes. (No ``wheel_errors`` here: its
        context manager costs more than the rest for a small member.)"""
        name = member.name
        # The name's length in the local header: the central directory's encoding is the likely one.
        name_length = len(name) if name.isascii() else len(name.encode("utf-8"))
        wanted = _LOCAL_HEADER.size + name_length + _EXTRA_ROOM + member.compress_size
        fileobj = self._fileobj
        try:
            fileobj.seek(member.header_offset)
            block = fileobj.read(wanted)
            start = self._local_data_start(member, block)
            end = start + member.compress_size
            if end > len(block):  # a long extra field or name: the rest is read now
                fileobj.seek(member.header_offset + len(block))
                block += fileobj.read(end - len(block))
        except WheelError as exc:
            raise WheelError(self._source, f"{action} {name}: {exc.reason}") from exc
        except READ_ERRORS as exc:
            raise WheelError(self._source, f"{action} {name}: {describe_error(exc)}") from exc
        if end > len(block):
            raise WheelError(self._source, f"the archive ends inside {name} (truncated download?)")
        return block[start:end]

    def _guarded(self, chunks: Iterator[bytes], action: str) -> Generator[bytes, None, None]:
        # Only the producer's own work is guarded: nothing the consumer does runs inside wheel_errors.
        while True:
            with wheel_errors(self._source, action):
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    def _raw_chunks(self, member: WheelMember, start: int, chunk_size: int) -> Iterator[bytes]:
        """The member's bytes as stored in the archive. Each read seeks first (the file object is
        shared); a file that ends early (a shrunk remote file) is a WheelError."""
        name = member.name
        position = start
        left = member.compress_size
        while left > 0:
            with wheel_errors(self._source, f"cannot read {name}"):
                self._fileobj.seek(position)
                data = self._fileobj.read(min(chunk_size, left))
            if not data:
                raise WheelError(self._source, f"the archive ends inside {name} (truncated download?)")
            position += len(data)
            left -= len(data)
            yield data

    def _zip_chunks(self, member: WheelMember, action: str, chunk_size: int) -> Generator[bytes, None, None]:
        """bzip2 and LZMA members, through zipfile."""
        with wheel_errors(self._source, f"{action} {member.name}"), self._zip_open(member) as stream:
            while chunk := stream.read(chunk_size):
                yield chunk

    def _zip_open(self, member: WheelMember) -> IO[bytes]:
        if self._zip is None:  # bzip2 and LZMA only: zipfile reads the directory again for them
            self._zip = self._open_zip()
        return self._zip.open(_info_from_member(member))

    def _data_offset(self, member: WheelMember) -> int:
        """Where a member's data starts, from its local header (checked against the central directory)."""
        with wheel_errors(self._source, f"cannot read the local header of {member.name}"):
            self._fileobj.seek(member.header_offset)
            header = self._fileobj.read(_LOCAL_HEADER.size)
            if len(header) == _LOCAL_HEADER.size and header.startswith(_LOCAL_HEADER_MAGIC):
                header += self._fileobj.read(_LOCAL_HEADER.unpack(header)[10])  # the name
        return member.header_offset + self._local_data_start(member, header)

    def _local_data_start(self, member: WheelMember, block: bytes) -> int:
        """Where the data starts from the start of ``block``, which holds the member's local header
        and name (or less: a damaged archive; or a name longer than the central directory's, cut
        short, which cannot match it). The name must be the central directory's, and the data must
        end inside the file."""
        name = member.name
        if len(block) < _LOCAL_HEADER.size or not block.startswith(_LOCAL_HEADER_MAGIC):
            raise WheelError(self._source, f"damaged zip archive: bad local header for {name}")
        fields = _LOCAL_HEADER.unpack_from(block)
        flags: int = fields[3]
        name_length: int = fields[10]
        extra_length: int = fields[11]
        raw_name = block[_LOCAL_HEADER.size : _LOCAL_HEADER.size + name_length]
        local_name = raw_name.decode("utf-8" if flags & _UTF8_NAME_FLAG else "cp437")
        if local_name != name:
            raise WheelError(
                self._source,
                f"damaged zip archive: local header names {local_name!r}, central directory {name!r}",
            )
        start = _LOCAL_HEADER.size + name_length + extra_length
        if member.header_offset + start + member.compress_size > self.file_size:
            raise WheelError(self._source, f"the archive ends inside {name} (truncated download?)")
        return start


def _hostile_name_problem(name: str) -> str | None:
    """Why an archive path could write outside the install directory, or None if it cannot."""
    if not name:
        return "empty name"
    if "\x00" in name:
        return "contains a NUL byte"
    if "\\" in name:
        return "contains a backslash"
    if name.startswith("/") or _DRIVE_LETTER.match(name):
        return "absolute path"
    if ".." in name.split("/"):
        return "contains a '..' component"
    return None


def open_regular_file(path: Path, error: type[InputError]) -> BinaryIO:
    """Open a local file for reading, refusing anything but a regular file (a symbolic link to one is
    followed) with ``error(path, reason)``: a FIFO, a socket or a device would block or never end, a
    directory is no file. The file is opened O_NONBLOCK (so that opening a FIFO waits for no writer),
    checked with ``fstat`` (no race with a rename between a check and the open), then set blocking
    again."""
    source = str(path)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise error(source, _open_failure(exc)) from exc
    if not stat.S_ISREG(mode):
        raise error(source, f"{describe_file_type(mode)}, not a regular file")
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise error(source, _open_failure(exc)) from exc
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise error(source, f"{describe_file_type(mode)}, not a regular file")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def describe_file_type(mode: int) -> str:
    """What a non-regular file is, in words: "a FIFO (named pipe)", "a directory"..."""
    for test, words in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return words
    return "not a file"


def not_a_wheel_name(filename: str) -> str:
    """Why ``filename`` is not a wheel's name, for a file whose name does not end in ``.whl``."""
    if filename.lower().endswith(".whl"):
        return (
            "not a valid wheel file name: it must end in .whl, in lower case (pip and packaging do "
            f"not take {filename[-4:]!r} for a wheel)"
        )
    return "not a valid wheel file name: it must end in .whl"


def _open_failure(exc: OSError) -> str:
    return f"cannot open: {exc.strerror or describe_error(exc)}"


def _too_big(name: str, size: int, limit: int, *, at_least: bool = False) -> str:
    more = "more than " if at_least else ""
    return (
        f"{name} is too big to read: it inflates to {more}{size} bytes, and at most {limit} "
        f"({limit >> 20} MiB) are read of a text member"
    )


def _in_one_read(member: WheelMember) -> bool:
    """Whether a member is read with its local header in one read and checked whole: a stored or
    deflated one of at most _ONE_READ stored bytes."""
    return member.compress_type in _INFLATED_HERE and member.compress_size <= _ONE_READ


def _member_from_entry(entry: CentralEntry) -> WheelMember:
    return WheelMember(
        name=entry.name,
        file_size=entry.file_size,
        compress_size=entry.compress_size,
        compress_type=entry.compress_type,
        crc=entry.crc,
        header_offset=entry.header_offset,
        external_attr=entry.external_attr,
        date_time=entry.date_time,
        flag_bits=entry.flag_bits,
    )


def _info_from_member(member: WheelMember) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(member.name, member.date_time)
    info.file_size = member.file_size
    info.compress_size = member.compress_size
    info.compress_type = member.compress_type
    info.CRC = member.crc
    info.header_offset = member.header_offset
    info.external_attr = member.external_attr
    info.flag_bits = member.flag_bits
    return info


def _parse_headers(data: bytes) -> email.message.Message:
    # Core metadata is UTF-8; a stray bad byte should not make a wheel unreadable.
    return email.parser.Parser().parsestr(data.decode("utf-8", errors="replace"))
