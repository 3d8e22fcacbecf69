"""Edit a shared library's dynamic section without patchelf, as patches on a streamed file.

:func:`plan_edit` reads an ELF file's headers, ``.dynamic``, ``.dynstr``, the dynamic symbols' names
and the version tables (a few KB to a few MB, wherever they sit) and returns an :class:`ElfPatch`:
byte ranges to overwrite plus bytes to append at the end. :meth:`ElfPatch.apply` turns the original
content, streamed in chunks, into the edited one, so a 1 GB library is never held whole in memory and
never written to disk before it is deflated into the output wheel.

Three ways, cheapest first:

* **In place** (the file keeps its size): a DT_NEEDED or verneed ``vn_file`` renamed to a name no
  longer than the old one, an RPATH/RUNPATH replaced by one that fits the old string, or added
  where ``.dynamic`` has a spare DT_NULL slot and ``.dynstr`` has bytes no reference reaches. Linkers
  merge strings by suffix (``libfoo.so`` may also be read as ``foo.so`` from inside it), so a string
  is only rewritten when every reference into its bytes belongs to the entries being given the same
  new value; otherwise the new string goes elsewhere.
* **Grown at the end** (a shared library whose ``.dynstr`` ends the file, in its topmost PT_LOAD,
  where an earlier patchelf put it): the new strings go after it, and that segment, DT_STRSZ and the
  section header grow by them.
* **Appended segment** (a shared library without PT_INTERP, when a string or an entry does not fit):
  a new read-only PT_LOAD at the end of the file holds the program header table (one entry longer) and a
  copy of ``.dynstr`` with the new strings after it; DT_STRTAB/DT_STRSZ and the ``.dynstr`` section
  header point there. The old ``.dynstr`` stays where it was, zeroed: nothing reads it. Where a new
  entry finds no
  spare DT_NULL in ``.dynamic`` (lld leaves none: Rust's default linker since 1.90), the table, one
  entry longer and with spare slots, goes there too, PT_DYNAMIC and its section header point at
  it, and the segment is writable, as the table it replaces (glibc before 2.35 writes into it).
  This is what patchelf does, minus moving other sections.

A file without section headers (``sstrip``) is edited the same ways, its tables found as the loader
finds them (:func:`slimwheel.elf.dynamic_tables`). Anything else (both a DT_RPATH and a DT_RUNPATH,
an executable that needs room, a damaged header) raises :class:`EditUnsupportedError`; the caller
then uses patchelf.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import BinaryIO, Protocol, cast

from slimwheel._io import overwrite
from slimwheel.elf.format import (
    _DT_NEEDED,
    _DT_NULL,
    _DT_RPATH,
    _DT_RUNPATH,
    _DT_SONAME,
    _DT_STRSZ,
    _DT_STRTAB,
    _MAX_VERSION_ENTRIES,
    _PT_DYNAMIC,
    _PT_INTERP,
    _PT_LOAD,
    _PT_PHDR,
    _SHT_DYNAMIC,
    _SHT_DYNSYM,
    _SHT_GNU_VERDEF,
    _SHT_GNU_VERNEED,
    _SHT_NOBITS,
    _layout,
    is_elf,
)
from slimwheel.elf.reader import dynamic_tables
from slimwheel.errors import ElfError

__all__ = ["EditUnsupportedError", "ElfPatch", "Patch", "plan_edit"]

_PF_R = 4
_PF_W = 2
_ET_DYN = 3
# Dynamic tags whose value is an offset into .dynstr (besides NEEDED, SONAME, RPATH, RUNPATH).
_DT_STRING_TAGS = frozenset({_DT_NEEDED, _DT_SONAME, _DT_RPATH, _DT_RUNPATH, 0x7FFFFFFD, 0x7FFFFFFF})
_DT_MORE_STRING_TAGS = frozenset({0x6FFFFEFA, 0x6FFFFEFB, 0x6FFFFEFC})  # CONFIG, DEPAUDIT, AUDIT
_MAX_TABLE = 64 << 20  # refuse to read a dynamic symbol table bigger than this (patchelf then)
_TRAILING_LIMIT = 4096  # the most bytes after a .dynstr that ends the file that it may grow over
_ZERO_PIECE = 1 << 20  # an abandoned table is zeroed by patches of this size, all this one buffer
_ZEROS = bytes(_ZERO_PIECE)
_SPARE_SLOTS = 4  # DT_NULL entries after the end of a moved .dynamic, so that later edits fit in place


class _Seekable(Protocol):
    """What the edit reads from: a file, or a MemberView of a member inside a wheel."""

    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def read(self, size: int = -1, /) -> bytes | None: ...


class EditUnsupportedError(Exception):
    """The edit needs more than this module does (the caller falls back to patchelf)."""


@dataclass(frozen=True)
class Patch:
    offset: int
    data: bytes


@dataclass(frozen=True)
class ElfPatch:
    """The edited file: the original's ``original_size`` bytes with ``patches`` written over them,
    then the ``appended`` pieces, in order. No patches and nothing appended: the file would come out
    the same."""

    original_size: int
    patches: tuple[Patch, ...]
    # Pieces, never joined: a moved .dynstr (47 MB in TensorFlow's libtensorflow_cc.so.2) is the old
    # table itself, a piece of its own, so that it is held once, not copied into one bytes object.
    appended: tuple[bytes, ...]
    how: str  # "unchanged", "in place", "grown at the end" or "appended segment"
    # (offset, length) of tables of the original that the edited file no longer reads: the old
    # .dynstr, once an appended segment holds the new one.
    abandoned: tuple[tuple[int, int], ...] = ()

    @property
    def size(self) -> int:
        return self.original_size + self.appended_size

    @property
    def appended_size(self) -> int:
        return sum(map(len, self.appended))

    @property
    def changes_anything(self) -> bool:
        return bool(self.patches or self.appended_size)

    @property
    def written(self) -> tuple[tuple[int, int], ...]:
        """(offset, length) of the edited file's bytes the patch writes: those it overwrites, then
        the appended ones; not the zeros over an abandoned table, which nothing reads."""
        appended = ((self.original_size, self.appended_size),) if self.appended_size else ()
        overwritten = (
            (p.offset, len(p.data))
            for p in self.patches
            if not any(
                start <= p.offset and p.offset + len(p.data) <= start + size for start, size in self.abandoned
            )
        )
        return (*overwritten, *appended)

    def apply(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """The edited content, chunk by chunk, from the original's chunks (ValueError when they do
        not hold ``original_size`` bytes)."""
        patches = [(p.offset, p.data) for p in self.patches]
        offset = 0
        for chunk in chunks:
            edited = overwrite(offset, chunk, patches)
            offset += len(chunk)
            if offset > self.original_size:
                raise ValueError(f"the file holds more than {self.original_size} bytes")
            yield edited
        if offset != self.original_size:
            raise ValueError(f"the file holds {offset} bytes, not {self.original_size}")
        yield from (piece for piece in self.appended if piece)


@dataclass(frozen=True)
class _Phdr:
    kind: int
    flags: int
    offset: int
    vaddr: int
    paddr: int
    filesz: int
    memsz: int
    align: int


@dataclass(frozen=True)
class _Shdr:
    fields: tuple[int, ...]  # name, type, flags, addr, offset, size, link, info, addralign, entsize

    @property
    def kind(self) -> int:
        return self.fields[1]

    @property
    def offset(self) -> int:
        return self.fields[4]

    @property
    def size(self) -> int:
        return self.fields[5]

    @property
    def link(self) -> int:
        return self.fields[6]

    @property
    def info(self) -> int:
        return self.fields[7]


def _read(stream: _Seekable, offset: int, size: int) -> bytes:
    # A damaged header may name any offset and size: checked against the file's end before reading
    # (a read of 2**60 bytes would allocate them first).
    if offset < 0 or size < 0 or offset + size > stream.seek(0, 2):
        raise EditUnsupportedError(f"a table at {offset} ({size} bytes) runs past the end of the file")
    stream.seek(offset)
    data = stream.read(size)
    if data is None or len(data) != size:
        raise EditUnsupportedError(f"the file ends inside a table at {offset}")
    return data


def _string_at(table: bytes | bytearray, offset: int) -> bytes:
    end = table.find(b"\0", offset)
    if offset >= len(table) or end < 0:
        raise EditUnsupportedError(f"string offset {offset} is outside .dynstr")
    return bytes(table[offset:end])


class _Elf:
    """The parts of an ELF file the edit needs, read from a seekable stream."""

    def __init__(self, stream: _Seekable) -> None:
        self.size = stream.seek(0, 2)
        ident = _read(stream, 0, 16)
        if not is_elf(ident) or ident[4] not in (1, 2) or ident[5] not in (1, 2):
            raise EditUnsupportedError("not an ELF file of a known class and byte order")
        self.wide = ident[4] == 2
        self.layout = layout = _layout(64 if self.wide else 32, "<" if ident[5] == 1 else ">")
        self.ehdr = list(layout.ehdr.unpack(_read(stream, 16, layout.ehdr.size)))
        e_type, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, _ = self.ehdr
        self.e_type = e_type
        if shnum >= 0xFF00 or phnum >= 0xFFFF:
            raise EditUnsupportedError("extended section or program header numbering")
        if phentsize != layout.phdr.size or (shnum and shentsize != layout.shdr.size):
            raise EditUnsupportedError("unusual header entry sizes")
        self.phdrs = [self._phdr(f) for f in layout.phdr.iter_unpack(_read(stream, phoff, phnum * phentsize))]
        self.shdr_offset = shoff if shnum else 0
        self.shdrs = (
            [_Shdr(f) for f in layout.shdr.iter_unpack(_read(stream, shoff, shnum * shentsize))]
            if self.shdr_offset
            else []
        )
        self.dynamic_index = self.dynstr_index = -1  # section indexes; -1 without section headers
        if self.shdrs:
            self._tables_from_sections()
        else:
            self._tables_from_tags(stream)
        count = self.dynamic_size // layout.dyn.size
        raw = _read(stream, self.dynamic_offset, count * layout.dyn.size)
        self.dynamic = [list(entry) for entry in layout.dyn.iter_unpack(raw)]
        self.dynstr = _read(stream, self.dynstr_offset, self.dynstr_size)
        # The bytes after .dynstr up to the end of the file, where they are few (else None): where
        # they are all zeros, a .dynstr that ends the file may grow over them.
        after = self.size - (self.dynstr_offset + self.dynstr_size)
        self.after_dynstr = _read(stream, self.size - after, after) if 0 <= after <= _TRAILING_LIMIT else None
        values: dict[int, int] = {}
        for tag, value in self.dynamic:
            if tag == _DT_NULL:
                break
            values.setdefault(tag, value)
        if values.get(_DT_STRTAB) != self.dynstr_address or values.get(_DT_STRSZ) != len(self.dynstr):
            raise EditUnsupportedError("DT_STRTAB/DT_STRSZ do not match the .dynstr section")
        self.references, self.name_offsets = self._references(stream)

    def _tables_from_sections(self) -> None:
        dynamic = [i for i, s in enumerate(self.shdrs) if s.kind == _SHT_DYNAMIC]
        if len(dynamic) != 1:
            raise EditUnsupportedError("not exactly one .dynamic section")
        self.dynamic_index = dynamic[0]
        section = self.shdrs[self.dynamic_index]
        self.dynamic_offset, self.dynamic_size = section.offset, section.size
        self.dynstr_index = section.link
        if not 0 < self.dynstr_index < len(self.shdrs):
            raise EditUnsupportedError(".dynamic links no string table")
        strings = self.shdrs[self.dynstr_index]
        self.dynstr_address, self.dynstr_offset, self.dynstr_size = (
            strings.fields[3],
            strings.offset,
            strings.size,
        )
        self.symbol_tables = [
            (s.kind, s.offset, s.size, s.info)
            for index, s in enumerate(self.shdrs)
            if s.link == self.dynstr_index
            and index != self.dynstr_index
            and s.kind not in (_SHT_DYNAMIC, _SHT_NOBITS)
        ]

    def _tables_from_tags(self, stream: _Seekable) -> None:
        """Without section headers (``sstrip``), the tables are where the loader finds them."""
        try:
            # The reader only seeks and reads, as everything here does.
            tables = dynamic_tables(cast("BinaryIO", stream), path="<edited file>")
        except ElfError as error:
            raise EditUnsupportedError(error.reason) from error
        if tables.symbols is None:
            raise EditUnsupportedError("no section headers, and no hash table to size .dynsym by")
        self.dynamic_offset, self.dynamic_size = tables.dynamic
        self.dynstr_address = tables.strings_address
        self.dynstr_offset, self.dynstr_size = tables.strings
        self.symbol_tables = [(_SHT_DYNSYM, *tables.symbols, 0)]
        for kind, table in (
            (_SHT_GNU_VERNEED, tables.version_needs),
            (_SHT_GNU_VERDEF, tables.version_definitions),
        ):
            if table is not None:
                self.symbol_tables.append((kind, *table))

    def _phdr(self, f: tuple[int, ...]) -> _Phdr:
        if self.wide:
            return _Phdr(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7])
        return _Phdr(f[0], f[6], f[1], f[2], f[3], f[4], f[5], f[7])

    def pack_phdr(self, p: _Phdr) -> bytes:
        if self.wide:
            return self.layout.phdr.pack(
                p.kind, p.flags, p.offset, p.vaddr, p.paddr, p.filesz, p.memsz, p.align
            )
        return self.layout.phdr.pack(p.kind, p.offset, p.vaddr, p.paddr, p.filesz, p.memsz, p.flags, p.align)

    @property
    def first_null(self) -> int:
        for index, (tag, _) in enumerate(self.dynamic):
            if tag == _DT_NULL:
                return index
        raise EditUnsupportedError(".dynamic has no DT_NULL")

    def _references(self, stream: _Seekable) -> tuple[list[tuple[int, tuple[str, int]]], array[int]]:
        """Every offset into .dynstr that anything reads: those an edit may re-point, with who reads
        them (("dyn", slot), ("vn_file", file offset of the field)), and, sorted, those of names
        nothing here rewrites (symbols, version names): a C++ library has hundreds of thousands,
        kept as plain integers."""
        refs: list[tuple[int, tuple[str, int]]] = []
        names = array("Q")
        for index, (tag, value) in enumerate(self.dynamic[: self.first_null]):
            if tag in _DT_STRING_TAGS or tag in _DT_MORE_STRING_TAGS:
                refs.append((value, ("dyn", index)))
        for kind, offset, size, count in self.symbol_tables:
            if kind == _SHT_DYNSYM:
                if size > _MAX_TABLE:
                    raise EditUnsupportedError(".dynsym is too big to check here")
                table = _read(stream, offset, size)
                usable = len(table) - len(table) % self.layout.sym.size
                names.extend(row[0] for row in self.layout.sym.iter_unpack(memoryview(table)[:usable]))
            elif kind == _SHT_GNU_VERNEED:
                refs += self._verneed(stream, offset, size, count, names)
            elif kind == _SHT_GNU_VERDEF:
                self._verdef(stream, offset, size, count, names)
            else:
                raise EditUnsupportedError(f"section type {kind:#x} also uses .dynstr")
        return refs, array("Q", sorted(names))

    def _verneed(
        self, stream: _Seekable, offset: int, size: int, count: int, names: array[int]
    ) -> list[tuple[int, tuple[str, int]]]:
        refs: list[tuple[int, tuple[str, int]]] = []
        position = 0
        for _ in range(min(count, _MAX_VERSION_ENTRIES)):
            _version, entries, file_name, aux, following = self._entry(
                stream, offset, size, position, "verneed"
            )
            refs.append((file_name, ("vn_file", offset + position + 4)))
            aux_position = position + aux
            for _ in range(entries):
                _hash, _flags, _other, name, aux_next = self._entry(
                    stream, offset, size, aux_position, "vernaux"
                )
                names.append(name)
                if not aux_next:
                    break
                aux_position += aux_next
            if not following:
                break
            position += following
        return refs

    def _verdef(self, stream: _Seekable, offset: int, size: int, count: int, names: array[int]) -> None:
        position = 0
        for _ in range(min(count, _MAX_VERSION_ENTRIES)):
            _v, _flags, _ndx, entries, _hash, aux, following = self._entry(
                stream, offset, size, position, "verdef"
            )
            aux_position = position + aux
            for _ in range(entries):
                name, aux_next = self._entry(stream, offset, size, aux_position, "verdaux")
                names.append(name)
                if not aux_next:
                    break
                aux_position += aux_next
            if not following:
                break
            position += following

    def _entry(self, stream: _Seekable, offset: int, size: int, position: int, kind: str) -> tuple[int, ...]:
        """One entry of a version table of ``size`` bytes at ``offset``, read alone: without section
        headers, the table's size is only known to run to the end of its segment."""
        entry = getattr(self.layout, kind)
        if position < 0 or position + entry.size > size:
            raise EditUnsupportedError(f"a {kind} entry runs past the end of its table")
        return tuple(entry.unpack(_read(stream, offset + position, entry.size)))


