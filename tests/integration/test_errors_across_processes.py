"""Errors raised in analysis worker processes come back whole: one line and exit 2, never a broken
process pool (InputError's constructor takes the path and the reason, which plain pickling loses)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from slimwheel.analysis import analyse_wheel
from slimwheel.catalog.model import Catalog
from slimwheel.errors import ElfError, IndexUnavailableError, InputError, WheelError
from slimwheel.wheel import Wheel
from tests.support.fixtures_elf import ElfZoo
from tests.support.zipforge import Entry, entries_from_zip


@pytest.mark.parametrize(
    "error",
    [
        WheelError("a.whl", "bad CRC", hint="download it again"),
        ElfError("pkg/_ext.so", "not an ELF file"),
        InputError("x", "unreadable"),
        IndexUnavailableError("http://127.0.0.1:1/simple/", "connection refused"),
    ],
)
def test_errors_survive_pickling(error: Exception) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error)
    assert back.__dict__ == error.__dict__


def test_a_bad_crc_in_a_worker_is_a_wheel_error(elf_zoo: ElfZoo, tmp_path: Path) -> None:
    from tests.support.solver import fat_solver_wheel
    from tests.support.zipforge import write_zip

    good = fat_solver_wheel(tmp_path / "in", elf_zoo, "auditwheel")
    entries: list[Entry] = entries_from_zip(good.read_bytes())
    for entry in entries:
        if entry.name == "solver/_solver.so":
            entry.crc = entry.local_crc = 0x12345678
    bad = tmp_path / good.name
    bad.write_bytes(write_zip(entries))
    with Wheel.open(bad) as wheel, pytest.raises(WheelError, match=r"solver/_solver\.so"):
        analyse_wheel(wheel, Catalog(()), jobs=2, parallel_bytes=1)
