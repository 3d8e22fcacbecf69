"""slimwheel.elf on real gcc-built files (the ``elf_zoo``), cross-checked against pyelftools."""

from __future__ import annotations

import ctypes
import dataclasses
import io
import random
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from elftools.elf.elffile import ELFFile

from slimwheel.elf import (
    ElfFacts,
    Section,
    Symbol,
    VersionNeed,
    dynamic_tables,
    is_elf,
    read_elf,
    read_elf_file,
    read_interpreter,
    read_section,
)
from slimwheel.errors import ElfError, InputError
from tests.support.elfbuild import compile_program, compile_shared, find_tool
from tests.support.fixtures_elf import (
    AUDITWHEEL_NAME,
    CUDSS_EXPORTS,
    CUDSS_VERSION_STRING,
    FATBIN_SIZE,
    RELFATBIN_SIZE,
    RENAMED_NAME,
    ElfZoo,
)

CORRUPT = "truncated or corrupt ELF: "
CUDSS_NODE = "libcudss.so.1"
ELF_FIELDS = (
    "libcublas",
    "libcudss",
    "ext_dynamic",
    "ext_static",
    "auditwheel_copy",
    "ext_auditwheel",
    "renamed_copy",
    "ext_renamed",
    "empty_runpath",
    "relative_rpath",
    "libcuda",
    "relocatable",
    "big_endian",
    "lib32",
    "libcublas32",
    "big_endian32",
)
STRIPPED_FIELDS = ("stripped_sections", "stripped_sections32")


def zoo_file(zoo: ElfZoo, field: str) -> Path:
    path: Path | None = getattr(zoo, field)
    if path is None:
        pytest.skip(f"{field}: gcc cannot build 32-bit objects here (gcc -m32 -nostdlib failed)")
    return path


def exported(facts: ElfFacts) -> dict[str, Symbol]:
    return {symbol.name: symbol for symbol in facts.defined_symbols}


# -- the oracle -----------------------------------------------------------------------------------


def oracle(path: Path) -> dict[str, Any]:
    """The same facts as pyelftools reads them (it is slow, but independent of slimwheel.elf)."""
    with path.open("rb") as stream:
        elf: Any = ELFFile(stream)  # its hints are partial; the oracle treats it as untyped
        sections: list[Any] = list(elf.iter_sections())
        by_type = {section["sh_type"]: section for section in reversed(sections)}
        dynamic = by_type.get("SHT_DYNAMIC") or next(
            (seg for seg in elf.iter_segments() if seg["p_type"] == "PT_DYNAMIC"), None
        )
        tags = list(dynamic.iter_tags()) if dynamic is not None else []

        def tag_values(name: str, attribute: str) -> list[str]:
            return [getattr(tag, attribute) for tag in tags if tag.entry.d_tag == name]

        version_names: dict[int, str] = {}
        need_files: dict[int, str] = {}
        needs = []
        if "SHT_GNU_verneed" in by_type:
            for need, auxes in by_type["SHT_GNU_verneed"].iter_versions():
                names = []
                for aux in auxes:
                    names.append(aux.name)
                    version_names[aux["vna_other"] & 0x7FFF] = aux.name
                    need_files[aux["vna_other"] & 0x7FFF] = need.name
                needs.append(VersionNeed(need.name, tuple(names)))
        definitions = []
        if "SHT_GNU_verdef" in by_type:
            for definition, auxes in by_type["SHT_GNU_verdef"].iter_versions():
                name = next(iter(auxes)).name
                version_names[definition["vd_ndx"]] = name
                if not definition["vd_flags"] & 1:
                    definitions.append(name)
        versym = by_type.get("SHT_GNU_versym")
        symbol_source = by_type.get("SHT_DYNSYM") or dynamic
        defined, undefined = [], []
        for index, symbol in enumerate(symbol_source.iter_symbols() if symbol_source is not None else ()):
            if not symbol.name:
                continue
            version, library = None, None
            if versym is not None:
                ndx = versym.get_symbol(index)["ndx"]
                if isinstance(ndx, int):
                    version, library = version_names.get(ndx & 0x7FFF), need_files.get(ndx & 0x7FFF)
            if symbol["st_shndx"] == "SHN_UNDEF":
                undefined.append((symbol.name, version, library))
            elif symbol["st_info"]["bind"] != "STB_LOCAL":
                defined.append((symbol.name, symbol["st_size"], version))
        notes = [s for s in sections if s["sh_type"] == "SHT_NOTE"] or [
            seg for seg in elf.iter_segments() if seg["p_type"] == "PT_NOTE"
        ]
        build_ids = [n["n_desc"] for s in notes for n in s.iter_notes() if n["n_type"] == "NT_GNU_BUILD_ID"]
        # The undefined symbols no dynamic relocation names (what the dynamic tags locate).
        tables = dynamic.get_relocation_tables() if dynamic is not None else {}
        unbound = None
        if tables and symbol_source is not None:
            bound = {entry["r_info_sym"] for table in tables.values() for entry in table.iter_relocations()}
            names = [
                symbol.name
                for index, symbol in enumerate(symbol_source.iter_symbols())
                if symbol.name and symbol["st_shndx"] == "SHN_UNDEF" and index not in bound
            ]
            unbound = sorted(set(names))
        return {
            "elf_class": elf.elfclass,
            "little_endian": elf.little_endian,
            "soname": next(iter(tag_values("DT_SONAME", "soname")), None),
            "needed": tuple(tag_values("DT_NEEDED", "needed")),
            "rpath": tuple(tag_values("DT_RPATH", "rpath")),
            "runpath": tuple(tag_values("DT_RUNPATH", "runpath")),
            "version_needs": tuple(needs),
            "version_definitions": tuple(definitions),
            "defined": sorted(defined),
            "undefined": sorted(undefined),
            "build_id": build_ids[0] if build_ids else None,
            "sections": [(s.name, s["sh_offset"], s["sh_size"]) for s in sections],
            "unbound": unbound,
        }