def plan_edit(
    stream: _Seekable,
    *,
    replace_needed: Sequence[tuple[str, str]] = (),
    search_path: tuple[str, ...] | None = None,
    runpath: bool = False,
    remove_needed: Sequence[str] = (),
) -> ElfPatch:
    """The patch that makes the edit patchelf's ``--replace-needed`` (DT_NEEDED and verneed file
    names), ``--set-rpath`` (``--force-rpath`` unless ``runpath``), ``--remove-rpath`` (an empty
    ``search_path``) or ``--remove-needed`` (``remove_needed``: DT_NEEDED entries no version need names)
    would make. EditUnsupportedError when it needs more than this module does."""
    elf = _Elf(stream)
    dynamic = [list(entry) for entry in elf.dynamic]
    gone = _needed_slots(elf, remove_needed)
    wanted: dict[tuple[str, int], bytes] = {}  # who -> the string it must point to
    for old, new in replace_needed:
        old_bytes, new_bytes = old.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape")
        for value, who in elf.references:
            if _string_at(elf.dynstr, value) != old_bytes:
                continue
            if who[0] == "vn_file" or dynamic[who[1]][0] == _DT_NEEDED:
                wanted[who] = new_bytes
    removed: list[int] = []
    if search_path is not None:
        tag = _DT_RUNPATH if runpath else _DT_RPATH
        slots = [i for i, (t, _) in enumerate(dynamic[: elf.first_null]) if t in (_DT_RPATH, _DT_RUNPATH)]
        if not search_path:
            removed = slots
        elif len(slots) > 1:
            raise EditUnsupportedError("both DT_RPATH and DT_RUNPATH are set")
        else:
            joined = ":".join(search_path).encode("utf-8", "surrogateescape")
            if slots:
                slot = slots[0]
            elif (slot := elf.first_null) + 1 < len(dynamic) or gone:
                dynamic[slot] = [tag, -1]  # a new entry: it points nowhere yet (a removal ends the table)
            else:
                # No spare DT_NULL (lld leaves none): the table grows, in an appended segment.
                dynamic.insert(slot, [tag, -1])
            dynamic[slot][0] = tag
            wanted[("dyn", slot)] = joined
    # What already points at its new string needs nothing.
    current = {who: value for value, who in elf.references}
    wanted = {
        who: text
        for who, text in wanted.items()
        if who not in current or _string_at(elf.dynstr, current[who]) != text
    }
    grows = len(dynamic) > len(elf.dynamic)
    tags_changed = grows or any(entry[0] != old[0] for entry, old in zip(dynamic, elf.dynamic, strict=True))
    removed = [*removed, *gone]
    if not wanted and not removed and not tags_changed:
        return ElfPatch(elf.size, (), (), "unchanged")
    if not grows:
        try:
            return _in_place(elf, dynamic, wanted, removed)
        except EditUnsupportedError:
            pass
        # Out of the except block: the exception's traceback would keep _in_place's copies of a big
        # .dynstr (26 MB in mxnet-cu112's libmxnet.so) alive while the appended segment makes another.
        grown = None if removed else _grown_at_end(elf, dynamic, wanted)
        if grown is not None:
            return grown
    return _appended_segment(elf, dynamic, wanted, removed)


