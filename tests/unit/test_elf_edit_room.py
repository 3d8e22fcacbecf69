"""Where slimwheel.elf.edit finds room for a new string in .dynstr: the first run of bytes that no
reference reads, found by walking the references in order, against the byte map it replaced."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimwheel.elf.edit import EditUnsupportedError, _unread_run


@dataclass
class _Strings:
    """What _unread_run reads of an ELF file: its .dynstr and the offsets that point into it."""

    dynstr: bytes
    name_offsets: array[int]
    references: list[tuple[int, tuple[str, int]]]


def _by_map(strings: _Strings, length: int, changed: list[tuple[int, int]]) -> int:
    """The byte map: 1 where some reference (or a changed range, or byte 0) reads the byte."""
    read = bytearray(len(strings.dynstr))
    read[0] = 1
    for value in [*strings.name_offsets, *(value for value, _ in strings.references)]:
        end = strings.dynstr.find(b"\0", value)
        if end >= 0:
            read[value : end + 1] = b"\1" * (end + 1 - value)
    for low, high in changed:
        read[low:high] = b"\1" * (high - low)
    return read.find(bytes(length))


@st.composite
def _tables(draw: st.DrawFn) -> tuple[_Strings, int, list[tuple[int, int]]]:
    words = draw(
        st.lists(st.binary(min_size=0, max_size=12).map(lambda b: b.replace(b"\0", b"x")), max_size=40)
    )
    dynstr = b"\0" + b"".join(word + b"\0" for word in words)
    starts = [0]
    for word in words:
        starts.append(starts[-1] + len(word) + 1)
    # References point at a string's start or inside it (tail merging); some strings nobody reads.
    anywhere = st.integers(min_value=0, max_value=len(dynstr) - 1)
    names = draw(st.lists(st.one_of(st.sampled_from(starts), anywhere), max_size=30))
    owned = draw(st.lists(st.sampled_from(starts), max_size=3))
    changed = [
        (low, low + size)
        for low, size in draw(st.lists(st.tuples(anywhere, st.integers(1, 6)), max_size=3))
        if low + size <= len(dynstr)
    ]
    strings = _Strings(dynstr, array("Q", sorted(names)), [(v, ("dyn", i)) for i, v in enumerate(owned)])
    return strings, draw(st.integers(min_value=1, max_value=16)), changed


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_unread_run_is_the_first_run_the_byte_map_finds(
    case: tuple[_Strings, int, list[tuple[int, int]]],
) -> None:
    strings, length, changed = case
    expected = _by_map(strings, length, changed)
    if expected < 0:
        with pytest.raises(EditUnsupportedError):
            _unread_run(strings, length, changed)  # type: ignore[arg-type]
    else:
        assert _unread_run(strings, length, changed) == expected  # type: ignore[arg-type]


def test_a_string_nobody_reads_is_room() -> None:
    dynstr = b"\0libold.so.1\0unused-string-of-some-length\0name\0"
    unused = dynstr.index(b"unused")
    strings = _Strings(dynstr, array("Q", [dynstr.index(b"name")]), [(1, ("dyn", 0))])
    assert _unread_run(strings, 10, []) == unused  # type: ignore[arg-type]
    assert _unread_run(strings, 10, [(unused, unused + 3)]) == unused + 3  # type: ignore[arg-type]
    with pytest.raises(EditUnsupportedError):
        _unread_run(strings, 40, [])  # type: ignore[arg-type]
