"""Reading a wheel's members: each ELF member is read once (through a seekable window or a spooled temp
file, so memory does not grow with the wheel), in worker processes for big local wheels; everything
after that is plain data.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import posixpath
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

from slimwheel.analysis._worker import BOOTSTRAP
from slimwheel.analysis.libraries import api_library_of, nvidia_product_of, unbound_nvidia_needs
from slimwheel.analysis.model import _ElfMember
from slimwheel.analysis.static import _RODATA_SCAN_LIMIT, _SCAN_PATTERN_BYTES, _is_code, _scan_rodata
from slimwheel.elf import (
    EDIT_ENDS,
    ELF_MAGIC,
    ElfFacts,
    Section,
    Symbol,
    edit_ranges,
    exports_any,
    iter_unversioned_imports,
    known_table_ranges,
    ranges_to_keep,
    read_elf,
    relocation_ranges,
    scan_symbols,
    segment_after_section_headers,
    table_ranges,
)
from slimwheel.errors import ElfError, InputError
from slimwheel.findings import Finding, FindingKind, Severity
from slimwheel.names import (
    is_extension_module_name,
    may_be_binary,
    module_init_symbols,
    parse_library_file_name,
    untagged_module_stem,
)
from slimwheel.sources import ArchiveSource
from slimwheel.wheel import (
    CHUNK_SIZE,
    MemberView,
    MissingRangeError,
    SavedRanges,
    ViewBuilder,
    Wheel,
    WheelMember,
)
from slimwheel.wheel.ahead import HashBehind
from slimwheel.wheel.shares import in_two_threads

__all__ = ["PARALLEL_BYTES", "InspectionCache", "RewriteWatch", "starts_like_elf"]


_SHARED_OBJECT = re.compile(r"\.so(\.\d+)*$")
PARALLEL_BYTES = 64 * 1024 * 1024  # below this, starting worker processes costs more than it saves
# What a view of a compressed member keeps: ELF and program headers, .dynsym/.dynstr and the version
# tables sit at the start; section headers, and in NVIDIA's patched files .dynamic and the build-id,
# at the end. Anything else is read by inflating the member again.
_VIEW_HEAD = 16 * 1024 * 1024
_VIEW_TAIL = 16 * 1024 * 1024
_PEEK_ABOVE = 4 * 1024 * 1024  # bigger members are first checked for the ELF magic with one chunk
_PEEK = 64 << 10  # what that check reads: the ELF and program headers
# Bigger members whose first bytes show tables moved by patchelf are spooled to disk at once (one
# inflating pass) rather than viewed (a second pass after the view misses): a pass costs seconds.
_SPOOL_MOVED_ABOVE = 128 << 20
_SMALL_END = 256 << 10  # head and tail kept once the tables' ranges are known
_EXTRA_LIMIT = 48 << 20  # bytes kept beyond a view's head, tail and segments before spooling instead
# The relocation tables saved with a member's tables at most: jammi-ai-native-cu12's 198 MB extension
# has 5.7 MB; a torch library's tens of MB are left out (its bound imports are then not told).
_RELOCATIONS_SAVED = 8 << 20
_VIEW_PASSES = 3  # inflating passes of a view that missed a range, before spooling instead


@dataclass(frozen=True)
class _Inspection:
    facts: ElfFacts
    exported_api: tuple[Symbol, ...]
    internal_api: tuple[Symbol, ...]
    # NVIDIA version strings ("cuDNN 8.9.2") and the NVIDIA-like library file names ("libnvrtc.so")
    # its .rodata holds (see static._scan_rodata).
    rodata_strings: tuple[str, ...]
    saved: SavedRanges | None = None  # the tables an ELF edit reads, saved by a read asked to
    # The content's sha256, by a read asked to (a repair's) that inflated the member whole and
    # checked its CRC-32: apply then copies the member raw without inflating it again.
    digest: bytes | None = None
    extension_module: bool = False  # see _is_extension_module
    foreign_imports: bool | None = None  # see _imports_from_unknown_libraries


@dataclass(frozen=True)
class _Keeping:
    """What a repair's read keeps beyond the inspection: the tables an ELF edit reads, saved into
    ``tables`` (see :meth:`InspectionCache.saved_tables`), and with ``digests`` each member's sha256
    (``_Inspection.digest``). ``identity``: the wheel file the main process opened
    (``Wheel.identity``), which a worker process that opens the same path must find there."""

    tables: Path | None = None
    digests: bool = False
    identity: tuple[int, int, int, int] | None = None
    # Whether a member whose .rodata a view lacks gets a pass that stops after it, to find a static
    # cudart stripped of its symbols (see _runtime_unseen): show's read does; a repair's does not,
    # since that code stays whatever repair does.
    rodata_pass: bool = True


_PLAIN = _Keeping()


def _candidate_members(wheel: ArchiveSource) -> list[WheelMember]:
    return [m for m in wheel.members if may_be_binary(m.name)]


def _inspect(stream: BinaryIO, name: str, scan_strings: bool, *, rodata_pass: bool = False) -> _Inspection:
    """Everything analysis needs from one ELF file, reading only the tables it needs. ``rodata_pass``:
    whether a ``.rodata`` a view lacks may be asked for (see :func:`_runtime_unseen`)."""
    facts = read_elf(stream, path=name, symbols=False)
    exported = scan_symbols(stream, facts, pattern=_SCAN_PATTERN_BYTES, table=".dynsym", path=name)
    internal = (
        # Tail-merged names too: a static NCCL's API is all tails (ncclAllReduce in pncclAllReduce).
        scan_symbols(stream, facts, pattern=_SCAN_PATTERN_BYTES, table=".symtab", path=name)
        if facts.has_symtab
        else ()
    )
    strings: tuple[str, ...] = ()
    # .rodata sits in the middle of big files, which a head/tail view does not keep: read it where
    # NVIDIA API symbols suggest static code, or where it costs nothing (device code, .rodata kept).
    rodata = facts.section(".rodata")
    has_range = getattr(stream, "has_range", None)
    cheap = rodata is not None and (has_range is None or has_range(rodata.offset, rodata.size))
    own = parse_library_file_name(facts.soname or posixpath.basename(name))
    named = (api_library_of(s.name) for s in (*exported, *internal) if _is_code(facts, s))
    libraries = {library for library in named if library is not None}
    suspicious = any(
        library != "cudart" and not (own and own.stem.startswith(library)) for library in libraries
    )
    # Where it costs nothing, also for the runtime's API alone: a shim that dlopens libcudart.so
    # (tilelang's libstub_cudart.so) names it there; nvcc's static runtime does not.
    if (
        scan_strings
        and rodata_pass
        and not cheap
        and rodata is not None
        and _runtime_unseen(stream, facts, rodata, name)
    ):
        raise MissingRangeError(name, rodata.offset, rodata.size)
    if scan_strings and (suspicious or (cheap and (facts.fatbin_size > 0 or bool(libraries)))):
        strings = _scan_rodata(stream, facts, name)
    extension = _is_extension_module(stream, facts, name)
    foreign = _imports_from_unknown_libraries(stream, facts, name)
    return _Inspection(
        facts, exported, internal, strings, extension_module=extension, foreign_imports=foreign
    )


def _runtime_unseen(stream: BinaryIO, facts: ElfFacts, rodata: Section, name: str) -> bool:
    """Whether a file with device code that links no CUDA runtime has a ``.rodata`` worth a pass that
    stops after it: only its strings tell a static cudart whose symbols were stripped (``nvcc``'s
    default link), and in a big CUDA library that section lies between the code and the device code,
    away from a view's ends (xgboost-cu12 3.4.1's 126 MiB ``libxgboost.so`` has it at 19 MiB,
    libcudf-cu12 26.10.2's 998 MB ``libcudf.so`` at 82 MB). Where it ends in the member's first half,
    that pass inflates a fraction of what the whole one did; further on, it is left unread. Not in
    one of NVIDIA's libraries (a vendored copy of cuRAND links its runtime so): that is no news."""
    size = getattr(stream, "size", None)
    if facts.fatbin_size == 0 or not isinstance(size, int) or rodata.size > _RODATA_SCAN_LIMIT:
        return False
    if nvidia_product_of(facts.soname or posixpath.basename(name)) is not None:
        return False
    if rodata.offset + rodata.size > size // 2:
        return False
    return all(
        (parsed := parse_library_file_name(soname)) is None or parsed.stem != "cudart"
        for soname in facts.needed
    )


