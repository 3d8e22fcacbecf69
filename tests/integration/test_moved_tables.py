"""Libraries whose tables sit outside the ends a streamed read keeps.

PyTorch 1.13's ``libtorch_cuda_cu.so`` (763 MB) was rewritten by patchelf when it was built: its
``.dynstr`` (10.9 MB) now ends the file, after the section headers, so ``.shstrtab``, ``.symtab``
and ``.strtab`` sit more than a tail's length before the end. The analysis then spooled the whole
library to disk, and repair's edit planning gave up and let patchelf rewrite it (1.5 GB of memory,
50 s of zlib). Here a gcc-built library, moved about the same way by the real patchelf, is read with
heads and tails of 4 KiB so that every table falls outside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import inspect as inspection
from slimwheel.analysis import static
from slimwheel.catalog.exports import read_view
from slimwheel.elf import keep, read_elf_file, segment_after_section_headers
from slimwheel.repair import apply
from slimwheel.repair.plan import ElfEdit
from slimwheel.wheel import Wheel
from slimwheel.wheel.record import RecordEntry
from tests.support.elfbuild import compile_shared, find_tool, patchelf
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(find_tool("patchelf") is None, reason="needs patchelf")

_FUNCTIONS = 3000  # enough symbols that each table is tens of KB


def _library(tmp_path: Path) -> Path:
    source = "\n".join(f"int cublasLikeFunction{i}(int x) {{ return x + {i}; }}" for i in range(_FUNCTIONS))
    # A version string in a .rodata of 4 MiB (several of a view's chunks, away from every table),
    # which the static scan reads once the cuBLAS-named code is found.
    source += '\nconst char *cublas_like_version(void) { return "cuBLAS version 12.4.5"; }\n'
    source += "const char cublas_like_table[4 << 20] = {1};\n"
    library = compile_shared(tmp_path / "libmoved.so", {"moved.c": source}, soname="libmoved.so")
    # A search path longer than the old .dynstr has room for: patchelf writes a new .dynstr at the
    # end of the file, as PyTorch's build did.
    return patchelf(library, "--set-rpath", "$ORIGIN/" + "x" * 4000)


def _wheel(tmp_path: Path) -> Path:
    data = _library(tmp_path).read_bytes()
    return make_wheel(tmp_path, "moved", "1.0", {"moved/libmoved.so": data}, tag="py3-none-linux_x86_64")


class _Passes:
    """Counts the real member_view and seekable_member calls of every Wheel."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.views = 0
        self.spools = 0
        monkeypatch.setattr(Wheel, "member_view", self._counted(Wheel.member_view, "views"))
        monkeypatch.setattr(Wheel, "seekable_member", self._counted(Wheel.seekable_member, "spools"))

    def _counted(
        self, method: Callable[..., AbstractContextManager[Any]], field: str
    ) -> Callable[..., AbstractContextManager[Any]]:
        @contextmanager
        def counted(wheel: Wheel, *args: Any, **kwargs: Any) -> Iterator[Any]:
            setattr(self, field, getattr(self, field) + 1)
            with method(wheel, *args, **kwargs) as value:
                yield value

        return counted


def test_the_analysis_keeps_the_moved_tables_on_a_second_pass_instead_of_spooling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_path = _wheel(tmp_path)
    with Wheel.open(wheel_path) as wheel:
        member = wheel.member("moved/libmoved.so")
        whole = inspection._inspect_member(wheel, member, True)  # tables within the default ends
        monkeypatch.setattr(inspection, "_VIEW_HEAD", 4096)
        monkeypatch.setattr(inspection, "_VIEW_TAIL", 4096)
        passes = _Passes(monkeypatch)
        narrow = inspection._inspect_member(wheel, member, True)
    assert whole is not None
    assert narrow == whole
    assert len(whole.exported_api) + len(whole.internal_api) >= _FUNCTIONS  # the symbols were read
    assert whole.rodata_strings == ("cuBLAS 12.4.5",)  # and .rodata, on the same second pass
    assert (passes.views, passes.spools) == (2, 0)


