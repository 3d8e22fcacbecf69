"""glibc's reading of RPATH/RUNPATH entries for a file inside site-packages (slimwheel.ldso)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from slimwheel.ldso import (
    EntryKind,
    EntryTag,
    FolderMemo,
    expand_entry,
    inherited_folders,
    rpath_problems,
    search_folders,
    soname_carriers,
    starts_with_origin,
)


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
        # A file of the wheel's data scheme, in <prefix>/lib: followed within the prefix, not above it.
        ("$ORIGIN", "../../../lib", EntryKind.FOLDER, "../../../lib"),
        ("$ORIGIN/../bin", "../../../lib", EntryKind.FOLDER, "../../../bin"),
        (
            "$ORIGIN/../lib/python3.11/site-packages/nvidia/cu13/lib",
            "../../../lib",
            EntryKind.FOLDER,
            "../../../lib/python3.11/site-packages/nvidia/cu13/lib",
        ),  # a guess no lookup matches
        ("$ORIGIN/../..", "../../../lib", EntryKind.OUTSIDE, "$ORIGIN/../.."),
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


@dataclass(frozen=True)
class _Object:
    installed_path: str
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()


def _folders(obj: _Object, *chain: _Object) -> list[tuple[str, str, str]]:
    return [(f.folder, f.tag.value, f.owner) for f in search_folders(obj, chain)]


EXT = _Object("pkg/_ext.so", rpath=("$ORIGIN/../nvidia/cu13/lib",))
LIB = _Object("pkg/lib/libhelper.so", rpath=("$ORIGIN",))


def test_rpath_is_inherited_through_the_loader_chain() -> None:
    """cuDSS finding cuBLAS through the extension's DT_RPATH: the loaded library's own RPATH first,
    then each loader's, nearest first."""
    assert _folders(LIB, EXT) == [
        ("pkg/lib", "RPATH", "pkg/lib/libhelper.so"),
        ("nvidia/cu13/lib", "RPATH", "pkg/_ext.so"),
    ]


def test_runpath_is_not_inherited() -> None:
    loader = _Object("pkg/_ext.so", runpath=("$ORIGIN/../nvidia/cu13/lib",))
    assert _folders(LIB, loader) == [("pkg/lib", "RPATH", "pkg/lib/libhelper.so")]
    assert inherited_folders([loader]) == ()


def test_an_object_with_runpath_searches_neither_its_rpath_nor_its_loaders() -> None:
    both = _Object("pkg/lib/libboth.so", rpath=("$ORIGIN/rpath",), runpath=("$ORIGIN/runpath",))
    assert _folders(both, EXT) == [("pkg/lib/runpath", "RUNPATH", "pkg/lib/libboth.so")]


def test_a_loader_with_runpath_passes_nothing_down_but_those_above_it_do() -> None:
    middle = _Object("pkg/lib/libmid.so", rpath=("$ORIGIN/ignored",), runpath=("$ORIGIN",))
    assert _folders(LIB, middle, EXT) == [
        ("pkg/lib", "RPATH", "pkg/lib/libhelper.so"),
        ("nvidia/cu13/lib", "RPATH", "pkg/_ext.so"),
    ]


def test_entries_outside_site_packages_are_not_searched_here() -> None:
    obj = _Object("pkg/_ext.so", rpath=("$ORIGIN/../../lib", "/usr/lib", "$ORIGIN/../torch/lib"))
    assert _folders(obj) == [("torch/lib", "RPATH", "pkg/_ext.so")]


def test_a_memo_answers_as_the_search_without_it() -> None:
    """check passes one memo through every loader chain of a wheel: each file's entries are expanded
    once, and every chain gets the folders it would get without it, RPATH and RUNPATH apart."""
    both = _Object("pkg/lib/libboth.so", rpath=("$ORIGIN/rpath",), runpath=("$ORIGIN/runpath",))
    middle = _Object("pkg/lib/libmid.so", rpath=("$ORIGIN/ignored",), runpath=("$ORIGIN",))
    cases = [(LIB, (EXT,)), (both, (EXT,)), (LIB, (middle, EXT)), (EXT, ()), (middle, (LIB, EXT)), (LIB, ())]
    memo: FolderMemo = {}
    for obj, chain in cases * 2:
        assert search_folders(obj, chain, memo) == search_folders(obj, chain)
        assert inherited_folders(chain, memo) == inherited_folders(chain)
    assert {key[:2] for key in memo} == {
        ("pkg/_ext.so", EntryTag.RPATH),
        ("pkg/_ext.so", EntryTag.RUNPATH),
        ("pkg/lib/libhelper.so", EntryTag.RPATH),
        ("pkg/lib/libhelper.so", EntryTag.RUNPATH),
        ("pkg/lib/libboth.so", EntryTag.RUNPATH),
        ("pkg/lib/libmid.so", EntryTag.RUNPATH),
    }


def test_the_file_of_a_soname_is_the_one_named_so_else_the_first_by_path() -> None:
    """check's simulation and verify's second loads read the same rule: UCX ships libucs.so,
    libucs.so.0 and libucs.so.0.0.0, all with DT_SONAME libucs.so.0; a search finds libucs.so.0."""
    files = [
        ("libucx/lib/libucs.so.0.0.0", "libucs.so.0"),
        ("libucx/lib/libucs.so", "libucs.so.0"),
        ("libucx/lib/libucs.so.0", "libucs.so.0"),
        ("b/libplugin.so", "libplugin.so.2"),
        ("a/libplugin-copy.so", "libplugin.so.2"),
        ("pkg/_ext.so", None),
    ]
    assert soname_carriers(files) == {
        "libucs.so.0": "libucx/lib/libucs.so.0",
        "libplugin.so.2": "a/libplugin-copy.so",
    }