# The Python C API (PyLong_Type, _Py_Dealloc): what an extension module imports from the interpreter,
# bound to no version, and which no NVIDIA library defines.
_INTERPRETER_API = re.compile(r"_?Py[A-Z_]")


def _imports_from_unknown_libraries(stream: BinaryIO, facts: ElfFacts, name: str) -> bool | None:
    """Whether the file imports symbols bound to no version, the interpreter's aside: those may come
    from any library it needs. None where it needs no NVIDIA library bound to no version of it, the
    only case the answer serves (an unused DT_NEEDED: see analysis.wheel), so the table is not read;
    None too where the table cannot be read."""
    if not unbound_nvidia_needs(facts.needed, (need.file for need in facts.version_needs)):
        return None
    try:
        # The first import that is not Python's ends the read.
        return any(not _INTERPRETER_API.match(n) for n in iter_unversioned_imports(stream, facts, path=name))
    except ElfError:  # names past their table: not judged, as the rest of the file may still load
        return None


def _is_extension_module(stream: BinaryIO, facts: ElfFacts, name: str) -> bool:
    """Whether ``import`` loads the file as an extension module, so before any library of its package
    (check's walk): a name with an ABI tag (``core.cpython-311-x86_64-linux-gnu.so``) says so; an
    untagged ``_C.so`` only when it exports ``PyInit__C``: mitsuba's ``plugins/aov.so`` exports none,
    and ``libmitsuba.so``, loaded by then, loads it."""
    filename = posixpath.basename(name)
    module = untagged_module_stem(filename)
    if module is None:
        return is_extension_module_name(filename)
    return exports_any(stream, facts, module_init_symbols(module), path=name)


