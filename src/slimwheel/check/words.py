"""How a lookup of check's report reads in words: one wording for the terminal table (``slimwheel check``)
and the HTML page (``show --html``); each caller escapes and marks it up its own way."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from slimwheel.check.model import Lookup

__all__ = ["lookup_words", "search_path_words", "versions_words"]


def _same(text: str) -> str:
    return text


def _plain(_style: str, text: str) -> str:
    return text


def search_path_words(rpath: Sequence[str], runpath: Sequence[str]) -> list[str]:
    """A file's search path as ``show``, ``check`` and the HTML page print it: "RPATH a:b", then
    "RUNPATH c", each only when the file has it."""
    words = [f"RPATH {':'.join(rpath)}"] if rpath else []
    return words + ([f"RUNPATH {':'.join(runpath)}"] if runpath else [])


def versions_words(versions: Sequence[str]) -> str:
    """Up to four versions, else the first two, the last and how many."""
    if len(versions) <= 4:
        return ", ".join(versions)
    return f"{versions[0]}, {versions[1]} ... {versions[-1]} ({len(versions)} releases)"


def lookup_words(
    lookup: Lookup,
    *,
    with_versions: bool,
    escape: Callable[[str], str] = _same,
    mark: Callable[[str, str], str] = _plain,
) -> str:
    """Where a DT_NEEDED was found (or not), from whom, through which search-path entry, and for which
    releases; ``escape`` is applied to names and paths, ``mark(style, text)`` to the words a terminal
    colours ("red": not found, "yellow": found only if loaded first)."""
    from slimwheel.analysis import Resolution

    if lookup.resolution is Resolution.UNRESOLVED:
        text = mark("red", "not found")
    elif lookup.path is not None:
        owner = lookup.distribution or "this wheel"
        if lookup.resolution is Resolution.REQUIREMENT and lookup.versions:
            # Only some of a requirement's versions were read: always say which ("requirement: torch 2.5.1").
            owner += " " + versions_words([pin.version for pin in lookup.versions])
            with_versions = False
        text = f"{escape(lookup.path)} ({lookup.resolution.value}: {escape(owner)})"
        if lookup.found_by is not None:
            text += f" via {lookup.found_by.tag.value} {escape(lookup.found_by.entry)}"
        elif lookup.resolution in (
            Resolution.REQUIREMENT,
            Resolution.NVIDIA_WHEEL,
            Resolution.WHEEL,
            Resolution.VENDORED,
        ):
            text += " " + mark("yellow", "only if loaded first")
    else:
        text = lookup.resolution.value
    if with_versions and lookup.versions:
        by: dict[str, list[str]] = {}
        for pin in lookup.versions:
            by.setdefault(pin.distribution, []).append(pin.version)
        text += " with " + escape("; ".join(f"{name} {versions_words(v)}" for name, v in by.items()))
    if lookup.loaded_by:
        text += f" when loaded by {escape(lookup.loaded_by[0])}"
    return text
