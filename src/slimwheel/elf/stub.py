"""A stand-in shared library: an ELF file that glibc loads, exporting functions that return an error.

``verify`` loads a wheel's files on machines without a GPU, where the NVIDIA driver's libraries
(``libcuda.so.1``) are missing and every file that needs one fails to load, however right its
packaging. A stand-in of that soname, exporting the functions the files import from it, lets them
load, so that where their NVIDIA libraries come from can be judged; each function returns a non-zero
status (``CUDA_ERROR_NO_DEVICE``, 100), as the real driver does on a machine without a GPU.

The file holds only what glibc's loader reads: two PT_LOAD segments (code and tables read and
executed; ``.dynamic`` written by older loaders, which relocate its pointers in place), PT_DYNAMIC,
PT_GNU_STACK (no executable stack: glibc 2.41 refuses to map one for a library), a SysV hash table,
``.dynsym`` and ``.dynstr``. No section headers, no relocations, no symbol versions.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

__all__ = ["STAND_IN_STATUS", "stand_in_library"]

STAND_IN_STATUS = 100  # CUDA_ERROR_NO_DEVICE

# The one function every symbol points at: return STAND_IN_STATUS.
_CODE = {
    "x86_64": struct.pack("<BIB", 0xB8, STAND_IN_STATUS, 0xC3),  # mov eax, 100; ret
    "aarch64": struct.pack("<II", 0x52800000 | (STAND_IN_STATUS << 5), 0xD65F03C0),  # mov w0, #100; ret
}
_MACHINE = {"x86_64": 62, "aarch64": 183}
_ALIGN = 0x10000  # a multiple of every page size these machines use (4 KiB, 16 KiB, 64 KiB)
_PT_LOAD, _PT_DYNAMIC, _PT_GNU_STACK = 1, 2, 0x6474E551
_PF_X, _PF_W, _PF_R = 1, 2, 4
_DT_NULL, _DT_HASH, _DT_STRTAB, _DT_SYMTAB, _DT_STRSZ, _DT_SYMENT, _DT_SONAME = 0, 4, 5, 6, 10, 11, 14
_STB_GLOBAL, _STT_FUNC = 1, 2
_HEADER, _PHDR, _SYM, _DYN = 64, 56, 24, 16


def _elf_hash(name: bytes) -> int:
    h = 0
    for byte in name:
        h = (h << 4) + byte
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def _program_header(kind: int, flags: int, *, offset: int, address: int, size: int, align: int) -> bytes:
    """An Elf64_Phdr of a segment whose bytes in the file and in memory are the same ``size``."""
    return struct.pack("<IIQQQQQQ", kind, flags, offset, address, address, size, size, align)


def _pad(data: bytes, alignment: int) -> bytes:
    return data + b"\0" * (-len(data) % alignment)


def stand_in_library(soname: str, symbols: Iterable[str], machine: str) -> bytes:
    """The bytes of a shared library named ``soname`` that exports ``symbols`` as functions, each
    returning ``STAND_IN_STATUS``, for ``machine`` ("x86_64" or "aarch64"; ValueError for another)."""
    if machine not in _MACHINE:
        raise ValueError(f"no stand-in library for machine {machine!r}")
    names = sorted(set(symbols))
    strings = bytearray(b"\0")
    offsets = {}
    for text in [soname, *names]:
        offsets[text] = len(strings)
        strings += text.encode() + b"\0"
    count = len(names) + 1  # index 0 is the null symbol
    buckets = max(1, count // 2)
    first: list[int] = [0] * buckets
    chain: list[int] = [0] * count
    for index, name in enumerate(names, start=1):
        bucket = _elf_hash(name.encode()) % buckets
        chain[index] = first[bucket]
        first[bucket] = index
    hash_table = struct.pack(f"<II{buckets}I{count}I", buckets, count, *first, *chain)

    # Segment one, read and executed from offset 0: headers, hash, symbols, strings, code.
    phdr_count = 4
    hash_at = _HEADER + _PHDR * phdr_count
    symtab_at = hash_at + len(_pad(hash_table, 8))
    strtab_at = symtab_at + _SYM * count
    code_at = strtab_at + len(_pad(bytes(strings), 16))
    code = _CODE[machine]
    text_end = code_at + len(code)
    # Segment two, read and written: .dynamic, at a file offset congruent to its address.
    dynamic_at = len(_pad(b"\0" * text_end, 16))
    dynamic_address = dynamic_at + _ALIGN
    dynamic = b"".join(
        struct.pack("<qQ", tag, value)
        for tag, value in (
            (_DT_HASH, hash_at),
            (_DT_STRTAB, strtab_at),
            (_DT_SYMTAB, symtab_at),
            (_DT_STRSZ, len(strings)),
            (_DT_SYMENT, _SYM),
            (_DT_SONAME, offsets[soname]),
            (_DT_NULL, 0),
        )
    )
    size = dynamic_at + len(dynamic)

    symtab = bytearray(_SYM)  # the null symbol
    for name in names:
        # st_shndx 1: any section but SHN_UNDEF, which would make it an import (there are no headers).
        symtab += struct.pack(
            "<IBBHQQ", offsets[name], (_STB_GLOBAL << 4) | _STT_FUNC, 0, 1, code_at, len(code)
        )
    header = struct.pack(
        "<4sBBBBB7xHHIQQQIHHHHHH",
        b"\x7fELF",
        2,  # ELFCLASS64
        1,  # little-endian
        1,  # EV_CURRENT
        0,  # ELFOSABI_NONE
        0,
        3,  # ET_DYN
        _MACHINE[machine],
        1,
        0,  # e_entry
        _HEADER,  # e_phoff
        0,  # e_shoff
        0,
        _HEADER,
        _PHDR,
        phdr_count,
        64,
        0,
        0,
    )
    phdrs = b"".join(
        (
            _program_header(_PT_LOAD, _PF_R | _PF_X, offset=0, address=0, size=text_end, align=_ALIGN),
            _program_header(
                _PT_LOAD,
                _PF_R | _PF_W,
                offset=dynamic_at,
                address=dynamic_address,
                size=len(dynamic),
                align=_ALIGN,
            ),
            _program_header(
                _PT_DYNAMIC,
                _PF_R | _PF_W,
                offset=dynamic_at,
                address=dynamic_address,
                size=len(dynamic),
                align=8,
            ),
            _program_header(_PT_GNU_STACK, _PF_R | _PF_W, offset=0, address=0, size=0, align=16),
        )
    )
    image = bytearray(size)
    for at, part in (
        (0, header),
        (_HEADER, phdrs),
        (hash_at, hash_table),
        (symtab_at, bytes(symtab)),
        (strtab_at, bytes(strings)),
        (code_at, code),
        (dynamic_at, dynamic),
    ):
        image[at : at + len(part)] = part
    return bytes(image)
