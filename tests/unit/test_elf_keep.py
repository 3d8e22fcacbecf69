"""An ELF file's middle segments (.dynamic, notes) are kept by a member view from its first bytes."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import BinaryIO, cast

import pytest
from elftools.elf.elffile import ELFFile

from slimwheel.elf import known_table_ranges, ranges_to_keep, read_elf, read_elf_file, table_ranges
from slimwheel.wheel import MissingRangeError, Wheel
from tests.support.fixtures_elf import ElfZoo
from tests.support.wheels import make_wheel


def test_ranges_cover_dynamic_notes_and_section_headers(elf_zoo: ElfZoo) -> None:
    data = elf_zoo.libcudss.read_bytes()
    facts = read_elf_file(elf_zoo.libcudss)
    ranges = ranges_to_keep(data[:4096])
    dynamic = facts.section(".dynamic")
    note = facts.section(".note.gnu.build-id")
    assert dynamic is not None
    assert note is not None
    for section in (dynamic, note):
        assert any(
            start <= section.offset and section.offset + section.size <= start + n for start, n in ranges
        )
    assert ranges_to_keep(b"not an ELF file" * 10) == []
    assert ranges_to_keep(data[:40]) == []


def test_a_view_with_small_ends_reads_elf_through_the_kept_segments(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    data = elf_zoo.libcudss.read_bytes()
    wheel_path = make_wheel(
        tmp_path, "lib", "1.0", {"lib/libcudss.so.1": data}, compression=zipfile.ZIP_DEFLATED
    )
    facts = read_elf_file(elf_zoo.libcudss, symbols=False)
    dynamic = facts.section(".dynamic")
    assert dynamic is not None
    head = tail = 1024
    assert head < dynamic.offset < len(data) - tail  # .dynamic sits in the middle here
    with Wheel.open(wheel_path) as wheel:
        with (
            wheel.member_view("lib/libcudss.so.1", head=head, tail=tail) as view,
            pytest.raises(MissingRangeError),
        ):
            read_elf(cast(BinaryIO, view), path="x", symbols=False)
        # Tail big enough for the section headers; .dynamic and the notes come from the program headers.
        with wheel.member_view("lib/libcudss.so.1", head=4096, tail=4096, keep=ranges_to_keep) as view:
            kept = read_elf(cast(BinaryIO, view), path="x", symbols=False)
    assert (kept.soname, kept.needed, kept.rpath, kept.build_id) == (
        facts.soname,
        facts.needed,
        facts.rpath,
        facts.build_id,
    )


def test_a_program_header_table_past_the_prefix_is_kept(elf_zoo: ElfZoo) -> None:
    """After an appended segment (patchelf's, or slimwheel's own edit) the program headers sit at the
    end of the file: from a prefix that does not reach them, their range is kept all the same."""
    data = elf_zoo.ext_dynamic.read_bytes()
    with elf_zoo.ext_dynamic.open("rb") as stream:
        header = ELFFile(stream).header
        phdrs = (header.e_phoff, header.e_phentsize * header.e_phnum)
        shdrs = (header.e_shoff, header.e_shentsize * header.e_shnum)
    assert sorted(ranges_to_keep(data[: header.e_phoff])) == sorted([shdrs, phdrs])
    assert phdrs not in ranges_to_keep(data)  # read from the prefix instead: what they point to


def test_table_ranges_are_the_symbol_string_version_note_and_dynamic_sections(elf_zoo: ElfZoo) -> None:
    kinds = {"SHT_SYMTAB", "SHT_STRTAB", "SHT_DYNAMIC", "SHT_NOTE", "SHT_DYNSYM"}
    kinds |= {"SHT_GNU_verdef", "SHT_GNU_verneed", "SHT_GNU_versym"}
    with elf_zoo.ext_dynamic.open("rb") as stream:
        expected = [
            (s["sh_offset"], s["sh_size"])
            for s in ELFFile(stream).iter_sections()
            if s["sh_type"] in kinds and s["sh_size"]
        ]
        assert table_ranges(stream) == expected
    assert len(expected) >= 6


def test_known_table_ranges_are_what_table_ranges_reads(elf_zoo: ElfZoo) -> None:
    with elf_zoo.ext_dynamic.open("rb") as stream:
        read = table_ranges(stream)
        sections = {(s["sh_offset"], s["sh_size"]): s.name for s in ELFFile(stream).iter_sections()}
    facts = read_elf_file(elf_zoo.ext_dynamic)
    assert known_table_ranges(facts.sections) == read
    # Without the symbol table: .symtab and .strtab go, every other table stays.
    dynamic_only = known_table_ranges(facts.sections, symbol_table=False)
    assert {sections[r] for r in read} - {sections[r] for r in dynamic_only} == {".symtab", ".strtab"}
    assert {sections[r] for r in dynamic_only} >= {".dynsym", ".dynstr", ".dynamic", ".shstrtab"}


def test_table_ranges_can_add_the_read_only_data_sections_up_to_a_size(elf_zoo: ElfZoo) -> None:
    """For a pass that must also keep .rodata before the section names can be read."""
    with elf_zoo.ext_dynamic.open("rb") as stream:
        sections = list(ELFFile(stream).iter_sections())
        read_only = [
            (s["sh_offset"], s["sh_size"])
            for s in sections
            if s["sh_type"] == "SHT_PROGBITS" and s["sh_flags"] & 0x7 == 0x2 and s["sh_size"]
        ]
        names = {(s["sh_offset"], s["sh_size"]): s.name for s in sections}
        tables = table_ranges(stream)
        assert table_ranges(stream, read_only_data=1 << 30) == [*tables, *read_only]
        biggest = max(size for _, size in read_only)
        smaller = table_ranges(stream, read_only_data=biggest - 1)
    assert {names[r] for r in read_only} >= {".eh_frame"}
    assert smaller == [*tables, *[r for r in read_only if r[1] < biggest]]
