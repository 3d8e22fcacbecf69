"""slimwheel.elf.scan_symbols: the symbols whose names match a pattern, read in chunks.

Checked against ``read_elf(symbols=True)`` and pyelftools on the ELF zoo (64/32-bit, both byte
orders, stripped section headers), at every chunk boundary, on a gcc-built library with 100k
symbols (memory measured with tracemalloc), and on cut and corrupted copies.
"""

from __future__ import annotations

import io
import random
import re
import struct
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from elftools.elf.elffile import ELFFile

from slimwheel.elf import ElfFacts, Section, Symbol, read_elf, read_elf_file, scan_symbols
from slimwheel.errors import ElfError
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.fixtures_elf import CUDSS_EXPORTS, ElfZoo

T = TypeVar("T")

CORRUPT = "truncated or corrupt ELF: "
CUDSS = re.compile(rb"cudss[A-Z_]")
TABLES = (".symtab", ".dynsym")
# Files with both tables, every class and byte order, and files without section headers.
ZOO_FIELDS = (
    "ext_static",
    "libcudss",
    "lib32",
    "big_endian",
    "big_endian32",
    "relocatable",
    "stripped_sections",
    "stripped_sections32",
)
PATTERNS = (
    rb"cudss[A-Z_]",
    rb"^cudss(?=[A-Z_])",
    rb"cudssCreate$",
    rb"\Acudss(Create|Destroy)\Z",
    rb"(?i)CUDSS_?[a-z]",
    rb"cu",
    rb"[a-z_]",  # nearly every name
    rb"nothing_is_called_this",
)


def zoo_file(zoo: ElfZoo, field: str) -> Path:
    path: Path | None = getattr(zoo, field)
    if path is None:
        pytest.skip(f"{field}: gcc cannot build 32-bit objects here (gcc -m32 -nostdlib failed)")
    return path