def _inspect_member(
    wheel: ArchiveSource, member: WheelMember, scan_strings: bool, keeping: _Keeping = _PLAIN
) -> _Inspection | None:
    """Inspect a member from its head, tail and ELF segments kept in memory; re-read it whole only when
    that misses. ``keeping``: what else to keep (see :class:`_Keeping`); the digest is of the first
    pass over a deflated member, which inflates it whole.

    Returns None when the member is not ELF.
    """
    if not keeping.digests or member.compress_type != zipfile.ZIP_DEFLATED:
        return _inspect_member_passes(wheel, member, scan_strings, keeping, None)
    with HashBehind() as hash_behind:
        hasher = _FirstPassHash(hash_behind)
        inspection = _inspect_member_passes(wheel, member, scan_strings, keeping, hasher)
        if inspection is None or not hasher.whole:
            return inspection
        return replace(inspection, digest=hash_behind.digest())


class _FirstPassHash:
    """sha256 of the first pass's content: ``whole`` once a pass saw every byte, CRC-checked. Hashed
    on a thread while the pass inflates the next chunks (a 981 MiB library: 0.7 s of 3.5 s)."""

    def __init__(self, hash_behind: HashBehind) -> None:
        self._hash_behind = hash_behind
        self.whole = False

    def update(self, _offset: int, chunk: bytes) -> None:
        self._hash_behind.update(chunk)


def _inspect_member_passes(
    wheel: ArchiveSource,
    member: WheelMember,
    scan_strings: bool,
    keeping: _Keeping,
    hasher: _FirstPassHash | None,
) -> _Inspection | None:
    name, save_to = member.name, keeping.tables
    if member.file_size > _PEEK_ABOVE:
        # A big member that is not ELF (data files): one chunk tells, no need to inflate it all.
        with wheel.open_member(name) as start:
            prefix = start.read(_PEEK)
        if prefix[:4] != ELF_MAGIC:
            return None
        if member.file_size > _SPOOL_MOVED_ABOVE and segment_after_section_headers(prefix):
            # Its symbol tables sit far from its end (see segment_after_section_headers): a view
            # would miss them and inflate it again; spooled, it is inflated once.
            on_chunk = hasher.update if hasher is not None else None
            with wheel.seekable_member(name, on_chunk=on_chunk) as stream:
                if hasher is not None:
                    hasher.whole = True  # spooled: every byte seen, the CRC-32 checked
                return _saving_tables(_inspect(stream, name, scan_strings), stream, member, save_to)
    extra: list[tuple[int, int]] = []
    ends = (_VIEW_HEAD, _VIEW_TAIL)

    def keep(prefix: bytes) -> list[tuple[int, int]]:
        return [*ranges_to_keep(prefix), *extra]

    # Tables outside the kept ranges (a .dynstr longer than the head; moved by an earlier patchelf; a
    # .rodata to scan) are read by a pass that stops after them when they lie in the first half;
    # else they are kept on another whole pass, with every table the section headers name (and then
    # only small ends), while they are small; else the member is spooled to disk.
    for _ in range(_VIEW_PASSES):
        on_chunk = hasher.update if hasher is not None and not hasher.whole else None
        with wheel.member_view(name, head=ends[0], tail=ends[1], keep=keep, on_chunk=on_chunk) as raw_view:
            if hasher is not None and on_chunk is not None:
                hasher.whole = True  # entered: every byte seen, the CRC-32 checked
            view = cast(BinaryIO, raw_view)
            if view.read(4) != ELF_MAGIC:
                return None
            view.seek(0)
            try:
                inspection = _inspect(view, name, scan_strings, rodata_pass=keeping.rodata_pass)
                return _saving_tables(inspection, raw_view, member, save_to)
            except MissingRangeError as missing:
                miss = (missing.offset, missing.length)
                wanted = [*extra, miss]
                data: set[tuple[int, int]] = set()
                if not extra:
                    with contextlib.suppress(MissingRangeError):  # no section headers kept: the miss only
                        tables = table_ranges(view)
                        # .rodata too while it fits, which the static scan may read once the symbols
                        # are known: else that costs a third pass.
                        with_data = table_ranges(view, read_only_data=_RODATA_SCAN_LIMIT)
                        fits = sum(n for _, n in [*wanted, *with_data]) <= _EXTRA_LIMIT
                        wanted.extend(with_data if fits else tables)
                        data = set(with_data).difference(tables, [miss]) if fits else data
                        ends = (_SMALL_END, _SMALL_END) if tables else ends
                found = _inspect_extended(
                    wheel, raw_view, wanted, member, scan_strings=scan_strings, save_to=save_to, data=data
                )
                if found is not None:
                    return found
        if sum(length for _, length in wanted) > _EXTRA_LIMIT:
            break
        extra[:] = wanted
    with wheel.seekable_member(name) as stream:
        return _saving_tables(_inspect(stream, name, scan_strings), stream, member, save_to)


