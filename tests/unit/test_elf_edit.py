"""slimwheel.elf.edit on real gcc-built libraries: each edit is read back by slimwheel's reader,
pyelftools and ``readelf -d``, and the edited library is loaded in a fresh process."""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from slimwheel.elf import EDIT_ENDS, edit_ranges, read_elf_file
from slimwheel.elf.edit import EditUnsupportedError, ElfPatch, plan_edit
from slimwheel.wheel.view import SavedRanges
from tests.support.elfbuild import (
    compile_shared,
    find_tool,
    patchelf,
    strip_section_headers,
    without_spare_dynamic_slots,
)

pytestmark = pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")

DEP_NAME = "libdep-1a2b3c4d.so.1.2.3"  # auditwheel's style: longer than the name it goes back to
DEP_C = "int dep_value(void) { return 41; }\n"
# A dynamic symbol named "mylibdep.so.1": ld may serve DT_NEEDED "libdep.so.1" from its tail.
TAIL_C = 'int tail_symbol(void) __asm__("mylibdep.so.1");\nint tail_symbol(void) { return 1; }\n'
USER_C = "int dep_value(void);\nint user_value(void) { return dep_value() + 1; }\n"


def _dep(folder: Path, soname: str) -> Path:
    return compile_shared(
        folder / soname, {"dep.c": DEP_C}, soname=soname, version_nodes={"DEP_1": ["dep_value"]}
    )


def _user(folder: Path, dep: Path, *, rpath: str | None = None, extra: str = "") -> Path:
    return compile_shared(
        folder / "libuser.so", {"user.c": USER_C + extra}, soname="libuser.so", link=[dep], rpath=rpath
    )


def _edited(source: Path, target: Path, patch: ElfPatch) -> Path:
    with source.open("rb") as stream, target.open("wb") as out:
        # Small chunks: patches must be applied across chunk boundaries.
        for chunk in patch.apply(iter(lambda: stream.read(977), b"")):
            out.write(chunk)
    assert target.stat().st_size == patch.size
    return target


def _plan(path: Path, **edit: object) -> ElfPatch:
    with path.open("rb") as stream:
        return plan_edit(stream, **edit)  # type: ignore[arg-type]


def _pyelftools(path: Path) -> tuple[list[str], list[str], list[str], list[str]]:
    with path.open("rb") as stream:
        elf = ELFFile(stream)
        dynamic = elf.get_section_by_name(".dynamic")
        assert isinstance(dynamic, DynamicSection)
        tags = list(dynamic.iter_tags())
        # pyelftools sets these attributes per tag kind: getattr keeps the type checker out of it.
        needed = [str(getattr(t, "needed", "")) for t in tags if t.entry.d_tag == "DT_NEEDED"]
        rpath = [str(getattr(t, "rpath", "")) for t in tags if t.entry.d_tag == "DT_RPATH"]
        runpath = [str(getattr(t, "runpath", "")) for t in tags if t.entry.d_tag == "DT_RUNPATH"]
        files: list[str] = []
        for section in elf.iter_sections():
            if isinstance(section, GNUVerNeedSection):
                files += [str(verneed.name) for verneed, _ in section.iter_versions()]
        return needed, rpath, runpath, files


def _readelf(path: Path) -> str:
    readelf = find_tool("readelf")
    if readelf is None:
        pytest.skip("needs readelf")
    result = subprocess.run([readelf, "-dW", str(path)], capture_output=True, text=True, check=True)
    assert "Warning" not in result.stderr, result.stderr
    return result.stdout


