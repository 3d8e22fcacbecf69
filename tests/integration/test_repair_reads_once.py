"""repair reads each member once: the plan's analysis serves the input's check, and the output's check
reads only the members apply rewrote, taking the rest (copied raw) from the input's read. The
post-condition still judges the edited members by the output's bytes."""

from __future__ import annotations

import contextlib
import hashlib
import re
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from slimwheel.analysis import InspectionCache, analyse_wheel
from slimwheel.analysis import inspect as inspection
from slimwheel.catalog.store import read_catalog
from slimwheel.check import check_wheel
from slimwheel.errors import InputError, WheelError
from slimwheel.progress import Advance
from slimwheel.repair import RepairOptions, pipeline
from slimwheel.repair.apply import AnalysedContent, apply_plan, find_patchelf
from slimwheel.repair.pipeline import RepairRefusedError, repair_wheel
from slimwheel.repair.plan import plan_repair
from slimwheel.wheel import Wheel
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import SOLVER_INIT, SOLVER_TAG, plan_for_cuda13
from tests.support.wheels import make_wheel


def _wheel(tmp_path: Path, zoo: ElfZoo) -> Path:
    """auditwheel's layout (a hashed copy of libcudss, dropped by repair; the extension, edited), plus
    an ELF file repair leaves alone, whose relative RPATH check calls an error."""
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": zoo.ext_auditwheel.read_bytes(),
        "solver.libs/libcudss-1a2b3c4d.so.1.0.0": zoo.auditwheel_copy.read_bytes(),
        "solver/misc/librelative.so.1": zoo.relative_rpath.read_bytes(),
    }
    (tmp_path / "in").mkdir()
    return make_wheel(tmp_path / "in", "solver", "1.0", files, tag=SOLVER_TAG)


def test_the_input_is_read_once_and_the_output_only_where_it_was_edited(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path, elf_zoo)
    catalog = read_catalog(own_catalog)
    options = RepairOptions(cuda_major=13)
    outcome = repair_wheel(wheel, tmp_path / "out", catalog, options=options, allow_broken=True)
    # The untouched library's error is still found in the output, from the input's read of it.
    assert outcome.check.introduced == ()
    assert [(p.path, p.kind) for p in outcome.check.inherited] == [
        ("solver/misc/librelative.so.1", "relative-rpath-entry")
    ]
    edited = {edit.path for edit in outcome.plan.edits}
    assert edited == {"solver/_solver.so"}
    assert outcome.plan.drop == ("solver.libs/libcudss-1a2b3c4d.so.1.0.0",)
    # The input: the extension and the library, once each (the dropped copy is never read); the
    # output: nothing read, the library's read reused and the edited extension's new content read
    # as it was written.
    reads = outcome.reads
    assert (reads.input, reads.output, reads.reused, reads.watched) == (2, 0, 1, 1)
    assert outcome.output is not None
    # The output's check judged the extension's new bytes: its search path reaches the provider.
    with Wheel.open(outcome.output) as written:
        report = analyse_wheel(written, catalog)
    (extension,) = [elf for elf in report.elf_files if elf.path == "solver/_solver.so"]
    assert extension.rpath or extension.runpath


def test_a_check_given_the_analysis_answers_as_one_that_reads(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path, elf_zoo)
    catalog = read_catalog(own_catalog)
    cache = InspectionCache()
    with Wheel.open(wheel) as source:
        read_here = check_wheel(source, catalog, cuda_major=13)
        report = analyse_wheel(source, catalog, cache=cache)
        given = check_wheel(source, catalog, cuda_major=13, report=report)
        assert cache.reads == 3
        again = analyse_wheel(source, catalog, cache=cache)
    assert (cache.reads, cache.reused) == (3, 3)
    assert again == report
    assert given == read_here
    other = make_wheel(tmp_path, "other", "1.0", {"other/__init__.py": b""})
    with Wheel.open(other) as source, pytest.raises(ValueError, match="not of other"):
        check_wheel(source, catalog, report=report)


def test_a_forgotten_member_is_read_again(elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, elf_zoo)
    catalog = read_catalog(own_catalog)
    cache = InspectionCache()
    with Wheel.open(wheel) as source:
        analyse_wheel(source, catalog, cache=cache)
        cache.forget(["solver/_solver.so"])
        analyse_wheel(source, catalog, cache=cache)
    assert (cache.reads, cache.reused) == (4, 2)