def _needed_slots(elf: _Elf, names: Sequence[str]) -> list[int]:
    """The indexes in ``.dynamic`` of the DT_NEEDED entries naming ``names``; EditUnsupportedError
    when a version need names one of them too (the versions bound to it would be left unserved)."""
    wanted = {name.encode("utf-8", "surrogateescape") for name in names}
    slots = []
    for value, who in elf.references:
        if _string_at(elf.dynstr, value) not in wanted:
            continue
        if who[0] == "vn_file":
            raise EditUnsupportedError("a version need names a DT_NEEDED entry to remove")
        if elf.dynamic[who[1]][0] == _DT_NEEDED:
            slots.append(who[1])
    return slots


def _in_place(
    elf: _Elf, dynamic: list[list[int]], wanted: dict[tuple[str, int], bytes], removed: list[int]
) -> ElfPatch:
    table: bytearray | None = None  # the edited .dynstr, copied at the first change (tens of MB)
    changed: list[tuple[int, int]] = []  # byte ranges of .dynstr rewritten or taken
    current = {who: value for value, who in elf.references}
    # A removed entry reads nothing: its string's bytes are room (NVRTC's builtins' name, 38 bytes in
    # cumm-cu117, takes the new search path).
    gone = frozenset(("dyn", index) for index in removed)
    by_text: dict[bytes, list[tuple[str, int]]] = {}
    for who, text in wanted.items():
        by_text.setdefault(text, []).append(who)
    placed: dict[tuple[str, int], int] = {}
    for text, owners in by_text.items():
        offsets = {current[who] for who in owners if who in current}
        for offset in sorted(offsets):
            old = _string_at(elf.dynstr, offset)
            if len(text) > len(old) or not _only_readers(elf, offset, len(old), set(owners), gone):
                continue
            table = bytearray(elf.dynstr) if table is None else table
            table[offset : offset + len(old) + 1] = text + b"\0" * (len(old) + 1 - len(text))
            changed.append((offset, offset + len(old) + 1))
            placed.update((who, offset) for who in owners if current.get(who) == offset)
        for who in owners:
            if who in placed:
                continue
            needle = text + b"\0"
            at = _existing(elf.dynstr if table is None else table, needle, changed)
            if at < 0:
                at = _unread_run(elf, len(needle), changed, gone)
                table = bytearray(elf.dynstr) if table is None else table
                table[at : at + len(needle)] = needle
                changed.append((at, at + len(needle)))
            placed[who] = at
    for who, offset in placed.items():
        if who[0] == "dyn":
            dynamic[who[1]][1] = offset
    patches = [
        Patch(elf.dynstr_offset + low, bytes(table[low:high])) for low, high in changed if table is not None
    ]
    _without(dynamic, removed)
    patches += _dynamic_patches(elf, dynamic)
    patches += _file_name_patches(elf, placed)
    return ElfPatch(elf.size, tuple(sorted(patches, key=lambda p: p.offset)), (), "in place")