def _inspect_extended(
    wheel: ArchiveSource,
    view: object,
    wanted: list[tuple[int, int]],
    member: WheelMember,
    *,
    scan_strings: bool,
    save_to: Path | None,
    data: set[tuple[int, int]],
) -> _Inspection | None:
    """The inspection on ``view`` extended with the ``wanted`` ranges it lacks, when those all lie in
    the member's first half: a pass that stops after them costs less than another whole one
    (mxnet-cu112's ``libmxnet.so``: a 26 MB ``.dynstr`` ending at 33 MB of 850). ``data``: ranges of
    ``wanted`` kept only where that pass reaches them (read-only data no miss named: the scan reads
    ``.rodata`` alone, and the device code and ``.eh_frame`` after it may lie anywhere). None when the
    others do not all lie there, or the extended view still lacks something (added to ``wanted`` for
    the next whole pass)."""
    if not isinstance(view, MemberView):
        return None
    half = member.file_size // 2
    reached = [(o, n) for o, n in wanted if (o, n) not in data or o + n <= half]
    lacking_end = max((o + n for o, n in reached if not view.has_range(o, n)), default=0)
    if not lacking_end or lacking_end > half:
        return None
    with wheel.open_member(member.name) as stream:
        extended = view.extended(iter(lambda: stream.read(CHUNK_SIZE), b""), reached)
    with extended:
        try:
            inspection = _inspect(cast(BinaryIO, extended), member.name, scan_strings, rodata_pass=True)
        except MissingRangeError as missing:
            wanted.append((missing.offset, missing.length))
            return None
        return _saving_tables(inspection, extended, member, save_to)


def _saving_tables(
    inspection: _Inspection, content: io.RawIOBase | BinaryIO, member: WheelMember, folder: Path | None
) -> _Inspection:
    """``inspection`` with the tables an ELF edit of the member reads saved into ``folder`` (the
    bytes ``content`` holds of them: a view, or the whole member spooled), when a folder is given."""
    if folder is None:
        return inspection
    stream = cast(BinaryIO, content)
    stream.seek(0)
    prefix = stream.read(min(member.file_size, EDIT_ENDS))
    # Named by what identifies the member's bytes: an analysis of another wheel with a member of the
    # same name (auditwheel's output) saves beside it, not over it.
    key = hashlib.sha256(f"{member.name}\0{member.file_size}\0{member.crc}".encode()).hexdigest()[:32]
    ranges = edit_ranges(prefix, member.file_size, inspection.facts.sections)
    # The relocations too, where the content holds them and they are small: the floors read from
    # these tables which imports are bound (repair.floors).
    relocations = relocation_ranges(inspection.facts.sections, limit=_RELOCATIONS_SAVED)
    if not isinstance(content, MemberView) or all(content.has_range(o, n) for o, n in relocations):
        ranges.extend(relocations)
    saved = SavedRanges.save(member.name, member.file_size, stream, ranges, folder / f"{key}.tables")
    return replace(inspection, saved=saved)


def _rewrite_keep(rewrite: _Rewrite) -> Callable[[bytes], list[tuple[int, int]]]:
    def keep(prefix: bytes) -> list[tuple[int, int]]:
        return [*ranges_to_keep(prefix), *rewrite.keep]

    return keep


def _inspect_rewrite(view: io.RawIOBase, name: str, rewrite: _Rewrite) -> _Inspection | None:
    """Inspect an edited member's new content from ``view`` (kept as :meth:`InspectionCache.rewritten`
    says): what an edit can change read anew, the static scan's findings taken from the earlier read.
    MissingRangeError when the view lacks something (then read the member in full)."""
    stream = cast(BinaryIO, view)
    if stream.read(4) != ELF_MAGIC:
        return None
    stream.seek(0)
    facts = read_elf(stream, path=name, symbols=False)
    exported = (
        rewrite.exported_api
        if rewrite.exported_api is not None
        else scan_symbols(stream, facts, pattern=_SCAN_PATTERN_BYTES, table=".dynsym", path=name)
    )
    extension = _is_extension_module(stream, facts, name)
    return _Inspection(
        facts,
        exported,
        rewrite.internal_api,
        rewrite.rodata_strings,
        extension_module=extension,
        foreign_imports=_imports_from_unknown_libraries(stream, facts, name),
    )


def _reinspect_member(
    wheel: ArchiveSource, member: WheelMember, rewrite: _Rewrite, scan_strings: bool
) -> _Inspection | None:
    """Inspect a member repair edited (see :meth:`InspectionCache.rewritten`): one inflating pass
    keeping the tables the input's read found; a full read when that misses."""
    keep = _rewrite_keep(rewrite)
    with wheel.member_view(member.name, head=_SMALL_END, tail=_SMALL_END, keep=keep) as view:
        try:
            inspection = _inspect_rewrite(view, member.name, rewrite)
        except MissingRangeError:
            return _inspect_member(wheel, member, scan_strings)
    return inspection if inspection is None or scan_strings else replace(inspection, rodata_strings=())


# An inspection's outcome: the facts, None for a file that is not ELF, or an ElfError's reason.
_Outcome = _Inspection | str | None

