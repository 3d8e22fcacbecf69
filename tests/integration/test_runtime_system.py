"""The loader's own readers of system facts, checked against the tools and files they stand in for:
DT_SONAME through program headers (pyelftools as the oracle), glibc's ld.so.cache (``ldconfig -p``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from slimwheel.runtime._system import elf_identity, ld_cache_entries, read_soname, soname_files
from tests.support.fixtures_elf import ElfZoo


def _oracle_soname(path: Path) -> str | None:
    with path.open("rb") as stream:
        for section in ELFFile(stream).iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_SONAME":
                        return str(tag.soname)  # type: ignore[attr-defined]  # set per tag kind
    return None


def test_read_soname_agrees_with_pyelftools(elf_zoo: ElfZoo) -> None:
    for path in (
        elf_zoo.libcudss,
        elf_zoo.libcublas,
        elf_zoo.auditwheel_copy,
        elf_zoo.renamed_copy,
        elf_zoo.libcuda,
    ):
        assert read_soname(str(path)) == _oracle_soname(path), path
    assert read_soname(str(elf_zoo.auditwheel_copy)) == "libcudss-1a2b3c4d.so.1.0.0"
    # Program headers only: a file without section headers, a big-endian one, a 32-bit one.
    assert read_soname(str(elf_zoo.stripped_sections)) == "libcudss.so.1"
    assert read_soname(str(elf_zoo.big_endian)) == "libcudss.so.1"
    if elf_zoo.lib32 is not None:
        assert read_soname(str(elf_zoo.lib32)) == "libcudss.so.1"
        assert elf_identity(str(elf_zoo.lib32)) != elf_identity(str(elf_zoo.libcudss))
    assert read_soname(str(elf_zoo.ext_dynamic)) is None  # an extension module has no SONAME
    for broken in (elf_zoo.not_elf, elf_zoo.truncated_tiny, elf_zoo.truncated):
        assert read_soname(str(broken)) in (None, "libcudss.so.1")  # never raises


def test_names_pointing_at_one_file_collapse_to_its_soname(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    real = tmp_path / "libcudss.so.1.0.0"
    shutil.copy(elf_zoo.libcudss, real)
    (tmp_path / "libcudss.so.1").symlink_to(real.name)
    (tmp_path / "libcudss.so").symlink_to("libcudss.so.1")
    paths = [str(tmp_path / n) for n in ("libcudss.so", "libcudss.so.1.0.0", "libcudss.so.1")]
    assert soname_files(paths) == [(str(tmp_path / "libcudss.so.1"), "libcudss.so.1")]


def test_ld_cache_matches_ldconfig() -> None:
    ldconfig = shutil.which("ldconfig") or ("/sbin/ldconfig" if Path("/sbin/ldconfig").exists() else None)
    if ldconfig is None or not Path("/etc/ld.so.cache").exists():
        pytest.skip("needs ldconfig and /etc/ld.so.cache")
    listed = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=True).stdout
    expected = set(re.findall(r"^\s+(\S+) \(.*\) => (\S+)$", listed, re.M))
    assert expected
    assert set(ld_cache_entries()) == expected
