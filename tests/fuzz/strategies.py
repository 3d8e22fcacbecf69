"""Hypothesis strategies that draw recipes (tests/support/fuzz_inputs.py): one to four edits of a real
base, from four families: the zip structure, the dist-info files (and other text members), ELF files
inside a wheel, and ELF files on their own. Every draw is plain JSON, so a failing one can be saved
as a regression case as it is.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.support.elfmutate import (
    DYNAMIC_TAGS,
    HEADER_FIELDS,
    SECTION_FIELDS,
    SEGMENT_FIELDS,
    VALUE_WORDS,
)
from tests.support.fuzz_inputs import WHEEL_BASES

__all__ = [
    "dist_info_recipes",
    "elf_file_recipes",
    "elf_in_wheel_recipes",
    "kill_recipes",
    "zip_recipes",
]

Recipe = dict[str, Any]
Op = dict[str, Any]

ROLES = ("@metadata", "@wheel", "@record", "@init", "@ext", "@lib", "@member:0", "@member:3", "@member:7")
ELF_BASES = ("elf:libcudss", "elf:ext_dynamic", "elf:ext_auditwheel", "elf:auditwheel_copy", "elf:ext_static")
INTERESTING = (0, 1, 2, 7, 8, 0x40, 0xFF, 0x100, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32)
INTERESTING_64 = (*INTERESTING, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)

# Bytes that break parsers: markup, bad encodings, separators, huge and deep text.
HOSTILE_TEXT: tuple[Any, ...] = (
    "",
    "[bold red]x[/]",
    "[/]",
    "\x00",
    "\r\n",
    "\t",
    " continuation",
    "$ORIGIN/../../..",
    ",,,",
    '"',
    "\u202e\u0301\U0001f600",
    {"latin1": "\xff\xfe\x80\xc3"},
    {"hex": "efbbbf"},
    {"hex": "c0af"},
    {"repeat": ["A", 1_000_000]},
    {"repeat": ["9", 5000]},
    {"repeat": ["(", 100_000]},
    {"random": [4096, 7]},
)
METADATA_LINES: tuple[Any, ...] = (
    "Requires-Dist: nvidia-cudss-cu13",
    "Requires-Dist: nvidia-cudss-cu13>=1.0.0.35,<2",
    "Requires-Dist: nvidia-cudss-cu13>=99",
    "Requires-Dist: nvidia-cudss-cu12==1.0.0.35",
    "Requires-Dist: nvidia-cublas==13.*; extra == 'x'",
    'Requires-Dist: nvidia-cudss-cu13 ; extra == "',
    "Requires-Dist: nvidia-cudss-cu13 (>=",
    "Requires-Dist: nvidia-unknown-cu13>=1",
    "Requires-Dist: cuda-toolkit[cublas,nvrtc]==13.*",
    "Requires-Dist: torch>=2",
    "Requires-Dist: [bold]",
    "Requires-Dist: ",
    {"concat": ["Requires-Dist: nvidia-cudss-cu13", {"repeat": [">=1.0,", 10_000]}, "<2"]},
    {"concat": ["Requires-Dist: nvidia-cudss-cu13[", {"repeat": ["a,", 5000]}, "b]"]},
    {"repeat": ["Requires-Dist: nvidia-cublas==13.*\n", 20_000]},
    "Name: other-project",
    "Version: 99.0",
    "Version: not a version",
    "Metadata-Version: 9.9",
    "Requires-Python: >=4",
    "Requires-Python: >=3.10,<3.0",
    "Provides-Extra: [x]",
)
WHEEL_LINES: tuple[Any, ...] = (
    "Root-Is-Purelib: maybe",
    "Root-Is-Purelib: true",
    "Wheel-Version: 99.0",
    "Wheel-Version: x",
    "Tag: py3-none-any",
    "Tag: ",
    "Tag: cp311-cp311-linux_x86_64",
    "Tag: py3-none-win_amd64",
    "Build: 1",
)
RECORD_HASHES = (
    "",
    "md5=1B2M2Y8AsgTpgAmY7PhCfg",
    "sha1=2jmj7l5rSw0yVb_vlWAYkK_YBwk",
    "sha256=AAAA",
    "sha256=",
    "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
    "SHA256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
    "sha256=***",
    "foo=bar",
    "=",
    "sha512=z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg_SpIdNs6c5H0NE8XYXysP-DGNKHfuwvY7kxvUdBeoGlODJ6-SfaPg",
)
RECORD_SIZES = ("", "-1", "0", "1e3", "0x10", " 12", "abc", "1_000", "99999999999999999999", "9" * 5000)
RECORD_LINES = (
    "../evil.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0",
    "/abs.py,,",
    "solver/missing.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0",
    "a,b,c,d,e",
    '"unterminated',
    "solver/__init__.py,,",
    "",
)
INIT_SOURCES: tuple[Any, ...] = (
    {"concat": ["x = ", {"repeat": ["-", 100_000]}, "1\n"]},
    {"concat": ["x = ", {"repeat": ["1+", 50_000]}, "1\n"]},
    {"concat": [{"repeat": ["(", 300]}, {"repeat": [")", 300]}, "\n"]},
    "def (:\n",
    '"""unterminated docstring\n',
    {"concat": ["# -*- coding: latin-1 -*-\n", {"latin1": "x = '\xe9'\n"}]},
    {"concat": ["# -*- coding: no-such-codec -*-\n", "x = 1\n"]},
    {"concat": [{"hex": "efbbbf"}, '"""doc"""\nfrom __future__ import annotations\n']},
    '"""doc"""; import os\n',
    "from __future__ import annotations; x = 1\n",
    "# slimwheel repair --embed-loader: load the NVIDIA libraries\nx = 1\n",
    "\x00\n",
    "x = 1\r\ny = 2\r\n",
)
MEMBER_NAMES: tuple[Any, ...] = (
    "../evil.py",
    "/abs.py",
    "solver\\evil.so",
    "solver/./x.py",
    "solver/../solver/x.py",
    "",
    "solver/",
    "SOLVER/_solver.so",
    "C:/x.py",
    "solver/[bold].so",
    "solver/\u00e9.so",
    "solver-1.0.dist-info/../x",
    "solver.libs/libcuda.so.1",
    "solver.libs/libcudss.so.1",
    "solver/libcudss-deadbeef.so.1.0.0",
    "other-2.0.dist-info/METADATA",
    "solver-1.0.data/scripts/x",
    "solver-1.0.data/purelib/solver/_solver2.so",
    {"concat": ["solver/", {"repeat": ["a", 4000]}, ".py"]},
    {"concat": ["solver/", {"repeat": ["d/", 2000]}, "x.so"]},
)
ZOO_FILES = (
    "not_elf",
    "truncated",
    "truncated_tiny",
    "big_endian",
    "stripped_sections",
    "libcuda",
    "relocatable",
    "empty_runpath",
    "relative_rpath",
    "ext_static",
    "libcudss",
)
MEMBER_CONTENTS: tuple[Any, ...] = (
    "",
    "INPUT(libfoo.so.1)\n",
    {"hex": "7f454c46"},
    {"random": [10_000, 3]},
    *({"zoo": name} for name in ZOO_FILES),
)
EXTRA_FIELDS: tuple[Any, ...] = (
    {"hex": "01000800ffffffffffffffff"},  # a ZIP64 extra whose value is all ones
    {"hex": "0100ffff"},  # a length that runs past the end
    {"hex": "01001800" + "00" * 24},  # ZIP64 with zero sizes
    {"hex": "5455050003" + "00" * 4},  # extended timestamp
    {"hex": "ffff0000"},
    {"hex": "01"},
    {"random": [300, 5]},
    {"repeat": [{"hex": "cafe0000"}, 1000]},
)
JUNK: tuple[Any, ...] = (
    {"hex": "504b0506" + "00" * 18},  # a fake end record
    {"hex": "504b0304"},
    {"hex": "504b0102"},
    {"random": [64, 9]},
    {"random": [5000, 11]},
    {"repeat": [{"hex": "00"}, 1000]},
)