def _only_readers(
    elf: _Elf, offset: int, length: int, owners: set[tuple[str, int]], gone: frozenset[tuple[str, int]]
) -> bool:
    """Whether every reference that reads any byte of the string at ``offset`` is one of ``owners``
    pointing exactly at it: a reference reads from where it points to the next NUL, so any that
    starts between the NUL before this string and this string's own NUL reads some of its bytes."""
    start = elf.dynstr.rfind(b"\0", 0, offset) + 1
    names = elf.name_offsets
    first = bisect_left(names, start)
    if first < len(names) and names[first] <= offset + length:
        return False  # a name (nothing here rewrites it) reads some of these bytes
    for value, who in elf.references:
        if who in gone:
            continue
        if start <= value <= offset + length and (value != offset or who not in owners):
            return False
    return True


def _existing(table: bytes | bytearray, needle: bytes, changed: list[tuple[int, int]]) -> int:
    """Where ``needle`` (a string and its NUL) already lies in ``table`` outside the ``changed``
    ranges, -1 if nowhere: reading from any such place gives the string, a suffix of a longer one too."""
    at = table.find(needle)
    while at >= 0 and any(low < at + len(needle) and at < high for low, high in changed):
        at = table.find(needle, at + 1)
    return at


def _unread_run(
    elf: _Elf, length: int, changed: list[tuple[int, int]], gone: frozenset[tuple[str, int]] = frozenset()
) -> int:
    """The first ``length`` bytes of .dynstr that no reference reads (nor the ``changed`` ranges,
    nor byte 0, the empty string), found by walking the references in order of offset (those of the
    ``gone`` entries aside): each reads from where it points to the next NUL. EditUnsupportedError
    when there is no such run."""
    dynstr = elf.dynstr
    starts = heapq.merge(elf.name_offsets, sorted(value for value, who in elf.references if who not in gone))
    covered = heapq.merge(
        ((value, end + 1) for value in starts if (end := dynstr.find(b"\0", value)) >= 0),
        sorted(changed),
    )
    reach = 1  # byte 0 is the empty string's NUL
    for low, high in covered:
        if low - reach >= length:
            return reach
        reach = max(reach, high)
    if len(dynstr) - reach >= length:
        return reach
    raise EditUnsupportedError("no room in .dynstr for a new string")