def test_tables_past_the_head_in_the_first_half_cost_a_short_read_not_a_second_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in mxnet-cu112's libmxnet.so (850 MB): a .dynstr (26 MB) that runs past the 16 MiB head,
    # with most of the file after it. The first pass misses it; what it lacks is then read from the
    # start up to its end only, with the first pass's ends and ranges kept.
    source = "\n".join(f"int cublasLikeFunction{i}(int x) {{ return x + {i}; }}" for i in range(_FUNCTIONS))
    source += '\nconst char *cublas_like_version(void) { return "cuBLAS version 12.4.5"; }\n'
    source += "int big_data[4 << 20] = {1};\n"  # 16 MiB of .data after every table
    library = compile_shared(tmp_path / "libfront.so", {"front.c": source}, soname="libfront.so")
    name = "front/libfront.so"
    wheel_path = make_wheel(
        tmp_path, "front", "1.0", {name: library.read_bytes()}, tag="py3-none-linux_x86_64"
    )
    read: list[int] = []
    with Wheel.open(wheel_path) as wheel:
        member = wheel.member(name)
        whole = inspection._inspect_member(wheel, member, True)
        monkeypatch.setattr(inspection, "_VIEW_HEAD", 4096)
        monkeypatch.setattr(inspection, "_VIEW_TAIL", 1 << 20)  # .symtab and .strtab, at the end
        passes = _Passes(monkeypatch)
        opened = Wheel.open_member

        def counted(wheel: Wheel, member_name: str) -> Any:
            stream = opened(wheel, member_name)
            original = stream.read

            def reading(size: int = -1) -> bytes:
                data: bytes = original(size)
                read.append(len(data))
                return data

            stream.read = reading  # type: ignore[method-assign]
            return stream

        monkeypatch.setattr(Wheel, "open_member", counted)
        narrow = inspection._inspect_member(wheel, member, True)
    assert whole is not None
    assert narrow == whole
    assert whole.rodata_strings == ("cuBLAS 12.4.5",)  # .rodata too, on the short read
    assert (passes.views, passes.spools) == (1, 0)
    dynstr = whole.facts.section(".dynstr")
    assert dynstr is not None
    assert dynstr.offset + dynstr.size < sum(read) < member.file_size // 2


def _narrow_planning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ElfEdit]:
    """The moved library's wheel, planned with 4 KiB ends, and an RPATH edit that fits in place."""
    monkeypatch.setattr(apply, "_PLAN_HEAD", 4096)
    monkeypatch.setattr(apply, "_PLAN_TAIL", 4096)
    return _wheel(tmp_path), ElfEdit(path="moved/libmoved.so", search_path=("$ORIGIN/../nvidia/cublas/lib",))


def test_repair_plans_the_edit_itself_on_a_second_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_path, edit = _narrow_planning(tmp_path, monkeypatch)
    with Wheel.open(wheel_path) as wheel:
        records = wheel.checked_record()
        record: RecordEntry = records[edit.path]
        passes = _Passes(monkeypatch)
        planned = apply._planned(wheel, edit, record)
    assert planned is not None  # not left to patchelf
    assert planned.changes_anything
    assert passes.views >= 2
    assert passes.spools == 0


def _read_with_cache(wheel: Wheel, tables_folder: Path | None = None) -> inspection.InspectionCache:
    """The analysis's read of every member, into a cache (saving edit tables in ``tables_folder``)."""
    if tables_folder is not None:
        tables_folder.mkdir()
    cache = inspection.InspectionCache(tables_folder)
    inspection._read_members(wheel, True, 1, inspection.PARALLEL_BYTES, frozenset(), cache=cache)
    return cache


def test_repair_plans_the_edit_in_one_pass_where_the_analysis_found_the_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_path, edit = _narrow_planning(tmp_path, monkeypatch)
    with Wheel.open(wheel_path) as wheel:
        record = wheel.checked_record()[edit.path]
        tables = _read_with_cache(wheel).known_tables(wheel.member(edit.path))
        without = apply._planned(wheel, edit, record)
        passes = _Passes(monkeypatch)
        planned = apply._planned(wheel, edit, record, tables)
    assert tables
    assert (passes.views, passes.spools) == (1, 0)
    assert planned == without


def _found(inspected: Any) -> tuple[Any, ...]:
    """What a read found of a member (an inspection or an analysis's ELF member)."""
    return (inspected.facts, inspected.exported_api, inspected.internal_api, inspected.rodata_strings)


