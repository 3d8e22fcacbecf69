"""repair reads each member once: the plan's analysis serves the input's check, and the output's check
reads only the members apply rewrote, taking the rest (copied raw) from the input's read. The
post-condition still judges the edited members by the output's bytes."""

from __future__ import annotations

import contextlib
import hashlib
import re
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
from slimwheel.repair import RepairOptions
from slimwheel.repair.apply import AnalysedContent, apply_plan, find_patchelf
from slimwheel.repair.pipeline import RepairRefusedError, repair_wheel
from slimwheel.wheel import Wheel
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import SOLVER_INIT, SOLVER_TAG, plan_for_cuda13, unresolvable_library
from tests.support.wheels import make_wheel


def _wheel(tmp_path: Path, zoo: ElfZoo) -> Path:
    """auditwheel's layout (a hashed copy of libcudss, dropped by repair; the extension, edited), plus
    an ELF file repair leaves alone, whose need of a library nothing installs check calls an error."""
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": zoo.ext_auditwheel.read_bytes(),
        "solver.libs/libcudss-1a2b3c4d.so.1.0.0": zoo.auditwheel_copy.read_bytes(),
        "solver/misc/libunresolvable.so.1": unresolvable_library(zoo, tmp_path),
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
        ("solver/misc/libunresolvable.so.1", "unresolved-needed")
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


def test_the_input_is_opened_once(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its directory and RECORD are read once, for the analysis, the plan, the input's check and
    apply (a wheel of 100,000 files spent 0.5 s a reading); then let go before the output is read."""
    wheel = _wheel(tmp_path, elf_zoo)
    opened: list[Path] = []
    original = Wheel.open.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Wheel], path: Path) -> Wheel:
        opened.append(Path(path))
        return original(cls, path)  # type: ignore[no-any-return]

    monkeypatch.setattr(Wheel, "open", classmethod(counting))
    options = RepairOptions(cuda_major=13)
    outcome = repair_wheel(
        wheel, tmp_path / "out", read_catalog(own_catalog), options=options, allow_broken=True
    )
    assert outcome.output is not None
    assert opened.count(wheel) == 1, opened
    assert len(opened) == 2  # and the output, once


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


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_an_edited_member_is_spliced_when_deflated_and_deflated_whole_when_stored(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, compression: int
) -> None:
    """A deflated member is re-deflated only around its edits: the compressed bits between them are
    the input's (deflated here at level 1, which repair never uses), and it grows by a few bytes at most; a
    stored one is deflated whole. Either way the output passes check."""
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
    untouched = "solver/misc/libunresolvable.so.1"
    wrong = {untouched: hashlib.sha256(b"not its content").digest()}
    out = tmp_path / "out"
    with pytest.raises(WheelError, match=re.escape(untouched)):
        apply_plan(wheel, plan, out, analysed=AnalysedContent(identity, wrong))
    assert not out.exists() or list(out.iterdir()) == []
    other_file = (identity[0], identity[1] + 1, *identity[2:])
    written = apply_plan(wheel, plan, out, analysed=AnalysedContent(other_file, wrong))
    with Wheel.open(written) as output:
        output.verify()