# The sections the static scan reads beyond the dynamic tables: .symtab and its names, .rodata's strings.
_STATIC_SCAN_SECTIONS = frozenset({".symtab", ".strtab", ".rodata"})


@dataclass(frozen=True)
class _Rewrite:
    """What an edit repair streamed leaves of a member's earlier inspection: the tables to keep on the
    re-read (the same layout, plus what the edit wrote), and the static scan's findings, from sections
    no written byte touched."""

    keep: tuple[tuple[int, int], ...]
    internal_api: tuple[Symbol, ...]
    rodata_strings: tuple[str, ...]
    scanned_strings: bool
    # The earlier read's exported API, when no written byte lies in .dynsym: an ELF edit writes no
    # string a dynamic symbol's name reads (slimwheel.elf.edit), so the names are the same.
    exported_api: tuple[Symbol, ...] | None = None
    # (outcome,) once a RewriteWatch read the new content as it was written (the outcome itself is
    # None for a file that is not ELF); None: not read that way.
    outcome: tuple[_Outcome] | None = None


class RewriteWatch:
    """Reads the new content of a member repair edits while it is written (``feed``, in order), so
    that the output's analysis does not inflate it again: ``finish`` inspects what it kept (the
    tables the input's read found and the ranges the edit wrote, as :meth:`InspectionCache.rewritten`
    says) and leaves the outcome in the cache. When the kept ranges do not suffice, the output's
    analysis reads the member as without a watch."""

    def __init__(self, cache: InspectionCache, name: str, size: int, rewrite: _Rewrite) -> None:
        self._cache = cache
        self._rewrite = rewrite
        self._builder = ViewBuilder(name, size, head=_SMALL_END, tail=_SMALL_END, keep=_rewrite_keep(rewrite))

    def feed(self, chunk: bytes | memoryview) -> None:
        self._builder.feed(chunk)

    def finish(self) -> None:
        """Inspect the content fed (all of it: a ValueError otherwise)."""
        with self._builder.finish() as view:
            try:
                outcome: _Outcome = _inspect_rewrite(view, view.name, self._rewrite)
            except MissingRangeError:
                return
            except ElfError as exc:
                outcome = exc.reason
        self._cache._watched(view.name, replace(self._rewrite, outcome=(outcome,)))


def _overlaps(ranges: Iterable[tuple[int, int]], others: Iterable[tuple[int, int]]) -> bool:
    spans = list(others)
    return any(
        start < o_start + o_length and o_start < start + length
        for start, length in ranges
        for o_start, o_length in spans
    )