def ours(path: Path) -> dict[str, Any]:
    facts = read_elf_file(path, relocations=True)
    return {
        "elf_class": facts.elf_class,
        "little_endian": facts.little_endian,
        "soname": facts.soname,
        "needed": facts.needed,
        # pyelftools gives the whole string; ours is split on ":".
        "rpath": (":".join(facts.rpath),) if facts.rpath else (),
        "runpath": (":".join(facts.runpath),) if facts.runpath else (),
        "version_needs": facts.version_needs,
        "version_definitions": facts.version_definitions,
        "defined": sorted((s.name, s.size, s.version) for s in facts.defined_symbols),
        "undefined": sorted((s.name, s.version, s.library) for s in facts.undefined_symbols),
        "build_id": facts.build_id,
        "sections": [(s.name, s.offset, s.size) for s in facts.sections],
        "unbound": None if facts.unbound_imports is None else sorted(facts.unbound_imports),
    }


def system_elf_files() -> list[Path]:
    """A few ELF files not built by us: the interpreter and a stdlib extension module."""
    import _ctypes

    candidates = [Path(sys.executable).resolve(), Path(_ctypes.__file__)]
    return [path for path in candidates if path.is_file() and is_elf(path.read_bytes()[:4])]


@pytest.mark.parametrize("field", ELF_FIELDS)
def test_matches_pyelftools(elf_zoo: ElfZoo, field: str) -> None:
    path = zoo_file(elf_zoo, field)
    assert ours(path) == oracle(path)


@pytest.mark.parametrize("field", STRIPPED_FIELDS)
def test_stripped_matches_pyelftools(elf_zoo: ElfZoo, field: str) -> None:
    # pyelftools reads no version tables without sections; versions are checked against the original.
    path = zoo_file(elf_zoo, field)
    expected, got = oracle(path), ours(path)
    for facts in (expected, got):
        facts["defined"] = sorted(name for name, _size, _version in facts["defined"])
        facts["undefined"] = sorted(name for name, _version, _library in facts["undefined"])
        facts.pop("version_needs")
        facts.pop("version_definitions")
    assert got == expected
    assert got["sections"] == []