NAME_BYTES: tuple[Any, ...] = (
    {"latin1": "solver/\xe9\xff.so"},
    "solver/__init__.py\x00.so",
    "",
    "solver/other.py",
    "../../etc/passwd",
    {"hex": "ff" * 8},
)
HEADER_TEXT = ("Name: solver", "Version: 1.0", "Metadata-Version: 2.1", "Wheel-Version: 1.0", "\n", ": ")
MANIFESTS: tuple[Any, ...] = (
    "",
    "{}",
    "[]",
    '{"schema": 1, "libraries": "x"}',
    '{"schema": 99}',
    '{"schema": 1, "libraries": [{}]}',
    {"concat": [{"repeat": ["[", 100_000]}, {"repeat": ["]", 100_000]}]},
    {"latin1": "\xff"},
    *HOSTILE_TEXT[:4],
)


def _value(wide: bool = True) -> st.SearchStrategy[int | str]:
    numbers = INTERESTING_64 if wide else INTERESTING
    return st.one_of(st.sampled_from(VALUE_WORDS), st.sampled_from(numbers), st.integers(0, 1 << 16))


def _permille() -> st.SearchStrategy[int]:
    return st.integers(0, 999)


@st.composite
def elf_edits(draw: st.DrawFn) -> dict[str, Any]:
    """One tests.support.elfmutate edit."""
    kind = draw(st.sampled_from(("header", "segment", "section", "dyn", "dyn", "dynstr", "flip", "truncate")))
    if kind == "header":
        return {"elf": kind, "field": draw(st.sampled_from(sorted(HEADER_FIELDS))), "value": draw(_value())}
    if kind in ("segment", "section"):
        fields = SEGMENT_FIELDS if kind == "segment" else SECTION_FIELDS
        return {
            "elf": kind,
            "index": draw(st.integers(0, 40)),
            "field": draw(st.sampled_from(sorted(fields))),
            "value": draw(_value()),
        }
    if kind == "dyn":
        return {
            "elf": kind,
            "tag": draw(st.sampled_from(sorted(DYNAMIC_TAGS))),
            "nth": draw(st.integers(0, 3)),
            "set": draw(st.sampled_from(("val", "val", "tag"))),
            "value": draw(_value()),
        }
    if kind == "dynstr":
        return {"elf": kind, "permille": draw(_permille())}
    if kind == "flip":
        return {
            "elf": kind,
            "permille": draw(_permille()),
            "xor": draw(st.integers(1, 255)),
            "count": draw(st.integers(1, 16)),
        }
    return {"elf": kind, "permille": draw(_permille())}