class InspectionCache:
    """What reading each member found, shared by the analyses of one repair (input, then output), so
    that a member is inflated once however many analyses see it.

    A member is known by its name, size and CRC-32: the output's members that repair copied raw carry
    the input's compressed bytes (CRC-checked and hashed against RECORD as they were copied), so what
    the input's read found holds for them. Members repair rewrote are :meth:`forget`-ten, so the
    output's analysis reads their new bytes whatever their CRC; those it edited itself are read as
    they are written (:meth:`rewriting`), so that the output's analysis need not inflate them. An
    outcome read with version strings serves an analysis that does not scan them; not the other way
    round. With a ``tables_folder``, each read also saves the tables an ELF edit of the member reads
    (:meth:`saved_tables`), so that planning the edit inflates nothing.
    """

    def __init__(self, tables_folder: Path | None = None, *, hashes_content: bool = False) -> None:
        """``tables_folder``: where reads save the tables an ELF edit of each member reads
        (:meth:`saved_tables`); None: not saved. ``hashes_content``: reads keep each member's
        sha256 too (:meth:`content_digests`)."""
        self.tables_folder = tables_folder
        self.hashes_content = hashes_content
        self._outcomes: dict[tuple[str, int, int], tuple[bool, _Outcome]] = {}
        self._rewrites: dict[str, _Rewrite] = {}
        self.reads = 0  # members read to inspect them, over every analysis that used this cache
        self.reused = 0  # members answered from here without reading
        self.watched = 0  # members answered from what a RewriteWatch saw written

    def get(self, member: WheelMember, scan_strings: bool) -> tuple[bool, _Outcome]:
        """(found, outcome)."""
        known = self._outcomes.get((member.name, member.file_size, member.crc))
        if known is None:
            rewrite = self.rewrite_of(member, scan_strings)
            if rewrite is not None and rewrite.outcome is not None:  # read as it was written
                (outcome,) = rewrite.outcome
                if isinstance(outcome, _Inspection) and not scan_strings:
                    outcome = replace(outcome, rodata_strings=())
                self.watched += 1
                return True, outcome
        if known is None or (scan_strings and not known[0]):
            return False, None
        self.reused += 1
        return True, known[1]

    def put(self, member: WheelMember, scan_strings: bool, outcome: _Outcome) -> None:
        self.reads += 1
        self._outcomes[(member.name, member.file_size, member.crc)] = (scan_strings, outcome)

    def forget(self, names: Iterable[str]) -> None:
        """Drop what is known of these members (rewritten: their next read must see the new bytes)."""
        gone = set(names)
        for key in [key for key in self._outcomes if key[0] in gone]:
            del self._outcomes[key]
        for name in gone:
            self._rewrites.pop(name, None)

    def rewritten(
        self, name: str, written: Sequence[tuple[int, int]], abandoned: Sequence[tuple[int, int]] = ()
    ) -> None:
        """``name`` was edited by overwriting and appending the (offset, length) ranges ``written``,
        its layout otherwise the same but for the ``abandoned`` tables (moved into the appended bytes).
        Its next read (the output's) reads everything an edit can change (headers, the dynamic
        section, names, versions) from the new bytes, in one pass keeping the tables the earlier read
        found, the abandoned ones aside; it takes the static scan's ``.symtab`` and ``.rodata``
        findings from the earlier read, when no written byte lies in those sections, and the exported
        symbols when none lies in ``.dynsym``. Else the member is read afresh, as after :meth:`forget`."""
        known = [found for key, found in self._outcomes.items() if key[0] == name]
        self.forget([name])
        if len(known) != 1 or not isinstance(known[0][1], _Inspection):
            return
        scanned, inspection = known[0][0], known[0][1]
        facts = inspection.facts
        scanned_from = [(s.offset, s.size) for s in facts.sections if s.name in _STATIC_SCAN_SECTIONS]
        if not facts.sections or _overlaps(written, scanned_from):
            return
        # An abandoned .dynstr is tens of MB in a big C++ library: kept, it would be held for nothing.
        tables = [r for r in known_table_ranges(facts.sections, symbol_table=False) if r not in abandoned]
        keep = (*tables, *written)
        dynsym = [(s.offset, s.size) for s in facts.sections if s.name == ".dynsym"]
        exported = inspection.exported_api if dynsym and not _overlaps(written, dynsym) else None
        self._rewrites[name] = _Rewrite(
            keep, inspection.internal_api, inspection.rodata_strings, scanned, exported
        )

    def rewriting(
        self,
        name: str,
        written: Sequence[tuple[int, int]],
        size: int,
        abandoned: Sequence[tuple[int, int]] = (),
    ) -> RewriteWatch | None:
        """:meth:`rewritten`, and a watch to hand the new content (``size`` bytes) to as it is written,
        which saves the output's analysis its pass over the member; None when the member must be read
        afresh anyway."""
        self.rewritten(name, written, abandoned)
        rewrite = self._rewrites.get(name)
        return RewriteWatch(self, name, size, rewrite) if rewrite is not None else None

    def _watched(self, name: str, rewrite: _Rewrite) -> None:
        if name in self._rewrites:
            self._rewrites[name] = rewrite

    def saved_tables(self, member: WheelMember) -> SavedRanges | None:
        """The tables an ELF edit of ``member`` reads, as the read of it saved them (see
        ``tables_folder``); None when it was not read with a folder, or is not ELF."""
        known = self._outcomes.get((member.name, member.file_size, member.crc))
        if known is None or not isinstance(known[1], _Inspection):
            return None
        return known[1].saved

    def content_digests(self, wheel: Wheel) -> dict[str, bytes]:
        """The sha256 of each member of ``wheel`` that a read of it inflated whole (see
        ``hashes_content``), by name: known by name, size and CRC-32, as every outcome here."""
        digests = {}
        for member in wheel.members:
            known = self._outcomes.get((member.name, member.file_size, member.crc))
            if known is not None and isinstance(known[1], _Inspection) and known[1].digest is not None:
                digests[member.name] = known[1].digest
        return digests

    def known_tables(self, member: WheelMember) -> tuple[tuple[int, int], ...]:
        """(offset, length) of the tables the read of ``member`` found that an ELF edit reads: every
        one but ``.symtab`` and ``.strtab`` (see :func:`~slimwheel.elf.known_table_ranges`), which are
        most of a big C++ library's tables; ``()`` when it was not read or is not ELF."""
        known = self._outcomes.get((member.name, member.file_size, member.crc))
        if known is None or not isinstance(known[1], _Inspection):
            return ()
        return tuple(known_table_ranges(known[1].facts.sections, symbol_table=False))

    def rewrite_of(self, member: WheelMember, scan_strings: bool) -> _Rewrite | None:
        """What :meth:`rewritten` kept for ``member``, when it serves this read."""
        rewrite = self._rewrites.get(member.name)
        return rewrite if rewrite is not None and (rewrite.scanned_strings or not scan_strings) else None


def _inspect_each(
    wheel: ArchiveSource,
    members: Sequence[WheelMember],
    scan_strings: bool,
    rewrites: Mapping[str, _Rewrite] | None = None,
    keeping: _Keeping = _PLAIN,
) -> list[_Outcome]:
    outcomes: list[_Outcome] = []
    for member in members:
        rewrite = rewrites.get(member.name) if rewrites else None
        try:
            if rewrite is not None:
                outcomes.append(_reinspect_member(wheel, member, rewrite, scan_strings))
            else:
                outcomes.append(_inspect_member(wheel, member, scan_strings, keeping))
        except ElfError as exc:
            outcomes.append(exc.reason)
    return outcomes


