"""Byte-level edits of ELF files, named by what they hit: a header field, a program or section header
field, a dynamic entry (by tag), the dynamic string table, a byte, the length.

Each edit is a JSON-able dict (the fuzz suite stores them in regression recipes) and is applied to
the bytes as they are at that point, so edits compose: an edit whose target no longer parses (the
header was already broken) changes nothing. Values are integers or words relative to the file
(``size``, ``size+1``, ``half``...), so a recipe means the same thing on a rebuilt base file.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DYNAMIC_TAGS",
    "HEADER_FIELDS",
    "SECTION_FIELDS",
    "SEGMENT_FIELDS",
    "VALUE_WORDS",
    "mutate_elf",
    "resolve_value",
]

# name -> (offset, format) for ELFCLASS64, then for ELFCLASS32
HEADER_FIELDS: dict[str, tuple[tuple[int, str], tuple[int, str]]] = {
    "ei_class": ((4, "B"), (4, "B")),
    "ei_data": ((5, "B"), (5, "B")),
    "ei_version": ((6, "B"), (6, "B")),
    "e_type": ((16, "H"), (16, "H")),
    "e_machine": ((18, "H"), (18, "H")),
    "e_version": ((20, "I"), (20, "I")),
    "e_phoff": ((32, "Q"), (28, "I")),
    "e_shoff": ((40, "Q"), (32, "I")),
    "e_ehsize": ((52, "H"), (40, "H")),
    "e_phentsize": ((54, "H"), (42, "H")),
    "e_phnum": ((56, "H"), (44, "H")),
    "e_shentsize": ((58, "H"), (46, "H")),
    "e_shnum": ((60, "H"), (48, "H")),
    "e_shstrndx": ((62, "H"), (50, "H")),
}
SEGMENT_FIELDS: dict[str, tuple[tuple[int, str], tuple[int, str]]] = {
    "p_type": ((0, "I"), (0, "I")),
    "p_offset": ((8, "Q"), (4, "I")),
    "p_vaddr": ((16, "Q"), (8, "I")),
    "p_filesz": ((32, "Q"), (16, "I")),
    "p_memsz": ((40, "Q"), (20, "I")),
}
SECTION_FIELDS: dict[str, tuple[tuple[int, str], tuple[int, str]]] = {
    "sh_name": ((0, "I"), (0, "I")),
    "sh_type": ((4, "I"), (4, "I")),
    "sh_addr": ((16, "Q"), (12, "I")),
    "sh_offset": ((24, "Q"), (16, "I")),
    "sh_size": ((32, "Q"), (20, "I")),
    "sh_link": ((40, "I"), (24, "I")),
    "sh_info": ((44, "I"), (28, "I")),
    "sh_entsize": ((56, "Q"), (36, "I")),
}
DYNAMIC_TAGS = {
    "DT_NULL": 0,
    "DT_NEEDED": 1,
    "DT_HASH": 4,
    "DT_STRTAB": 5,
    "DT_SYMTAB": 6,
    "DT_STRSZ": 10,
    "DT_SONAME": 14,
    "DT_RPATH": 15,
    "DT_RUNPATH": 29,
    "DT_GNU_HASH": 0x6FFFFEF5,
    "DT_VERSYM": 0x6FFFFFF0,
    "DT_VERDEF": 0x6FFFFFFC,
    "DT_VERNEED": 0x6FFFFFFE,
    "DT_VERNEEDNUM": 0x6FFFFFFF,
}
VALUE_WORDS = ("size", "size-1", "size+1", "half", "max32", "max64", "minus1")
_PT_LOAD, _PT_DYNAMIC, _SHT_DYNAMIC = 1, 2, 6


def resolve_value(value: int | str, size: int) -> int:
    """An integer, or a word relative to a file of ``size`` bytes."""
    if isinstance(value, int):
        return value
    words = {
        "size": size,
        "size-1": size - 1,
        "size+1": size + 1,
        "half": size // 2,
        "max32": 0xFFFFFFFF,
        "max64": 0xFFFFFFFFFFFFFFFF,
        "minus1": -1,
    }
    return words[value]


@dataclass(frozen=True)
class _Layout:
    wide: bool
    order: str  # "<" or ">"
    phoff: int
    phentsize: int
    phnum: int
    shoff: int
    shentsize: int
    shnum: int

    def field(self, table: dict[str, tuple[tuple[int, str], tuple[int, str]]], name: str) -> tuple[int, str]:
        wide, narrow = table[name]
        return wide if self.wide else narrow


def _layout(data: bytes | bytearray) -> _Layout | None:
    if len(data) < 52 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide and len(data) < 64:
        return None
    fmt = f"{order}QQ" if wide else f"{order}II"
    phoff, shoff = struct.unpack_from(fmt, data, 32 if wide else 28)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(f"{order}HHHH", data, 54 if wide else 42)
    return _Layout(wide, order, phoff, phentsize, phnum, shoff, shentsize, shnum)


def _get(data: bytes | bytearray, order: str, at: int, fmt: str) -> int | None:
    if at < 0 or at + struct.calcsize(fmt) > len(data):
        return None
    value: int = struct.unpack_from(order + fmt, data, at)[0]
    return value


def _put(data: bytearray, order: str, at: int, fmt: str, value: int) -> None:
    size = struct.calcsize(fmt)
    if at < 0 or at + size > len(data):
        return
    struct.pack_into(order + fmt, data, at, value & ((1 << (8 * size)) - 1))


def _segments(data: bytearray, layout: _Layout) -> list[tuple[int, int, int, int, int]]:
    """(header position, p_type, p_offset, p_vaddr, p_filesz) of each readable program header."""
    found = []
    for index in range(min(layout.phnum, 256)):
        at = layout.phoff + index * layout.phentsize
        values = [
            _get(data, layout.order, at + offset, fmt)
            for offset, fmt in (layout.field(SEGMENT_FIELDS, n) for n in ("p_type", "p_offset", "p_vaddr"))
        ]
        offset, fmt = layout.field(SEGMENT_FIELDS, "p_filesz")
        filesz = _get(data, layout.order, at + offset, fmt)
        if None in values or filesz is None:
            break
        kind, p_offset, vaddr = (v or 0 for v in values)
        found.append((at, kind, p_offset, vaddr, filesz))
    return found


def _dynamic_entries(data: bytearray, layout: _Layout) -> list[tuple[int, int, int]]:
    """(position, d_tag, d_val) of each entry of PT_DYNAMIC, up to DT_NULL."""
    entry = 16 if layout.wide else 8
    fmt = "qQ" if layout.wide else "iI"
    for _, kind, offset, _, filesz in _segments(data, layout):
        if kind != _PT_DYNAMIC:
            continue
        entries = []
        for at in range(offset, min(offset + filesz, len(data)) - entry + 1, entry):
            tag, value = struct.unpack_from(layout.order + fmt, data, at)
            entries.append((at, tag, value))
            if tag == 0:
                break
        return entries
    return []


def _file_offset(data: bytearray, layout: _Layout, address: int) -> int | None:
    for _, kind, offset, vaddr, filesz in _segments(data, layout):
        if kind == _PT_LOAD and vaddr <= address < vaddr + filesz:
            return offset + address - vaddr
    return None


def _dynstr(data: bytearray, layout: _Layout) -> tuple[int, int] | None:
    entries = _dynamic_entries(data, layout)
    strtab = next((value for _, tag, value in entries if tag == DYNAMIC_TAGS["DT_STRTAB"]), None)
    strsz = next((value for _, tag, value in entries if tag == DYNAMIC_TAGS["DT_STRSZ"]), None)
    if strtab is None or strsz is None:
        return None
    start = _file_offset(data, layout, strtab)
    if start is None or start >= len(data):
        return None
    return start, min(strsz, len(data) - start)


def mutate_elf(data: bytes, edit: dict[str, Any], payload: bytes = b"") -> bytes:
    """Apply one edit (see the module docstring); ``payload`` is what ``dynstr`` writes."""
    out = bytearray(data)
    kind = edit["elf"]
    size = len(out)
    if kind == "truncate":
        return bytes(out[: size * int(edit["permille"]) // 1000])
    if kind == "flip":
        at = size * int(edit["permille"]) // 1000
        for index in range(int(edit.get("count", 1))):
            if at + index < size:
                out[at + index] ^= int(edit["xor"]) or 0xFF
        return bytes(out)
    layout = _layout(out)
    if layout is None:
        return bytes(out)
    order = layout.order
    value = resolve_value(edit.get("value", 0), size)
    if kind == "header":
        offset, fmt = layout.field(HEADER_FIELDS, edit["field"])
        _put(out, order, offset, fmt, value)
    elif kind in ("segment", "section"):
        count, start, step = (
            (layout.phnum, layout.phoff, layout.phentsize)
            if kind == "segment"
            else (layout.shnum, layout.shoff, layout.shentsize)
        )
        if count:
            table = SEGMENT_FIELDS if kind == "segment" else SECTION_FIELDS
            offset, fmt = layout.field(table, edit["field"])
            _put(out, order, start + (int(edit["index"]) % count) * step + offset, fmt, value)
    elif kind == "dyn":
        tag = DYNAMIC_TAGS[edit["tag"]]
        matching = [(at, t) for at, t, _ in _dynamic_entries(out, layout) if t == tag]
        if matching:
            at, _ = matching[int(edit.get("nth", 0)) % len(matching)]
            word = "q" if layout.wide else "i"
            if edit.get("set", "val") == "tag":
                _put(out, order, at, word.upper(), value)
            else:
                _put(out, order, at + (8 if layout.wide else 4), word.upper(), value)
    elif kind == "dynstr":
        found = _dynstr(out, layout)
        if found is not None and found[1] > 0:
            start, length = found
            at = start + length * int(edit["permille"]) // 1000
            chunk = payload[: max(0, min(len(payload), start + length - at))]
            out[at : at + len(chunk)] = chunk
    else:
        raise ValueError(f"unknown ELF edit {kind!r}")
    return bytes(out)