@st.composite
def _elf_op(draw: st.DrawFn, name: str | None) -> Op:
    edit = draw(elf_edits())
    op: Op = {"op": "elf", "edit": edit}
    if edit["elf"] == "dynstr":
        op["payload"] = draw(
            st.sampled_from(
                (
                    {"repeat": ["A", 64]},
                    {"repeat": [{"hex": "ff"}, 32]},
                    "$ORIGIN/../../../..:",
                    "[bold]",
                    "libcudss.so.1\x00",
                    {"hex": "00"},
                )
            )
        )
    if name is not None:
        op["name"] = name
        op["sync"] = draw(st.sampled_from((True, True, True, False)))
    return op


# What each zipforge.Entry field is set to (integers elsewhere: INTERESTING).
ENTRY_VALUES: dict[str, tuple[Any, ...]] = {
    "crc": INTERESTING,
    "local_crc": INTERESTING,
    "compress_size": INTERESTING,
    "local_compress_size": INTERESTING,
    "file_size": INTERESTING,
    "local_file_size": INTERESTING,
    "local_extra": EXTRA_FIELDS,
    "central_extra": EXTRA_FIELDS,
    "zip64": (True,),
    "external_attr": (0o120777 << 16, 0o40755 << 16, 0o20644 << 16, 0o104755 << 16, 0, 0xFFFFFFFF),
    "offset_delta": (-1, 1, -30, 30, 1000, -100_000, 1 << 20),
    "flags": (1, 8, 0x800, 0x41, 0xFFFF),
    "method": (0, 1, 8, 12, 14, 99, 0xFFFF),
    "version_needed": (0, 63, 0xFFFF),
    "name_bytes": NAME_BYTES,
    "local_name_bytes": NAME_BYTES,
    "comment": JUNK,
    "raw_data": ({"random": [100, 1]}, "", {"hex": "03"}, {"repeat": [{"hex": "00"}, 4096]}),
}
ARCHIVE_VALUES: dict[str, tuple[Any, ...]] = {
    **dict.fromkeys(
        ("count", "count_on_disk", "cd_size", "cd_offset", "comment_length", "disk"),
        (0, 1, 2, 5, 20, 100, 3000, 0xFFFF, 0xFFFFFFFF),
    ),
    "zip64_end": (True,),
    "prefix": JUNK,
    "comment": JUNK,
    "extra_end": JUNK,
}


