"""The stand-in library verify loads in place of a driver library this machine lacks."""

from __future__ import annotations

import ctypes
import io
import platform
from pathlib import Path

import pytest

from slimwheel.elf import read_elf
from slimwheel.elf.stub import STAND_IN_STATUS, stand_in_library

NAMES = ("cuInit", "cuCtxGetDevice", "cuMemAlloc_v2")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("names", [NAMES, ()], ids=["functions", "none"])
def test_it_is_a_library_of_its_soname_exporting_the_names(machine: str, names: tuple[str, ...]) -> None:
    image = stand_in_library("libcuda.so.1", names, machine)
    facts = read_elf(io.BytesIO(image), path="libcuda.so.1", symbols=True)
    assert (facts.elf_type, facts.machine, facts.soname) == ("DYN", machine, "libcuda.so.1")
    assert sorted(symbol.name for symbol in facts.defined_symbols) == sorted(names)
    assert facts.needed == ()
    assert facts.undefined_symbols == ()


@pytest.mark.skipif(platform.machine() != "x86_64", reason="loads an x86-64 file")
def test_glibc_loads_it_and_each_function_returns_the_error(tmp_path: Path) -> None:
    # Another soname than the driver's: this process keeps what it loads, and a later dlopen of
    # libcuda.so.1 in it must not find the stand-in.
    path = tmp_path / "libstand-in-test.so.1"
    path.write_bytes(stand_in_library("libstand-in-test.so.1", [*NAMES, *NAMES[:1]], "x86_64"))
    library = ctypes.CDLL(str(path))
    assert [getattr(library, name)(0) for name in NAMES] == [STAND_IN_STATUS] * len(NAMES)
    with pytest.raises(AttributeError):
        library.cuLaunchKernel  # noqa: B018 - not exported: the lookup fails


def test_a_machine_it_cannot_make_one_for_is_refused() -> None:
    with pytest.raises(ValueError, match="no stand-in library for machine 'ppc64le'"):
        stand_in_library("libcuda.so.1", NAMES, "ppc64le")
