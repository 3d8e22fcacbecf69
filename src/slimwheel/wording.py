"""Wording shared by every report: how a list too long for one line is named in it."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["and_list", "some_of"]


def and_list(items: Sequence[str]) -> str:
    """``"a, b and c"``; ``"a"`` for one item."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def some_of(items: Sequence[str], named: int, *, noun: str = "", listed_in: str = "") -> str:
    """``items`` joined by commas, all of them when no more than one would be left out; else the first
    ``named`` and how many more (``"a, b, c and 25 more files"`` with ``noun="files"``), then where the
    rest are listed (``listed_in``, in parentheses) when the caller says. Counting one left-out item
    takes as much room as naming it."""
    if len(items) <= named + 1:
        return ", ".join(items)
    more = f" and {len(items) - named} more" + (f" {noun}" if noun else "")
    return ", ".join(items[:named]) + more + (f" ({listed_in})" if listed_in else "")
