"""Floors from symbols: for the libraries a plan had to assume the first release of, the oldest
release that exports what the wheel's files import from them (see :mod:`slimwheel.catalog.exports`).

This is the plan's only evidence that needs the wheel's symbol tables and NVIDIA's files, so it is read
here, between two plain-data planning passes, and only when the first pass assumed a floor.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

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
from slimwheel.progress import SILENT, Progress
from slimwheel.wheel.view import MissingRangeError

if TYPE_CHECKING:
    from slimwheel.catalog.model import Catalog
    from slimwheel.repair.plan import AssumedFloor, RepairPlan
    from slimwheel.wheel import Wheel, WheelMember
    from slimwheel.wheel.view import SavedRanges

__all__ = ["symbol_floors"]

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
            major=plan.cuda_major,
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
