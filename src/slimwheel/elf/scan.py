"""The streaming symbol scanner: :func:`scan_symbols` picks the symbols whose names match a pattern
out of a (possibly huge) ``.symtab`` or ``.dynsym``, reading the tables in chunks.
"""

from __future__ import annotations

import re
import struct
from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate, compress, islice
from operator import itemgetter
from typing import BinaryIO, NamedTuple

from slimwheel.elf.format import (
    _BINDINGS,
    _KINDS,
    _SHN_UNDEF,
    _SHT_DYNSYM,
    _SHT_SYMTAB,
    _STB_WEAK,
    _STT_FILE,
    _STT_SECTION,
    _VER_NDX_MASK,
)
from slimwheel.elf.reader import ElfFacts, Symbol, _Parser, _Region, _StringTable
from slimwheel.errors import ElfError

__all__ = ["exports_any", "iter_unversioned_imports", "scan_symbols"]


def scan_symbols(
    stream: BinaryIO,
    facts: ElfFacts,
    *,
    pattern: re.Pattern[bytes],
    table: str = ".symtab",
    defined_only: bool = True,
    path: str | None = None,
    chunk_size: int = 1 << 20,
    include_tails: bool = True,
) -> tuple[Symbol, ...]:
    r"""The symbols of ``table`` (``".symtab"`` or ``".dynsym"``) whose names ``pattern`` matches,
    in table order, read with memory bounded by a few chunks instead of by the size of the table.

    ``facts`` is what :func:`read_elf` returned for the same stream (``symbols=False`` is enough);
    it only serves to return ``()`` at once for a file without the table: the headers are read again
    from the stream (they are small), since :class:`Section` does not keep ``sh_link`` and the
    dynamic tags are not kept at all. ``pattern.match`` is applied to the raw bytes of each
    name. The string table is read first, ``chunk_size`` bytes at a time, keeping only the offsets
    of the names that match (8 bytes each); then the symbol table, keeping the entries that point at
    one of them; then the names of those entries. The same entries are kept as by :func:`read_elf`:
    no nameless ones, no STT_SECTION or STT_FILE ones in ``.symtab``, no local ones in ``.dynsym``;
    undefined ones too when ``defined_only`` is False. ``.dynsym`` is found through ``PT_DYNAMIC``
    in files without section headers (``()`` when it has no hash table to size it, as in
    :func:`read_elf`), and its symbols carry their versions.

    Linkers store a name that is the tail of another only once (``cudssX`` inside ``my_cudssX``),
    so an entry may point into the middle of a string. Names that start a string are matched as the
    string table is read; the entries that point inside a string are told by a bit map of where
    strings start (a bit per byte of the table), and their names read and matched one by one
    afterwards: there are few, where searching a C++ library's table for the pattern took seconds
    (3.2 s for mxnet-cu112's 26 MB ``.dynstr``). NCCL's API is such a tail in every library that
    links it statically (``ncclAllReduce`` inside ``pncclAllReduce``). Memory grows with the number
    of places the pattern matches, so it is meant for selective patterns such as
    ``rb"(?:cublas|cudss|nccl|cuda)[A-Z_]"``. ``include_tails=False`` leaves those entries out.

    Peak memory is about three chunks (a chunk, the same with the partial last name of the one
    before, and its names split out) plus 8 bytes per match, an eighth of the string table for
    tails, and the result; a single name longer than a chunk is read whole. Besides the headers, the stream is
    read forward, except to go back from the string table to the symbol table (and to the version
    tables for ``.dynsym``).

    Errors are ElfError("truncated or corrupt ELF: ..."): a table that runs past the end of the
    file, or (as in :func:`read_elf`) an entry that passes the filters but whose name offset is
    past the string table or in an unterminated last string. Other entries are not checked, and
    when no name matches at all the symbol table is not read.
    """
    if table not in (".symtab", ".dynsym"):
        raise ValueError(f"table must be '.symtab' or '.dynsym', not {table!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, not {chunk_size}")
    if table == ".symtab" and not facts.has_symtab:
        return ()
    dynamic = table == ".dynsym"
    if dynamic and facts.sections and not any(s.kind == _SHT_DYNSYM for s in facts.sections):
        return ()
    name = path if path is not None else str(getattr(stream, "name", "<stream>"))
    try:
        return _Scanner(stream, name).scan_symbols(
            _Scan(pattern, dynamic, defined_only, chunk_size, include_tails)
        )
    except OSError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError, UnicodeError) as exc:
        raise ElfError(name, f"truncated or corrupt ELF: undecodable data ({exc})") from exc


