"""What to keep of a partly fetched ELF file: :func:`ranges_to_keep` finds, from a file's first
bytes, the ranges the reader will need besides its start and end.
"""

from __future__ import annotations

import struct

from slimwheel.elf.format import _PT_DYNAMIC, _PT_NOTE, is_elf

__all__ = ["ranges_to_keep"]


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
    if phentsize < program.size or phoff + phentsize * phnum > len(prefix):
        return ranges
    for index in range(phnum):
        fields = program.unpack_from(prefix, phoff + index * phentsize)
        kind, offset, size = (fields[0], fields[2], fields[5]) if wide else (fields[0], fields[1], fields[4])
        if kind in (_PT_DYNAMIC, _PT_NOTE) and size:
            ranges.append((offset, size))
    return ranges