def _dynamic_patches(elf: _Elf, dynamic: list[list[int]]) -> list[Patch]:
    size = elf.layout.dyn.size
    return [
        Patch(elf.dynamic_offset + index * size, elf.layout.dyn.pack(*entry))
        for index, entry in enumerate(dynamic)
        if entry != elf.dynamic[index]
    ]


def _new_strings(table: bytes, wanted: dict[tuple[str, int], bytes]) -> tuple[bytes, dict[bytes, int]]:
    """The strings to add after ``table`` for ``wanted``, and where each wanted string lies in the
    table grown by them: a string already there (or a suffix of one) serves as it is."""
    added = bytearray()
    offsets: dict[bytes, int] = {}
    for text in dict.fromkeys(wanted.values()):
        needle = text + b"\0"
        existing = table.find(needle)
        if existing < 0 and (at := added.find(needle)) >= 0:
            existing = len(table) + at
        if existing >= 0:
            offsets[text] = existing
        else:
            offsets[text] = len(table) + len(added)
            added += needle
    return bytes(added), offsets


def _repointed(
    elf: _Elf,
    dynamic: list[list[int]],
    wanted: dict[tuple[str, int], bytes],
    offsets: dict[bytes, int],
    table_size: int,
    *,
    moved_to: int | None = None,
) -> list[Patch]:
    """The patches that point each reader in ``wanted`` at its string, at ``offsets`` in a .dynstr
    of ``table_size`` bytes (at address ``moved_to`` where the table moved): .dynamic's entries,
    DT_STRSZ (and DT_STRTAB), and verneed's file names."""
    _point(dynamic, wanted, offsets, table_size, moved_to=moved_to)
    return [*_dynamic_patches(elf, dynamic), *_file_name_patches(elf, _placed(wanted, offsets))]


