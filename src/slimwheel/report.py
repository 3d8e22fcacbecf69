"""Versioned JSON reports: every command's ``--json`` document is ``{"schema": "slimwheel.<cmd>/1", ...}``;
and the rows of show's ELF table, one fact per row, which the terminal and the HTML page both print."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slimwheel.runtime._record import Record
from slimwheel.wording import some_of

if TYPE_CHECKING:
    from slimwheel.analysis import WheelReport

__all__ = ["ElfRow", "dump_report", "elf_rows", "human_size", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Dataclasses, records, enums, tuples and mappings as plain JSON values (dataclass fields in order)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, Record):  # the run-time package's records (stdlib only, no dataclasses)
        return to_jsonable(value.to_dict())
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    return value


def dump_report(command: str, payload: Mapping[str, Any]) -> str:
    document = {"schema": f"slimwheel.{command}/1", **to_jsonable(payload)}
    return json.dumps(document, indent=2, sort_keys=False)


def human_size(size: int | None) -> str:
    """``1536`` -> ``1.5 KiB``."""
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


@dataclass(frozen=True)
class ElfRow:
    """One fact of show's ELF table: a file needs one library, which resolves to one place. The file's
    own facts (size, soname, search path) ride on every row; a renderer may print them once."""

    file: str
    size: str
    soname: str
    needs: str
    resolves_to: str
    search_path: str
    first: bool  # the file's first row


def elf_rows(report: WheelReport) -> list[ElfRow]:
    """Show's ELF table, one row per DT_NEEDED that is not the host's (those are counted in one row),
    so that no cell holds several facts whose wrapped lines could drift from their neighbours'."""
    from slimwheel.analysis import Resolution
    from slimwheel.check.words import search_path_words

    rows: list[ElfRow] = []
    for elf in report.elf_files:
        paths = search_path_words(elf.rpath, elf.runpath)
        facts: list[tuple[str, str]] = []
        for need in elf.needed:
            if need.resolution is Resolution.SYSTEM:
                continue
            where = need.resolution.value
            if need.provided_by:
                where += ": " + some_of(need.provided_by, 3)
            facts.append((need.soname, where))
        system = sum(1 for n in elf.needed if n.resolution is Resolution.SYSTEM)
        if system:
            facts.append((f"+ {system} system {'library' if system == 1 else 'libraries'}", "system"))
        if not facts:
            facts.append(("", elf.error or "needs nothing"))
        for index, (needs, where) in enumerate(facts):
            rows.append(
                ElfRow(
                    elf.path,
                    human_size(elf.size),
                    elf.soname or "",
                    needs,
                    where,
                    " ".join(paths),
                    index == 0,
                )
            )
    return rows