def _loads(library: Path, function: str, expected: int) -> None:
    code = (
        f"import ctypes, sys; sys.exit(0 if ctypes.CDLL({str(library)!r}).{function}() == {expected} else 3)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_shorter_needed_rename_is_in_place_and_renames_the_version_need(tmp_path: Path) -> None:
    build, run = tmp_path / "build", tmp_path / "run"
    user = _user(build, _dep(build, DEP_NAME))
    patch = _plan(user, replace_needed=[(DEP_NAME, "libdep.so.1")])
    assert patch.how == "in place"
    assert not patch.appended
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    facts = read_elf_file(edited)
    assert "libdep.so.1" in facts.needed
    assert DEP_NAME not in facts.needed
    assert [need.file for need in facts.version_needs if "DEP_1" in need.names] == ["libdep.so.1"]
    needed, _, _, files = _pyelftools(edited)
    assert "libdep.so.1" in needed
    assert "libdep.so.1" in files
    assert DEP_NAME not in files
    assert "[libdep.so.1]" in _readelf(edited)
    # No RPATH here: the dependency is loaded first by path, and glibc reuses a loaded soname.
    _dep(run, "libdep.so.1")
    code = (
        f"import ctypes, sys; ctypes.CDLL({str(run / 'libdep.so.1')!r}, ctypes.RTLD_GLOBAL); "
        f"sys.exit(0 if ctypes.CDLL({str(edited)!r}).user_value() == 42 else 3)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_rpath_that_fits_is_rewritten_in_place_and_loads(tmp_path: Path) -> None:
    build = tmp_path / "build"
    deps = tmp_path / "deps"
    _dep(deps, "libdep.so.1")
    user = _user(build, _dep(build, "libdep.so.1"), rpath="$ORIGIN/nowhere/at/all/long/enough")
    patch = _plan(user, search_path=("$ORIGIN/../deps",))
    assert patch.how == "in place"
    run = tmp_path / "run"
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    assert read_elf_file(edited).rpath == ("$ORIGIN/../deps",)
    assert _pyelftools(edited)[1] == ["$ORIGIN/../deps"]
    assert "Library rpath: [$ORIGIN/../deps]" in _readelf(edited)
    _loads(edited, "user_value", 42)


def test_rpath_that_does_not_fit_goes_to_an_appended_segment_and_loads(tmp_path: Path) -> None:
    build = tmp_path / "build"
    deps = tmp_path / "deps-in-a-folder-with-a-much-longer-name"
    _dep(deps, "libdep.so.1")
    user = _user(build, _dep(build, "libdep.so.1"), rpath="$ORIGIN")
    wanted = f"$ORIGIN/../{deps.name}"
    patch = _plan(user, search_path=(wanted,), runpath=True)
    assert patch.how == "appended segment"
    run = tmp_path / "run"
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    # The old table, which nothing reads now, is zeros (as patchelf fills it with 'X'): kept, its
    # copy would grow a wheel by the table's compressed size.
    offset, size = patch.abandoned[0]
    with edited.open("rb") as stream:
        stream.seek(offset)
        assert stream.read(size) == bytes(size)
    facts = read_elf_file(edited)
    assert facts.runpath == (wanted,)
    assert facts.rpath == ()
    assert _pyelftools(edited)[2] == [wanted]
    assert f"Library runpath: [{wanted}]" in _readelf(edited)
    _loads(edited, "user_value", 42)


@pytest.mark.parametrize("runpath", [False, True])
def test_a_dynstr_an_earlier_patchelf_put_at_the_end_grows_there_and_loads(
    tmp_path: Path, runpath: bool
) -> None:
    """auditwheel's patchelf leaves ``.dynstr`` at the end of the file, in a segment of its own (an
    8 MB one in pycolmap-cuda12 4.2.1): a longer search path is written after it, growing that
    segment, so the file grows by the string alone, not by a copy of the table (0.6% of that wheel)."""
    build = tmp_path / "build"
    deps = tmp_path / "deps-in-a-folder-with-a-much-longer-name-than-the-old-one"
    _dep(deps, "libdep.so.1")
    user = _user(build, _dep(build, "libdep.so.1"), rpath="$ORIGIN")
    patchelf(user, "--force-rpath", "--set-rpath", "$ORIGIN/a/longer/folder/than/before/so/that/it/moves")
    assert _plan(user, search_path=("$ORIGIN/short",)).how == "in place"  # what fits still goes there
    wanted = f"$ORIGIN/../{deps.name}"
    patch = _plan(user, search_path=(wanted,), runpath=runpath)
    assert patch.how == "grown at the end"
    assert patch.appended_size <= len(wanted) + 1
    assert not patch.abandoned
    run = tmp_path / "run"
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    facts = read_elf_file(edited)
    assert (facts.runpath if runpath else facts.rpath) == (wanted,)
    assert _pyelftools(edited)[2 if runpath else 1] == [wanted]
    assert f"Library {'runpath' if runpath else 'rpath'}: [{wanted}]" in _readelf(edited)
    _loads(edited, "user_value", 42)
    again = _plan(edited, search_path=(f"{wanted}:$ORIGIN/../and/one/more/folder",))
    assert again.how == "grown at the end"  # still at the end
    # Bytes nothing names after the table (a tool's trailer) are not written over: the table moves.
    with user.open("ab") as trailer:
        trailer.write(b"trailer")
    assert _plan(user, search_path=(wanted,), runpath=runpath).how == "appended segment"


def test_new_rpath_in_a_spare_dynamic_slot(tmp_path: Path) -> None:
    build = tmp_path / "build"
    deps = tmp_path / "deps"
    _dep(deps, "libdep.so.1")
    user = _user(build, _dep(build, "libdep.so.1"))
    assert read_elf_file(user).rpath == ()
    try:
        patch = _plan(user, search_path=("$ORIGIN/../deps",))
    except EditUnsupportedError:
        pytest.skip("this linker leaves no spare DT_NULL slot in .dynamic")
    run = tmp_path / "run"
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    assert read_elf_file(edited).rpath == ("$ORIGIN/../deps",)
    assert _pyelftools(edited)[1] == ["$ORIGIN/../deps"]
    _loads(edited, "user_value", 42)


@pytest.mark.parametrize("runpath", [False, True])
def test_a_new_search_path_without_a_spare_dynamic_slot_moves_dynamic_and_loads(
    tmp_path: Path, runpath: bool
) -> None:
    """lld leaves no spare DT_NULL in ``.dynamic``: a search path the file lacks needs a new entry.
    The table, one entry longer and with spare slots, goes into the appended segment with
    ``.dynstr``, in a writable segment (glibc before 2.35 writes into ``.dynamic``); PT_DYNAMIC and
    the section header point at it. patchelf made this edit before, holding the file whole in memory
    twice over (325 MB for sipppy-backend-cuda's 166 MB library)."""
    build, deps, run = tmp_path / "build", tmp_path / "deps", tmp_path / "run"
    _dep(deps, "libdep.so.1")
    user = without_spare_dynamic_slots(_user(build, _dep(build, "libdep.so.1")))
    before = read_elf_file(user)
    assert before.rpath == ()
    with user.open("rb") as stream:
        size = ELFFile(stream).get_section_by_name(".dynamic")["sh_size"]  # type: ignore[index]
    patch = _plan(user, search_path=("$ORIGIN/../deps",), runpath=runpath)
    assert patch.how == "appended segment"
    assert len(patch.abandoned) == 2  # the old .dynstr and .dynamic
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    facts = read_elf_file(edited)
    assert (facts.runpath if runpath else facts.rpath) == ("$ORIGIN/../deps",)
    assert facts.needed == before.needed
    assert _pyelftools(edited)[2 if runpath else 1] == ["$ORIGIN/../deps"]
    assert f"Library {'runpath' if runpath else 'rpath'}: [$ORIGIN/../deps]" in _readelf(edited)
    with edited.open("rb") as stream:
        elf = ELFFile(stream)
        dynamic = elf.get_section_by_name(".dynamic")
        assert isinstance(dynamic, DynamicSection)
        assert dynamic["sh_size"] > size  # one entry more, and spare slots
        segments = list(elf.iter_segments())
        pt_dynamic = next(s for s in segments if s["p_type"] == "PT_DYNAMIC")
        assert pt_dynamic["p_vaddr"] == dynamic["sh_addr"]
        assert pt_dynamic["p_offset"] == dynamic["sh_offset"]
        holder = [s for s in segments if s["p_type"] == "PT_LOAD" and s.section_in_segment(dynamic)]
        assert len(holder) == 1
        assert holder[0]["p_flags"] & 2  # PF_W
    _loads(edited, "user_value", 42)  # libdep.so.1 is found only through the new entry
    # The spare slots serve later edits in place: the search path removed, then set again.
    removal = _plan(edited, search_path=())
    assert removal.how == "in place"
    bare = _edited(edited, tmp_path / "libuser-bare.so", removal)
    assert read_elf_file(bare).rpath == read_elf_file(bare).runpath == ()
    assert _plan(bare, search_path=("$ORIGIN/../deps",)).how == "in place"


@pytest.mark.parametrize("extra", ["libextra.so.1", "libextra-0123abcd.so.1.2.3"])
def test_a_removed_need_frees_the_slot_a_new_search_path_takes(tmp_path: Path, extra: str) -> None:
    """Where a DT_NEEDED goes (NVRTC's builtins) as a search path comes, the freed entry serves the
    new one: no spare DT_NULL is needed, and patchelf is not either; and the removed name's bytes,
    which nothing reads any more, hold the new string where it fits: the file keeps its size
    (cumm-cu117 0.6.3 grew by a copy of .dynstr, 12 KB of a 2.1 MB wheel)."""
    build, deps, run = tmp_path / "build", tmp_path / "deps", tmp_path / "run"
    _dep(deps, "libdep.so.1")
    user = compile_shared(
        build / "libuser.so",
        {"user.c": USER_C},
        soname="libuser.so",
        link=[_dep(build, "libdep.so.1"), _dep(build, extra)],
        flags=["-Wl,--no-as-needed"],
    )
    without_spare_dynamic_slots(user)
    assert extra in read_elf_file(user).needed
    patch = _plan(user, search_path=("$ORIGIN/../deps",), remove_needed=[extra])
    assert patch.how == ("in place" if len(extra) >= len("$ORIGIN/../deps") else "appended segment")
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    facts = read_elf_file(edited)
    assert facts.rpath == ("$ORIGIN/../deps",)
    assert extra not in facts.needed
    assert f"[{extra}]" not in _readelf(edited)
    _loads(edited, "user_value", 42)


def test_tail_merged_string_is_not_rewritten_under_another_reader(tmp_path: Path) -> None:
    build = tmp_path / "build"
    dep_long = "libdep.so.1"
    user = _user(build, _dep(build, dep_long), extra=TAIL_C)
    before = read_elf_file(user)
    assert "mylibdep.so.1" in {s.name for s in before.defined_symbols}
    patch = _plan(user, replace_needed=[(dep_long, "libd.so.1")])
    run = tmp_path / "run"
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    after = read_elf_file(edited)
    assert "libd.so.1" in after.needed
    # Whether or not ld merged the two, the symbol keeps its name.
    assert "mylibdep.so.1" in {s.name for s in after.defined_symbols}
    assert _pyelftools(edited)[0] == list(after.needed)


def test_remove_rpath_and_unchanged_edit(tmp_path: Path) -> None:
    build = tmp_path / "build"
    user = _user(build, _dep(build, "libdep.so.1"), rpath="$ORIGIN")
    assert _plan(user, search_path=("$ORIGIN",)).how == "unchanged"
    assert not _plan(user, replace_needed=[("libnothere.so", "libx.so")]).changes_anything
    patch = _plan(user, search_path=())
    edited = _edited(user, tmp_path / "libuser.so", patch)
    facts = read_elf_file(edited)
    assert facts.rpath == ()
    assert facts.runpath == ()
    assert facts.needed == read_elf_file(user).needed


@pytest.mark.parametrize("spare_slots", [True, False])
def test_a_file_without_section_headers_is_edited_through_its_dynamic_tags(
    tmp_path: Path, spare_slots: bool
) -> None:
    """``sstrip`` removes the section headers (onnxruntime's CUDA provider in polars-fastembed-cuda
    0.1.17); patchelf refuses such a file. The tables are found as the loader finds them (PT_DYNAMIC,
    DT_STRTAB, DT_SYMTAB sized by the hash table, DT_VERNEED): a shorter NEEDED is renamed in place,
    the version need with it, and a search path goes to an appended segment, with ``.dynamic`` too
    where it has no spare slot."""
    build, deps, run = tmp_path / "build", tmp_path / "deps-in-a-folder-with-a-long-name", tmp_path / "run"
    _dep(deps, "libdep.so.1")
    user = _user(build, _dep(build, DEP_NAME))
    if not spare_slots:
        without_spare_dynamic_slots(user)
    stripped = strip_section_headers(user, tmp_path / "stripped" / "libuser.so")
    tool = find_tool("patchelf")
    if tool is not None:
        refused = subprocess.run(
            [tool, "--print-rpath", str(stripped)], capture_output=True, text=True, check=False
        )
        assert refused.returncode != 0
        assert "section header" in refused.stderr
    rename = _plan(stripped, replace_needed=[(DEP_NAME, "libdep.so.1")])
    assert rename.how == "in place"
    renamed = _edited(stripped, tmp_path / "renamed.so", rename)
    facts = read_elf_file(renamed)
    assert facts.needed[0] == "libdep.so.1"
    assert [need.file for need in facts.version_needs if "DEP_1" in need.names] == ["libdep.so.1"]
    wanted = f"$ORIGIN/../{deps.name}"
    patch = _plan(renamed, search_path=(wanted,))
    assert patch.how == "appended segment"
    run.mkdir()
    edited = _edited(renamed, run / "libuser.so", patch)
    facts = read_elf_file(edited)
    assert facts.sections == ()
    assert facts.rpath == (wanted,)
    assert facts.needed[0] == "libdep.so.1"
    assert f"Library rpath: [{wanted}]" in _readelf(edited)
    _loads(edited, "user_value", 42)  # libdep.so.1 is found only through the new entry


def test_same_result_as_patchelf(tmp_path: Path) -> None:
    """What patchelf would have written, as slimwheel's reader sees it."""
    tool = find_tool("patchelf")
    if tool is None:
        pytest.skip("needs patchelf")
    build = tmp_path / "build"
    user = _user(build, _dep(build, DEP_NAME), rpath="$ORIGIN")
    arguments = ["--replace-needed", DEP_NAME, "libdep.so.1", "--set-rpath", "$ORIGIN/../x:$ORIGIN/../y"]
    theirs = shutil.copy(user, tmp_path / "theirs.so")
    subprocess.run([tool, *arguments, "--force-rpath", str(theirs)], check=True)
    patch = _plan(
        user, replace_needed=[(DEP_NAME, "libdep.so.1")], search_path=("$ORIGIN/../x", "$ORIGIN/../y")
    )
    ours = _edited(user, tmp_path / "ours.so", patch)
    a, b = read_elf_file(ours), read_elf_file(Path(theirs))
    assert (a.needed, a.rpath, a.runpath, a.version_needs) == (b.needed, b.rpath, b.runpath, b.version_needs)


def _many_names(tmp_path: Path, count: int = 20000, padding: int = 0) -> Path:
    stem = "a_rather_long_exported_variable_name_like_cpp_mangling_" + "x" * padding
    names = [f"{stem}{i:06d}" for i in range(count)]
    variables = "".join(f"int {name} = {i};\n" for i, name in enumerate(names))
    source = variables + "int user_value(void) { return 41; }\n"
    return compile_shared(tmp_path / "libbig.so", {"big.c": source}, soname="libbig.so", rpath="$ORIGIN")


def test_an_appended_segment_copies_a_big_dynstr_once(tmp_path: Path) -> None:
    # A C++ library's .dynstr is tens of MB (26 MB in mxnet-cu112's libmxnet.so): planning the edit
    # made seven copies of it and of its references at once, 200 MB; now the table is read, then
    # written once into the appended bytes.
    names = range(20000)
    library = _many_names(tmp_path, len(names))
    dynstr = read_elf_file(library).section(".dynstr")
    assert dynstr is not None
    assert dynstr.size > len(names) * 60
    wanted = "$ORIGIN/../a/folder/whose/name/does/not/fit/where/the/old/search/path/was"
    tracemalloc.start()
    try:
        patch = _plan(library, search_path=(wanted,))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert patch.how == "appended segment"
    assert patch.abandoned == ((dynstr.offset, dynstr.size),)
    assert peak < 3 * dynstr.size, f"planning held {peak / dynstr.size:.1f} times .dynstr"
    edited = _edited(library, tmp_path / "edited.so", patch)
    assert read_elf_file(edited).rpath == (wanted,)
    _loads(edited, "user_value", 41)


def test_planned_from_saved_tables_the_dynstr_is_read_once(tmp_path: Path) -> None:
    """Repair plans an edit from the tables its analysis saved (``SavedRanges``). Reading .dynstr
    through io.RawIOBase's read held it twice on top of the saved bytes (a buffer, then bytes): with
    TensorFlow's 47 MB table that took the repair to 235 MiB. Now it is one piece of the saved bytes,
    handed on as it is."""
    library = _many_names(tmp_path, 4000, padding=600)  # C++-like names: the table is most of it
    facts = read_elf_file(library)
    dynstr = facts.section(".dynstr")
    assert dynstr is not None
    data = library.read_bytes()
    ranges = edit_ranges(data[:EDIT_ENDS], len(data), facts.sections)
    with library.open("rb") as content:
        saved = SavedRanges.save("libbig.so", len(data), content, ranges, tmp_path / "saved.tables")
    kept = sum(length for _, length in saved.ranges)
    wanted = "$ORIGIN/../a/folder/whose/name/does/not/fit/where/the/old/search/path/was"
    tracemalloc.start()
    try:
        with saved.open() as view:
            patch = plan_edit(view, search_path=(wanted,))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert patch.how == "appended segment"
    beyond = (peak - kept) / dynstr.size
    assert beyond < 1.2, f"held {beyond:.1f} times .dynstr beyond the saved bytes"
    edited = _edited(library, tmp_path / "edited.so", patch)
    assert read_elf_file(edited).rpath == (wanted,)
    # The old table is zeros, written by pieces of one buffer, and not among the bytes the output's
    # analysis keeps (nothing reads them).
    assert edited.read_bytes()[dynstr.offset : dynstr.offset + dynstr.size] == bytes(dynstr.size)
    assert len({id(p.data) for p in patch.patches if len(p.data) == 1 << 20}) == 1
    assert not [r for r in patch.written if dynstr.offset <= r[0] < dynstr.offset + dynstr.size]
    _loads(edited, "user_value", 41)


def test_a_needed_entry_no_version_need_names_is_removed_in_place(tmp_path: Path) -> None:
    """cumm-cu126's extension needs NVRTC's builtins, which NVRTC loads itself and of which it binds
    nothing: the entry goes, and the file still loads and runs without it."""
    build, run = tmp_path / "build", tmp_path / "run"
    dep = _dep(build, "libdep.so.1")
    over = compile_shared(
        build / "libover.so.12.6",
        {"over.c": "int over_value(void) { return 5; }\n"},
        soname="libover.so.12.6",
    )
    user = compile_shared(
        build / "libuser.so",
        {"user.c": USER_C},
        soname="libuser.so",
        link=[dep, over],
        flags=["-Wl,--no-as-needed"],
    )
    assert "libover.so.12.6" in read_elf_file(user).needed
    patch = _plan(user, remove_needed=["libover.so.12.6"])
    assert patch.how == "in place"
    run.mkdir()
    edited = _edited(user, run / "libuser.so", patch)
    needed, _rpath, _runpath, files = _pyelftools(edited)
    assert needed == [n for n in read_elf_file(user).needed if n != "libover.so.12.6"]
    assert "libdep.so.1" in files
    assert "libover" not in _readelf(edited)
    shutil.copy(dep, run / "libdep.so.1")  # libover.so.12.6 is not there: nothing asks for it
    patchelf(edited, "--set-rpath", "$ORIGIN")
    _loads(edited, "user_value", 42)
    # A version need on it: its versions would go unserved, so this module leaves it to patchelf.
    with pytest.raises(EditUnsupportedError, match="a version need names"):
        _plan(user, remove_needed=["libdep.so.1"])


def test_a_damaged_file_without_section_headers_is_refused_not_misedited(tmp_path: Path) -> None:
    """The tables of a file without section headers are found through its dynamic tags, which a
    damaged or hostile file may point anywhere: each of 400 files with bytes of its headers and
    dynamic tables changed is planned, or refused with one of the errors repair turns to patchelf,
    never another exception, and never slowly (a version table's count runs to 65,536 at most)."""
    build = tmp_path / "build"
    user = _user(build, _dep(build, DEP_NAME))
    stripped = strip_section_headers(user, tmp_path / "stripped.so").read_bytes()
    dynamic = next(
        (offset, size)
        for kind, _flags, offset, _v, _p, size, _m, _a in struct.iter_unpack(
            "<IIQQQQQQ", stripped[64 : 64 + 56 * int.from_bytes(stripped[56:58], "little")]
        )
        if kind == 2
    )
    targets = [*range(64 + 56 * 12), *range(dynamic[0], dynamic[0] + dynamic[1])]
    rng = random.Random(20261206)
    planned = refused = 0
    for _ in range(400):
        data = bytearray(stripped)
        for _ in range(rng.randint(1, 4)):
            data[rng.choice(targets)] = rng.randrange(256)
        damaged = tmp_path / "damaged.so"
        damaged.write_bytes(bytes(data))
        try:
            _plan(
                damaged,
                replace_needed=[(DEP_NAME, "libdep.so.1")],
                search_path=("$ORIGIN/../a/longer/folder",),
            )
        except (EditUnsupportedError, struct.error, ValueError):
            refused += 1
        else:
            planned += 1
    assert planned
    assert refused