def _sabotaging_patchelf(tmp_path: Path) -> Path:
    """The real patchelf, then one wrong edit of its own: the RPATH no longer reaches the provider."""
    script = tmp_path / "patchelf-then-break"
    script.write_text(
        f'#!/bin/sh\nset -e\n"{find_patchelf()}" "$@"\n'
        'for last in "$@"; do :; done\n'
        f'"{find_patchelf()}" --force-rpath --set-rpath \'$ORIGIN/nowhere\' "$last"\n'
    )
    script.chmod(0o755)
    return script


def test_an_edited_member_broken_in_the_output_is_still_caught(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    """The input's read of the extension says it is fine; the output's bytes say otherwise, and those
    are what the post-condition judges."""
    wheel = _wheel(tmp_path, elf_zoo)
    out = tmp_path / "out"
    catalog = read_catalog(own_catalog)
    with pytest.raises(RepairRefusedError) as refused:
        repair_wheel(
            wheel,
            out,
            catalog,
            options=RepairOptions(cuda_major=13),
            patchelf=str(_sabotaging_patchelf(tmp_path)),
        )
    assert [(p.path, p.soname) for p in refused.value.outcome.check.introduced] == [
        ("solver/_solver.so", "libcudss.so.1")
    ]
    assert refused.value.outcome.reads.output == 1
    assert list(out.iterdir()) == []


class _Recorded:
    """A Progress that keeps what it is told (a real implementation of the interface, not a stand-in
    for some other part): each step's description, total, unit and every value it was advanced to."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, int | None, str, list[int]]] = []

    @contextlib.contextmanager
    def step(self, description: str, *, total: int | None = None, unit: str = "steps") -> Iterator[Advance]:
        seen: list[int] = []
        self.steps.append((description, total, unit, seen))
        yield seen.append


def test_writing_reports_progress_member_by_member(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path, elf_zoo)
    recorded = _Recorded()
    repair_wheel(
        wheel,
        tmp_path / "out",
        read_catalog(own_catalog),
        options=RepairOptions(cuda_major=13),
        allow_broken=True,
        progress=recorded,
    )
    (writing,) = [step for step in recorded.steps if step[0].startswith("writing ")]
    _, total, unit, seen = writing
    assert (total, unit) == (wheel.stat().st_size, "bytes")
    with Wheel.open(wheel) as source:
        members = len(source.members)
    assert len(seen) == members + 1  # once before each member, then the whole
    assert seen == sorted(seen)
    assert seen[-1] == total


def _raw_member(path: Path, name: str) -> bytes:
    """A member's bytes as stored in the archive."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
    with path.open("rb") as stream:
        stream.seek(info.header_offset + 26)
        name_length, extra_length = (
            int.from_bytes(stream.read(2), "little"),
            int.from_bytes(stream.read(2), "little"),
        )
        stream.seek(info.header_offset + 30 + name_length + extra_length)
        return stream.read(info.compress_size)


def _recompressed(path: Path, level: int) -> Path:
    """The same wheel, its deflated members at zlib ``level`` (a builder's choice)."""
    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w") as target:
        for info, data in members:
            target.writestr(
                info, data, compresslevel=level if info.compress_type == zipfile.ZIP_DEFLATED else None
            )
    return path


@pytest.mark.parametrize(
    ("compression", "copied"),
    [(zipfile.ZIP_DEFLATED, False), (zipfile.ZIP_DEFLATED, True), (zipfile.ZIP_STORED, False)],
    ids=["deflated", "deflated-from-its-inflated-copy", "stored"],
)
def test_an_edited_member_is_spliced_when_deflated_and_deflated_whole_when_stored(
    elf_zoo: ElfZoo,
    own_catalog: Path,
    tmp_path: Path,
    compression: int,
    copied: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A deflated member is re-deflated only around its edits: the compressed bits between them are
    the input's (deflated here at level 1, which repair never uses), and it grows by a few bytes at most; a
    stored one is deflated whole. Either way the output passes check. ``copied``: the analysis
    inflates every library into a file (as it does big ones), from which apply splices it."""
    if copied:
        monkeypatch.setattr(pipeline, "INFLATED_COPY_ABOVE", 0)
    tail = b"".join(b"symbol_%d\n" % (i * 7919 % 10007) for i in range(30_000))  # between the edits
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": elf_zoo.ext_auditwheel.read_bytes() + tail,
        "solver.libs/libcudss-1a2b3c4d.so.1.0.0": elf_zoo.auditwheel_copy.read_bytes(),
    }
    (tmp_path / "in").mkdir()
    wheel = _recompressed(
        make_wheel(tmp_path / "in", "solver", "1.0", files, tag=SOLVER_TAG, compression=compression), 1
    )
    catalog = read_catalog(own_catalog)
    outcome = repair_wheel(wheel, tmp_path / "out", catalog, options=RepairOptions(cuda_major=13))
    assert outcome.check.passes
    assert outcome.output is not None
    name = "solver/_solver.so"
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(outcome.output) as written:
        before, after = source.getinfo(name), written.getinfo(name)
        assert after.compress_type == zipfile.ZIP_DEFLATED
        assert written.read(name) != source.read(name)
    if compression == zipfile.ZIP_DEFLATED:
        raw_in, raw_out = _raw_member(wheel, name), _raw_member(outcome.output, name)
        third = len(raw_in) // 3
        assert raw_in[third : 2 * third] in raw_out  # the input's level-1 bits, reused
        assert after.compress_size <= before.compress_size + 600  # spans are level 6: smaller, if anything


# -- the digests the analysis takes, which spare apply inflating what it copies raw -----------------


@pytest.mark.parametrize("spooled", [False, True])
@pytest.mark.parametrize("jobs", [1, 2])
def test_the_analysis_hashes_each_member_it_inflates_whole(
    jobs: int,
    spooled: bool,
    elf_zoo: ElfZoo,
    own_catalog: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In this process and in a worker (jobs=2), through a view and (in this process) through a spool,
    the path a big library with tables moved by patchelf takes: the digest is the content's sha256."""
    wheel = _wheel(tmp_path, elf_zoo)
    if spooled:  # every member takes the spool path (its first bytes show no ELF: the view path)
        monkeypatch.setattr(inspection, "_PEEK_ABOVE", 0)
        monkeypatch.setattr(inspection, "_SPOOL_MOVED_ABOVE", 0)
        monkeypatch.setattr(inspection, "segment_after_section_headers", lambda _prefix: True)
    catalog = read_catalog(own_catalog)
    cache = InspectionCache(hashes_content=True)
    with Wheel.open(wheel) as source:
        analyse_wheel(source, catalog, cache=cache, jobs=jobs, parallel_bytes=0)
        digests = cache.content_digests(source)
        libraries = [m.name for m in source.members if m.name.endswith(".so") or ".so." in m.name]
        assert len(libraries) == 3
        wanted = {name: hashlib.sha256(source.read_member(name)).digest() for name in libraries}
    assert digests == wanted
    plain = InspectionCache()
    with Wheel.open(wheel) as source:
        analyse_wheel(source, catalog, cache=plain)
        assert plain.content_digests(source) == {}  # show and check pay nothing for it


def test_a_worker_refuses_a_file_that_is_not_the_one_analysed(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, elf_zoo)
    with Wheel.open(wheel) as source:
        assert source.identity is not None
        members = [m for m in source.members if m.name.endswith(".so") or ".so." in m.name]
        changed = inspection._Keeping(digests=True, identity=(*source.identity[:3], source.identity[3] + 1))
        with pytest.raises(InputError, match="changed while it was read"):
            inspection._inspect_members(source, members, False, 2, 0, keeping=changed)


def test_apply_takes_the_analysis_digests_only_from_the_same_file(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    """A digest that does not match RECORD fails the copy when it comes from this very file (so it
    was used, not the content inflated again), and is ignored when it names another file."""
    wheel = _wheel(tmp_path, elf_zoo)
    catalog = read_catalog(own_catalog)
    with Wheel.open(wheel) as source:
        plan = plan_for_cuda13(source, catalog)
        identity = source.identity
    assert identity is not None
    untouched = "solver/misc/librelative.so.1"
    wrong = {untouched: hashlib.sha256(b"not its content").digest()}
    out = tmp_path / "out"
    with pytest.raises(WheelError, match=re.escape(untouched)):
        apply_plan(wheel, plan, out, analysed=AnalysedContent(identity, wrong))
    assert not out.exists() or list(out.iterdir()) == []
    other_file = (identity[0], identity[1] + 1, *identity[2:])
    written = apply_plan(wheel, plan, out, analysed=AnalysedContent(other_file, wrong))
    with Wheel.open(written) as output:
        output.verify()


# -- big members inflated into files, from which apply splices them without inflating them again -----


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_analysis_inflates_big_members_into_files_with_their_blocks(
    jobs: int, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    """In this process and in a worker: each library bigger than ``copies_above`` lands in the tables
    folder, its content as it is, hashed on the way; discarding keeps only the ones asked for."""
    wheel = _wheel(tmp_path, elf_zoo)
    folder = tmp_path / "tables"
    folder.mkdir()
    cache = InspectionCache(folder, hashes_content=True, copies_above=0)
    with Wheel.open(wheel) as source:
        analyse_wheel(source, read_catalog(own_catalog), cache=cache, jobs=jobs, parallel_bytes=0)
        copies = cache.inflated_copies(source)
        libraries = sorted(m.name for m in source.members if m.name.endswith(".so") or ".so." in m.name)
        assert sorted(copies) == libraries
        for name, copy in copies.items():
            content = source.read_member(name)
            assert copy.path.parent == folder
            assert copy.path.read_bytes() == content
            member = source.member(name)
            assert (copy.size, copy.crc, copy.raw_size) == (len(content), member.crc, member.compress_size)
        assert cache.content_digests(source) == {
            name: hashlib.sha256(source.read_member(name)).digest() for name in libraries
        }
        cache.discard_copies(source, keep=["solver/_solver.so"])
        assert sorted(cache.inflated_copies(source)) == ["solver/_solver.so"]
    assert [p.name.endswith(".content") for p in folder.iterdir()].count(True) == 1
    plain = InspectionCache(folder)
    with Wheel.open(wheel) as source:
        analyse_wheel(source, read_catalog(own_catalog), cache=plain)
        assert plain.inflated_copies(source) == {}  # not asked: none made (show, check)


@pytest.mark.parametrize("same_file", [True, False])
def test_apply_splices_from_the_inflated_copy_only_of_the_same_file(
    same_file: bool, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    """A copy damaged after the analysis fails the member's CRC-32 as it is replayed: so apply read
    it instead of inflating the member, and a wrong copy never becomes a member. Named as taken of
    another file, it is not read: the member is inflated and written as it should be."""
    wheel = _wheel(tmp_path, elf_zoo)
    catalog = read_catalog(own_catalog)
    folder = tmp_path / "tables"
    folder.mkdir()
    cache = InspectionCache(folder, hashes_content=True, copies_above=0)
    with Wheel.open(wheel) as source:
        report = analyse_wheel(source, catalog, cache=cache)
        plan = plan_repair(
            report,
            catalog,
            requires_dist=source.requires_dist(),
            dist_info=source.dist_info,
            options=RepairOptions(cuda_major=13),
        )
        identity = source.identity
        copies = cache.inflated_copies(source)
    assert identity is not None
    edited = "solver/_solver.so"
    assert [edit.path for edit in plan.edits] == [edited]
    damaged = bytearray(copies[edited].path.read_bytes())
    damaged[len(damaged) // 2] ^= 0x40
    copies[edited].path.write_bytes(bytes(damaged))
    named = identity if same_file else (identity[0], identity[1] + 1, *identity[2:])
    analysed = AnalysedContent(named, {}, {edited: copies[edited]})
    out = tmp_path / "out"
    if same_file:
        with pytest.raises(WheelError, match=f"{re.escape(edited)}.*CRC-32"):
            apply_plan(wheel, plan, out, analysed=analysed)
        assert not out.exists() or list(out.iterdir()) == []
        return
    written = apply_plan(wheel, plan, out, analysed=analysed)
    with Wheel.open(written) as output:
        output.verify()


class _DamagingCopies(_Recorded):
    """A Progress that, as writing starts, flips one byte of every inflated copy in ``scratch``."""

    def __init__(self, scratch: Path) -> None:
        super().__init__()
        self.scratch = scratch
        self.damaged: list[str] = []

    @contextlib.contextmanager
    def step(self, description: str, *, total: int | None = None, unit: str = "steps") -> Iterator[Advance]:
        if description.startswith("writing "):
            for copy in self.scratch.glob("slimwheel-repair-*/tables/*.content"):
                data = bytearray(copy.read_bytes())
                data[len(data) // 2] ^= 0x40
                copy.write_bytes(bytes(data))
                self.damaged.append(copy.name)
        with super().step(description, total=total, unit=unit) as advance:
            yield advance


def test_repair_splices_the_members_it_edits_from_the_analysis_copies(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between planning and writing, only the edited member's copy is left (the others are removed
    once planned), and writing reads it: damaged there, the repair stops on its CRC-32, writing
    nothing and leaving no scratch behind."""
    monkeypatch.setattr(pipeline, "INFLATED_COPY_ABOVE", 0)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    wheel = _wheel(tmp_path, elf_zoo)
    damaging = _DamagingCopies(scratch)
    out = tmp_path / "out"
    with pytest.raises(WheelError, match=r"solver/_solver\.so.*CRC-32"):
        repair_wheel(
            wheel,
            out,
            read_catalog(own_catalog),
            options=RepairOptions(cuda_major=13),
            allow_broken=True,
            progress=damaging,
        )
    assert len(damaging.damaged) == 1  # the extension's; the kept library's and the dropped copy's: none
    assert list(scratch.iterdir()) == []
    assert [p.name for p in out.iterdir()] == []