class _Scan(NamedTuple):
    pattern: re.Pattern[bytes]
    dynamic: bool  # .dynsym rather than .symtab
    defined_only: bool
    chunk_size: int
    include_tails: bool = True


class _Scanner(_Parser):
    """The reader, plus the chunked reads of :func:`scan_symbols`."""

    # -- scanning symbols (scan_symbols) ----------------------------------------------------------

    def scan_symbols(self, scan: _Scan) -> tuple[Symbol, ...]:
        self.read_headers()  # again: Section does not keep sh_link, and the dynamic tags are not kept
        values: dict[int, int] = {}
        dynstr: _StringTable | None = None
        if scan.dynamic:
            found = self.locate_dynamic_symbols()
            if found is None:
                return ()
            values, dynstr, region, strings = found
        else:
            section = self.first_section(_SHT_SYMTAB)
            if section is None:
                return ()
            linked = self.linked_strings(section, eager=False)
            if linked is None:
                raise self.corrupt(f"{section.name or '.symtab'} has no string table")
            region, strings = self.section_region(section), linked
        for checked in (region, strings.region):
            if checked.offset < 0 or checked.size < 0 or checked.offset + checked.size > self.file_size:
                raise self.corrupt(
                    f"{checked.what} (offset {checked.offset}, {checked.size} bytes) runs past end of "
                    f"file ({self.file_size} bytes)"
                )
        offsets, terminated_end, string_starts = self.matching_name_offsets(strings.region, scan)
        if not offsets and not scan.include_tails:
            return ()
        rows, inside = self.matching_symbol_rows(
            region, offsets, terminated_end, strings.region, scan, string_starts=string_starts
        )
        # A name that starts inside another string (the linker merged it into a longer one's tail)
        # is read on its own: there are few, where searching the whole table for them took seconds.
        pattern = scan.pattern
        tails = [
            row for row in inside if pattern.match(strings.get(row[1]).encode("utf-8", "surrogateescape"))
        ]
        if tails:
            rows = sorted([*rows, *tails])
        # Names in offset order: the stream only moves forward (zip members cannot seek back cheaply).
        names = {offset: strings.get(offset) for offset in sorted({row[1] for row in rows})}
        versions: list[str | None] = [None] * len(rows)
        if scan.dynamic and rows:
            versions = self.scan_versions(values, dynstr, region.size // self.layout.sym.size, rows)
        return tuple(
            Symbol(
                names[name],
                size,
                _KINDS.get(info & 0xF, "other"),
                _BINDINGS.get(info >> 4, "other"),
                version,
                shndx,
            )
            for (_position, name, info, shndx, size), version in zip(rows, versions, strict=True)
        )

    def matching_name_offsets(self, region: _Region, scan: _Scan) -> tuple[array[int], int, bytearray]:
        """Sorted offsets in the string table of the strings ``scan.pattern`` matches, the end of the
        last NUL-terminated string (offsets from there on are unterminated) and, when
        ``scan.include_tails``, a bit for each byte of the table, set where a string starts (else
        empty): a name at any other offset is the tail of a longer string."""
        match = scan.pattern.match
        starts: array[int] = array("q")  # strings that match
        # One bit per byte (an eighth of the table), where an array of every string's offset took 8
        # bytes a string and bisecting it for each symbol entry cost 0.8 us.
        every = bytearray((region.size + 7) >> 3 if scan.include_tails else 0)
        carry = b""  # the partial last string of the previous chunk
        read_to = 0
        terminated_end = 0
        while read_to < region.size:
            # A string longer than a chunk makes the next read as long as it so far (doubling).
            size = min(max(scan.chunk_size, len(carry)), region.size - read_to)
            data = self.read(region.offset + read_to, size, region.what)
            base = read_to - len(carry)  # table offset of data[0], which starts a string
            read_to += size
            if carry:
                data = carry + data
            strings = data.split(b"\0")
            carry = strings.pop()
            if not strings:
                continue
            for index, before in compress(
                enumerate(accumulate(map(len, strings), initial=0)), map(match, strings)
            ):
                offset = base + before + index
                if offset:  # st_name 0 is no name
                    starts.append(offset)
            if scan.include_tails:
                lengths = islice(accumulate(map(len, strings), initial=0), len(strings))
                for index, before in enumerate(lengths):
                    at = base + before + index
                    every[at >> 3] |= 1 << (at & 7)
            del strings
            terminated_end = base + len(data) - len(carry)
        return starts, terminated_end, every

    def matching_symbol_rows(
        self,
        region: _Region,
        offsets: array[int],
        terminated_end: int,
        strings: _Region,
        scan: _Scan,
        *,
        string_starts: bytearray,
    ) -> tuple[list[tuple[int, int, int, int, int]], list[tuple[int, int, int, int, int]]]:
        """(position, st_name, st_info, st_shndx, st_size) of the entries kept, in table order, and of
        those kept but for their name, which starts inside a string (its bit in ``string_starts`` is
        clear; the caller matches it), when ``scan.include_tails``."""
        entry = self.layout.sym
        fields = itemgetter(0, 1, 3, 5) if self.layout.elf_class == 64 else itemgetter(0, 3, 5, 2)
        usable = region.size - region.size % entry.size
        step = max(1, scan.chunk_size // entry.size) * entry.size
        matching = set(offsets)  # few, by design; bisecting an array boxed its items one by one
        kept: list[tuple[int, int, int, int, int]] = []
        inside: list[tuple[int, int, int, int, int]] = []
        position = 0
        for chunk_start in range(0, usable, step):
            data = self.read(region.offset + chunk_start, min(step, usable - chunk_start), region.what)
            for name, info, shndx, size in map(fields, entry.iter_unpack(data)):
                if name in matching:
                    if self.scan_keeps(info, shndx, scan):
                        kept.append((position, name, info, shndx, size))
                elif name >= terminated_end and name and self.scan_keeps(info, shndx, scan):
                    if name >= strings.size:
                        raise self.corrupt(
                            f"string offset {name} out of range in {strings.what} ({strings.size} bytes)"
                        )
                    raise self.corrupt(f"unterminated string at offset {name} in {strings.what}")
                elif (
                    name
                    and scan.include_tails
                    and name < terminated_end
                    and not string_starts[name >> 3] >> (name & 7) & 1
                    and self.scan_keeps(info, shndx, scan)
                ):
                    inside.append((position, name, info, shndx, size))
                position += 1
        return kept, inside

    @staticmethod
    def scan_keeps(info: int, shndx: int, scan: _Scan) -> bool:
        """The entries read_elf keeps: .dynsym without local symbols (as ``defined_symbols``),
        .symtab without STT_SECTION and STT_FILE ones (as ``symtab``); undefined ones on request."""
        if shndx == _SHN_UNDEF:
            return not scan.defined_only
        if scan.dynamic:
            return info >> 4 != 0
        return info & 0xF not in (_STT_SECTION, _STT_FILE)

    def locate_dynamic_symbols(
        self,
    ) -> tuple[dict[int, int], _StringTable | None, _Region, _StringTable] | None:
        """The dynamic tags, ``.dynstr``, and where ``.dynsym`` is with its string table (not loaded);
        None without one (see ``dynamic_symbol_table``). The headers must have been read."""
        dynamic = self.read_dynamic()
        dynstr = self.dynamic_strings(dynamic)
        values = dynamic.values if dynamic else {}
        located = self.dynamic_symbol_table(values, dynstr)
        return None if located is None else (values, dynstr, *located)

    def unversioned_imports(self, chunk_size: int) -> Iterator[str]:
        """See :func:`iter_unversioned_imports`."""
        self.read_headers()
        found = self.locate_dynamic_symbols()
        if found is None:
            return
        values, _dynstr, region, strings = found
        entry = self.layout.sym
        fields = itemgetter(0, 1, 3) if self.layout.elf_class == 64 else itemgetter(0, 3, 5)
        # The version indexes first (2 bytes an entry), so that the symbol table is read once, in
        # chunks, and what is kept stays that small whatever the table holds.
        indexes = self.read_versym(values, self.symbol_count(region))
        usable = self.symbol_count(region) * entry.size
        step = max(1, chunk_size // entry.size) * entry.size
        position = 0
        for chunk_start in range(0, usable, step):
            data = self.read(region.offset + chunk_start, min(step, usable - chunk_start), region.what)
            for name, info, shndx in map(fields, entry.iter_unpack(data)):
                # 0 (local) and 1 (global) name no version
                if (
                    name
                    and shndx == _SHN_UNDEF
                    and info >> 4 != _STB_WEAK
                    and (indexes is None or indexes[position] & _VER_NDX_MASK <= 1)
                ):
                    yield strings.get(name)
                position += 1

    def scan_versions(
        self,
        values: dict[int, int],
        dynstr: _StringTable | None,
        count: int,
        rows: list[tuple[int, int, int, int, int]],
    ) -> list[str | None]:
        """The version of each kept .dynsym entry, reading only their .gnu.version entries."""
        region = self.versym_region(values, count)
        if region is None:
            return [None] * len(rows)
        entry = struct.Struct(f"{self.layout.order}H")
        indexes = [
            entry.unpack(self.read(region.offset + 2 * row[0], 2, region.what))[0] & _VER_NDX_MASK
            for row in rows
        ]
        _needs, need_index = self.read_version_needs(values, dynstr)
        _definitions, def_index = self.read_version_definitions(values, dynstr)
        version_names = {**{i: name for i, (_file, name) in need_index.items()}, **def_index}
        return [version_names.get(index) for index in indexes]


def iter_unversioned_imports(
    stream: BinaryIO, facts: ElfFacts, *, path: str | None = None, chunk_size: int = 1 << 20
) -> Iterator[str]:
    """The names of ``.dynsym``'s imports bound to no symbol version, in table order: named,
    undefined, non-weak entries whose ``.gnu.version`` index is 0 or 1 (all of them in a file without
    that table). The loader takes such a symbol from whichever library in scope defines it first, so
    which DT_NEEDED it comes from the file does not say; every other import names the version, and so
    the library, it was linked against. The version table is read whole (2 bytes an entry), the
    symbol table in chunks of ``chunk_size`` bytes, and a name only when it is reached, so a caller
    that stops early reads no further. ElfError for tables past the file's end or names past theirs."""
    if facts.sections and not any(s.kind == _SHT_DYNSYM for s in facts.sections):
        return iter(())
    name = path if path is not None else str(getattr(stream, "name", "<stream>"))
    return _Scanner(stream, name).unversioned_imports(chunk_size)


def exports_any(stream: BinaryIO, facts: ElfFacts, names: Iterable[str], *, path: str | None = None) -> bool:
    """Whether ``.dynsym`` defines one of ``names`` (exact names: ``PyInit__C``)."""
    alternatives = b"|".join(re.escape(name.encode()) for name in names)
    pattern = re.compile(b"(?:" + alternatives + rb")\Z")
    return bool(scan_symbols(stream, facts, pattern=pattern, table=".dynsym", path=path))