@st.composite
def _entry_op(draw: st.DrawFn) -> Op:
    field = draw(st.sampled_from(sorted(ENTRY_VALUES)))
    return {
        "op": "entry",
        "name": draw(st.sampled_from(ROLES)),
        "field": field,
        "value": draw(st.sampled_from(ENTRY_VALUES[field])),
        "nth": draw(st.integers(0, 1)),
    }


@st.composite
def _duplicate_op(draw: st.DrawFn) -> Op:
    role = draw(st.sampled_from(ROLES))
    data = draw(st.sampled_from(({"member": role}, "", {"member": "@record"}, {"zoo": "not_elf"})))
    return {"op": "add", "name": role, "data": data, "sync": False}


@st.composite
def _archive_op(draw: st.DrawFn) -> Op:
    field = draw(st.sampled_from(sorted(ARCHIVE_VALUES)))
    return {"op": "archive", "field": field, "value": draw(st.sampled_from(ARCHIVE_VALUES[field]))}


@st.composite
def _bytes_op(draw: st.DrawFn) -> Op:
    action = draw(st.sampled_from(("truncate", "flip", "flip", "insert", "append")))
    op: Op = {"op": "bytes", "action": action, "permille": draw(_permille())}
    if action == "flip":
        op.update(xor=draw(st.integers(1, 255)), count=draw(st.integers(1, 8)))
    elif action in ("insert", "append"):
        op["data"] = draw(st.sampled_from(JUNK))
    return op


@st.composite
def _delete_or_rename_op(draw: st.DrawFn) -> Op:
    op: Op = {"op": "delete", "name": draw(st.sampled_from(ROLES)), "sync": draw(st.booleans())}
    if draw(st.booleans()):
        op.update(op="rename", to=draw(st.sampled_from(MEMBER_NAMES)))
    return op


def _zip_op() -> st.SearchStrategy[Op]:
    return st.one_of(
        _entry_op(), _entry_op(), _duplicate_op(), _archive_op(), _bytes_op(), _delete_or_rename_op()
    )


@st.composite
def _text_op(draw: st.DrawFn) -> Op:
    """A hostile line (or whole content) in METADATA or WHEEL."""
    role = draw(st.sampled_from(("@metadata", "@metadata", "@wheel")))
    sync = draw(st.sampled_from((True, True, True, False)))
    lines = METADATA_LINES if role == "@metadata" else WHEEL_LINES
    how = draw(st.sampled_from(("append", "append", "prepend", "set", "replace")))
    if how == "set":
        return {"op": "set", "name": role, "data": draw(st.sampled_from(HOSTILE_TEXT)), "sync": sync}
    if how == "replace":
        return {
            "op": "text",
            "name": role,
            "action": "replace",
            "old": draw(st.sampled_from(HEADER_TEXT)),
            "data": draw(st.sampled_from(HOSTILE_TEXT)),
            "sync": sync,
        }
    line = draw(st.one_of(st.sampled_from(lines), st.sampled_from(HOSTILE_TEXT)))
    return {"op": "text", "name": role, "action": how, "data": {"concat": [line, "\n"]}, "sync": sync}