@pytest.mark.parametrize("index", [0, 1])
def test_system_files_match_pyelftools(index: int) -> None:
    files = system_elf_files()
    if index >= len(files):
        pytest.skip("this Python has no such ELF file")
    assert ours(files[index]) == oracle(files[index])


# -- the zoo, field by field ----------------------------------------------------------------------


def test_is_elf() -> None:
    assert is_elf(b"\x7fELF\x02\x01")
    assert is_elf(b"\x7fELF")
    assert not is_elf(b"\x7fEL")
    assert not is_elf(b"PK\x03\x04")
    assert not is_elf(b"")


def test_libcudss(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.libcudss)
    assert (facts.elf_class, facts.machine, facts.little_endian, facts.elf_type) == (
        64,
        "x86_64",
        True,
        "DYN",
    )
    assert facts.soname == "libcudss.so.1"
    assert facts.needed[0] == "libcublas.so.13"
    assert facts.rpath == ("$ORIGIN", "$ORIGIN/../../cublas/lib")
    assert facts.runpath == ()
    assert VersionNeed("libcublas.so.13", ("libcublas.so.13",)) in facts.version_needs
    assert facts.version_definitions == (CUDSS_NODE,)
    symbols = exported(facts)
    for name in CUDSS_EXPORTS:
        assert symbols[name].kind == "func"
        assert symbols[name].version == CUDSS_NODE
    assert symbols["cudssSetStream"].binding == "weak"
    assert symbols["cudssCreate"].binding == "global"
    assert symbols["cudssBuildInfo"].kind == "object"
    assert symbols["cudssBuildInfo"].size == len("fake cudss for slimwheel tests") + 1
    assert symbols["cudssLastStatus"].kind == "tls"
    assert "cublasCreate_v2" in {s.name for s in facts.undefined_symbols}
    assert not any(s.binding == "local" for s in facts.defined_symbols)
    assert facts.symtab is not None
    assert facts.has_symtab
    locals_ = {s.name: s for s in facts.symtab if s.binding == "local"}
    assert locals_["cudss_banner"].kind == "object"
    assert locals_["cudss_banner"].size == len(CUDSS_VERSION_STRING) + 1
    assert all(s.version is None for s in facts.symtab)
    assert facts.build_id is not None
    assert len(facts.build_id) == 40
    assert facts.build_id == facts.build_id.lower()
    assert facts.file_size == elf_zoo.libcudss.stat().st_size
    assert facts.fatbin_size == 0
    assert facts.sections[0] == Section("", 0, 0, 0)  # the null section keeps indexes = st_shndx
    dynamic = facts.section(".dynamic")
    assert dynamic is not None
    assert dynamic.kind == 6
    assert facts.section(".nv_fatbin") is None


def test_libcublas(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.libcublas)
    assert facts.soname == "libcublas.so.13"
    assert facts.version_definitions == ("libcublas.so.13",)
    assert exported(facts)["cublasCreate_v2"].version == "libcublas.so.13"


def test_ext_dynamic(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.ext_dynamic)
    assert facts.soname is None
    assert facts.needed == ("libcudss.so.1",)
    assert facts.rpath == ()
    assert facts.runpath == ("$ORIGIN/../nvidia/cudss/lib",)
    assert facts.version_needs == (VersionNeed("libcudss.so.1", (CUDSS_NODE,)),)
    assert facts.version_definitions == ()
    assert "cudssGetProperty" in {s.name for s in facts.undefined_symbols}
    assert set(exported(facts)) == {"solver_cudss_version", "PyInit__solver"}
    assert exported(facts)["PyInit__solver"].version is None


