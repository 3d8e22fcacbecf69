"""glibc's search for a DT_NEEDED, written once: what an RPATH/RUNPATH entry means for an installed file.

``check`` simulates the search with it and ``repair`` rewrites entries by it, so the two never disagree
on what ``$ORIGIN`` is (``$ORIGINAL/lib`` is not ``$ORIGIN`` followed by ``AL/lib``: glibc does not
expand it, and neither do we).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

from slimwheel.findings import Finding, FindingKind, Severity

__all__ = ["EntryKind", "expand_entry", "rpath_problems", "starts_with_origin"]

_ORIGIN = re.compile(r"\$(?:ORIGIN|\{ORIGIN\})(?=/|$)")
_OTHER_TOKEN = re.compile(r"\$(?:\{?(?:LIB|PLATFORM)\}?)")


class EntryKind(enum.Enum):
    """What an entry is to glibc, for a file inside site-packages."""

    FOLDER = "folder"
    EMPTY = "empty"
    RELATIVE = "relative"
    ABSOLUTE = "absolute"
    OUTSIDE = "outside"
    UNSIMULATED = "unsimulated"


def expand_entry(entry: str, origin: str) -> tuple[EntryKind, str]:
    """An RPATH/RUNPATH entry as a folder relative to site-packages, or why it is not searched.

    A folder counts only while every step stays inside site-packages: ``$ORIGIN/../../..`` leaves it,
    and where it comes back to is not knowable (``pip install --target`` puts the tree anywhere).
    """
    if entry == "":
        return EntryKind.EMPTY, entry
    if _OTHER_TOKEN.search(entry):
        return EntryKind.UNSIMULATED, entry
    if not _ORIGIN.match(entry):
        if entry.startswith("/"):
            return EntryKind.ABSOLUTE, entry
        return (EntryKind.UNSIMULATED if "$" in entry else EntryKind.RELATIVE), entry
    rest = _ORIGIN.sub("", entry, count=1)
    if "$" in rest:
        return EntryKind.UNSIMULATED, entry
    parts: list[str] = []
    for part in [*origin.split("/"), *rest.split("/")]:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return EntryKind.OUTSIDE, entry
            parts.pop()
        else:
            parts.append(part)
    return EntryKind.FOLDER, "/".join(parts)


def starts_with_origin(entry: str) -> bool:
    """``$ORIGIN`` or ``${ORIGIN}`` as a whole token at the start of ``entry``."""
    return bool(_ORIGIN.match(entry))


def rpath_problems(path: str, label: str, entries: Sequence[str]) -> list[Finding]:
    """Entries that make glibc search a folder that depends on the current directory (empty and
    relative ones: errors) or on the machine (absolute ones: warnings), by the rules above."""
    findings = []
    for entry in entries:
        kind, _ = expand_entry(entry, "")
        if kind is EntryKind.EMPTY:
            findings.append(
                Finding(
                    FindingKind.EMPTY_RPATH_ENTRY,
                    Severity.ERROR,
                    path,
                    f"{label} {':'.join(entries)!r} has an empty entry: "
                    "glibc then searches the current directory",
                )
            )
        elif kind is EntryKind.RELATIVE:
            findings.append(
                Finding(
                    FindingKind.RELATIVE_RPATH_ENTRY,
                    Severity.ERROR,
                    path,
                    f"{label} entry {entry!r} is relative to the current directory, "
                    "not to the file; use $ORIGIN",
                )
            )
        elif kind is EntryKind.ABSOLUTE:
            findings.append(
                Finding(
                    FindingKind.ABSOLUTE_RPATH_ENTRY,
                    Severity.WARNING,
                    path,
                    f"{label} entry {entry!r} points outside the installed tree",
                )
            )
    return findings