def _point(
    dynamic: list[list[int]],
    wanted: dict[tuple[str, int], bytes],
    offsets: dict[bytes, int],
    table_size: int,
    *,
    moved_to: int | None = None,
) -> None:
    """Points ``dynamic``'s entries in ``wanted`` at their strings, and DT_STRSZ (and DT_STRTAB, to
    ``moved_to``) at the table (see ``_repointed``)."""
    for who, text in wanted.items():
        if who[0] == "dyn":
            dynamic[who[1]][1] = offsets[text]
    for entry in dynamic:
        if entry[0] == _DT_STRTAB and moved_to is not None:
            entry[1] = moved_to
        elif entry[0] == _DT_STRSZ:
            entry[1] = table_size


def _file_name_patches(elf: _Elf, placed: Mapping[tuple[str, int], int]) -> list[Patch]:
    """The patches that point verneed's file names among ``placed`` (reader -> offset in .dynstr)."""
    return [
        Patch(who[1], elf.layout.u32.pack(offset)) for who, offset in placed.items() if who[0] == "vn_file"
    ]


def _placed(
    wanted: Mapping[tuple[str, int], bytes], offsets: Mapping[bytes, int]
) -> dict[tuple[str, int], int]:
    """Where each reader in ``wanted`` points once its string is at ``offsets``."""
    return {who: offsets[text] for who, text in wanted.items()}