def test_ext_static(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.ext_static)
    assert facts.fatbin_size == FATBIN_SIZE + RELFATBIN_SIZE
    fatbin = facts.section(".nv_fatbin")
    assert fatbin is not None
    assert fatbin.size == FATBIN_SIZE
    with elf_zoo.ext_static.open("rb") as stream:
        assert read_section(stream, fatbin) == bytes(range(256)) * (FATBIN_SIZE // 256)
        assert read_section(stream, fatbin, limit=16) == bytes(range(16))
        rodata = facts.section(".rodata")
        assert rodata is not None
        assert CUDSS_VERSION_STRING.encode() in read_section(stream, rodata)
        bss = facts.section(".bss")
        assert bss is not None
        assert read_section(stream, bss) == b""  # SHT_NOBITS has no bytes in the file
    symbols = exported(facts)
    assert set(CUDSS_EXPORTS) <= set(symbols)
    assert all(symbols[name].version is None for name in CUDSS_EXPORTS)  # no version script
    assert facts.symtab is not None
    assert set(CUDSS_EXPORTS) | {"cudss_banner"} <= {s.name for s in facts.symtab}
    assert facts.needed[0] == "libcublas.so.13"
    assert facts.runpath == ("$ORIGIN/../nvidia/cublas/lib",)


def test_auditwheel_copy(elf_zoo: ElfZoo) -> None:
    copy = read_elf_file(elf_zoo.auditwheel_copy)
    assert elf_zoo.auditwheel_copy.name == AUDITWHEEL_NAME
    assert copy.soname == AUDITWHEEL_NAME
    assert copy.rpath == ("$ORIGIN",)
    # patchelf renames the file, not the version node that consumers require.
    assert copy.version_definitions == (CUDSS_NODE,)
    assert exported(copy)["cudssGetProperty"].version == CUDSS_NODE
    ext = read_elf_file(elf_zoo.ext_auditwheel)
    assert ext.needed == (AUDITWHEEL_NAME,)
    assert ext.version_needs == (VersionNeed(AUDITWHEEL_NAME, (CUDSS_NODE,)),)
    assert ext.runpath == ("$ORIGIN/../solver.libs",)


def test_renamed_copy(elf_zoo: ElfZoo) -> None:
    copy = read_elf_file(elf_zoo.renamed_copy)
    assert elf_zoo.renamed_copy.name == RENAMED_NAME
    assert copy.soname == "libcudss.so.1"
    ext = read_elf_file(elf_zoo.ext_renamed)
    assert ext.needed == (RENAMED_NAME,)
    assert ext.version_needs == (VersionNeed(RENAMED_NAME, (CUDSS_NODE,)),)


def test_path_lists(elf_zoo: ElfZoo) -> None:
    empty = read_elf_file(elf_zoo.empty_runpath)
    assert empty.soname == "libcusparseLt.so.0"
    assert empty.runpath == ("$ORIGIN", "")
    assert empty.rpath == ()
    relative = read_elf_file(elf_zoo.relative_rpath)
    assert relative.rpath == ("lib/../x",)
    assert relative.runpath == ()


def test_libcuda(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.libcuda)
    assert facts.soname == "libcuda.so.1"
    assert facts.needed == ()
    assert facts.version_needs == ()
    assert {"cuInit", "cuDriverGetVersion"} <= set(exported(facts))


def test_relocatable_object(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.relocatable)
    assert facts.elf_type == "REL"
    assert (facts.soname, facts.needed, facts.rpath, facts.version_needs) == (None, (), (), ())
    assert facts.defined_symbols == ()  # no .dynsym in an object file
    assert facts.symtab is not None
    assert set(CUDSS_EXPORTS) <= {s.name for s in facts.symtab}
    assert facts.build_id is None


def test_read_section_past_end(elf_zoo: ElfZoo) -> None:
    data = elf_zoo.libcuda.read_bytes()
    size = len(data)
    with elf_zoo.libcuda.open("rb") as stream:
        assert read_section(stream, Section(".x", 1, size - 4, 4)) == data[-4:]
        with pytest.raises(ElfError) as info:
            read_section(stream, Section(".x", 1, size - 4, 8), path="lib.so")
    assert str(info.value) == f"lib.so: {CORRUPT}section .x runs past end of file"


def test_section_lookup(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.libcudss)
    text = facts.section(".text")
    assert text is not None
    assert text.kind == 1
    assert text.size > 0
    assert facts.section(".nope") is None
    assert facts.section(".dynsym") == next(s for s in facts.sections if s.kind == 11)


def without(facts: ElfFacts, **changes: Any) -> ElfFacts:
    return dataclasses.replace(facts, **changes)


@pytest.mark.parametrize(
    ("field", "original"), [("stripped_sections", "libcudss"), ("stripped_sections32", "lib32")]
)
def test_stripped_sections(elf_zoo: ElfZoo, field: str, original: str) -> None:
    # Everything but the sections comes through PT_DYNAMIC, the dynamic tags and PT_NOTE
    # (the 64-bit file has DT_GNU_HASH, the 32-bit one DT_HASH, to size .dynsym).
    stripped = read_elf_file(zoo_file(elf_zoo, field))
    full = read_elf_file(zoo_file(elf_zoo, original))
    assert stripped.sections == ()
    assert stripped.symtab is None
    assert not stripped.has_symtab
    assert stripped == without(full, sections=(), symtab=None, file_size=stripped.file_size)
    assert stripped.file_size < full.file_size


@pytest.mark.parametrize(
    ("field", "original", "machine"),
    [("big_endian", "libcudss", "ppc64"), ("big_endian32", "lib32", "EM_20")],
)
def test_big_endian(elf_zoo: ElfZoo, field: str, original: str, machine: str) -> None:
    swapped = read_elf_file(zoo_file(elf_zoo, field))
    full = read_elf_file(zoo_file(elf_zoo, original))
    assert not swapped.little_endian
    assert swapped.machine == machine
    assert swapped == without(full, little_endian=False, machine=machine)


def test_lib32(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(zoo_file(elf_zoo, "lib32"))
    assert (facts.elf_class, facts.machine, facts.elf_type) == (32, "i386", "DYN")
    assert facts.soname == "libcudss.so.1"
    assert facts.needed == ("libcublas.so.13",)
    assert facts.version_needs == (VersionNeed("libcublas.so.13", ("libcublas.so.13",)),)
    assert exported(facts)["cudssGetProperty"].version == CUDSS_NODE
    assert exported(facts)["cudssLastStatus"].kind == "tls"


def test_symbols_false_skips_only_symbols(elf_zoo: ElfZoo) -> None:
    for path in (elf_zoo.libcudss, elf_zoo.ext_static, elf_zoo.stripped_sections):
        fast = read_elf_file(path, symbols=False)
        full = read_elf_file(path)
        assert (fast.defined_symbols, fast.undefined_symbols, fast.symtab) == ((), (), None)
        assert fast == without(full, defined_symbols=(), undefined_symbols=(), symtab=None)
        assert fast.has_symtab == full.has_symtab


def test_reads_from_a_zip_member(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    archive = tmp_path / "w.whl"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(elf_zoo.ext_static, "pkg/_static_solver.so", compress_type=zipfile.ZIP_STORED)
        zf.write(elf_zoo.libcudss, "pkg/libcudss.so.1", compress_type=zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(archive) as zf:
        for member, path in (
            ("pkg/_static_solver.so", elf_zoo.ext_static),
            ("pkg/libcudss.so.1", elf_zoo.libcudss),
        ):
            with zf.open(member) as stream:
                assert read_elf(stream, path=member) == read_elf_file(path)  # type: ignore[arg-type]


def test_zoo_libraries_load_and_run(elf_zoo: ElfZoo) -> None:
    # The stand-ins are real libraries: the loader resolves RUNPATH -> libcudss -> RPATH -> libcublas.
    for path in (elf_zoo.ext_dynamic, elf_zoo.ext_static):
        library = ctypes.CDLL(str(path))
        assert library.solver_cudss_version() == 10000


# -- errors ---------------------------------------------------------------------------------------


def elf_error(path: Path) -> ElfError:
    with pytest.raises(ElfError) as info:
        read_elf_file(path)
    return info.value


def test_not_elf(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    error = elf_error(elf_zoo.not_elf)
    assert error.reason == "not an ELF file"
    assert error.path == str(elf_zoo.not_elf)
    assert str(error) == f"{elf_zoo.not_elf}: not an ELF file"
    assert isinstance(error, InputError)
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert elf_error(empty).reason == "not an ELF file"


@pytest.mark.parametrize("field", ["truncated", "truncated_tiny"])
def test_truncated(elf_zoo: ElfZoo, field: str) -> None:
    path: Path = getattr(elf_zoo, field)
    error = elf_error(path)
    assert error.reason.startswith(CORRUPT)
    assert "runs past end of file" in error.reason
    assert str(path.stat().st_size) in error.reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x7fELF", "ELF identification cut short (4 of 16 bytes)"),
        (b"\x7fELF\x03\x01" + bytes(58), "unknown ELF class 3"),
        (b"\x7fELF\x02\x03" + bytes(58), "unknown data encoding 3"),
        (b"\x7fELF\x02\x01" + bytes(20), "ELF header cut short (26 of 64 bytes)"),
    ],
)
def test_bad_identification(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "bad.so"
    path.write_bytes(data)
    assert elf_error(path).reason == CORRUPT + reason


def patched(source: Path, target: Path, offset: int, fmt: str, *values: int) -> Path:
    data = bytearray(source.read_bytes())
    struct.pack_into(fmt, data, offset, *values)
    target.write_bytes(bytes(data))
    return target


def test_precise_corruption_messages(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    lib = elf_zoo.libcudss
    facts = read_elf_file(lib)
    dynstr = facts.section(".dynstr")
    dynamic = facts.section(".dynamic")
    assert dynstr is not None
    assert dynamic is not None
    # e_shentsize (offset 0x3a in a 64-bit header) too small.
    error = elf_error(patched(lib, tmp_path / "a.so", 0x3A, "<H", 12))
    assert error.reason == CORRUPT + "e_shentsize 12 is smaller than a section header (64)"
    # e_shstrndx past the table.
    error = elf_error(patched(lib, tmp_path / "b.so", 0x3E, "<H", 500))
    assert error.reason == CORRUPT + f"e_shstrndx 500 out of range ({len(facts.sections)} sections)"
    # DT_NEEDED (the first dynamic entry) pointing past .dynstr.
    error = elf_error(patched(lib, tmp_path / "c.so", dynamic.offset + 8, "<Q", 1 << 20))
    assert error.reason == CORRUPT + f"string offset {1 << 20} out of range in .dynstr ({dynstr.size} bytes)"


HOT_SECTIONS = {
    ".dynamic",
    ".gnu.version_r",
    ".gnu.version_d",
    ".gnu.version",
    ".dynsym",
    ".gnu.hash",
    ".hash",
    ".note.gnu.build-id",
}


def header_tables(data: bytes) -> list[tuple[int, int]]:
    """(offset, size) of the ELF header, program header table and section header table."""
    order = "<" if data[5] == 1 else ">"
    word = "Q" if data[4] == 2 else "I"
    fields = struct.unpack_from(f"{order}HHI{word}{word}{word}IHHHHHH", data, 16)
    phoff, shoff, phentsize, phnum, shentsize, shnum = (fields[i] for i in (4, 5, 8, 9, 10, 11))
    header = 16 + struct.calcsize(f"{order}HHI{word}{word}{word}IHHHHHH")
    return [(0, header), (phoff, phentsize * phnum), (shoff, shentsize * shnum)]


def test_fuzzed_files_raise_only_elf_error(elf_zoo: ElfZoo) -> None:
    """Cut and corrupted copies either read or raise ElfError with a precise reason (the catch-all
    "undecodable data" reason would mean a check is missing)."""
    rng = random.Random(20240601)
    sources = [elf_zoo.libcudss, elf_zoo.stripped_sections, elf_zoo.ext_dynamic, elf_zoo.big_endian]
    sources += [path for path in (elf_zoo.lib32, elf_zoo.stripped_sections32) if path]
    cases: list[bytes] = []
    for source in sources:
        data = source.read_bytes()
        cases += [data[:size] for size in range(0, len(data), 97)]
        # Hit the tables the reader decodes: headers, dynamic, version, symbol and note tables.
        hot = header_tables(data)
        hot += [(s.offset, s.size) for s in read_elf_file(source).sections if s.name in HOT_SECTIONS]
        for _ in range(400):
            start, size = rng.choice([region for region in hot if region[1]])
            position = rng.randrange(start, min(start + size, len(data) - 4))
            mutated = bytearray(data)
            value = rng.choice([0, 1, 0xFF, 0x7FFF, 0xFFFF, 0xFFFFFFFF, rng.randrange(1 << 32)])
            width = rng.choice([1, 2, 4])
            mutated[position : position + width] = value.to_bytes(4, "little")[:width]
            cases.append(bytes(mutated))
    reasons = []
    for data in cases:
        try:
            read_elf(io.BytesIO(data), path="fuzz.so")
        except ElfError as error:
            reasons.append(error.reason)
    assert len(reasons) > len(cases) // 4  # the corruptions do hit something
    imprecise = [r for r in reasons if not r.startswith(CORRUPT) and r != "not an ELF file"]
    imprecise += [r for r in reasons if "undecodable" in r]
    assert imprecise == []


# -- cost -----------------------------------------------------------------------------------------


class CountingFile(io.FileIO):
    """Counts the bytes and the ranges read, to check what the reader touches."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self.bytes_read = 0
        self.ranges: list[tuple[int, int]] = []

    def read(self, size: int | None = -1, /) -> bytes:
        start = self.tell()
        data = super().read(size)
        self.bytes_read += len(data)
        self.ranges.append((start, start + len(data)))
        return data


def test_symbols_false_reads_little(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.ext_static)
    fatbin = facts.section(".nv_fatbin")
    symtab = facts.section(".symtab")
    assert fatbin is not None
    assert symtab is not None
    with CountingFile(elf_zoo.ext_static) as stream:
        read_elf(stream, path="x", symbols=False)
        fast_bytes = stream.bytes_read
        fast_ranges = list(stream.ranges)
    with CountingFile(elf_zoo.ext_static) as stream:
        read_elf(stream, path="x")
        full_bytes = stream.bytes_read
        full_ranges = list(stream.ranges)
    assert fast_bytes < 8 * 1024 < facts.file_size
    assert full_bytes < facts.file_size // 4  # the fatbin and code are never read
    assert fast_bytes < full_bytes
    for start, end in fast_ranges + full_ranges:
        assert end <= fatbin.offset or start >= fatbin.offset + fatbin.size
    for start, end in fast_ranges:
        assert end <= symtab.offset or start >= symtab.offset + symtab.size


def test_a_build_id_note_padded_to_4_in_an_8_aligned_section_is_read(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    """cuDNN 8, NVRTC 11.2 and cuSOLVER 11 declare their build-id section 8-aligned while the note in
    it is padded to 4 bytes (readelf warns, the loader does not care): the file reads, with its id."""
    data = bytearray(elf_zoo.ext_dynamic.read_bytes())
    with elf_zoo.ext_dynamic.open("rb") as stream:
        elf = ELFFile(stream)
        index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".note.gnu.build-id")
        header = elf.header
        expected = elf.get_section(index).data()[16:].hex()
    align_field = header.e_shoff + index * header.e_shentsize + 48  # sh_addralign of an ELF64 header
    struct.pack_into("<Q", data, align_field, 8)
    path = tmp_path / "lib8.so"
    path.write_bytes(bytes(data))
    facts = read_elf_file(path)
    assert facts.build_id == expected


def test_only_the_undefined_symbols_when_asked(elf_zoo: ElfZoo) -> None:
    """``defined=False`` (what repair's symbol floors read of a wheel's files): the imports, each
    with the version and library it is bound to, as a full read gives them; no defined symbol."""
    full = read_elf_file(elf_zoo.libcudss)
    with elf_zoo.libcudss.open("rb") as stream:
        imports = read_elf(stream, path=str(elf_zoo.libcudss), defined=False)
    assert imports.defined_symbols == ()
    assert imports.undefined_symbols == full.undefined_symbols
    (cublas,) = [s for s in imports.undefined_symbols if s.name == "cublasCreate_v2"]
    assert (cublas.version, cublas.library) == ("libcublas.so.13", "libcublas.so.13")


def test_imports_no_relocation_names_are_unbound(tmp_path: Path) -> None:
    """A symbol only a section that is not loaded refers to stays in ``.dynsym`` with no relocation
    (jammi-ai-native-cu12 0.54 lists 30 NCCL functions so): the loader never binds it. 70,000
    pointers to one import make the relocation table bigger than one piece of the read."""
    if find_tool("gcc") is None:
        pytest.skip("needs gcc")
    pointers = ", ".join(["ncclAllReduce"] * 70_000)
    source = (
        "extern int ncclAllReduce(void);\nextern int ncclGroupEnd(void);\n"
        f"int (*const table[])(void) = {{{pointers}}};\n"
        "int call(void) { return ncclGroupEnd(); }\n"
        '__asm__(".section .comment.refs,\\"\\",@progbits\\n.quad ncclCommShrink\\n.previous");\n'
    )
    library = compile_shared(tmp_path / "libuses.so", {"uses.c": source})
    facts = read_elf_file(library, relocations=True)
    assert {"ncclAllReduce", "ncclGroupEnd", "ncclCommShrink"} <= {s.name for s in facts.undefined_symbols}
    assert facts.unbound_imports is not None
    assert "ncclCommShrink" in facts.unbound_imports
    assert not {"ncclAllReduce", "ncclGroupEnd"} & facts.unbound_imports
    assert ours(library)["unbound"] == oracle(library)["unbound"]
    assert read_elf_file(library).unbound_imports is None  # not asked: not read


@pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("hash_style", ["gnu", "sysv"])
def test_dynamic_tables_are_where_the_sections_say(tmp_path: Path, hash_style: str) -> None:
    """``dynamic_tables`` finds .dynamic, .dynstr, .dynsym (sized by either hash table) and the
    version tables as the loader does, with no section header read: where pyelftools finds them
    through the section headers."""
    dep = compile_shared(
        tmp_path / "libdep.so.1", {"dep.c": "int dep(void) { return 1; }\n"}, version_nodes={"DEP_1": ["dep"]}
    )
    library = compile_shared(
        tmp_path / "libuser.so",
        {"user.c": "int dep(void);\nint user(void) { return dep(); }\n"},
        soname="libuser.so",
        link=[dep],
        version_nodes={"USER_1": ["user"]},
        flags=[f"-Wl,--hash-style={hash_style}"],
    )
    with library.open("rb") as stream:
        tables = dynamic_tables(stream, path=str(library))
        elf = ELFFile(stream)

        def where(name: str) -> tuple[int, int]:
            section = elf.get_section_by_name(name)
            assert section is not None
            return section["sh_offset"], section["sh_size"]

        assert tables.dynamic == where(".dynamic")
        assert tables.strings == where(".dynstr")
        assert tables.strings_address == elf.get_section_by_name(".dynstr")["sh_addr"]  # type: ignore[index]
        assert tables.symbols == where(".dynsym")
        assert tables.version_needs is not None
        assert tables.version_needs[::2] == (where(".gnu.version_r")[0], 1)
        assert tables.version_definitions is not None
        assert tables.version_definitions[::2] == (where(".gnu.version_d")[0], 2)  # the file's own, USER_1


def test_a_programs_interpreter_is_read_from_pt_interp_and_a_library_has_none(tmp_path: Path) -> None:
    """verify traces a wheel's programs with the loader of its own Python, which PT_INTERP names."""
    program = compile_program(tmp_path / "program", "int main(void) { return 0; }")
    library = compile_shared(tmp_path / "libplain.so", {"p.c": "int plain(void) { return 1; }"})
    with program.open("rb") as stream:
        loader = read_interpreter(stream, path=str(program))
    assert loader is not None
    assert Path(loader).name.startswith("ld-linux")
    assert read_elf_file(program, symbols=False).is_program
    with library.open("rb") as stream:
        assert read_interpreter(stream, path=str(library)) is None
    assert not read_elf_file(library, symbols=False).is_program

    data = bytearray(program.read_bytes())
    # PT_INTERP points past the end of the file: bad bytes, said as ElfError.
    header = ELFFile(io.BytesIO(bytes(data)))
    for index, segment in enumerate(header.iter_segments()):
        if segment["p_type"] == "PT_INTERP":
            entry = header["e_phoff"] + index * header["e_phentsize"]
            struct.pack_into("<Q", data, entry + 8, len(data) + 16)  # p_offset
    with pytest.raises(ElfError, match="PT_INTERP"):
        read_interpreter(io.BytesIO(bytes(data)), path="corrupt")
