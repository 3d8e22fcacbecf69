"""A small, fast ELF reader: the facts slimwheel needs from a shared library, with ``struct`` only.

Real inputs include 170 MB CUDA libraries and extensions with huge ``.symtab``\\ s, so the reader
seeks to what it needs and reads each table in one bulk read (decoded with ``struct.iter_unpack``);
it never reads the whole file. :func:`scan_symbols` picks the few symbols whose names match a
pattern out of a huge table, reading it in chunks, so memory does not grow with the table.
32/64-bit and both byte orders are supported. Files whose section headers were removed
(``sstrip``) are read through ``PT_DYNAMIC`` and the dynamic tags.

Every problem with the bytes is an :class:`~slimwheel.errors.ElfError` whose reason is
``"not an ELF file"`` or ``"truncated or corrupt ELF: <what>"``; analysis turns those into findings.

Strings are decoded as UTF-8 with ``errors="surrogateescape"``: names in DT_NEEDED and file names on
disk are the same bytes, and Python decodes file names the same way (``os.fsdecode``), so names
compare equal to paths and round-trip to the exact bytes (``os.fsencode``) when a file is rewritten.
``"replace"`` would lose bytes and could make two different names equal.

References: the gABI (https://refspecs.linuxfoundation.org/elf/gabi4+/contents.html) and the LSB
symbol versioning chapter.

The package holds :mod:`~slimwheel.elf.format` (the numbers and struct layouts of the format),
:mod:`~slimwheel.elf.reader` (:func:`read_elf` and what it returns), :mod:`~slimwheel.elf.scan`
(:func:`scan_symbols`) and :mod:`~slimwheel.elf.keep` (:func:`ranges_to_keep`).
"""

from slimwheel.elf.format import ELF_MAGIC, is_elf
from slimwheel.elf.keep import (
    EDIT_ENDS,
    edit_ranges,
    known_table_ranges,
    ranges_to_keep,
    relocation_ranges,
    segment_after_section_headers,
    table_ranges,
)
from slimwheel.elf.reader import (
    DynamicTables,
    ElfFacts,
    Section,
    Symbol,
    VersionNeed,
    dynamic_tables,
    read_elf,
    read_elf_file,
    read_interpreter,
    read_section,
)
from slimwheel.elf.scan import exports_any, iter_unversioned_imports, scan_symbols

__all__ = [
    "EDIT_ENDS",
    "ELF_MAGIC",
    "DynamicTables",
    "ElfFacts",
    "Section",
    "Symbol",
    "VersionNeed",
    "dynamic_tables",
    "edit_ranges",
    "exports_any",
    "is_elf",
    "iter_unversioned_imports",
    "known_table_ranges",
    "ranges_to_keep",
    "read_elf",
    "read_elf_file",
    "read_interpreter",
    "read_section",
    "relocation_ranges",
    "scan_symbols",
    "segment_after_section_headers",
    "table_ranges",
]