def _without(dynamic: list[list[int]], removed: Sequence[int]) -> None:
    """Takes the entries at ``removed`` out of ``dynamic``, the later ones moving up, the table
    keeping its length with DT_NULL at the end."""
    for index in sorted(removed, reverse=True):
        del dynamic[index]
        dynamic.append([_DT_NULL, 0])


def _header(elf: _Elf, index: int, *, size: int, moved_to: tuple[int, int] | None = None) -> list[Patch]:
    """Section header ``index`` (``.dynstr``'s, ``.dynamic``'s) with ``size``, and (address, file
    offset) ``moved_to``; none for a file without section headers (-1)."""
    if index < 0:
        return []
    fields = list(elf.shdrs[index].fields)
    fields[5] = size
    if moved_to is not None:
        fields[3], fields[4] = moved_to
    return [Patch(elf.shdr_offset + index * elf.layout.shdr.size, elf.layout.shdr.pack(*fields))]


def _grown_at_end(
    elf: _Elf, dynamic: list[list[int]], wanted: dict[tuple[str, int], bytes]
) -> ElfPatch | None:
    """The edit with the new strings written after ``.dynstr`` where it ends the file, in the
    topmost PT_LOAD segment, which grows by them: where an earlier patchelf left it (auditwheel's
    repairs: pycolmap-cuda12 4.2.1's ``_core`` has an 8 MB ``.dynstr`` there). The file grows by
    the strings alone, not by a copy of the table and the program headers. None when the table
    does not end the file so (then it is copied to an appended segment)."""
    start, end = elf.dynstr_offset, elf.dynstr_offset + elf.dynstr_size
    loads = [p for p in elf.phdrs if p.kind == _PT_LOAD]
    holding = [p for p in loads if p.offset <= start and end <= p.offset + p.filesz]
    if elf.e_type != _ET_DYN or len(holding) != 1:
        return None
    segment = holding[0]
    top = max(p.vaddr + p.memsz for p in loads)
    if segment.filesz != segment.memsz or segment.vaddr + segment.memsz != top:
        return None  # .bss after it, or another segment above it in memory
    # Nothing the file holds may lie after the table: no section, segment or section header.
    shdr_end = elf.shdr_offset + len(elf.shdrs) * elf.layout.shdr.size
    others = [
        s for i, s in enumerate(elf.shdrs) if i != elf.dynstr_index and s.kind != _SHT_NOBITS and s.size
    ]
    if shdr_end > end or any(s.offset + s.size > end for s in others):
        return None
    if any(p is not segment and p.filesz and p.offset + p.filesz > end for p in elf.phdrs):
        return None
    if elf.after_dynstr is None or elf.after_dynstr.strip(b"\0"):
        return None  # something nothing here names follows it: not overwritten
    added, offsets = _new_strings(elf.dynstr, wanted)
    table_size = elf.dynstr_size + len(added)
    tail = max(0, min(len(added), elf.size - end))  # bytes after the table inside the file, unused
    patches = [Patch(end, added[:tail])] if tail else []
    patches += _repointed(elf, dynamic, wanted, offsets, table_size)
    size = max(segment.filesz, end + len(added) - segment.offset)
    grown = _Phdr(
        segment.kind, segment.flags, segment.offset, segment.vaddr, segment.paddr, size, size, segment.align
    )
    index = next(i for i, p in enumerate(elf.phdrs) if p is segment)
    patches.append(Patch(elf.ehdr[4] + index * elf.layout.phdr.size, elf.pack_phdr(grown)))
    patches += _header(elf, elf.dynstr_index, size=table_size)
    appended = (added[tail:],) if len(added) > tail else ()
    return ElfPatch(elf.size, tuple(sorted(patches, key=lambda p: p.offset)), appended, "grown at the end")


