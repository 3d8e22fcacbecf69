"""What to keep of a partly fetched ELF file: :func:`ranges_to_keep` finds, from a file's first
bytes, the ranges the reader will need besides its start and end.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Protocol

from slimwheel.elf.format import (
    _PT_DYNAMIC,
    _PT_LOAD,
    _PT_NOTE,
    _SHF_ALLOC,
    _SHF_EXECINSTR,
    _SHF_WRITE,
    _SHT_DYNAMIC,
    _SHT_DYNSYM,
    _SHT_GNU_VERDEF,
    _SHT_GNU_VERNEED,
    _SHT_GNU_VERSYM,
    _SHT_NOTE,
    _SHT_PROGBITS,
    _SHT_REL,
    _SHT_RELA,
    _SHT_STRTAB,
    _SHT_SYMTAB,
    is_elf,
)

__all__ = [
    "EDIT_ENDS",
    "edit_ranges",
    "known_table_ranges",
    "ranges_to_keep",
    "relocation_ranges",
    "segment_after_section_headers",
    "table_ranges",
]

EDIT_ENDS = 256 << 10  # the start and end of a file kept for an ELF edit once its tables are known

# Sections the readers of this package parse (names, symbols, versions, notes).
_TABLE_TYPES = frozenset(
    {
        _SHT_SYMTAB,
        _SHT_STRTAB,
        _SHT_DYNAMIC,
        _SHT_NOTE,
        _SHT_DYNSYM,
        _SHT_GNU_VERDEF,
        _SHT_GNU_VERNEED,
        _SHT_GNU_VERSYM,
    }
)


class _SectionLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> int: ...

    @property
    def offset(self) -> int: ...

    @property
    def size(self) -> int: ...


class _Readable(Protocol):
    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def read(self, size: int = -1, /) -> bytes | None: ...


def ranges_to_keep(prefix: bytes) -> list[tuple[int, int]]:
    """(offset, length) of what an ELF reader needs beyond a file's start and end, from its first bytes.

    The program headers, right after the ELF header, say where ``.dynamic`` and the notes (build-id)
    are; in NVIDIA's patched libraries those sit in the middle of a file of hundreds of MB. The section
    header table is added too. Anything unreadable gives ``[]``: the caller then reads the whole file.
    """
    if len(prefix) < 64 or not is_elf(prefix) or prefix[4] not in (1, 2) or prefix[5] not in (1, 2):
        return []
    wide = prefix[4] == 2
    order = "<" if prefix[5] == 1 else ">"
    if wide:
        phoff, shoff = struct.unpack_from(order + "QQ", prefix, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", prefix, 54)
        program = struct.Struct(order + "IIQQQQQQ")  # type, flags, offset, vaddr, paddr, filesz, ...
    else:
        phoff, shoff = struct.unpack_from(order + "II", prefix, 28)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", prefix, 42)
        program = struct.Struct(order + "IIIIIIII")  # type, offset, vaddr, paddr, filesz, ...
    ranges = [(shoff, shentsize * shnum)] if shoff and shnum else []
    if phentsize < program.size:
        return ranges
    if phoff + phentsize * phnum > len(prefix):
        # The table lies further on (a segment appended by patchelf or by slimwheel): keep it; what
        # it points to is not known yet.
        return [*ranges, (phoff, phentsize * phnum)] if phnum else ranges
    for index in range(phnum):
        fields = program.unpack_from(prefix, phoff + index * phentsize)
        kind, offset, size = (fields[0], fields[2], fields[5]) if wide else (fields[0], fields[1], fields[4])
        if kind in (_PT_DYNAMIC, _PT_NOTE) and size:
            ranges.append((offset, size))
    return ranges


def segment_after_section_headers(prefix: bytes) -> bool:
    """Whether a file's first bytes show a loadable segment placed at or after its section header
    table (or the program header table itself there): the layout patchelf leaves when it moves ``.dynstr``
    to the end of a file, as PyTorch 1.13's build did to ``libtorch_cuda_cu.so``. The tables the
    section headers name then sit before the moved ones, further from the end than a kept tail
    reaches. False when the bytes cannot tell."""
    if len(prefix) < 64 or not is_elf(prefix) or prefix[4] not in (1, 2) or prefix[5] not in (1, 2):
        return False
    wide = prefix[4] == 2
    order = "<" if prefix[5] == 1 else ">"
    if wide:
        phoff, shoff = struct.unpack_from(order + "QQ", prefix, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", prefix, 54)
        program = struct.Struct(order + "IIQQQQQQ")
    else:
        phoff, shoff = struct.unpack_from(order + "II", prefix, 28)
        phentsize, phnum = struct.unpack_from(order + "HH", prefix, 42)
        program = struct.Struct(order + "IIIIIIII")
    if not shoff or not phnum or phentsize < program.size:
        return False
    if phoff >= shoff:
        return True  # the program headers were moved behind the section headers
    if phoff + phentsize * phnum > len(prefix):
        return False
    for index in range(phnum):
        fields = program.unpack_from(prefix, phoff + index * phentsize)
        kind, offset = (fields[0], fields[2]) if wide else (fields[0], fields[1])
        if kind == _PT_LOAD and offset >= shoff:
            return True
    return False


def table_ranges(stream: _Readable, *, read_only_data: int = 0) -> list[tuple[int, int]]:
    """(offset, length) of every symbol, string, version, note and dynamic section, from a file whose
    ELF header and section header table ``stream`` can read (a view that kept its ends). For a second
    pass when a first one missed a table: in libraries an earlier patchelf rewrote (PyTorch 1.13's
    ``libtorch_cuda_cu.so``) ``.shstrtab``, ``.symtab`` and ``.strtab`` sit before a 10 MB tail.
    ``read_only_data``: also the read-only data sections (allocated, neither written nor executed:
    ``.rodata``, which the static scan reads, among them, since the names may not be readable yet) of
    at most that many bytes each, after the tables. Anything unreadable gives ``[]``."""
    stream.seek(0)
    header = stream.read(64) or b""
    if len(header) < 52 or not is_elf(header) or header[4] not in (1, 2) or header[5] not in (1, 2):
        return []
    wide = header[4] == 2
    order = "<" if header[5] == 1 else ">"
    if wide:
        (shoff,) = struct.unpack_from(order + "Q", header, 40)
        shentsize, shnum = struct.unpack_from(order + "HH", header, 58)
        section = struct.Struct(order + "IIQQQQIIQQ")  # name, type, flags, addr, offset, size, ...
    else:
        (shoff,) = struct.unpack_from(order + "I", header, 32)
        shentsize, shnum = struct.unpack_from(order + "HH", header, 46)
        section = struct.Struct(order + "IIIIIIIIII")
    if not shoff or not shnum or shentsize < section.size:
        return []
    stream.seek(shoff)
    table = stream.read(shentsize * shnum) or b""
    ranges: list[tuple[int, int]] = []
    data: list[tuple[int, int]] = []
    for index in range(min(shnum, len(table) // shentsize)):
        fields = section.unpack_from(table, index * shentsize)
        kind, flags, offset, size = fields[1], fields[2], fields[4], fields[5]
        if kind in _TABLE_TYPES and size:
            ranges.append((offset, size))
        elif kind == _SHT_PROGBITS and flags & (_SHF_ALLOC | _SHF_WRITE | _SHF_EXECINSTR) == _SHF_ALLOC:
            data.extend([(offset, size)] if 0 < size <= read_only_data else [])
    return [*ranges, *data]


def known_table_ranges(
    sections: Iterable[_SectionLike], *, symbol_table: bool = True
) -> list[tuple[int, int]]:
    """(offset, length) of the tables :func:`table_ranges` would find, from sections already read (an
    earlier read's ``ElfFacts.sections``), so that a later pass over the same layout keeps them at
    once. ``symbol_table=False`` leaves out ``.symtab`` and ``.strtab``, which only the static scan
    reads and which are most of a big C++ library's tables."""
    return [
        (section.offset, section.size)
        for section in sections
        if section.kind in _TABLE_TYPES
        and section.size
        and (symbol_table or not (section.kind == _SHT_SYMTAB or section.name == ".strtab"))
    ]


def relocation_ranges(sections: Iterable[_SectionLike], *, limit: int) -> list[tuple[int, int]]:
    """(offset, length) of the relocation tables (``.rela.dyn``, ``.rela.plt``), which tell the
    imports the loader binds (``read_elf(..., relocations=True)``): all of them when together they
    take at most ``limit`` bytes, else none, as part of them would tell nothing."""
    ranges = [(s.offset, s.size) for s in sections if s.kind in (_SHT_RELA, _SHT_REL) and s.size]
    return ranges if sum(size for _, size in ranges) <= limit else []


def edit_ranges(prefix: bytes, size: int, sections: Iterable[_SectionLike]) -> list[tuple[int, int]]:
    """(offset, length) of what planning an ELF edit reads (``slimwheel.elf.edit.plan_edit``) of a
    ``size``-byte file whose sections an earlier read found: its first and last ``EDIT_ENDS`` bytes,
    what :func:`ranges_to_keep` finds from ``prefix`` (its first bytes) and the tables
    :func:`known_table_ranges` gives without the symbol table."""
    return [
        (0, min(size, EDIT_ENDS)),
        (max(0, size - EDIT_ENDS), min(size, EDIT_ENDS)),
        *ranges_to_keep(prefix),
        *known_table_ranges(sections, symbol_table=False),
    ]
