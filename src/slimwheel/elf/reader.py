"""The reader: :func:`read_elf` seeks to the headers, the dynamic section, the version tables,
the symbol tables and the build-id note of an ELF file and returns them as :class:`ElfFacts`.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

from slimwheel.elf.format import (
    _BINDINGS,
    _DT_GNU_HASH,
    _DT_HASH,
    _DT_JMPREL,
    _DT_NEEDED,
    _DT_NULL,
    _DT_PLTREL,
    _DT_PLTRELSZ,
    _DT_REL,
    _DT_RELA,
    _DT_RELASZ,
    _DT_RELSZ,
    _DT_RPATH,
    _DT_RUNPATH,
    _DT_SONAME,
    _DT_STRSZ,
    _DT_STRTAB,
    _DT_SYMTAB,
    _DT_VERDEF,
    _DT_VERDEFNUM,
    _DT_VERNEED,
    _DT_VERNEEDNUM,
    _DT_VERSYM,
    _ELF_TYPES,
    _EM_PPC64,
    _KINDS,
    _LAZY_STRING_CHUNK,
    _MACHINES,
    _MAX_VERSION_ENTRIES,
    _NOTE_SCAN_LIMIT,
    _NT_GNU_BUILD_ID,
    _PN_XNUM,
    _PT_DYNAMIC,
    _PT_INTERP,
    _PT_LOAD,
    _PT_NOTE,
    _SHF_EXECINSTR,
    _SHN_LORESERVE,
    _SHN_UNDEF,
    _SHN_XINDEX,
    _SHT_DYNAMIC,
    _SHT_DYNSYM,
    _SHT_GNU_VERDEF,
    _SHT_GNU_VERNEED,
    _SHT_GNU_VERSYM,
    _SHT_NOBITS,
    _SHT_NOTE,
    _SHT_STRTAB,
    _SHT_SYMTAB,
    _STT_FILE,
    _STT_SECTION,
    _VER_FLG_BASE,
    _VER_NDX_MASK,
    _layout,
    is_elf,
)
from slimwheel.errors import ElfError

__all__ = [
    "DynamicTables",
    "ElfFacts",
    "Section",
    "Symbol",
    "VersionNeed",
    "dynamic_tables",
    "read_elf",
    "read_elf_file",
    "read_interpreter",
    "read_section",
]


@dataclass(frozen=True)
class Symbol:
    name: str
    size: int
    kind: str  # "func", "object", "tls", "other"
    binding: str  # "global", "weak", "local", "unique" ("other" for processor-specific bindings)
    version: str | None = None  # dynamic symbols only; None when unversioned
    # st_shndx: the index of the symbol's section in ElfFacts.sections, or a reserved value as it is
    # (SHN_ABS 0xfff1, SHN_COMMON 0xfff2, SHN_XINDEX 0xffff); see ElfFacts.section_of.
    section: int | None = None
    # Undefined dynamic symbols only: the DT_NEEDED name whose version need ``version`` belongs to (the
    # library the link bound the symbol to); None when unversioned.
    library: str | None = None


@dataclass(frozen=True)
class VersionNeed:
    file: str  # vn_file: the DT_NEEDED name the versions are required from
    names: tuple[str, ...]  # vna_name entries


@dataclass(frozen=True)
class Section:
    name: str
    kind: int  # sh_type
    offset: int
    size: int
    flags: int = 0  # sh_flags

    @property
    def executable(self) -> bool:
        """SHF_EXECINSTR: the section holds machine code (.text, .init, but also .plt and .plt.sec)."""
        return bool(self.flags & _SHF_EXECINSTR)


@dataclass(frozen=True)
class ElfFacts:
    """What :func:`read_elf` found. ``sections`` includes the null section 0, so indexes match st_shndx.

    With ``symbols=False``, ``defined_symbols`` and ``undefined_symbols`` are empty and ``symtab`` is
    None; :attr:`has_symtab` still tells whether the file has a ``.symtab``.
    ``version_definitions`` lists the version nodes a library defines, without the base entry
    (VER_FLG_BASE, which only repeats the file's own name). ``defined_symbols`` keeps what the table
    has, including the absolute symbol ld emits for each version node (``libcudss.so.1``, size 0).
    """

    elf_class: int
    machine: str
    little_endian: bool
    elf_type: str
    soname: str | None
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    version_needs: tuple[VersionNeed, ...]
    version_definitions: tuple[str, ...]
    defined_symbols: tuple[Symbol, ...]
    undefined_symbols: tuple[Symbol, ...]
    symtab: tuple[Symbol, ...] | None
    sections: tuple[Section, ...]
    build_id: str | None
    file_size: int
    # The undefined dynamic symbols no dynamic relocation refers to, which the loader never binds
    # (``read_elf(..., relocations=True)``); None when the relocations were not read.
    unbound_imports: frozenset[str] | None = None

    def section(self, name: str) -> Section | None:
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def section_of(self, symbol: Symbol) -> Section | None:
        """The section ``symbol`` is defined in; None when that is unknown (a file without section
        headers, an index not recorded, or SHN_XINDEX, whose real index is in a table not read) and
        for symbols defined in no section (SHN_ABS, SHN_COMMON)."""
        index = symbol.section
        if index is None or index == _SHN_UNDEF or index >= _SHN_LORESERVE or index >= len(self.sections):
            return None
        return self.sections[index]

    def in_executable_section(self, symbol: Symbol) -> bool | None:
        """Whether ``symbol`` is defined in a section of machine code (SHF_EXECINSTR); False for one in
        no section (SHN_ABS, SHN_COMMON) or an index past the table, None when that cannot be told
        (no section headers, the index not recorded, or SHN_XINDEX)."""
        index = symbol.section
        if index is None or index == _SHN_XINDEX or not self.sections:
            return None
        section = self.section_of(symbol)
        return section is not None and section.executable

    @property
    def fatbin_size(self) -> int:
        """Bytes of CUDA device code: the sizes of the ``.nv_fatbin`` and ``__nv_relfatbin`` sections."""
        return sum(s.size for s in self.sections if s.name in (".nv_fatbin", "__nv_relfatbin"))

    @property
    def has_symtab(self) -> bool:
        return any(s.kind == _SHT_SYMTAB for s in self.sections)

    @property
    def is_program(self) -> bool:
        """An executable: ET_EXEC, or a position-independent one (an interpreter and no soname; a
        library with an interpreter, as glibc's libc.so.6, names itself)."""
        return self.elf_type == "EXEC" or (self.soname is None and self.section(".interp") is not None)


def read_elf_file(
    path: str | os.PathLike[str], *, symbols: bool = True, relocations: bool = False
) -> ElfFacts:
    """Read ``path``; OSError (missing or unreadable file) propagates, bad bytes raise ElfError."""
    with Path(path).open("rb") as stream:
        return read_elf(stream, path=os.fspath(path), symbols=symbols, relocations=relocations)


def read_elf(
    stream: BinaryIO,
    *,
    path: str,
    symbols: bool = True,
    symtab: bool = True,
    defined: bool = True,
    relocations: bool = False,
) -> ElfFacts:
    """Read the facts of the ELF file in ``stream`` (seekable; the file starts at offset 0).

    ``path`` only names the file in errors. ``symbols=False`` skips the symbol tables, which are the
    only big reads; ``symtab=False`` only ``.symtab`` (the dynamic symbols are read); ``defined=False``
    reads only the undefined dynamic symbols (what a file imports; a C++ library defines 90,000).
    ``relocations`` (with ``symbols``) reads the dynamic relocations too, to tell the imports the loader
    never binds (:attr:`ElfFacts.unbound_imports`).
    OSError from the stream propagates; every problem with the bytes is an ElfError.
    """
    try:
        return _Parser(stream, path).parse(
            symbols=symbols, symtab=symtab, defined=defined, relocations=relocations
        )
    except OSError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError, UnicodeError) as exc:
        # A safety net only: every known inconsistency is reported precisely before it gets here.
        raise ElfError(path, f"truncated or corrupt ELF: undecodable data ({exc})") from exc


@dataclass(frozen=True)
class DynamicTables:
    """Where the tables of the dynamic section lie in the file, (file offset, size) each, found as
    the loader finds them: through PT_DYNAMIC, the dynamic tags and PT_LOAD, never the section
    headers (which ``sstrip`` removes: onnxruntime's CUDA provider in polars-fastembed-cuda 0.1.17).
    A version table's size runs to the end of its segment: its entries say where it ends."""

    dynamic: tuple[int, int]
    strings_address: int  # DT_STRTAB
    strings: tuple[int, int]
    symbols: tuple[int, int] | None  # None: no DT_SYMTAB, or no hash table that tells its size
    version_needs: tuple[int, int, int] | None  # and DT_VERNEEDNUM
    version_definitions: tuple[int, int, int] | None  # and DT_VERDEFNUM


def dynamic_tables(stream: BinaryIO, *, path: str) -> DynamicTables:
    """The :class:`DynamicTables` of the ELF file in ``stream``; ElfError when it has no PT_DYNAMIC or
    no string table, or when a tag points outside every PT_LOAD."""
    parser = _Parser(stream, path)
    try:
        parser.read_headers()
        parser.shdrs = []  # as the loader sees the file
        dynamic = parser.read_dynamic()
        segment = next(ph for ph in parser.phdrs if ph.kind == _PT_DYNAMIC) if dynamic else None
        values = dynamic.values if dynamic else {}
        if segment is None or _DT_STRTAB not in values or _DT_STRSZ not in values:
            raise parser.corrupt("no PT_DYNAMIC with DT_STRTAB and DT_STRSZ")
        strings = parser.vaddr_region(values[_DT_STRTAB], "DT_STRTAB", values[_DT_STRSZ])
        symbols = parser.dynamic_symbol_table(values, _StringTable(parser, strings, eager=False))

        def version_table(tag: int, count_tag: int, what: str) -> tuple[int, int, int] | None:
            if tag not in values:
                return None
            region = parser.vaddr_region(values[tag], what)
            return region.offset, region.size, values.get(count_tag, 0)

        needs = version_table(_DT_VERNEED, _DT_VERNEEDNUM, "DT_VERNEED")
        definitions = version_table(_DT_VERDEF, _DT_VERDEFNUM, "DT_VERDEF")
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise ElfError(path, f"truncated or corrupt ELF: undecodable data ({exc})") from exc
    return DynamicTables(
        dynamic=(segment.offset, segment.filesz),
        strings_address=values[_DT_STRTAB],
        strings=(strings.offset, strings.size),
        symbols=None if symbols is None else (symbols[0].offset, symbols[0].size),
        version_needs=needs,
        version_definitions=definitions,
    )


def read_interpreter(stream: BinaryIO, *, path: str) -> str | None:
    """The program interpreter PT_INTERP names (``/lib64/ld-linux-x86-64.so.2``), as the kernel reads
    it; None for a file without one (a shared library). Bad bytes raise ElfError."""
    parser = _Parser(stream, path)
    try:
        parser.read_headers()
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise ElfError(path, f"truncated or corrupt ELF: undecodable data ({exc})") from exc
    segment = next((ph for ph in parser.phdrs if ph.kind == _PT_INTERP), None)
    if segment is None:
        return None
    if segment.filesz > _INTERPRETER_LIMIT or segment.offset + segment.filesz > parser.file_size:
        raise parser.corrupt(f"PT_INTERP of {segment.filesz} bytes at {segment.offset} is not a path")
    stream.seek(segment.offset)
    name = _read_fully(stream, segment.filesz).split(b"\0", 1)[0]
    return name.decode("utf-8", "surrogateescape") or None


_INTERPRETER_LIMIT = 4096  # PATH_MAX: the kernel refuses a longer one


def read_section(
    stream: BinaryIO, section: Section, *, limit: int | None = None, path: str | None = None
) -> bytes:
    """The bytes of ``section`` (at most ``limit``); b"" for SHT_NOBITS sections, which have none."""
    if section.kind == _SHT_NOBITS:
        return b""
    size = section.size if limit is None else max(0, min(section.size, limit))
    name = path if path is not None else str(getattr(stream, "name", "<stream>"))
    stream.seek(section.offset)
    data = _read_fully(stream, size)
    if len(data) != size:
        raise ElfError(name, f"truncated or corrupt ELF: section {section.name} runs past end of file")
    return data


def _read_fully(stream: BinaryIO, size: int) -> bytes:
    # Raw and zip streams may return short reads before the end.
    data = stream.read(size)
    if len(data) == size or not data:
        return data
    parts = [data]
    remaining = size - len(data)
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def _split_path_list(value: str | None) -> tuple[str, ...]:
    # Empty entries are kept: "$ORIGIN:" really searches the current directory as well.
    return () if value is None else tuple(value.split(":"))


class _Shdr(NamedTuple):
    name: str
    kind: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int
    flags: int = 0


class _Phdr(NamedTuple):
    kind: int
    offset: int
    vaddr: int
    filesz: int
    align: int


class _Region(NamedTuple):
    """A byte range of the file holding one table, with the name used in errors."""

    offset: int
    size: int
    what: str


class _Dynamic(NamedTuple):
    values: dict[int, int]  # first value of each tag
    needed: tuple[int, ...]  # every DT_NEEDED, in order


class _Parser:
    def __init__(self, stream: BinaryIO, path: str) -> None:
        self.stream = stream
        self.path = path
        self.file_size = 0
        self.layout = _layout(64, "<")
        self.shdrs: list[_Shdr] = []
        self.phdrs: list[_Phdr] = []

    # -- low level ------------------------------------------------------------------------------

    def corrupt(self, what: str) -> ElfError:
        return ElfError(self.path, f"truncated or corrupt ELF: {what}")

    def read(self, offset: int, size: int, what: str) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.file_size:
            raise self.corrupt(
                f"{what} (offset {offset}, {size} bytes) runs past end of file ({self.file_size} bytes)"
            )
        self.stream.seek(offset)
        data = _read_fully(self.stream, size)
        if len(data) != size:
            raise self.corrupt(f"{what}: file ended after {len(data)} of {size} bytes")
        return data

    def read_table(self, region: _Region, entry: struct.Struct) -> list[tuple[int, ...]]:
        usable = region.size - region.size % entry.size
        return list(entry.iter_unpack(self.read(region.offset, usable, region.what)))

    def vaddr_region(self, address: int, what: str, size: int | None = None) -> _Region:
        """Translate a virtual address through PT_LOAD; without ``size``, the region runs to the
        end of the segment's file bytes."""
        for ph in self.phdrs:
            if ph.kind == _PT_LOAD and ph.vaddr <= address < ph.vaddr + ph.filesz:
                available = ph.filesz - (address - ph.vaddr)
                return _Region(ph.offset + address - ph.vaddr, available if size is None else size, what)
        raise self.corrupt(f"{what} address {address:#x} is not in any PT_LOAD segment")

    def section_region(self, sh: _Shdr) -> _Region:
        return _Region(sh.offset, 0 if sh.kind == _SHT_NOBITS else sh.size, sh.name or f"section {sh.kind}")

    def linked_strings(self, sh: _Shdr, *, eager: bool) -> _StringTable | None:
        if 0 < sh.link < len(self.shdrs) and self.shdrs[sh.link].kind == _SHT_STRTAB:
            return _StringTable(self, self.section_region(self.shdrs[sh.link]), eager=eager)
        return None

    def first_section(self, kind: int) -> _Shdr | None:
        return next((sh for sh in self.shdrs if sh.kind == kind), None)

    # -- headers --------------------------------------------------------------------------------

    def parse(
        self, *, symbols: bool, symtab: bool = True, defined: bool = True, relocations: bool = False
    ) -> ElfFacts:
        e_type, e_machine = self.read_headers()
        order = self.layout.order
        if e_machine == _EM_PPC64:
            machine = "ppc64le" if order == "<" else "ppc64"
        else:
            machine = _MACHINES.get(e_machine, f"EM_{e_machine}")

        dynamic = self.read_dynamic()
        dynstr = self.dynamic_strings(dynamic)
        values = dynamic.values if dynamic else {}

        def dyn_string(tag: int) -> str | None:
            if tag not in values:
                return None
            if dynstr is None:
                raise self.corrupt("dynamic section names strings but has no string table")
            return dynstr.get(values[tag])

        needed: tuple[str, ...] = ()
        if dynamic and dynamic.needed:
            if dynstr is None:
                raise self.corrupt("DT_NEEDED without a dynamic string table")
            needed = tuple(dynstr.get(offset) for offset in dynamic.needed)

        version_needs, need_index = self.read_version_needs(values, dynstr)
        definitions, def_index = self.read_version_definitions(values, dynstr)

        exported: tuple[Symbol, ...] = ()
        undefined: tuple[Symbol, ...] = ()
        symbol_table: tuple[Symbol, ...] | None = None
        unbound: frozenset[str] | None = None
        if symbols:
            version_names = {**need_index, **{i: (None, name) for i, name in def_index.items()}}
            bound = self.relocated_symbols(values) if relocations else None
            exported, undefined, unbound = self.read_dynamic_symbols(
                values, dynstr, version_names, defined=defined, bound=bound
            )
            symbol_table = self.read_symtab() if symtab else None

        return ElfFacts(
            elf_class=self.layout.elf_class,
            machine=machine,
            little_endian=order == "<",
            elf_type=_ELF_TYPES.get(e_type, f"ET_{e_type}"),
            soname=dyn_string(_DT_SONAME),
            needed=needed,
            rpath=_split_path_list(dyn_string(_DT_RPATH)),
            runpath=_split_path_list(dyn_string(_DT_RUNPATH)),
            version_needs=version_needs,
            version_definitions=definitions,
            defined_symbols=exported,
            undefined_symbols=undefined,
            symtab=symbol_table,
            sections=tuple(Section(sh.name, sh.kind, sh.offset, sh.size, sh.flags) for sh in self.shdrs),
            build_id=self.read_build_id(),
            file_size=self.file_size,
            unbound_imports=unbound,
        )

    def read_headers(self) -> tuple[int, int]:
        """Read the ELF header, the section headers and the program headers; (e_type, e_machine)."""
        self.file_size = self.stream.seek(0, os.SEEK_END)
        self.stream.seek(0)
        head = _read_fully(self.stream, 64)
        if not is_elf(head):
            raise ElfError(self.path, "not an ELF file")
        if len(head) < 6:
            raise self.corrupt(f"ELF identification cut short ({len(head)} of 16 bytes)")
        elf_class = {1: 32, 2: 64}.get(head[4])
        if elf_class is None:
            raise self.corrupt(f"unknown ELF class {head[4]}")
        order = {1: "<", 2: ">"}.get(head[5])
        if order is None:
            raise self.corrupt(f"unknown data encoding {head[5]}")
        self.layout = layout = _layout(elf_class, order)
        if len(head) < 16 + layout.ehdr.size:
            raise self.corrupt(f"ELF header cut short ({len(head)} of {16 + layout.ehdr.size} bytes)")
        (
            e_type,
            e_machine,
            _version,
            _entry,
            e_phoff,
            e_shoff,
            _flags,
            _ehsize,
            e_phentsize,
            e_phnum,
            e_shentsize,
            e_shnum,
            e_shstrndx,
        ) = layout.ehdr.unpack_from(head, 16)

        self.read_section_headers(e_shoff, e_shentsize, e_shnum, e_shstrndx, e_phnum)
        if e_phnum == _PN_XNUM and self.shdrs:
            e_phnum = self.shdrs[0].info  # extended numbering: the real count is in section 0
        self.read_program_headers(e_phoff, e_phentsize, e_phnum)
        return e_type, e_machine

    def read_section_headers(self, shoff: int, shentsize: int, shnum: int, shstrndx: int, phnum: int) -> None:
        if shoff == 0:
            return  # no section headers (sstrip'ed file)
        layout = self.layout
        if shentsize < layout.shdr.size:
            raise self.corrupt(
                f"e_shentsize {shentsize} is smaller than a section header ({layout.shdr.size})"
            )
        if shnum == 0 or shstrndx == _SHN_XINDEX or phnum == _PN_XNUM:
            # Extended numbering keeps the real counts in section 0.
            first = layout.shdr.unpack(self.read(shoff, layout.shdr.size, "section header 0"))
            if shnum == 0:
                shnum = first[5]
            if shstrndx == _SHN_XINDEX:
                shstrndx = first[6]
        if shnum == 0:
            return
        data = self.read(shoff, shnum * shentsize, "section header table")
        if shentsize == layout.shdr.size:
            raw = list(layout.shdr.iter_unpack(data))
        else:
            raw = [layout.shdr.unpack_from(data, i * shentsize) for i in range(shnum)]
        shdrs = [_Shdr("", r[1], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[2]) for r in raw]
        if shstrndx != _SHN_UNDEF:
            if shstrndx >= shnum:
                raise self.corrupt(f"e_shstrndx {shstrndx} out of range ({shnum} sections)")
            names_section = shdrs[shstrndx]
            names = _StringTable(
                self, _Region(names_section.offset, names_section.size, "section names"), eager=True
            )
            shdrs = [sh._replace(name=names.get(r[0])) for sh, r in zip(shdrs, raw, strict=True)]
        for index, sh in enumerate(shdrs):
            if sh.kind != _SHT_NOBITS and sh.size and sh.offset + sh.size > self.file_size:
                raise self.corrupt(
                    f"section {index} {sh.name} (offset {sh.offset}, {sh.size} bytes) runs past end of "
                    f"file ({self.file_size} bytes)"
                )
        self.shdrs = shdrs

    def read_program_headers(self, phoff: int, phentsize: int, phnum: int) -> None:
        if phnum == 0 or phoff == 0:
            return
        entry = self.layout.phdr
        if phentsize < entry.size:
            raise self.corrupt(f"e_phentsize {phentsize} is smaller than a program header ({entry.size})")
        data = self.read(phoff, phnum * phentsize, "program header table")
        rows = (entry.unpack_from(data, i * phentsize) for i in range(phnum))
        if self.layout.elf_class == 64:
            self.phdrs = [_Phdr(r[0], r[2], r[3], r[5], r[7]) for r in rows]
        else:
            self.phdrs = [_Phdr(r[0], r[1], r[2], r[4], r[7]) for r in rows]

    # -- dynamic section ------------------------------------------------------------------------

    def read_dynamic(self) -> _Dynamic | None:
        section = self.first_section(_SHT_DYNAMIC)
        if section is not None:
            region = self.section_region(section)
        else:
            segment = next((ph for ph in self.phdrs if ph.kind == _PT_DYNAMIC), None)
            if segment is None:
                return None
            region = _Region(segment.offset, segment.filesz, "PT_DYNAMIC segment")
        values: dict[int, int] = {}
        needed: list[int] = []
        for tag, value in self.read_table(region, self.layout.dyn):
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                needed.append(value)
            values.setdefault(tag, value)
        return _Dynamic(values, tuple(needed))

    def dynamic_strings(self, dynamic: _Dynamic | None) -> _StringTable | None:
        if dynamic is None:
            return None
        section = self.first_section(_SHT_DYNAMIC)
        if section is not None:
            table = self.linked_strings(section, eager=False)
            if table is not None:
                return table
        if _DT_STRTAB not in dynamic.values:
            return None
        size = dynamic.values.get(_DT_STRSZ)
        region = self.vaddr_region(dynamic.values[_DT_STRTAB], "DT_STRTAB", size)
        return _StringTable(self, region, eager=False)

    # -- symbol versions ------------------------------------------------------------------------

    def version_table(
        self, kind: int, tag: int, count_tag: int, values: dict[int, int], dynstr: _StringTable | None
    ) -> tuple[_Region, int | None, _StringTable] | None:
        """Where a verneed/verdef table is, how many entries it has, and its string table."""
        section = self.first_section(kind)
        count = values.get(count_tag)
        if section is not None:
            strings = self.linked_strings(section, eager=False) or dynstr
            region = self.section_region(section)
            count = count if count is not None else section.info
        elif tag in values:
            strings = dynstr
            region = self.vaddr_region(values[tag], {_DT_VERNEED: "DT_VERNEED", _DT_VERDEF: "DT_VERDEF"}[tag])
        else:
            return None
        if strings is None:
            raise self.corrupt(f"{region.what} has no string table")
        if count is not None and count > _MAX_VERSION_ENTRIES:
            raise self.corrupt(f"{region.what} claims {count} entries")
        return region, count, strings

    def entry(self, region: _Region, position: int, entry: struct.Struct, what: str) -> tuple[int, ...]:
        if position < 0 or position + entry.size > region.size:
            raise self.corrupt(f"{what} at offset {position} runs past end of {region.what}")
        return entry.unpack(self.read(region.offset + position, entry.size, region.what))

    def read_version_needs(
        self, values: dict[int, int], dynstr: _StringTable | None
    ) -> tuple[tuple[VersionNeed, ...], dict[int, tuple[str, str]]]:
        """The version needs, and each need's version index -> (the file it is needed from, its name)."""
        table = self.version_table(_SHT_GNU_VERNEED, _DT_VERNEED, _DT_VERNEEDNUM, values, dynstr)
        if table is None:
            return (), {}
        region, count, strings = table
        layout = self.layout
        needs: list[VersionNeed] = []
        index: dict[int, tuple[str, str]] = {}
        position = 0
        for _ in range(_MAX_VERSION_ENTRIES if count is None else count):
            _version, aux_count, file_offset, aux, next_offset = self.entry(
                region, position, layout.verneed, "version need entry"
            )
            names: list[str] = []
            file = strings.get(file_offset)
            aux_position = position + aux
            for _ in range(aux_count):
                _hash, _flags, other, name_offset, aux_next = self.entry(
                    region, aux_position, layout.vernaux, "version need aux entry"
                )
                name = strings.get(name_offset)
                names.append(name)
                index[other & _VER_NDX_MASK] = (file, name)
                if aux_next == 0:
                    break
                aux_position += aux_next
            needs.append(VersionNeed(file, tuple(names)))
            if next_offset == 0:
                break
            position += next_offset
        return tuple(needs), index

    def read_version_definitions(
        self, values: dict[int, int], dynstr: _StringTable | None
    ) -> tuple[tuple[str, ...], dict[int, str]]:
        table = self.version_table(_SHT_GNU_VERDEF, _DT_VERDEF, _DT_VERDEFNUM, values, dynstr)
        if table is None:
            return (), {}
        region, count, strings = table
        layout = self.layout
        definitions: list[str] = []
        index: dict[int, str] = {}
        position = 0
        for _ in range(_MAX_VERSION_ENTRIES if count is None else count):
            _version, flags, ndx, aux_count, _hash, aux, next_offset = self.entry(
                region, position, layout.verdef, "version definition entry"
            )
            if aux_count:
                (name_offset, _next) = self.entry(
                    region, position + aux, layout.verdaux, "version definition aux entry"
                )
                name = strings.get(name_offset)
                index[ndx & _VER_NDX_MASK] = name
                if not flags & _VER_FLG_BASE:
                    definitions.append(name)
            if next_offset == 0:
                break
            position += next_offset
        return tuple(definitions), index

    # -- symbols --------------------------------------------------------------------------------

    def symbol_rows(self, region: _Region) -> Iterator[tuple[int, int, int, int]]:
        """(st_name, st_info, st_shndx, st_size) of each symbol, in table order (``symbol_count``
        of them): made one at a time, as a C++ library's table has hundreds of thousands."""
        entry = self.layout.sym
        size = self.symbol_count(region) * entry.size
        rows = entry.iter_unpack(self.read(region.offset, size, region.what))
        if self.layout.elf_class == 64:
            return ((r[0], r[1], r[3], r[5]) for r in rows)
        return ((r[0], r[3], r[5], r[2]) for r in rows)

    def symbol_count(self, region: _Region) -> int:
        return region.size // self.layout.sym.size

    def dynamic_symbol_count(self, values: dict[int, int]) -> int | None:
        """Without section headers, the dynsym size is only known through a hash table."""
        u32 = self.layout.u32
        if _DT_HASH in values:
            region = self.vaddr_region(values[_DT_HASH], "DT_HASH", 8)
            _nbucket, nchain = self.layout.u32x2.unpack(self.read(region.offset, 8, "DT_HASH"))
            return int(nchain)
        if _DT_GNU_HASH not in values:
            return None
        region = self.vaddr_region(values[_DT_GNU_HASH], "DT_GNU_HASH", 16)
        nbuckets, symoffset, bloom_size, _shift = self.layout.u32x4.unpack(
            self.read(region.offset, 16, "DT_GNU_HASH")
        )
        buckets_offset = region.offset + 16 + bloom_size * self.layout.word_size
        buckets = self.read(buckets_offset, nbuckets * 4, "DT_GNU_HASH buckets")
        last = max((b for (b,) in u32.iter_unpack(buckets)), default=0)
        if last < symoffset:
            return int(symoffset)
        # Walk the last bucket's chain to its end marker (low bit set).
        chain_offset = buckets_offset + nbuckets * 4 + (last - symoffset) * 4
        index = last
        while True:
            chunk = self.read(chain_offset, min(256, self.file_size - chain_offset), "DT_GNU_HASH chain")
            if len(chunk) < 4:
                raise self.corrupt("DT_GNU_HASH chain runs past end of file")
            for (value,) in u32.iter_unpack(chunk[: len(chunk) - len(chunk) % 4]):
                index += 1
                if value & 1:
                    return index
            chain_offset += len(chunk) - len(chunk) % 4

    def dynamic_symbol_table(
        self, values: dict[int, int], dynstr: _StringTable | None
    ) -> tuple[_Region, _StringTable] | None:
        """Where .dynsym is (through the section headers or the dynamic tags) and its string table
        (not loaded); None without one, or when its size cannot be known (no hash table)."""
        section = self.first_section(_SHT_DYNSYM)
        if section is not None:
            region = self.section_region(section)
            strings = self.linked_strings(section, eager=False) or dynstr
        elif _DT_SYMTAB in values:
            count = self.dynamic_symbol_count(values)
            if count is None:
                return None  # no way to know the table's size
            region = self.vaddr_region(values[_DT_SYMTAB], "DT_SYMTAB", count * self.layout.sym.size)
            strings = dynstr
        else:
            return None
        if strings is None:
            raise self.corrupt(f"{region.what} has no string table")
        return region, strings

    def read_dynamic_symbols(
        self,
        values: dict[int, int],
        dynstr: _StringTable | None,
        version_names: dict[int, tuple[str | None, str]],
        *,
        defined: bool = True,
        bound: frozenset[int] | None = None,
    ) -> tuple[tuple[Symbol, ...], tuple[Symbol, ...], frozenset[str] | None]:
        """The defined (non-local) and the undefined dynamic symbols, and the names of the undefined
        ones whose index is not in ``bound`` (None without ``bound``); ``version_names``: a version
        index -> (the file a version need names, None for a definition; the version's name)."""
        table = self.dynamic_symbol_table(values, dynstr)
        if table is None:
            return (), (), None if bound is None else frozenset()
        region, strings = table
        strings.load()
        versions = self.read_versym(values, self.symbol_count(region))
        rows = self.symbol_rows(region)
        exported: list[Symbol] = []
        undefined: list[Symbol] = []
        unbound: set[str] = set()
        for position, (name_offset, info, shndx, size) in enumerate(rows):
            if name_offset == 0 or (not defined and shndx != _SHN_UNDEF):
                continue
            name = strings.get(name_offset)
            binding = _BINDINGS.get(info >> 4, "other")
            if binding == "local" and shndx != _SHN_UNDEF:
                continue
            library, version = None, None
            index = versions[position] & _VER_NDX_MASK if versions is not None else 0
            # 0 and 1 (VER_NDX_LOCAL, VER_NDX_GLOBAL) on an undefined symbol: not bound to a version.
            if index > 1 or (index == 1 and shndx != _SHN_UNDEF):
                library, version = version_names.get(index, (None, None))
            kind = _KINDS.get(info & 0xF, "other")
            if shndx == _SHN_UNDEF:
                undefined.append(Symbol(name, size, kind, binding, version, shndx, library))
                if bound is not None and position not in bound:
                    unbound.add(name)
            else:
                exported.append(Symbol(name, size, kind, binding, version, shndx))
        return tuple(exported), tuple(undefined), None if bound is None else frozenset(unbound)

    def relocated_symbols(self, values: dict[int, int]) -> frozenset[int] | None:
        """The indexes of the dynamic symbols the dynamic relocations refer to (``.rela.dyn`` and
        ``.rela.plt``, or their REL forms), read a piece at a time; None when the dynamic section
        locates none of them in the file (the imports' use is then unknown).

        A symbol no relocation names is never looked up by the loader: jammi-ai-native-cu12 0.54's
        extension lists 30 newer NCCL functions (``ncclCommShrink``) no relocation uses, left by code
        its linker removed; counting them put NCCL's floor above the release it was built against."""
        wide = self.layout.elf_class == 64
        tables = [(_DT_RELA, _DT_RELASZ, True), (_DT_REL, _DT_RELSZ, False)]
        if _DT_JMPREL in values:
            tables.append((_DT_JMPREL, _DT_PLTRELSZ, values.get(_DT_PLTREL, _DT_RELA) == _DT_RELA))
        found: set[int] = set()
        read_any = False
        for address_tag, size_tag, addend in tables:
            if address_tag not in values or not values.get(size_tag):
                continue
            # r_offset, r_info (, r_addend): the symbol index is r_info's high 32 bits, or high 24.
            fields = ("QQq" if addend else "QQ") if wide else ("IIi" if addend else "II")
            entry = struct.Struct(self.layout.order + fields)
            region = self.vaddr_region(values[address_tag], "dynamic relocations", values[size_tag])
            usable = region.size - region.size % entry.size
            shift = 32 if wide else 8
            piece = entry.size * 65536  # a table of millions of entries is never read whole
            for start in range(0, usable, piece):
                data = self.read(region.offset + start, min(piece, usable - start), region.what)
                found.update(row[1] >> shift for row in entry.iter_unpack(data))
            read_any = True
        return frozenset(found) if read_any else None

    def versym_region(self, values: dict[int, int], count: int) -> _Region | None:
        """The symbol version table for ``count`` dynamic symbols; None when symbols are unversioned."""
        section = self.first_section(_SHT_GNU_VERSYM)
        if section is not None:
            region = self.section_region(section)
        elif _DT_VERSYM in values:
            region = self.vaddr_region(values[_DT_VERSYM], "DT_VERSYM", count * 2)
        else:
            return None
        if region.size < count * 2:
            raise self.corrupt(f"{region.what} has {region.size // 2} entries for {count} symbols")
        return region

    def read_versym(self, values: dict[int, int], count: int) -> array[int] | None:
        """The version index of each of ``count`` dynamic symbols (2 bytes each, native order); None
        when symbols are unversioned."""
        region = self.versym_region(values, count)
        if region is None:
            return None
        indexes = array("H", self.read(region.offset, count * 2, region.what))
        if (self.layout.order == "<") != (sys.byteorder == "little"):
            indexes.byteswap()
        return indexes

    def read_symtab(self) -> tuple[Symbol, ...] | None:
        section = self.first_section(_SHT_SYMTAB)
        if section is None:
            return None
        strings = self.linked_strings(section, eager=True)
        if strings is None:
            raise self.corrupt(f"{section.name or '.symtab'} has no string table")
        symbols: list[Symbol] = []
        for name_offset, info, shndx, size in self.symbol_rows(self.section_region(section)):
            kind = info & 0xF
            if shndx == _SHN_UNDEF or name_offset == 0 or kind in (_STT_SECTION, _STT_FILE):
                continue
            name = strings.get(name_offset)
            binding = _BINDINGS.get(info >> 4, "other")
            symbols.append(Symbol(name, size, _KINDS.get(kind, "other"), binding, section=shndx))
        return tuple(symbols)

    # -- notes ----------------------------------------------------------------------------------

    def read_build_id(self) -> str | None:
        named = [sh for sh in self.shdrs if sh.kind == _SHT_NOTE and sh.name == ".note.gnu.build-id"]
        others = [sh for sh in self.shdrs if sh.kind == _SHT_NOTE and sh.name != ".note.gnu.build-id"]
        candidates = [(self.section_region(sh), sh.addralign) for sh in named + others]
        if not self.shdrs:
            candidates = [
                (_Region(ph.offset, ph.filesz, "PT_NOTE segment"), ph.align)
                for ph in self.phdrs
                if ph.kind == _PT_NOTE
            ]
        for region, align in candidates:
            if region.size > _NOTE_SCAN_LIMIT:
                continue
            build_id = self.build_id_in(region, 8 if align == 8 else 4)
            if build_id is not None:
                return build_id
        return None

    def build_id_in(self, region: _Region, align: int) -> str | None:
        """The GNU build-id in a note region, None when it holds none. Notes whose padding does not
        follow the region's alignment (4-byte padded notes in an 8-aligned section, as in cuDNN 8,
        NVRTC 11.2 and cuSOLVER 11: the loader never reads them, readelf only warns) are read with
        4-byte padding; notes that fit neither way give None, not an unreadable file."""
        data = self.read(region.offset, region.size, region.what)
        for padding in dict.fromkeys((align, 4)):
            fits, found = _build_id(self.layout.u32x3, data, padding)
            if fits:
                return found
        return None


def _build_id(header: struct.Struct, data: bytes, align: int) -> tuple[bool, str | None]:
    """Whether the notes in ``data`` fit ``align``-byte padding, and the build-id they hold then."""
    position = 0
    while position + 12 <= len(data):
        namesz, descsz, kind = header.unpack_from(data, position)
        name_start = position + 12
        desc_start = name_start + _align_up(namesz, align)
        if desc_start + descsz > len(data):
            return False, None
        if kind == _NT_GNU_BUILD_ID and data[name_start : name_start + namesz] == b"GNU\0":
            return True, data[desc_start : desc_start + descsz].hex()
        position = desc_start + _align_up(descsz, align)
    return True, None


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) & ~(align - 1)