def _edited_wheel(tmp_path: Path, wheel_path: Path, name: str, patch: Any) -> Path:
    with Wheel.open(wheel_path) as wheel:
        data = b"".join(patch.apply(wheel.iter_member_chunks(name)))
    out = tmp_path / "edited"
    out.mkdir()
    return make_wheel(out, "moved", "1.0", {name: data}, tag="py3-none-linux_x86_64")


@pytest.mark.parametrize("search_path", ["$ORIGIN/../nvidia/cublas/lib", "$ORIGIN/" + "y" * 6000])
def test_the_output_read_of_an_edited_member_is_one_pass_and_finds_what_a_full_read_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, search_path: str
) -> None:
    """In place (the RPATH fits the old one's room) and appended (it does not: a new .dynstr at the
    end): the re-read keeps the input's tables and the written ranges, reads the dynamic facts and
    exported symbols anew, and takes .symtab's from the input's read."""
    wheel_path = _wheel(tmp_path)
    name = "moved/libmoved.so"
    edit = ElfEdit(path=name, search_path=(search_path,))
    with Wheel.open(wheel_path) as wheel:
        cache = _read_with_cache(wheel)
        patch = apply._planned(
            wheel, edit, wheel.checked_record()[name], cache.known_tables(wheel.member(name))
        )
    assert patch is not None
    assert patch.changes_anything
    edited_path = _edited_wheel(tmp_path, wheel_path, name, patch)
    cache.rewritten(name, patch.written)
    monkeypatch.setattr(inspection, "_SMALL_END", 4096)
    with Wheel.open(edited_path) as edited:
        member = edited.member(name)
        full = inspection._inspect_member(edited, member, True)
        passes = _Passes(monkeypatch)
        outcomes = inspection._read_members(
            edited, True, 1, inspection.PARALLEL_BYTES, frozenset(), cache=cache
        )
    assert (passes.views, passes.spools) == (1, 0)
    assert full is not None
    assert full.facts.rpath == (search_path,)
    (elf_member,) = outcomes[0]
    assert _found(elf_member) == _found(full)
    assert len(full.internal_api) >= _FUNCTIONS


def test_an_edit_that_writes_into_the_symbol_table_is_read_again_in_full(tmp_path: Path) -> None:
    wheel_path = _wheel(tmp_path)
    name = "moved/libmoved.so"
    with Wheel.open(wheel_path) as wheel:
        cache = _read_with_cache(wheel)
        member = wheel.member(name)
        found, outcome = cache.get(member, True)
        assert found
        assert isinstance(outcome, inspection._Inspection)
        symtab = outcome.facts.section(".symtab")
        dynstr = outcome.facts.section(".dynstr")
        assert symtab is not None
        assert dynstr is not None
        cache.rewritten(name, [(dynstr.offset, 8)])
        assert cache.rewrite_of(member, True) is not None
        cache = _read_with_cache(wheel)
        cache.rewritten(name, [(symtab.offset + 24, 8)])
        assert cache.rewrite_of(member, True) is None
        assert cache.get(member, True) == (False, None)


