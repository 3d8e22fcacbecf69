"""The ELF format as slimwheel reads it: the magic, the numbers of the gABI and the GNU extensions
(section and program header types, dynamic tags, symbol bindings and types, version flags), the
reader's limits, and the ``struct`` layouts of the headers and tables for each class and byte order.

The underscore names are shared with the other modules of :mod:`slimwheel.elf` only.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

__all__ = ["ELF_MAGIC", "is_elf"]

ELF_MAGIC = b"\x7fELF"

_ELF_TYPES = {1: "REL", 2: "EXEC", 3: "DYN", 4: "CORE"}
_MACHINES = {3: "i386", 22: "s390x", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
_EM_PPC64 = 21

# Section types.
_SHT_SYMTAB = 2
_SHT_STRTAB = 3
_SHT_RELA = 4
_SHT_DYNAMIC = 6
_SHT_NOTE = 7
_SHT_NOBITS = 8
_SHT_REL = 9
_SHT_DYNSYM = 11
_SHT_GNU_VERDEF = 0x6FFFFFFD
_SHT_GNU_VERNEED = 0x6FFFFFFE
_SHT_GNU_VERSYM = 0x6FFFFFFF

# Program header types.
_PT_LOAD = 1
_PT_DYNAMIC = 2
_PT_INTERP = 3
_PT_NOTE = 4
_PT_PHDR = 6

# Dynamic tags.
_DT_NULL = 0
_DT_NEEDED = 1
_DT_PLTRELSZ = 2
_DT_HASH = 4
_DT_STRTAB = 5
_DT_SYMTAB = 6
_DT_RELA = 7
_DT_RELASZ = 8
_DT_STRSZ = 10
_DT_SONAME = 14
_DT_RPATH = 15
_DT_REL = 17
_DT_RELSZ = 18
_DT_PLTREL = 20
_DT_JMPREL = 23
_DT_RUNPATH = 29
_DT_GNU_HASH = 0x6FFFFEF5
_DT_VERSYM = 0x6FFFFFF0
_DT_VERDEF = 0x6FFFFFFC
_DT_VERDEFNUM = 0x6FFFFFFD
_DT_VERNEED = 0x6FFFFFFE
_DT_VERNEEDNUM = 0x6FFFFFFF

_SHN_UNDEF = 0
_SHN_LORESERVE = 0xFF00  # from here on, st_shndx is no section index (SHN_ABS, SHN_COMMON, SHN_XINDEX)
_SHN_XINDEX = 0xFFFF
_SHF_WRITE = 0x1
_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4
_SHT_PROGBITS = 1
_PN_XNUM = 0xFFFF
_VER_FLG_BASE = 0x1
_VER_NDX_MASK = 0x7FFF  # the top bit of a versym entry only marks a hidden (non-default) version
_NT_GNU_BUILD_ID = 3

_BINDINGS = {0: "local", 1: "global", 2: "weak", 10: "unique"}
_STB_WEAK = 2
# STT_GNU_IFUNC (10) resolves to a function at load time; STT_COMMON (5) is data.
_KINDS = {1: "object", 2: "func", 5: "object", 6: "tls", 10: "func"}
_STT_SECTION = 3
_STT_FILE = 4

_LAZY_STRING_CHUNK = 256
_NOTE_SCAN_LIMIT = 1 << 20  # build-id notes are tiny; do not read a huge foreign note to look for one
_MAX_VERSION_ENTRIES = 1 << 16


def is_elf(prefix: bytes) -> bool:
    return prefix[:4] == ELF_MAGIC


class _Layout(NamedTuple):
    """Struct formats for one (class, byte order); fields are normalised by the _decode helpers."""

    elf_class: int
    ehdr: struct.Struct  # after e_ident
    phdr: struct.Struct
    shdr: struct.Struct
    dyn: struct.Struct
    sym: struct.Struct
    verneed: struct.Struct
    vernaux: struct.Struct
    verdef: struct.Struct
    verdaux: struct.Struct
    u32: struct.Struct
    u32x2: struct.Struct
    u32x3: struct.Struct
    u32x4: struct.Struct
    word_size: int
    order: str


def _layout(elf_class: int, order: str) -> _Layout:
    wide = elf_class == 64
    word = "Q" if wide else "I"
    return _Layout(
        elf_class=elf_class,
        ehdr=struct.Struct(f"{order}HHI{word}{word}{word}IHHHHHH"),
        phdr=struct.Struct(f"{order}IIQQQQQQ" if wide else f"{order}IIIIIIII"),
        shdr=struct.Struct(f"{order}II{word}{word}{word}{word}II{word}{word}"),
        dyn=struct.Struct(f"{order}qQ" if wide else f"{order}iI"),
        sym=struct.Struct(f"{order}IBBHQQ" if wide else f"{order}IIIBBH"),
        verneed=struct.Struct(f"{order}HHIII"),
        vernaux=struct.Struct(f"{order}IHHII"),
        verdef=struct.Struct(f"{order}HHHHIII"),
        verdaux=struct.Struct(f"{order}II"),
        u32=struct.Struct(f"{order}I"),
        u32x2=struct.Struct(f"{order}II"),
        u32x3=struct.Struct(f"{order}III"),
        u32x4=struct.Struct(f"{order}IIII"),
        word_size=8 if wide else 4,
        order=order,
    )