class _StringTable:
    """A NUL-terminated string table, read in one go (symbol names) or string by string (a few
    names out of a large .dynstr, when symbols are skipped)."""

    def __init__(self, parser: _Parser, region: _Region, *, eager: bool) -> None:
        self.parser = parser
        self.region = region
        self.data: bytes | None = None
        self.cache: dict[int, str] = {}
        if eager:
            self.load()

    def load(self) -> None:
        if self.data is None:
            self.data = self.parser.read(self.region.offset, self.region.size, self.region.what)

    def get(self, offset: int) -> str:
        if offset >= self.region.size:
            raise self.parser.corrupt(
                f"string offset {offset} out of range in {self.region.what} ({self.region.size} bytes)"
            )
        if self.data is not None:
            end = self.data.find(b"\0", offset)
            if end < 0:
                raise self.parser.corrupt(f"unterminated string at offset {offset} in {self.region.what}")
            return self.data[offset:end].decode("utf-8", "surrogateescape")
        cached = self.cache.get(offset)
        if cached is None:
            cached = self.cache[offset] = self.read_lazily(offset)
        return cached

    def read_lazily(self, offset: int) -> str:
        parts: list[bytes] = []
        position = offset
        while position < self.region.size:
            size = min(_LAZY_STRING_CHUNK, self.region.size - position)
            chunk = self.parser.read(self.region.offset + position, size, self.region.what)
            end = chunk.find(b"\0")
            if end >= 0:
                parts.append(chunk[:end])
                return b"".join(parts).decode("utf-8", "surrogateescape")
            parts.append(chunk)
            position += size
        raise self.parser.corrupt(f"unterminated string at offset {offset} in {self.region.what}")
