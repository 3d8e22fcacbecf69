"""``imports_from``: what a wheel's files import from one NVIDIA library, read from gcc-built files."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.catalog.exports import imports_from
from slimwheel.elf import read_elf_file
from tests.support.elfbuild import compile_shared, find_tool

pytestmark = pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")


def test_a_vendored_copy_is_named_by_its_own_soname_in_the_version_needs(tmp_path: Path) -> None:
    """auditwheel's copy (SONAME libnvToolsExt-847d78f2.so.1 in torch 1.13) keeps the library's
    version node: the consumer's version need names the copy's file and the library's version. Its
    imports count for the library once the copy's name is given."""
    copy = compile_shared(
        tmp_path / "lib" / "libcufoo-1a2b3c4d.so.1",
        {"foo.c": "int foo_mark(void) { return 1; }\nint foo_other(void) { return 2; }\n"},
        soname="libcufoo-1a2b3c4d.so.1",
        version_nodes={"libcufoo.so.1": ("foo_mark", "foo_other")},
    )
    consumer = compile_shared(
        tmp_path / "ext" / "_ext.so",
        {"ext.c": "int foo_mark(void);\nint PyInit__ext(void) { return foo_mark(); }\n"},
        link=[copy],
    )
    facts = read_elf_file(consumer)
    (symbol,) = [s for s in facts.undefined_symbols if s.name == "foo_mark"]
    assert (symbol.version, symbol.library) == ("libcufoo.so.1", "libcufoo-1a2b3c4d.so.1")
    found = imports_from([facts], "libcufoo.so.1", needed_as=["libcufoo-1a2b3c4d.so.1"])
    assert found.versioned == {("foo_mark", "libcufoo.so.1")}
    assert not found.unversioned
    # Without the copy's name the file does not even need the library.
    assert len(imports_from([facts], "libcufoo.so.1")) == 0


def test_weak_references_and_other_libraries_do_not_count(tmp_path: Path) -> None:
    library = compile_shared(
        tmp_path / "lib" / "libcufoo.so.1",
        {"foo.c": "int foo_mark(void) { return 1; }\n"},
        soname="libcufoo.so.1",
        version_nodes={"libcufoo.so.1": ("foo_mark",)},
    )
    other = compile_shared(
        tmp_path / "other" / "libother.so.2",
        {"other.c": "int other_call(void) { return 3; }\n"},
        soname="libother.so.2",
    )
    consumer = compile_shared(
        tmp_path / "ext" / "_ext.so",
        {
            "ext.c": (
                "int foo_mark(void);\nint other_call(void);\n"
                "extern int maybe_there(void) __attribute__((weak));\n"
                "int PyInit__ext(void) { return foo_mark() + other_call() + (maybe_there ? 1 : 0); }\n"
            )
        },
        link=[library, other],
    )
    found = imports_from([read_elf_file(consumer)], "libcufoo.so.1")
    # other_call is unversioned: a file that binds versions of libcufoo takes only those from it.
    assert found.versioned == {("foo_mark", "libcufoo.so.1")}
    assert found.unversioned == frozenset()
