"""glibc's reading of RPATH/RUNPATH entries for a file inside site-packages (slimwheel.ldso)."""

from __future__ import annotations

import pytest

from slimwheel.ldso import EntryKind, expand_entry, rpath_problems, starts_with_origin


@pytest.mark.parametrize(
    ("entry", "origin", "kind", "folder"),
    [
        ("$ORIGIN", "pkg", EntryKind.FOLDER, "pkg"),
        ("${ORIGIN}", "pkg", EntryKind.FOLDER, "pkg"),
        ("$ORIGIN/../nvidia/cu13/lib", "pkg", EntryKind.FOLDER, "nvidia/cu13/lib"),
        ("${ORIGIN}/../../nvidia/cu13/lib", "pkg/sub", EntryKind.FOLDER, "nvidia/cu13/lib"),
        ("$ORIGIN/./lib//x/..", "pkg", EntryKind.FOLDER, "pkg/lib"),
        ("$ORIGIN/..", "pkg", EntryKind.FOLDER, ""),  # site-packages itself
        ("$ORIGIN/../..", "pkg", EntryKind.OUTSIDE, "$ORIGIN/../.."),  # leaves site-packages
        ("$ORIGINAL/lib", "pkg", EntryKind.UNSIMULATED, "$ORIGINAL/lib"),  # no token glibc expands
        ("$LIB/x", "pkg", EntryKind.UNSIMULATED, "$LIB/x"),
        ("${PLATFORM}/x", "pkg", EntryKind.UNSIMULATED, "${PLATFORM}/x"),
        ("$ORIGIN/$LIB", "pkg", EntryKind.UNSIMULATED, "$ORIGIN/$LIB"),
        ("/usr/local/cuda/lib64", "pkg", EntryKind.ABSOLUTE, "/usr/local/cuda/lib64"),
        ("lib", "pkg", EntryKind.RELATIVE, "lib"),
        ("", "pkg", EntryKind.EMPTY, ""),
    ],
)
def test_entries(entry: str, origin: str, kind: EntryKind, folder: str) -> None:
    assert expand_entry(entry, origin) == (kind, folder)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [("$ORIGIN", True), ("${ORIGIN}/x", True), ("$ORIGINAL", False), ("x/$ORIGIN", False)],
)
def test_origin_is_a_whole_token_at_the_start(entry: str, expected: bool) -> None:
    assert starts_with_origin(entry) is expected


def test_problems_are_read_by_the_same_rules() -> None:
    kinds = [
        f.kind.value for f in rpath_problems("p.so", "RPATH", ["", "lib", "/abs", "$ORIGINAL", "$ORIGIN"])
    ]
    assert kinds == ["empty-rpath-entry", "relative-rpath-entry", "absolute-rpath-entry"]