def _inspect_in_worker(task: Mapping[str, Any]) -> list[_Outcome]:
    """What a worker process does with its task (see :class:`_Worker`)."""
    path, scan_strings = task["path"], task["scan_strings"]
    tables = None if task["tables"] is None else Path(task["tables"])
    keeping = _Keeping(tables, task["digests"], task["identity"], task["rodata_pass"])
    members = [WheelMember(*fields) for fields in task["members"]]
    with Wheel.open_members(path, members) as wheel:
        if keeping.identity is not None and wheel.identity != keeping.identity:
            raise InputError(path, "the file changed while it was read", hint="repair it again, unchanged")
        return _inspect_each(wheel, members, scan_strings, keeping=keeping)


def _inspect_members(
    wheel: ArchiveSource,
    members: Sequence[WheelMember],
    scan_strings: bool,
    jobs: int,
    parallel_bytes: int,
    *,
    keeping: _Keeping = _PLAIN,
) -> list[_Outcome]:
    """Inspect members, in worker processes when the wheel is a local file big enough to pay for them.

    Inflating is most of the cost and is CPU-bound, so processes (not threads) share it: members are
    dealt out largest first to the least loaded of ``jobs`` shares. This process takes the first share
    itself rather than wait: one process fewer (each worker costs the memory of a Python with
    slimwheel imported plus the views it reads through, 70-80 MiB), for the same wall time.
    """
    path = getattr(wheel, "local_path", None)
    total = sum(m.file_size for m in members)
    if jobs <= 1 or path is None or total < parallel_bytes or len(members) < 2:
        return _inspect_each(wheel, members, scan_strings, keeping=keeping)
    bins: list[list[int]] = [[] for _ in range(min(jobs, len(members)))]
    loads = [0] * len(bins)
    for index in sorted(range(len(members)), key=lambda i: -members[i].file_size):
        lightest = loads.index(min(loads))
        bins[lightest].append(index)
        loads[lightest] += members[index].file_size
    outcomes: list[_Outcome] = [None] * len(members)
    # A worker reads the members where this process's directory says they are: the same file, always.
    keeping = replace(keeping, identity=keeping.identity or getattr(wheel, "identity", None))
    # Started afresh, not forked: a forked worker starts with this process's heap (the catalog, the
    # plan, what the last member's read left), resident twice; a fresh one imports what it needs.
    with contextlib.ExitStack() as stack:
        workers = [
            (
                indices,
                stack.enter_context(_Worker(str(path), [members[i] for i in indices], scan_strings, keeping)),
            )
            for indices in bins[1:]
        ]
        own = _inspect_each(wheel, [members[i] for i in bins[0]], scan_strings, keeping=keeping)
        for index, outcome in zip(bins[0], own, strict=True):
            outcomes[index] = outcome
        for indices, worker in workers:
            for index, outcome in zip(indices, worker.result(), strict=True):
                outcomes[index] = outcome
    return outcomes


