"""glibc's search for a DT_NEEDED, written once: what an RPATH/RUNPATH entry means for an installed file.

``check`` simulates the search with it and ``repair`` rewrites entries by it, so the two never disagree
on what ``$ORIGIN`` is (``$ORIGINAL/lib`` is not ``$ORIGIN`` followed by ``AL/lib``: glibc does not
expand it, and neither do we).
"""

from __future__ import annotations

import enum
import itertools
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from slimwheel.findings import Finding, FindingKind, Severity

__all__ = [
    "EntryKind",
    "EntryTag",
    "FolderMemo",
    "LoadedObject",
    "SearchFolder",
    "entry_folders",
    "expand_entry",
    "inherited_folders",
    "rpath_entry",
    "rpath_problems",
    "search_folders",
    "soname_carriers",
    "starts_with_origin",
]

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
    # A file of the wheel's data scheme lands outside site-packages (``../../../lib``): its entries
    # are followed within that tree, never above its top nor into site-packages by a guessed name.
    steps = [part for part in origin.split("/") if part not in ("", ".")]
    floor = len(steps) - len(list(itertools.dropwhile(lambda part: part == "..", steps)))
    parts: list[str] = []
    for part in [*steps, *rest.split("/")]:
        if part in ("", "."):
            continue
        if part == ".." and len(parts) >= floor:
            if len(parts) == floor:
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
    relative ones: errors) or on the machine (absolute ones: warnings), by the rules above. An entry
    listed again is reported once (TensorFlow 2.20's RUNPATHs repeat theirs up to 56 times)."""
    findings = []
    for entry in dict.fromkeys(entries):
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


# -- the search for one DT_NEEDED ------------------------------------------------------------------


class EntryTag(enum.Enum):
    RPATH = "RPATH"
    RUNPATH = "RUNPATH"

    # Members are singletons compared by identity: hashed the same way, in C (check hashes search
    # folders, which hold a tag, over a million times on a PyTorch wheel; Enum's own hash is Python).
    __hash__ = object.__hash__


@dataclass(frozen=True)
class SearchFolder:
    """One folder the loader searches, and the entry that names it."""

    folder: str  # relative to site-packages; "" is site-packages itself
    entry: str  # the entry as written
    tag: EntryTag
    owner: str  # installed path of the object whose entry it is: the file itself or one of its loaders


class LoadedObject(Protocol):
    """What the search needs of an ELF file: where it is installed and its search entries."""

    @property
    def installed_path(self) -> str: ...  # relative to site-packages

    @property
    def rpath(self) -> tuple[str, ...]: ...

    @property
    def runpath(self) -> tuple[str, ...]: ...


# Folders found for (installed path, tag, entries): a caller walking many loader chains over the same
# files passes one, so that each file's entries are expanded once.
FolderMemo = dict[tuple[str, EntryTag, tuple[str, ...]], tuple[SearchFolder, ...]]


def entry_folders(
    owner: LoadedObject, entries: Sequence[str], tag: EntryTag, memo: FolderMemo | None = None
) -> tuple[SearchFolder, ...]:
    """The folders inside site-packages that ``owner``'s entries name (the rest are not searched here:
    see ``expand_entry``)."""
    key = (owner.installed_path, tag, tuple(entries))
    if memo is not None and key in memo:
        return memo[key]
    origin = posixpath.dirname(owner.installed_path)
    found = []
    for entry in entries:
        kind, folder = expand_entry(entry, origin)
        if kind is EntryKind.FOLDER:
            found.append(SearchFolder(folder, entry, tag, owner.installed_path))
    if memo is not None:
        memo[key] = tuple(found)
    return tuple(found)


def inherited_folders(
    chain: Sequence[LoadedObject], memo: FolderMemo | None = None
) -> tuple[SearchFolder, ...]:
    """What a loader chain (nearest loader first) passes down: the RPATH of each loader that has no
    RUNPATH (glibc ignores DT_RPATH in an object that has DT_RUNPATH, and RUNPATH is never passed on)."""
    return tuple(
        folder
        for owner in chain
        if not owner.runpath
        for folder in entry_folders(owner, owner.rpath, EntryTag.RPATH, memo)
    )


def search_folders(
    obj: LoadedObject, chain: Sequence[LoadedObject], memo: FolderMemo | None = None
) -> tuple[SearchFolder, ...]:
    """glibc's order for a DT_NEEDED of ``obj`` loaded through ``chain``: the RPATH of the object and up
    its loader chain (unless the object has RUNPATH), then its RUNPATH. (LD_LIBRARY_PATH, which comes
    between the two, and the system folders after them, are the host's, not the wheel's.) ``memo``:
    see :data:`FolderMemo`."""
    folders: list[SearchFolder] = []
    if not obj.runpath:
        folders += entry_folders(obj, obj.rpath, EntryTag.RPATH, memo)
        folders += inherited_folders(chain, memo)
    folders += entry_folders(obj, obj.runpath, EntryTag.RUNPATH, memo)
    return tuple(folders)


def rpath_entry(file_path: str, folder: str) -> str:
    """``$ORIGIN``-relative path from an installed file to a folder (both relative to site-packages,
    which is ``""``: open3d 0.20's ``$ORIGIN/../`` from ``open3d/``)."""
    relative = posixpath.relpath(folder or ".", posixpath.dirname(file_path) or ".")
    return "$ORIGIN" if relative == "." else f"$ORIGIN/{relative}"


def soname_carriers(files: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """Per soname, the file of a wheel (installed path, DT_SONAME) glibc reuses for it once that file
    is loaded: of several files with one soname, the first by path named as the soname (the name a
    search finds), else the first by path."""
    carriers: dict[str, str] = {}
    for path, soname in sorted((path, soname) for path, soname in files if soname):
        named = posixpath.basename(path) == soname
        if soname not in carriers or (named and posixpath.basename(carriers[soname]) != soname):
            carriers[soname] = path
    return carriers