def raw(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


def expected(facts: ElfFacts, table: str, pattern: re.Pattern[bytes]) -> tuple[Symbol, ...]:
    """What scan_symbols must give: read_elf's own list, filtered."""
    source = (facts.symtab or ()) if table == ".symtab" else facts.defined_symbols
    return tuple(symbol for symbol in source if pattern.match(raw(symbol.name)))


def scan(
    path: Path, table: str = ".symtab", pattern: re.Pattern[bytes] = CUDSS, **options: Any
) -> tuple[Symbol, ...]:
    facts = read_elf_file(path, symbols=False)
    with path.open("rb") as stream:
        return scan_symbols(stream, facts, pattern=pattern, table=table, **options)


def scan_bytes(data: bytes, facts: ElfFacts, table: str, **options: Any) -> tuple[Symbol, ...]:
    return scan_symbols(io.BytesIO(data), facts, pattern=CUDSS, table=table, path="lib.so", **options)


# -- the zoo --------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ZOO_FIELDS)
@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("chunk_size", [7, 64, 4 << 20])
def test_matches_read_elf(elf_zoo: ElfZoo, field: str, table: str, chunk_size: int) -> None:
    path = zoo_file(elf_zoo, field)
    full = read_elf_file(path)
    for source in PATTERNS:
        pattern = re.compile(source)
        got = scan(path, table, pattern, chunk_size=chunk_size)
        assert got == expected(full, table, pattern), (source, got)


@pytest.mark.parametrize("field", ["ext_static", "libcudss", "lib32", "big_endian", "big_endian32"])
def test_finds_the_cudss_symbols(elf_zoo: ElfZoo, field: str) -> None:
    path = zoo_file(elf_zoo, field)
    full = read_elf_file(path)
    symtab = scan(path, ".symtab")
    dynsym = scan(path, ".dynsym")
    assert set(CUDSS_EXPORTS) <= {s.name for s in symtab}
    assert set(CUDSS_EXPORTS) <= {s.name for s in dynsym}
    facts = {(s.name, s.size, s.kind, s.binding) for s in symtab}
    assert facts == {
        (s.name, s.size, s.kind, s.binding) for s in full.symtab or () if CUDSS.match(raw(s.name))
    }
    assert {s.name: s.kind for s in dynsym}["cudssLastStatus"] == "tls"
    assert {s.name: s.binding for s in dynsym}["cudssSetStream"] == "weak"
    # .dynsym entries carry their versions, as in read_elf (the static extension has none).
    versions = {s.version for s in dynsym}
    assert versions == ({None} if field == "ext_static" else {"libcudss.so.1"})


@pytest.mark.parametrize("field", ["stripped_sections", "stripped_sections32"])
def test_stripped_section_headers(elf_zoo: ElfZoo, field: str) -> None:
    # .dynsym through PT_DYNAMIC and the hash table; no .symtab without section headers.
    path = zoo_file(elf_zoo, field)
    original = elf_zoo.libcudss if field == "stripped_sections" else zoo_file(elf_zoo, "lib32")
    assert scan(path, ".dynsym") == scan(original, ".dynsym") != ()
    assert scan(path, ".symtab") == ()
    assert not read_elf_file(path, symbols=False).has_symtab
    assert read_elf_file(original, symbols=False).has_symtab


@pytest.mark.parametrize("field", ["ext_static", "big_endian32"])
def test_every_chunk_boundary(elf_zoo: ElfZoo, field: str) -> None:
    path = zoo_file(elf_zoo, field)
    full = read_elf_file(path)
    for table in TABLES:
        want = expected(full, table, CUDSS)
        assert want
        for chunk_size in range(1, 96):
            assert scan(path, table, chunk_size=chunk_size) == want, (table, chunk_size)


KINDS = {"STT_FUNC": "func", "STT_GNU_IFUNC": "func", "STT_OBJECT": "object", "STT_COMMON": "object"}
KINDS["STT_TLS"] = "tls"
BINDINGS = {"STB_LOCAL": "local", "STB_GLOBAL": "global", "STB_WEAK": "weak", "STB_GNU_UNIQUE": "unique"}


def elftools_symbols(
    path: Path, table: str, pattern: re.Pattern[bytes], *, defined_only: bool
) -> list[tuple[str, int, str, str]]:
    """The same selection as pyelftools reads it, undefined symbols included on request."""
    with path.open("rb") as stream:
        elf: Any = ELFFile(stream)
        section = elf.get_section_by_name(table)
        if section is None:
            return []
        selected = []
        for symbol in section.iter_symbols():
            kind, binding = symbol["st_info"]["type"], symbol["st_info"]["bind"]
            if not symbol.name or not pattern.match(raw(symbol.name)):
                continue
            undefined = symbol["st_shndx"] == "SHN_UNDEF"
            if undefined and defined_only:
                continue
            if not undefined and table == ".dynsym" and binding == "STB_LOCAL":
                continue  # read_elf's defined_symbols has no local symbols
            if not undefined and table == ".symtab" and kind in ("STT_SECTION", "STT_FILE"):
                continue
            selected.append((symbol.name, symbol["st_size"], KINDS.get(kind, "other"), BINDINGS[binding]))
        return selected


@pytest.mark.parametrize("field", ["ext_static", "ext_dynamic", "libcudss", "big_endian", "lib32"])
@pytest.mark.parametrize("defined_only", [True, False])
def test_against_pyelftools(elf_zoo: ElfZoo, field: str, defined_only: bool) -> None:
    path = zoo_file(elf_zoo, field)
    for source in (rb"cudss[A-Z_]", rb"cublas[A-Z_]", rb"[a-z_]"):
        pattern = re.compile(source)
        for table in TABLES:
            got = scan(path, table, pattern, defined_only=defined_only, chunk_size=64)
            want = elftools_symbols(path, table, pattern, defined_only=defined_only)
            assert [(s.name, s.size, s.kind, s.binding) for s in got] == want
    if not defined_only and field in ("ext_static", "ext_dynamic"):
        # The extensions call into libcublas / libcudss: undefined there, and in .dynsym too.
        needed = re.compile(rb"cublasCreate_v2|cudssGetProperty")
        undefined = [s for s in scan(path, ".dynsym", needed, defined_only=False) if s.size == 0]
        assert {s.name for s in undefined} & {s.name for s in read_elf_file(path).undefined_symbols}


def test_reads_a_zip_member(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    archive = tmp_path / "w.whl"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(elf_zoo.ext_static, "pkg/_static_solver.so", compress_type=zipfile.ZIP_DEFLATED)
    facts = read_elf_file(elf_zoo.ext_static, symbols=False)
    with zipfile.ZipFile(archive) as zf, zf.open("pkg/_static_solver.so") as stream:
        for table in TABLES:
            got = scan_symbols(stream, facts, pattern=CUDSS, table=table, chunk_size=64)  # type: ignore[arg-type]
            assert got == scan(elf_zoo.ext_static, table) != ()


class CountingFile(io.FileIO):
    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self.ranges: list[tuple[int, int]] = []

    def read(self, size: int | None = -1, /) -> bytes:
        start = self.tell()
        data = super().read(size)
        self.ranges.append((start, start + len(data)))
        return data


def overlaps(ranges: list[tuple[int, int]], section: Section) -> bool:
    return any(start < section.offset + section.size and end > section.offset for start, end in ranges)


def test_reads_only_the_tables(elf_zoo: ElfZoo) -> None:
    facts = read_elf_file(elf_zoo.ext_static, symbols=False)
    sections = {name: facts.section(name) for name in (".symtab", ".strtab", ".nv_fatbin", ".text")}
    with CountingFile(elf_zoo.ext_static) as stream:
        assert scan_symbols(stream, facts, pattern=CUDSS) != ()
        found = stream.ranges
    nothing_is = re.compile(rb"nothing_is_called_this")
    with CountingFile(elf_zoo.ext_static) as stream:
        assert scan_symbols(stream, facts, pattern=nothing_is, include_tails=False) == ()
        nothing = stream.ranges
    with CountingFile(elf_zoo.ext_static) as stream:
        assert scan_symbols(stream, facts, pattern=nothing_is) == ()
        nothing_with_tails = stream.ranges
    for name, section in sections.items():
        assert section is not None
        assert overlaps(found, section) == (name in (".symtab", ".strtab"))
        # Without a matching name the symbol table is not read at all, unless for names that start
        # inside a string (which only the symbol table tells).
        assert overlaps(nothing, section) == (name == ".strtab")
        assert overlaps(nothing_with_tails, section) == (name in (".symtab", ".strtab"))


def test_no_table(elf_zoo: ElfZoo) -> None:
    assert scan(elf_zoo.relocatable, ".dynsym") == ()  # an object file has no .dynsym
    assert scan(elf_zoo.stripped_sections, ".symtab") == ()
    assert scan(elf_zoo.libcuda, ".symtab") == ()  # no cudss names


def test_bad_arguments(elf_zoo: ElfZoo) -> None:
    with pytest.raises(ValueError, match="table must be"):
        scan(elf_zoo.libcudss, ".strtab")
    with pytest.raises(ValueError, match="chunk_size must be positive"):
        scan(elf_zoo.libcudss, chunk_size=0)


# -- tail-merged names and the big library ---------------------------------------------------------

API_C = """\
int cudssAlpha(int x) { return x; }
int cudssBeta(int x) { return x + 1; }
/* ld stores "cudssTail" once, as the tail of "my_cudssTail": cudssTail's st_name points inside it. */
int my_cudssTail(int x) { return x + 2; }
int cudssTail(int x) { return my_cudssTail(x); }
__attribute__((noinline, used)) static int cudss_static_helper(int x) { return x * 3; }
int call_helper(int x) { return cudss_static_helper(x); }
int _ZN5inner10cudssProbeEv(void) { return 0; }
"""
API_SYMTAB = {"cudssAlpha", "cudssBeta", "cudssTail", "cudss_static_helper"}
API_DYNSYM = {"cudssAlpha", "cudssBeta", "cudssTail"}
GENERATED = 100_000


def generated_assembly(count: int) -> str:
    """``count`` one-byte data symbols with long C++-style names: a third hidden (local in the
    shared object), a third exported (in .dynsym too), a third plain local labels."""
    lines = ['\t.section .rodata.generated,"a"']
    for index in range(count):
        name = f"_ZN9slimwheel5tests9generated8functionILi{index}EEEvv"
        if index % 3 == 0:
            lines.append(f"\t.globl {name}\n\t.hidden {name}")
        elif index % 3 == 1:
            lines.append(f"\t.globl {name}")
        lines.append(f"\t.type {name}, STT_OBJECT\n\t.size {name}, 1\n{name}:\n\t.zero 1")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class BigLibrary:
    path: Path
    full: ElfFacts  # read_elf(symbols=True)
    api: Path  # API_C alone


@pytest.fixture(scope="module")
def big_library(tmp_path_factory: pytest.TempPathFactory) -> BigLibrary:
    if find_tool("gcc") is None:
        pytest.skip("building the big library needs gcc")
    folder = tmp_path_factory.mktemp("big")
    path = compile_shared(
        folder / "libbig.so",
        {"api.c": API_C, "generated.s": generated_assembly(GENERATED)},
        flags=("-Wa,--noexecstack",),
        work=folder / "build",
    )
    api = compile_shared(folder / "libapi.so", {"api.c": API_C}, work=folder / "build-api")
    return BigLibrary(path, read_elf_file(path), api)


def traced_peak(action: Callable[[], T]) -> tuple[T, int]:
    """The result of ``action`` and the most memory (bytes) it had allocated at one time."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = action()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
            tracemalloc.stop()
    return result, peak


def scan_peak(path: Path, table: str, **options: Any) -> tuple[tuple[Symbol, ...], int]:
    facts = read_elf_file(path, symbols=False)
    with path.open("rb") as stream:
        return traced_peak(lambda: scan_symbols(stream, facts, pattern=CUDSS, table=table, **options))


def test_big_library_memory(big_library: BigLibrary) -> None:
    path, full = big_library.path, big_library.full
    strtab, dynstr = full.section(".strtab"), full.section(".dynstr")
    assert strtab is not None
    assert dynstr is not None
    assert full.symtab is not None
    assert len(full.symtab) > GENERATED
    assert strtab.size > 4 << 20
    assert dynstr.size > 1 << 20

    _, read_all = traced_peak(lambda: read_elf_file(path))
    _, headers_only = traced_peak(lambda: read_elf_file(path, symbols=False))
    megabyte, small_chunk = scan_peak(path, ".symtab", chunk_size=1 << 20)
    tiny, tiny_chunk = scan_peak(path, ".symtab", chunk_size=64 << 10)
    default, default_chunk = scan_peak(path, ".symtab")
    exported, dynsym_chunk = scan_peak(path, ".dynsym", chunk_size=1 << 20)
    print(
        f"\nread_elf(symbols=True) {read_all:,} B, read_elf(symbols=False) {headers_only:,} B, "
        f"scan .symtab: 4 MiB chunks {default_chunk:,} B, 1 MiB {small_chunk:,} B, "
        f"64 KiB {tiny_chunk:,} B; scan .dynsym 1 MiB {dynsym_chunk:,} B"
    )
    assert {s.name for s in megabyte} == API_SYMTAB
    assert megabyte == tiny == default == expected(full, ".symtab", CUDSS)
    assert {s.name for s in exported} == API_DYNSYM
    assert exported == expected(full, ".dynsym", CUDSS)

    assert small_chunk < read_all / 5
    assert dynsym_chunk < read_all / 5
    assert tiny_chunk < 1 << 20
    assert default_chunk < min(read_all / 2, 4 * (4 << 20))  # about three 4 MiB chunks
    # symbols=False reads .dynstr string by string, never wholesale.
    assert headers_only < 256 << 10 < dynstr.size


@pytest.mark.parametrize("big", [False, True])
def test_tail_merged_names(big_library: BigLibrary, big: bool) -> None:
    path = big_library.path if big else big_library.api
    small = big_library.api.read_bytes()
    # The linker did merge the tail: cudssTail points into the middle of my_cudssTail. (Checked
    # on the small library: pyelftools takes seconds to look a name up among 100k symbols.)
    with big_library.api.open("rb") as stream:
        elf: Any = ELFFile(stream)
        for table, strings in ((".symtab", ".strtab"), (".dynsym", ".dynstr")):
            symbol = elf.get_section_by_name(table).get_symbol_by_name("cudssTail")[0]
            offset = elf.get_section_by_name(strings)["sh_offset"] + symbol["st_name"]
            assert small[offset - 3 : offset] == b"my_"
    for table in TABLES:
        for source in (rb"cudssT", rb"^cudssTail$", rb"\AcudssTail\Z", rb"cudss(?=Tail)"):
            found = scan(path, table, re.compile(source), chunk_size=4099)
            assert [s.name for s in found] == ["cudssTail"], (table, source)
        found = scan(path, table, re.compile(rb"my_cudss"), chunk_size=4099)
        assert [s.name for s in found] == ["my_cudssTail"]
        # Without the tail search, only names that start a string are found.
        found = scan(path, table, re.compile(rb"cudssT"), chunk_size=4099, include_tails=False)
        assert found == ()


def test_big_library_chunk_sizes(big_library: BigLibrary) -> None:
    want = expected(big_library.full, ".symtab", CUDSS)
    for chunk_size in (1, 7, 64, 4099, 1 << 16):
        assert scan(big_library.path, chunk_size=chunk_size) == want


# -- errors ---------------------------------------------------------------------------------------


def scan_error(data: bytes, facts: ElfFacts, table: str = ".symtab") -> ElfError:
    with pytest.raises(ElfError) as info:
        scan_bytes(data, facts, table)
    return info.value


def read_error(data: bytes) -> ElfError:
    with pytest.raises(ElfError) as info:
        read_elf(io.BytesIO(data), path="lib.so")
    return info.value


def test_cut_files(elf_zoo: ElfZoo) -> None:
    # The facts of the whole file, with a stream that ends early: the stream is what counts. A cut
    # after what a scan reads (the stripped file's code) is no error.
    reasons = []
    for path in (elf_zoo.ext_static, elf_zoo.stripped_sections):
        data = path.read_bytes()
        facts = read_elf_file(path, symbols=False)
        for table in TABLES:
            whole = scan(path, table)
            for size in range(0, len(data), 509):
                try:
                    assert scan_bytes(data[:size], facts, table) == whole
                except ElfError as error:
                    reasons.append((error.path, error.reason))
    assert len(reasons) > 100
    assert {path for path, _reason in reasons} == {"lib.so"}
    odd = [
        r
        for _path, r in reasons
        if (r != "not an ELF file" and not r.startswith(CORRUPT)) or "undecodable" in r
    ]
    assert odd == []


def dynamic_entry(data: bytes, tag: int) -> int:
    """File offset of the first dynamic entry with ``tag`` (64-bit little-endian, via PT_DYNAMIC)."""
    phoff, phentsize, phnum = struct.unpack_from("<Q", data, 0x20)[0], *struct.unpack_from("<HH", data, 0x36)
    for index in range(phnum):
        kind, _flags, offset, _vaddr, _paddr, filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + index * phentsize
        )
        if kind == 2:
            for position in range(offset, offset + filesz, 16):
                if struct.unpack_from("<q", data, position)[0] == tag:
                    return position
    raise AssertionError(f"no dynamic tag {tag}")


def test_string_table_past_end(elf_zoo: ElfZoo) -> None:
    data = bytearray(elf_zoo.stripped_sections.read_bytes())
    facts = read_elf_file(elf_zoo.stripped_sections, symbols=False)
    struct.pack_into("<Q", data, dynamic_entry(bytes(data), 10) + 8, 1 << 30)  # DT_STRSZ
    error = scan_error(bytes(data), facts, ".dynsym")
    assert error.reason.startswith(CORRUPT + "DT_STRTAB (offset ")
    assert error.reason.endswith(f"{1 << 30} bytes) runs past end of file ({len(data)} bytes)")


def test_symbol_table_past_end(elf_zoo: ElfZoo) -> None:
    # sh_size of .symtab past the end of the file: read_elf and scan_symbols give the same reason.
    data = bytearray(elf_zoo.ext_static.read_bytes())
    facts = read_elf_file(elf_zoo.ext_static, symbols=False)
    shoff, shentsize = struct.unpack_from("<Q", data, 0x28)[0], struct.unpack_from("<H", data, 0x3A)[0]
    index = next(i for i, s in enumerate(facts.sections) if s.name == ".symtab")
    struct.pack_into("<Q", data, shoff + index * shentsize + 0x20, len(data))
    error = scan_error(bytes(data), facts)
    assert error.reason == read_error(bytes(data)).reason
    assert error.reason.startswith(CORRUPT + f"section {index} .symtab")


def symbol_entries(data: bytes, facts: ElfFacts, table: str, strings: str) -> Iterator[tuple[int, bytes]]:
    """(file offset, name) of each entry of a 64-bit little-endian symbol table."""
    symbols, names = facts.section(table), facts.section(strings)
    assert symbols is not None
    assert names is not None
    for offset in range(symbols.offset, symbols.offset + symbols.size, 24):
        start = names.offset + struct.unpack_from("<I", data, offset)[0]
        yield offset, data[start : data.index(b"\0", start)]


@pytest.mark.parametrize(("table", "strings"), [(".symtab", ".strtab"), (".dynsym", ".dynstr")])
def test_name_offsets_out_of_range(elf_zoo: ElfZoo, table: str, strings: str) -> None:
    # A defined symbol (not one that matches) whose name is past the string table, or unterminated.
    original = elf_zoo.ext_static.read_bytes()
    facts = read_elf_file(elf_zoo.ext_static, symbols=False)
    names = facts.section(strings)
    assert names is not None
    entry = next(
        offset
        for offset, name in symbol_entries(original, facts, table, strings)
        if name == b"solver_cudss_version"
    )
    past = bytearray(original)
    struct.pack_into("<I", past, entry, names.size + 5)
    error = scan_error(bytes(past), facts, table)
    assert (
        error.reason
        == CORRUPT + f"string offset {names.size + 5} out of range in {strings} ({names.size} bytes)"
    )
    assert error.reason == read_error(bytes(past)).reason
    unterminated = bytearray(original)
    last = original.rindex(b"\0", names.offset, names.offset + names.size - 1) + 1 - names.offset
    unterminated[names.offset + names.size - 1] = ord("x")  # the last string loses its NUL
    struct.pack_into("<I", unterminated, entry, last)
    error = scan_error(bytes(unterminated), facts, table)
    assert error.reason == CORRUPT + f"unterminated string at offset {last} in {strings}"
    assert error.reason == read_error(bytes(unterminated)).reason


HOT_SECTIONS = (".symtab", ".strtab", ".dynsym", ".dynstr", ".gnu.version", ".dynamic", ".gnu.hash", ".hash")


def test_fuzzed_files(elf_zoo: ElfZoo) -> None:
    """Corrupted copies give ElfError with a precise reason, never another exception; and when
    read_elf reads a copy, scan_symbols gives exactly read_elf's symbols, filtered."""
    rng = random.Random(20240602)
    sources = [elf_zoo.ext_static, elf_zoo.libcudss, elf_zoo.big_endian, elf_zoo.stripped_sections]
    sources += [path for path in (elf_zoo.lib32, elf_zoo.stripped_sections32) if path]
    compared = 0
    reasons: list[tuple[str, bool]] = []
    for source in sources:
        data = source.read_bytes()
        facts = read_elf_file(source, symbols=False)
        hot = [(s.offset, s.size) for s in facts.sections if s.name in HOT_SECTIONS and s.size]
        hot = hot or [(0, len(data))]
        for _ in range(150):
            start, size = rng.choice(hot)
            position = rng.randrange(start, min(start + size, len(data) - 4))
            mutated = bytearray(data)
            value = rng.choice([0, 1, 0xFF, 0x7FFF, 0xFFFF, 0xFFFFFFFF, rng.randrange(1 << 32)])
            width = rng.choice([1, 2, 4])
            mutated[position : position + width] = value.to_bytes(4, "little")[:width]
            case = bytes(mutated)
            try:
                full: ElfFacts | None = read_elf(io.BytesIO(case), path="lib.so")
            except ElfError:
                full = None
            for table in TABLES:
                try:
                    got = scan_bytes(case, facts, table, chunk_size=rng.choice([5, 64, 4096]))
                except ElfError as error:
                    # scan_symbols checks less than read_elf, never more: read_elf failed too.
                    reasons.append((error.reason, full is None))
                    continue
                if full is not None:
                    assert got == expected(full, table, CUDSS)
                    compared += 1
    assert compared > 500
    assert len(reasons) > 10
    assert [r for r, both in reasons if not both or not r.startswith(CORRUPT) or "undecodable" in r] == []
