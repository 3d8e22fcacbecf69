"""What an NVIDIA library exports in each release, and the oldest release that exports what a wheel imports.

A wheel built against a newer release than the oldest one that ships a library imports symbols the
older one lacks, and glibc refuses to load it there: TransformerEngine 2.20 (built on cuBLAS 13.2)
with nvidia-cublas 13.1.0.3 fails with ``undefined symbol: cublasLtGroupedMatrixLayoutInit_internal,
version libcublasLt.so.13``. When repair cannot learn the version a wheel was linked against, the
floor of the requirement it adds is the oldest release whose file exports every symbol the wheel's
files import from it (:func:`oldest_exporting`).

Releases only add symbols under one soname (dropping one breaks what the soname promises), so the
oldest release is tried first (most wheels use nothing newer: one read), then a bisection up to the
newest, which is read only if the search ends there; of a release's files, the smallest is read
first, and one that lacks a symbol ends that release's read. A release's file is read over the
index, inflated once while streaming (``.dynamic`` and, in NVIDIA's patched files, ``.dynstr`` sit
at the end of a deflated member), and what it exports is kept in the cache under the file's sha256,
so each file is read once per machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol, cast

from slimwheel.catalog.model import Catalog, LibraryProvider, Release
from slimwheel.elf import ELF_MAGIC, ElfFacts, ranges_to_keep, read_elf
from slimwheel.errors import SlimwheelError
from slimwheel.platforms import Platform
from slimwheel.wheel.inflate import InflateError, inflate
from slimwheel.wheel.view import MemberView, MissingRangeError

if TYPE_CHECKING:
    from slimwheel.index import Cache, IndexClient
    from slimwheel.wheel import Wheel

__all__ = [
    "ExportSource",
    "Exports",
    "Imports",
    "IndexExports",
    "SymbolFloor",
    "imports_from",
    "oldest_exporting",
    "read_member_elf",
    "read_view",
]

_FORMAT = "slimwheel-exports 1"
# Several releases are read at once, so each read is kept small: NVIDIA's .dynsym, .gnu.version and
# (unpatched) .dynstr sit in a file's first hundred KiB; section headers and what patchelf moved, in
# its last. A miss spools the member to disk instead.
_VIEW_HEAD = 4 << 20
_VIEW_TAIL = 4 << 20
_REMOTE_MEMORY = 16 << 20  # of the wheel's bytes kept while streaming the member


@dataclass(frozen=True)
class Imports:
    """The symbols some files import from one soname: ``versioned`` (name, version) pairs the link
    bound to that soname's version nodes, and ``unversioned`` names the files import without a
    version (from a library that defines none, or from any library: which one is not recorded)."""

    soname: str
    versioned: frozenset[tuple[str, str]]
    unversioned: frozenset[str]

    def __len__(self) -> int:
        return len(self.versioned) + len(self.unversioned)


@dataclass(frozen=True)
class Exports:
    """The dynamic symbols a library defines (global and weak): names, and (name, version) pairs."""

    names: frozenset[str]
    versioned: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, facts: ElfFacts) -> Exports:
        symbols = [s for s in facts.defined_symbols if s.binding in ("global", "weak", "unique")]
        return cls(
            frozenset(s.name for s in symbols),
            frozenset((s.name, s.version) for s in symbols if s.version is not None),
        )

    def missing(self, imports: Imports) -> tuple[str, ...]:
        """What of ``imports`` this library does not export, ``name@version`` for versioned ones."""
        lacking = [
            f"{name}@{version}"
            for name, version in imports.versioned
            if (name, version) not in self.versioned
        ]
        lacking += [name for name in imports.unversioned if name not in self.names]
        return tuple(sorted(lacking))

    def to_text(self) -> str:
        rows = [f"{name}\t{version}" for name, version in sorted(self.versioned)]
        versioned_names = {name for name, _version in self.versioned}
        rows += sorted(name for name in self.names if name not in versioned_names)
        return "\n".join([_FORMAT, *rows]) + "\n"

    @classmethod
    def from_text(cls, text: str) -> Exports | None:
        lines = text.splitlines()
        if not lines or lines[0] != _FORMAT:
            return None
        names: set[str] = set()
        versioned: set[tuple[str, str]] = set()
        for line in lines[1:]:
            name, _tab, version = line.partition("\t")
            names.add(name)
            if version:
                versioned.add((name, version))
        return cls(frozenset(names), frozenset(versioned))


def imports_from(facts: Iterable[ElfFacts], soname: str, *, needed_as: Iterable[str] = ()) -> Imports:
    """What the files ``facts`` describe import from ``soname``, which they may need under other
    names too (``needed_as``: a vendored copy's own soname, as their version needs name it). Weak
    references are left out: they resolve to nothing when missing, and the file copes
    (``__gmon_start__``). Unversioned references count only from files that need the library and
    bind no version of it (a library without version nodes): whether they come from it is told by
    what it exports. Nor do references no relocation uses, where the file says which those are
    (:attr:`~slimwheel.elf.ElfFacts.unbound_imports`): the loader never looks them up."""
    names = {soname, *needed_as}
    versioned: set[tuple[str, str]] = set()
    unversioned: set[str] = set()
    for file in facts:
        if names.isdisjoint(file.needed):
            continue
        binds_versions = any(need.file in names for need in file.version_needs)
        unbound = file.unbound_imports or frozenset()
        for symbol in file.undefined_symbols:
            if symbol.binding == "weak" or symbol.name in unbound:
                continue
            if symbol.library in names and symbol.version is not None:
                versioned.add((symbol.name, symbol.version))
            elif symbol.version is None and not binds_versions:
                unversioned.add(symbol.name)
    return Imports(soname, frozenset(versioned), frozenset(unversioned))


class ExportSource(Protocol):
    """What the file ``provider`` names exports; None when that cannot be learned (no index, a file
    that is not ELF). Implementations raise nothing for those: the floor then stays unknown."""

    def exports(self, provider: LibraryProvider) -> Exports | None: ...


class IndexExports:
    """An :class:`ExportSource` reading NVIDIA's wheels through the index (lazily: only the member),
    keeping each answer in ``cache`` under the file's sha256. ``client`` is called on the first read
    that the cache cannot answer."""

    def __init__(self, client: Callable[[], IndexClient], cache: Cache | None) -> None:
        self._client = client
        self._folder = cache.root / "exports" if cache is not None else None

    def _path(self, provider: LibraryProvider) -> Path | None:
        if self._folder is None:
            return None
        key = provider.library.sha256 or f"{provider.wheel.filename}/{provider.library.path}"
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self._folder / digest[:2] / f"{digest}.txt"

    def exports(self, provider: LibraryProvider) -> Exports | None:
        path = self._path(provider)
        if path is not None and path.is_file():
            known = Exports.from_text(path.read_text(encoding="utf-8", errors="surrogateescape"))
            if known is not None:
                return known
        try:
            found = self._read(provider)
        except (SlimwheelError, OSError, InflateError):
            return None  # offline, a file gone from the index, a damaged member: the floor stays unknown
        if found is not None and path is not None:
            from slimwheel.index.cache import atomic_writer

            with atomic_writer(path) as handle:
                handle.write(found.to_text().encode("utf-8", "surrogateescape"))
        return found

    def _read(self, provider: LibraryProvider) -> Exports | None:
        client = self._client()
        page = client.project(provider.distribution)
        files = [f for f in page.files if f.filename == provider.wheel.filename]
        if not files:
            return None
        with client.open_wheel(files[0], max_memory=_REMOTE_MEMORY) as wheel:  # its directory only
            member = next(
                (m for m in wheel.members if wheel.installed_path(m.name) == provider.library.path), None
            )
            if member is None:
                return None
            start, length = wheel.raw_span(member.name)
        where = f"{files[0].filename}:{member.name}"
        # One streamed request for the whole member: range reads of a few MiB each pay a round trip
        # (a 400 MB member took twice as long), and .dynamic is at its end, so all of it is read.
        with client.stream_range(files[0], start, length) as raw:
            chunks = raw if member.is_stored else inflate(raw, size=member.file_size, crc=member.crc)
            view = MemberView.from_chunks(
                where, member.file_size, chunks, head=_VIEW_HEAD, tail=_VIEW_TAIL, keep=ranges_to_keep
            )
        try:
            facts = read_view(view, where=where, symbols=True, defined=True)
        except MissingRangeError:  # a table elsewhere: rare
            with client.open_wheel(files[0], max_memory=_REMOTE_MEMORY) as wheel:
                facts = read_member_elf(wheel, member.name, where=where, symbols=True)
        return None if facts is None else Exports.of(facts)


def read_member_elf(
    wheel: Wheel,
    name: str,
    *,
    where: str,
    symbols: bool,
    defined: bool = True,
    relocations: bool = False,
    head: int = _VIEW_HEAD,
    tail: int = _VIEW_TAIL,
) -> ElfFacts | None:
    """The ELF facts of member ``name`` (with its dynamic symbols when ``symbols``; never ``.symtab``),
    inflating it once while streaming and keeping only ``head`` and ``tail`` bytes and its tables;
    spooled whole only when a table lies elsewhere. None for a member that is not ELF; ElfError for
    one that does not parse. ``where`` names it in errors; ``defined=False``: only undefined symbols;
    ``relocations``: the relocations too, where the kept bytes hold them (see :func:`read_view`)."""
    try:
        with wheel.member_view(name, head=head, tail=tail, keep=ranges_to_keep) as view:
            return read_view(view, where=where, symbols=symbols, defined=defined, relocations=relocations)
    except MissingRangeError:
        pass
    with wheel.seekable_member(name) as whole:
        return read_elf(
            whole, path=where, symbols=symbols, symtab=False, defined=defined, relocations=relocations
        )


def read_view(
    view: MemberView, *, where: str, symbols: bool, defined: bool, relocations: bool = False
) -> ElfFacts | None:
    """The ELF facts of a member from a view of it (closed after): None when it is not ELF;
    MissingRangeError when a table lies outside what it kept. The relocations are read only when the
    view kept them: they are the biggest table, and a file read without them only counts as imports
    symbols the loader may never look up (``unbound_imports`` is None)."""
    with view:
        stream = cast(BinaryIO, view)
        if stream.read(4) != ELF_MAGIC:
            return None
        if relocations:
            stream.seek(0)
            try:
                return read_elf(
                    stream, path=where, symbols=symbols, symtab=False, defined=defined, relocations=True
                )
            except MissingRangeError:
                pass
        stream.seek(0)
        return read_elf(stream, path=where, symbols=symbols, symtab=False, defined=defined)


@dataclass(frozen=True)
class SymbolFloor:
    """The oldest release of ``distribution`` whose files export what a wheel imports from them."""

    distribution: str
    version: str
    symbols: int  # the imports checked
    # What the release just below ``version`` lacks (a few names), when one was read; () when
    # ``version`` is the oldest release that ships the files.
    lacking_below: tuple[str, ...] = ()
    below: str | None = None

    @property
    def reason(self) -> str:
        if self.symbols == 0:
            return "the wheel imports no symbol from them: the oldest release that ships them"
        if self.below is None:
            return f"the oldest release that ships them exports the {self.symbols} symbols the wheel imports"
        shown = ", ".join(self.lacking_below[:3]) + (", ..." if len(self.lacking_below) > 3 else "")
        return (
            f"the oldest release exporting the {self.symbols} symbols the wheel imports "
            f"({self.below} lacks {shown})"
        )


def _candidates(
    catalog: Catalog, distribution: str, paths: Sequence[str], major: int | None, platform: Platform
) -> list[tuple[Release, dict[str, LibraryProvider]]]:
    """The releases (oldest first) of ``distribution`` for CUDA ``major`` whose wheel for ``platform``
    ships every file in ``paths``, with the provider of each."""
    found = []
    for release in catalog.releases_of(distribution):
        if release.parsed_version.is_prerelease or release.cuda_major != major:
            continue
        wheel = release.wheel_for(platform)
        if wheel is None:
            continue
        files = {lib.path: lib for lib in wheel.libraries if lib.path in paths}
        if len(files) == len(set(paths)):
            found.append((release, {p: LibraryProvider(release, wheel, f) for p, f in files.items()}))
    return sorted(found, key=lambda item: item[0].parsed_version)


def oldest_exporting(
    catalog: Catalog,
    distribution: str,
    imports: Mapping[str, Imports],
    source: ExportSource,
    *,
    major: int | None,
    platform: Platform,
    on_read: Callable[[str], None] | None = None,
) -> SymbolFloor | None:
    """The oldest release of ``distribution`` (CUDA ``major``, a wheel for ``platform``) whose file at
    each path of ``imports`` exports what is imported from it; None when that cannot be told (an
    export list that cannot be read, or not even the newest release exports everything: then the
    imports are not all this library's to give). ``imports`` must hold everything the files import:
    files that link a library and import nothing from it (over-linking) make the oldest release that
    ships it the floor, read from nothing. ``on_read(version)`` is told before each release is looked at."""
    releases = _candidates(catalog, distribution, sorted(imports), major, platform)
    if not releases:
        return None
    wanted = {path: found for path, found in imports.items() if len(found)}
    if not wanted:
        return SymbolFloor(distribution, releases[0][0].version, 0)
    verdicts: dict[int, tuple[str, ...] | None] = {}
    # Smallest file first: a release that lacks a symbol is told by the cheapest read that shows it.
    order = sorted(imports, key=lambda path: releases[-1][1][path].library.size or 0)

    def lacking(index: int) -> tuple[str, ...] | None:
        """What release ``index`` lacks, from the first of its files that lacks anything (() when
        none does); None when an export list cannot be read."""
        if index not in verdicts:
            release, providers = releases[index]
            if on_read is not None:
                on_read(release.version)
            verdict: tuple[str, ...] | None = ()
            for path in (p for p in order if p in wanted):
                exports = source.exports(providers[path])
                if exports is None:
                    verdict = None
                    break
                verdict = exports.missing(_known_to(wanted[path], newest_exports[path]))
                if verdict:
                    break
            verdicts[index] = verdict
        return verdicts[index]

    # Unversioned imports may come from any library the file needs: only those the newest release
    # exports are this library's. Versioned ones name it.
    newest_exports: dict[str, Exports | None] = dict.fromkeys(wanted)
    if any(found.unversioned for found in wanted.values()):
        if on_read is not None:
            on_read(releases[-1][0].version)
        for path in wanted:
            newest_exports[path] = source.exports(releases[-1][1][path])
            if newest_exports[path] is None:
                return None
    symbols = sum(len(_known_to(found, newest_exports[path])) for path, found in wanted.items())
    if symbols == 0:  # every unversioned import is another library's
        return SymbolFloor(distribution, releases[0][0].version, 0)
    first = lacking(0)
    if first is None:
        return None
    if not first:
        return SymbolFloor(distribution, releases[0][0].version, symbols)
    # Bisect between the oldest (lacks something) and the newest (taken to export everything, and
    # read only if the search ends there: the imports may be of a build newer than any release).
    low, high = 0, len(releases) - 1
    while high - low > 1:
        middle = (low + high) // 2
        verdict = lacking(middle)
        if verdict is None:
            return None
        if verdict:
            low = middle
        else:
            high = middle
    if lacking(high) != ():
        return None
    return SymbolFloor(
        distribution,
        releases[high][0].version,
        symbols,
        lacking_below=verdicts[low] or (),
        below=releases[low][0].version,
    )


def _known_to(found: Imports, newest: Exports | None) -> Imports:
    """``found`` less the unversioned names the newest release does not export (another library's)."""
    if not found.unversioned or newest is None:
        return found
    return Imports(
        found.soname, found.versioned, frozenset(n for n in found.unversioned if n in newest.names)
    )
