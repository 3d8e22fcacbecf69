"""Evidence from symbols, read where the plan needs the wheel's symbol tables and NVIDIA's files:

- floors: for the libraries a plan had to assume the first release of, the oldest release that
  exports what the wheel's files import from them (see :mod:`slimwheel.catalog.exports`); read
  between two plain-data planning passes, and only when the first pass assumed a floor;
- unused libraries (``--drop-unused-needed``): the NVIDIA libraries a file needs and imports nothing
  from, where the analysis could not tell offline because the file imports symbols bound to no
  version (:func:`unused_needed`); read before planning, and only on request.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from slimwheel.analysis.libraries import unbound_nvidia_needs
from slimwheel.analysis.model import Resolution
from slimwheel.catalog.exports import (
    ExportSource,
    SymbolFloor,
    imports_from,
    oldest_exporting,
    read_member_elf,
    read_view,
)
from slimwheel.elf import ElfFacts
from slimwheel.errors import SlimwheelError
from slimwheel.platforms import platform_of_tag
from slimwheel.progress import SILENT, Progress
from slimwheel.wheel.view import MissingRangeError

if TYPE_CHECKING:
    from slimwheel.analysis.model import ElfReport, WheelReport
    from slimwheel.catalog.model import Catalog, LibraryProvider
    from slimwheel.repair.plan import AssumedFloor, RepairPlan
    from slimwheel.wheel import Wheel, WheelMember
    from slimwheel.wheel.view import SavedRanges

__all__ = ["symbol_floors", "unused_needed"]

_WORKERS = 2  # distributions searched at once: each is network and inflating, which release the GIL


def symbol_floors(
    wheel: Wheel,
    plan: RepairPlan,
    catalog: Catalog,
    source: ExportSource,
    *,
    saved_tables: Callable[[WheelMember], SavedRanges | None] | None = None,
    progress: Progress = SILENT,
) -> dict[str, SymbolFloor]:
    """Per distribution of ``plan.assumed_floors``, the oldest release of it whose files export every
    symbol ``wheel``'s files import from them; distributions this cannot be told for are left out.
    ``saved_tables``: the tables the analysis saved of a member (the repair's InspectionCache), so
    that the wheel's own files are not inflated again to read what they import."""
    if not plan.assumed_floors:
        return {}
    by_distribution: dict[str, list[AssumedFloor]] = {}
    for assumed in plan.assumed_floors:
        by_distribution.setdefault(assumed.distribution, []).append(assumed)
    needing = {path for a in plan.assumed_floors for path in a.needed_by}
    consumers = _read_consumers(wheel, needing, saved_tables)

    def search(distribution: str, assumed: Sequence[AssumedFloor]) -> SymbolFloor | None:
        if any(path not in consumers for a in assumed for path in a.needed_by):
            return None  # what an unread file imports is unknown
        imports = {
            a.path: imports_from((consumers[p] for p in a.needed_by), a.soname, needed_as=a.needed_as)
            for a in assumed
        }
        return oldest_exporting(
            catalog,
            distribution,
            imports,
            source,
            major=assumed[0].cuda_major,
            platform=plan.platform,
            on_read=lambda _version: advance(next(reads)),
        )

    # One step for all: the searches run in threads, and a progress display is not theirs to open.
    reads = itertools.count(1)  # releases read so far, by every thread (advance takes a total)
    listed = ", ".join(by_distribution)
    with (
        progress.step(f"reading what releases of {listed} export") as advance,
        ThreadPoolExecutor(max_workers=min(_WORKERS, len(by_distribution))) as pool,
    ):
        futures = {name: pool.submit(search, name, assumed) for name, assumed in by_distribution.items()}
        found = {name: future.result() for name, future in futures.items()}
    return {name: floor for name, floor in found.items() if floor is not None}


def unused_needed(
    wheel: Wheel,
    report: WheelReport,
    catalog: Catalog,
    source: ExportSource,
    *,
    saved_tables: Callable[[WheelMember], SavedRanges | None] | None = None,
    progress: Progress = SILENT,
) -> WheelReport:
    """``report`` with each file's ``unused_needed`` completed by what NVIDIA's files export. The
    analysis names an NVIDIA library unused only where every import bound to no version is Python's;
    a file that imports others (onnxruntime-gpu's CUDA provider imports ``Provider_GetHost`` from
    onnxruntime) may take them from any library it needs. Here those names are looked up in what the
    newest release of each distribution that ships the library exports (exports only grow under one
    soname): a library that exports none of them, and of which no version is bound, serves the file
    nothing. A library whose exports cannot be read stays needed."""
    platforms = {p for p in map(platform_of_tag, report.platform_tags) if p is not None and p.os == "linux"}
    candidates = {elf.installed_path or elf.path: _unjudged(elf) for elf in report.elf_files}
    candidates = {path: sonames for path, sonames in candidates.items() if sonames}
    if not candidates or len(platforms) != 1:
        return report
    (platform,) = platforms
    consumers = _read_consumers(wheel, set(candidates), saved_tables)
    exported: dict[str, frozenset[str] | None] = {}

    def names(soname: str) -> frozenset[str] | None:
        if soname not in exported:
            newest: dict[str, LibraryProvider] = {}
            for provider in catalog.providers(soname=soname, platform=platform):
                known = newest.get(provider.distribution)
                if known is None or known.release.parsed_version < provider.release.parsed_version:
                    newest[provider.distribution] = provider
            found = [source.exports(provider) for provider in newest.values()]
            exported[soname] = (
                frozenset().union(*(e.names for e in found if e is not None))
                if newest and all(e is not None for e in found)
                else None
            )
        return exported[soname]

    changed: dict[str, ElfReport] = {}
    listed = ", ".join(sorted({soname for sonames in candidates.values() for soname in sonames}))
    with progress.step(f"reading what {listed} export"):
        for elf in report.elf_files:
            path = elf.installed_path or elf.path
            facts = consumers.get(path)
            if path not in candidates or facts is None:
                continue
            unbound = facts.unbound_imports or frozenset()
            imported = {
                symbol.name
                for symbol in facts.undefined_symbols
                if symbol.version is None and symbol.binding != "weak" and symbol.name not in unbound
            }
            unused = {
                soname
                for soname in candidates[path]
                if (known := names(soname)) is not None and imported.isdisjoint(known)
            }
            if unused:
                ordered = tuple(
                    n.soname for n in elf.needed if n.soname in unused or n.soname in elf.unused_needed
                )
                changed[elf.path] = replace(elf, unused_needed=ordered)
    if not changed:
        return report
    return replace(report, elf_files=tuple(changed.get(elf.path, elf) for elf in report.elf_files))


def _unjudged(elf: ElfReport) -> tuple[str, ...]:
    """The NVIDIA libraries from a wheel that ``elf`` needs, binds no version of, and the analysis
    could not call unused."""
    if elf.error:
        return ()
    unbound = set(
        unbound_nvidia_needs((n.soname for n in elf.needed), (file for file, _ in elf.version_needs))
    )
    return tuple(
        need.soname
        for need in elf.needed
        if need.soname in unbound
        and need.resolution is Resolution.NVIDIA_WHEEL
        and need.soname not in elf.unused_needed
    )


def _read_consumers(
    wheel: Wheel,
    installed_paths: set[str],
    saved_tables: Callable[[WheelMember], SavedRanges | None] | None,
) -> dict[str, ElfFacts]:
    """The dynamic symbols of the wheel's files at ``installed_paths``. A file that cannot be read is
    left out: what it imports is unknown, so the floors of what it needs stay unknown too."""
    facts: dict[str, ElfFacts] = {}
    for member in wheel.members:
        installed = wheel.installed_path(member.name)
        if installed not in installed_paths:
            continue
        where = f"{wheel.filename}:{member.name}"
        saved = saved_tables(member) if saved_tables is not None else None
        read = _from_saved(saved, where) if saved is not None else None
        try:
            if read is None:
                read = read_member_elf(
                    wheel, member.name, where=where, symbols=True, defined=False, relocations=True
                )
        except SlimwheelError:
            continue
        if read is not None:
            facts[installed] = read
    return facts


def _from_saved(saved: SavedRanges, where: str) -> ElfFacts | None:
    """The facts with dynamic symbols (and relocations, where kept) from the tables the analysis
    saved; None when they lack one."""
    try:
        return read_view(saved.open(), where=where, symbols=True, defined=False, relocations=True)
    except (MissingRangeError, OSError, SlimwheelError):
        return None