def test_repair_plans_the_edit_from_the_tables_the_analysis_saved_without_inflating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analysis (with 4 KiB ends: every table is outside them) saves the bytes of the tables an
    edit reads; planning the edit from them reads the member no more, and gives the same patch."""
    wheel_path, edit = _narrow_planning(tmp_path, monkeypatch)
    monkeypatch.setattr(inspection, "_VIEW_HEAD", 4096)
    monkeypatch.setattr(inspection, "_VIEW_TAIL", 4096)
    with Wheel.open(wheel_path) as wheel:
        record = wheel.checked_record()[edit.path]
        cache = _read_with_cache(wheel, tmp_path / "tables")
        member = wheel.member(edit.path)
        saved = cache.saved_tables(member)
        without = apply._planned(wheel, edit, record)
        passes = _Passes(monkeypatch)
        planned = apply._planned(wheel, edit, record, cache.known_tables(member), saved)
    assert saved is not None
    # Far less than the member: its ends, headers and dynamic tables, not .symtab, .strtab, .text.
    assert sum(length for _, length in saved.ranges) < member.file_size // 4
    assert Path(saved.path).stat().st_size == sum(length for _, length in saved.ranges)
    assert (passes.views, passes.spools) == (0, 0)
    assert planned is not None
    assert planned == without


def test_planning_falls_back_to_a_pass_when_the_saved_tables_are_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_path, edit = _narrow_planning(tmp_path, monkeypatch)
    with Wheel.open(wheel_path) as wheel:
        record = wheel.checked_record()[edit.path]
        cache = _read_with_cache(wheel, tmp_path / "tables")
        member = wheel.member(edit.path)
        saved = cache.saved_tables(member)
        assert saved is not None
        Path(saved.path).unlink()
        without = apply._planned(wheel, edit, record)
        passes = _Passes(monkeypatch)
        planned = apply._planned(wheel, edit, record, cache.known_tables(member), saved)
    assert (passes.views, passes.spools) == (1, 0)
    assert planned is not None
    assert planned == without


@pytest.mark.parametrize("search_path", ["$ORIGIN/../nvidia/cublas/lib", "$ORIGIN/" + "y" * 6000])
def test_an_edited_member_seen_as_it_is_written_is_not_read_again_and_matches_a_full_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, search_path: str
) -> None:
    """What repair's writer hands the RewriteWatch (the new content, in chunks) serves the output's
    analysis: no pass over the output's member, the same facts and symbols as a full read of it."""
    wheel_path = _wheel(tmp_path)
    name = "moved/libmoved.so"
    edit = ElfEdit(path=name, search_path=(search_path,))
    with Wheel.open(wheel_path) as wheel:
        cache = _read_with_cache(wheel)
        patch = apply._planned(wheel, edit, wheel.checked_record()[name])
        assert patch is not None
        chunks = list(patch.apply(wheel.iter_member_chunks(name)))
    edited_path = _edited_wheel(tmp_path, wheel_path, name, patch)
    monkeypatch.setattr(inspection, "_SMALL_END", 4096)
    watch = cache.rewriting(name, patch.written, patch.size)
    assert watch is not None
    for chunk in chunks:
        watch.feed(chunk)
    watch.finish()
    with Wheel.open(edited_path) as edited:
        full = inspection._inspect_member(edited, edited.member(name), True)
        passes = _Passes(monkeypatch)
        outcomes = inspection._read_members(
            edited, True, 1, inspection.PARALLEL_BYTES, frozenset(), cache=cache
        )
    assert (passes.views, passes.spools) == (0, 0)
    assert cache.watched == 1
    assert full is not None
    assert full.facts.rpath == (search_path,)
    (elf_member,) = outcomes[0]
    assert _found(elf_member) == _found(full)