def _appended_segment(
    elf: _Elf, dynamic: list[list[int]], wanted: dict[tuple[str, int], bytes], removed: Sequence[int] = ()
) -> ElfPatch:
    """The edit with a copy of ``.dynstr`` and the new strings in a new PT_LOAD at the end, with the
    program headers. Where ``dynamic`` is longer than the file's ``.dynamic`` (a new entry and no
    spare DT_NULL: lld's output), the new table goes there too, with spare slots for later edits,
    and PT_DYNAMIC and the section header point at it; the segment is then writable, as the
    table it replaces: glibc before 2.35 writes the relocated addresses into ``.dynamic``."""
    if elf.e_type != _ET_DYN or any(p.kind == _PT_INTERP for p in elf.phdrs):
        raise EditUnsupportedError("only shared libraries get an appended segment here")
    loads = [i for i, p in enumerate(elf.phdrs) if p.kind == _PT_LOAD]
    if not loads:
        raise EditUnsupportedError("no PT_LOAD segment")
    moves_dynamic = len(dynamic) > len(elf.dynamic)
    if moves_dynamic and sum(p.kind == _PT_DYNAMIC for p in elf.phdrs) != 1:
        raise EditUnsupportedError("not exactly one PT_DYNAMIC")
    layout = elf.layout
    word = layout.word_size
    align = max([elf.phdrs[i].align for i in loads] + [0x1000])
    start = (elf.size + word - 1) // word * word  # the new segment's file offset
    top = max(p.vaddr + p.memsz for p in elf.phdrs if p.kind == _PT_LOAD)
    vaddr = (top + align - 1) // align * align + start % align  # congruent to the offset
    # The new .dynstr is the old one with the new strings after it: made once, in the appended bytes.
    added, offsets = _new_strings(elf.dynstr, wanted)
    table_size = len(elf.dynstr) + len(added)
    phnum = len(elf.phdrs) + 1
    phdr_size = phnum * layout.phdr.size
    dynstr_at = phdr_size  # .dynstr needs no alignment
    segment_size = dynstr_at + table_size
    _point(dynamic, wanted, offsets, table_size, moved_to=vaddr + dynstr_at)
    _without(dynamic, removed)
    patches = _file_name_patches(elf, _placed(wanted, offsets))
    abandoned = [(elf.dynstr_offset, elf.dynstr_size)]
    # Nothing reads the old table now. Zeros, as patchelf's 'X's, deflate to nothing: kept, its copy in
    # the segment would grow the wheel by the table's compressed size (12 KB of cumm-cu117's 2.1 MB,
    # 1.3 MB of mxnet-cu112's 476 MB).
    patches += _zeroed(elf.dynstr_offset, elf.dynstr_size)
    tables: tuple[bytes, ...] = ()
    moved: tuple[int, int] | None = None  # where the new .dynamic lies in the segment, and its size
    if moves_dynamic:
        table = b"".join(layout.dyn.pack(*entry) for entry in [*dynamic, *[[_DT_NULL, 0]] * _SPARE_SLOTS])
        dynamic_at = (segment_size + word - 1) // word * word
        tables = (bytes(dynamic_at - segment_size), table)
        moved = (dynamic_at, len(table))
        segment_size = dynamic_at + len(table)
        patches += _header(
            elf, elf.dynamic_index, size=len(table), moved_to=(vaddr + dynamic_at, start + dynamic_at)
        )
        abandoned.append((elf.dynamic_offset, elf.dynamic_size))
    else:
        patches += _dynamic_patches(elf, dynamic)
    flags = _PF_R | (_PF_W if moves_dynamic else 0)
    new_load = _Phdr(_PT_LOAD, flags, start, vaddr, vaddr, segment_size, segment_size, align)
    phdrs = list(elf.phdrs)
    phdrs.insert(loads[-1] + 1, new_load)  # PT_LOADs stay sorted by address
    phdrs = [_moved(p, start, vaddr, phdr_size, dynamic=moved) for p in phdrs]
    headers = b"".join([bytes(start - elf.size), *(elf.pack_phdr(p) for p in phdrs)])
    appended = (headers, elf.dynstr, added, *tables)
    ehdr = list(elf.ehdr)
    ehdr[4], ehdr[9] = start, phnum  # e_phoff, e_phnum
    patches.append(Patch(16, layout.ehdr.pack(*ehdr)))
    patches += _header(
        elf, elf.dynstr_index, size=table_size, moved_to=(vaddr + dynstr_at, start + dynstr_at)
    )
    return ElfPatch(
        elf.size,
        tuple(sorted(patches, key=lambda p: p.offset)),
        appended,
        "appended segment",
        tuple(abandoned),
    )


def _zeroed(offset: int, size: int) -> list[Patch]:
    """Patches that zero ``size`` bytes at ``offset``: pieces of one shared buffer (the last one
    overlapping the one before), so that a 26 MB table costs no memory; a table under 1 MiB, its size."""
    if size < _ZERO_PIECE:
        return [Patch(offset, bytes(size))] if size else []
    starts = [*range(0, size - _ZERO_PIECE, _ZERO_PIECE), size - _ZERO_PIECE]
    return [Patch(offset + start, _ZEROS) for start in starts]


def _moved(p: _Phdr, start: int, vaddr: int, phdr_size: int, *, dynamic: tuple[int, int] | None) -> _Phdr:
    """Program header ``p`` once the appended segment (at file offset ``start``, address ``vaddr``)
    holds the program headers, and, where it moved, the dynamic table (its offset in the segment
    and its size)."""
    if p.kind == _PT_PHDR:
        return _Phdr(_PT_PHDR, p.flags, start, vaddr, vaddr, phdr_size, phdr_size, p.align)
    if p.kind == _PT_DYNAMIC and dynamic is not None:
        at, size = dynamic
        return _Phdr(_PT_DYNAMIC, p.flags, start + at, vaddr + at, vaddr + at, size, size, p.align)
    return p