@st.composite
def _record_op(draw: st.DrawFn) -> Op:
    action = draw(st.sampled_from(("hash", "size", "drop", "add", "set")))
    path = draw(st.sampled_from(("@init", "@ext", "@lib", "@metadata", "@wheel", "@record")))
    if action in ("hash", "size"):
        values = RECORD_HASHES if action == "hash" else RECORD_SIZES
        return {
            "op": "record",
            "action": "line",
            "path": path,
            "field": action,
            "value": draw(st.sampled_from(values)),
        }
    if action == "drop":
        return {"op": "record", "action": "drop", "path": path}
    if action == "add":
        return {"op": "record", "action": "add", "line": draw(st.sampled_from(RECORD_LINES))}
    return {"op": "record", "action": "set", "data": draw(st.sampled_from(HOSTILE_TEXT))}


@st.composite
def _content_op(draw: st.DrawFn) -> Op:
    """__init__.py, slimwheel.json or a member that should be ELF, replaced by something hostile."""
    sync = draw(st.sampled_from((True, True, True, False)))
    what = draw(st.sampled_from(("init", "manifest", "member", "member")))
    if what == "init":
        return {"op": "set", "name": "@init", "data": draw(st.sampled_from(INIT_SOURCES)), "sync": sync}
    if what == "manifest":
        return {"op": "set", "name": "@manifest", "data": draw(st.sampled_from(MANIFESTS)), "sync": sync}
    return {
        "op": "set",
        "name": draw(
            st.sampled_from(("@ext", "@lib", "@init", "solver/extra.so", "solver.libs/libcuda.so.1"))
        ),
        "data": draw(st.sampled_from(MEMBER_CONTENTS)),
        "method": draw(st.sampled_from((8, 8, 0))),
        "sync": sync,
    }


def _dist_info_op() -> st.SearchStrategy[Op]:
    return st.one_of(_text_op(), _text_op(), _record_op(), _record_op(), _content_op())


def _recipe(draw: st.DrawFn, bases: tuple[str, ...], ops: st.SearchStrategy[Op], most: int) -> Recipe:
    return {"base": draw(st.sampled_from(bases)), "ops": draw(st.lists(ops, min_size=1, max_size=most))}


@st.composite
def zip_recipes(draw: st.DrawFn) -> Recipe:
    """The zip structure: header fields that lie, names, extra fields, ZIP64, duplicates, end records,
    truncation and flipped bytes."""
    return _recipe(draw, WHEEL_BASES, _zip_op(), 3)


@st.composite
def dist_info_recipes(draw: st.DrawFn) -> Recipe:
    """METADATA, WHEEL, RECORD, slimwheel.json, __init__.py and member contents: hostile lines, huge
    fields, bad encodings, members that are not what their names say."""
    return _recipe(draw, WHEEL_BASES, _dist_info_op(), 3)


@st.composite
def elf_in_wheel_recipes(draw: st.DrawFn) -> Recipe:
    """ELF edits of the extension module or the vendored copy, RECORD kept in step (mostly)."""
    name = draw(st.sampled_from(("@ext", "@lib")))
    return _recipe(draw, WHEEL_BASES, _elf_op(name), 4)


@st.composite
def elf_file_recipes(draw: st.DrawFn) -> Recipe:
    """One ELF file given on its own (show and check read it; repair must refuse it)."""
    return _recipe(draw, ELF_BASES, _elf_op(None), 4)


@st.composite
def kill_recipes(draw: st.DrawFn) -> Recipe:
    """``repair`` killed after 0 to 300 ms, on a wheel with a 20 MB stored member (so the kill can
    land while the output is written), then run again."""
    return {
        "base": draw(st.sampled_from(("solver-auditwheel", "solver-plain"))),
        "ops": [
            {"op": "set", "name": "solver/data.bin", "data": {"random": [20_000_000, 1]}, "method": 0},
        ],
        "kill_after_ms": draw(st.integers(0, 300)),
    }