class _Worker:
    """One analysis worker process (see :mod:`slimwheel.analysis._worker`), killed and reaped on exit
    from its ``with`` block whatever happened."""

    def __init__(
        self, path: str, members: Sequence[WheelMember], scan_strings: bool, keeping: _Keeping
    ) -> None:
        self._task = {
            "sys_path": list(sys.path),
            "parent": os.getpid(),
            "path": path,
            # The directory entries, which spare the worker reading the central directory again.
            "members": [astuple(member) for member in members],
            "scan_strings": scan_strings,
            # Plain values: the task is unpickled before sys.path is set to find slimwheel.
            "tables": None if keeping.tables is None else str(keeping.tables),
            "digests": keeping.digests,
            "identity": keeping.identity,
            "rodata_pass": keeping.rodata_pass,
        }
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> _Worker:
        self._process = subprocess.Popen(
            [sys.executable, "-c", BOOTSTRAP], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self._process.stdin is not None
        with self._process.stdin:
            self._process.stdin.write(pickle.dumps(self._task))
        return self

    def result(self) -> list[_Outcome]:
        """The outcomes, in the order of the names; the worker's own error raised here."""
        assert self._process is not None
        assert self._process.stdout is not None
        data = self._process.stdout.read()
        code = self._process.wait()
        if code != 0 or not data:
            raise InputError(
                str(self._task["path"]),
                f"the analysis worker process ended with status {code}",
                hint="it was killed or ran out of memory; run again",
            )
        status, value = pickle.loads(data)  # noqa: S301 - written by our own child, from our own task
        if status != "ok":
            raise cast(BaseException, value)
        return cast(list[_Outcome], value)

    def __exit__(self, *exc_info: object) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._process.wait()


def _read_members(
    wheel: ArchiveSource,
    scan_strings: bool,
    jobs: int,
    parallel_bytes: int,
    unread: frozenset[str],
    *,
    cache: InspectionCache | None = None,
) -> tuple[list[_ElfMember], list[Finding], int]:
    elf_members: list[_ElfMember] = []
    findings: list[Finding] = []
    others = 0
    candidates = [m for m in _candidate_members(wheel) if m.file_size >= 4 and m.name not in unread]
    outcomes: dict[str, _Outcome] = {}
    to_read = []
    rewrites: dict[str, _Rewrite] = {}
    for member in candidates:
        found, outcome = cache.get(member, scan_strings) if cache is not None else (False, None)
        rewrite = cache.rewrite_of(member, scan_strings) if cache is not None else None
        if found:
            outcomes[member.name] = outcome
        elif rewrite is not None:
            rewrites[member.name] = rewrite
        else:
            to_read.append(member)
    # Members repair edited: one pass each, in this process, two at a time on threads (the output's
    # analysis reads little else, and another process would cost more memory than it saves time).
    reread = [m for m in candidates if m.name in rewrites]
    keeping = (
        _Keeping(
            cache.tables_folder, cache.hashes_content, getattr(wheel, "identity", None), rodata_pass=False
        )
        if cache is not None
        else _PLAIN
    )
    read = _inspect_members(wheel, to_read, scan_strings, jobs, parallel_bytes, keeping=keeping)
    reread_outcomes = (
        in_two_threads(
            wheel,
            reread,
            size=lambda member: member.file_size,
            work=lambda source, share: _inspect_each(source, share, scan_strings, rewrites),
            min_bytes=parallel_bytes,
        )
        if isinstance(wheel, Wheel)
        else _inspect_each(wheel, reread, scan_strings, rewrites)
    )
    for member, outcome in zip([*to_read, *reread], [*read, *reread_outcomes], strict=True):
        outcomes[member.name] = outcome
        if cache is not None:
            cache.put(member, scan_strings, outcome)
    for member in _candidate_members(wheel):
        looks_shared = bool(_SHARED_OBJECT.search(member.name))
        installed = wheel.installed_path(member.name)
        if member.name in unread and starts_like_elf(wheel, member):
            elf_members.append(_ElfMember(member, installed, None, None))
            continue
        inspection = outcomes.get(member.name)
        if isinstance(inspection, str):
            findings.append(Finding(FindingKind.CORRUPT_ELF, Severity.ERROR, member.name, inspection))
            elf_members.append(_ElfMember(member, installed, None, inspection))
            continue
        if inspection is None:
            if looks_shared:
                reason, script = _not_elf_reason(wheel, member)
                # A linker script named as a library (RAPIDS's libcuopt.so) is for the link editor
                # (-lcuopt); the dynamic loader never reads it unless asked: a file that needs it is
                # an error where it is checked (loads-unreadable). An extension module's name is
                # loaded by import: an error.
                severity = (
                    Severity.WARNING
                    if script and not is_extension_module_name(posixpath.basename(installed))
                    else Severity.ERROR
                )
                findings.append(Finding(FindingKind.NOT_ELF, severity, member.name, reason))
            others += 1
            continue
        elf_members.append(
            _ElfMember(
                member,
                installed,
                inspection.facts,
                None,
                inspection.exported_api,
                inspection.internal_api,
                inspection.rodata_strings,
                inspection.extension_module,
                inspection.foreign_imports,
            )
        )
    return elf_members, findings, others


def starts_like_elf(wheel: ArchiveSource, member: WheelMember) -> bool:
    """Whether a member left unread starts as an ELF file does: its first bytes only, so a copy that
    is empty or text is what a full read would call it (not ELF), without inflating the rest."""
    if member.file_size < len(ELF_MAGIC):
        return False
    with wheel.open_member(member.name) as stream:
        return stream.read(len(ELF_MAGIC)) == ELF_MAGIC


_NOT_ELF_HEAD = 4096  # what telling text and linker scripts apart reads of a .so that is not ELF
# GNU ld script commands that name libraries or the output: what a linker script "libX.so" holds.
_LINKER_SCRIPT = re.compile(rb"\b(INPUT|GROUP|OUTPUT_FORMAT|OUTPUT_ARCH|SEARCH_DIR)\s*\(")


def _not_elf_reason(wheel: ArchiveSource, member: WheelMember) -> tuple[str, bool]:
    """Why a member named like a shared object (``libX.so.1``, an extension module) cannot be loaded,
    and whether it is a linker script: the dynamic loader maps only ELF files, so text, a linker
    script or an empty file fails the import or the load that needs it."""
    what = "not an ELF file"
    if member.file_size == 0:
        return f"{what} (empty): the dynamic loader cannot load it", False
    try:
        with wheel.open_member(member.name) as stream:
            head = stream.read(_NOT_ELF_HEAD)
    except InputError:
        head = b""  # the member's own read error is reported where it is read for its content
    cannot = "the dynamic loader cannot load it"
    if _is_text(head) and _LINKER_SCRIPT.search(head):
        return f"{what} (a linker script, which only the link editor reads): {cannot}", True
    if _is_text(head):
        return f"{what} (text): {cannot}", False
    return f"{what}: {cannot}", False


def _is_text(head: bytes) -> bool:
    """UTF-8 without control characters but white space (a multi-byte character cut at the end of
    ``head`` allowed)."""
    text = head.decode("utf-8", errors="replace").rstrip("\ufffd")
    return bool(text) and "\ufffd" not in text and all(c.isprintable() or c in "\t\n\r\f" for c in text)