def test_a_watch_that_kept_too_little_leaves_the_member_to_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch not told of the appended segment (the new .dynstr, 6 KB, past a 4 KiB tail) cannot
    read the new content: it stores nothing, and the output's analysis reads the member itself and
    finds the new search path."""
    wheel_path = _wheel(tmp_path)
    name = "moved/libmoved.so"
    search_path = "$ORIGIN/" + "y" * 6000
    with Wheel.open(wheel_path) as wheel:
        cache = _read_with_cache(wheel)
        edit = ElfEdit(path=name, search_path=(search_path,))
        patch = apply._planned(wheel, edit, wheel.checked_record()[name])
        assert patch is not None
        assert patch.appended
        chunks = list(patch.apply(wheel.iter_member_chunks(name)))
    edited_path = _edited_wheel(tmp_path, wheel_path, name, patch)
    monkeypatch.setattr(inspection, "_SMALL_END", 4096)
    watch = cache.rewriting(name, [(p.offset, len(p.data)) for p in patch.patches], patch.size)
    assert watch is not None
    for chunk in chunks:
        watch.feed(chunk)
    watch.finish()
    with Wheel.open(edited_path) as edited:
        passes = _Passes(monkeypatch)
        outcomes = inspection._read_members(
            edited, True, 1, inspection.PARALLEL_BYTES, frozenset(), cache=cache
        )
    assert cache.watched == 0
    assert passes.views >= 1
    (elf_member,) = outcomes[0]
    assert elf_member.facts is not None
    assert elf_member.facts.rpath == (search_path,)


@pytest.mark.parametrize("cut_into_string", [-300, -10, 0, 1, 7, 20, 21, 22])
def test_rodata_is_scanned_in_pieces_and_a_string_across_a_cut_is_found_once_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut_into_string: int
) -> None:
    """The version-string scan reads .rodata a piece at a time; a piece boundary falling before, at,
    inside or after "cuBLAS version 12.4.5" finds it exactly once, never cut short."""
    source = (
        "const char pad_before[300000] = {1};\n"
        'const char version_text[] = "cuBLAS version 12.4.5";\n'
        "const char pad_after[300000] = {1};\n"
    )
    library = compile_shared(tmp_path / "libversion.so", {"version.c": source}, soname="libversion.so")
    facts = read_elf_file(library)
    rodata = facts.section(".rodata")
    assert rodata is not None
    with library.open("rb") as handle:
        handle.seek(rodata.offset)
        where = handle.read(rodata.size).index(b"cuBLAS version 12.4.5")
        assert where > 300  # the cuts below fall inside .rodata
        monkeypatch.setattr(static, "_RODATA_PIECE", where + cut_into_string)
        assert static._scan_rodata(handle, facts, library.name) == ("cuBLAS 12.4.5",)


def test_the_first_bytes_of_a_library_patchelf_moved_tell_its_tables_are_far_from_its_end(
    tmp_path: Path,
) -> None:
    fresh = compile_shared(tmp_path / "libfresh.so", {"fresh.c": "int f(void) { return 1; }\n"})
    assert not segment_after_section_headers(fresh.read_bytes()[:65536])
    assert segment_after_section_headers(_library(tmp_path).read_bytes()[:65536])
    assert not segment_after_section_headers(b"\x7fELF")  # too short to tell


def test_a_big_library_patchelf_moved_is_spooled_at_once_not_viewed_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told by its first bytes (a segment after the section headers), a big library whose tables a
    view would miss is inflated once, into a spool, and read the same."""
    wheel_path = _wheel(tmp_path)
    with Wheel.open(wheel_path) as wheel:
        member = wheel.member("moved/libmoved.so")
        monkeypatch.setattr(inspection, "_VIEW_HEAD", 4096)
        monkeypatch.setattr(inspection, "_VIEW_TAIL", 4096)
        monkeypatch.setattr(inspection, "_PEEK_ABOVE", 0)
        viewed = inspection._inspect_member(wheel, member, True)
        monkeypatch.setattr(inspection, "_SPOOL_MOVED_ABOVE", 0)
        passes = _Passes(monkeypatch)
        spooled = inspection._inspect_member(wheel, member, True)
    assert (passes.views, passes.spools) == (0, 1)
    assert spooled is not None
    assert spooled == viewed
    assert spooled.rodata_strings == ("cuBLAS 12.4.5",)


@pytest.mark.parametrize(("limit", "told"), [(8 << 20, True), (16, False)])
def test_the_saved_tables_hold_the_relocations_that_tell_the_bound_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, told: bool
) -> None:
    """The symbol floors read a file's imports from the tables the analysis saved (4 KiB ends here);
    with its relocation tables, which imports the loader binds, unless those are over the limit."""
    monkeypatch.setattr(inspection, "_VIEW_HEAD", 4096)
    monkeypatch.setattr(inspection, "_VIEW_TAIL", 4096)
    monkeypatch.setattr(inspection, "_RELOCATIONS_SAVED", limit)
    monkeypatch.setattr(inspection, "EDIT_ENDS", 4096)  # the saved ends, which would hold it whole
    monkeypatch.setattr(keep, "EDIT_ENDS", 4096)
    wheel_path, _edit = _narrow_planning(tmp_path, monkeypatch)
    with Wheel.open(wheel_path) as wheel:
        member = wheel.member("moved/libmoved.so")
        saved = _read_with_cache(wheel, tmp_path / "tables").saved_tables(member)
        assert saved is not None
        facts = read_view(saved.open(), where=member.name, symbols=True, defined=False, relocations=True)
    assert facts is not None
    assert facts.undefined_symbols
    relocations = [s for s in facts.sections if s.name.startswith(".rela")]
    assert relocations
    assert all(s.offset > 4096 and s.offset + s.size < member.file_size - 4096 for s in relocations)
    assert (facts.unbound_imports is not None) is told
