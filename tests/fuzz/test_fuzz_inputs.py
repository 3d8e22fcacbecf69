"""Property-based fuzzing: every command on hostile wheels and ELF files made from a real gcc-built
base keeps the promises of tests/support/fuzz_runner.py (exit 0/1/2, no traceback, one line on exit 2,
--json documents, the input untouched, nothing partial or invalid written, nothing left in TMPDIR,
within 30 s and 2 GiB).

Each test draws its inputs with a fixed seed and collects every distinct failure (instead of stopping
at the first), then fails once with all of them, each with its command, stderr and recipe (a recipe
pasted into tests/fuzz/regressions/ becomes a regression case). CI budget: 86 inputs, each through
7 commands, about 45 s of child processes (all of tests/fuzz: about 50 s with ``-n 2``);
``SLIMWHEEL_FUZZ_EXAMPLES=N`` for a long run (see conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from tests.fuzz.conftest import FuzzSession, assert_clean, budget
from tests.fuzz.strategies import (
    dist_info_recipes,
    elf_file_recipes,
    elf_in_wheel_recipes,
    kill_recipes,
    zip_recipes,
)

pytestmark = pytest.mark.fuzz


def test_zip_structure(fuzz: FuzzSession) -> None:
    log = fuzz.log("zip structure")

    @budget(24)
    @given(zip_recipes())
    def run(recipe: dict[str, Any]) -> None:
        fuzz.run(recipe, log)

    run()
    assert_clean(log)


def test_dist_info_and_members(fuzz: FuzzSession) -> None:
    log = fuzz.log("METADATA, WHEEL, RECORD and members")

    @budget(24)
    @given(dist_info_recipes())
    def run(recipe: dict[str, Any]) -> None:
        fuzz.run(recipe, log)

    run()
    assert_clean(log)


def test_elf_in_wheel(fuzz: FuzzSession) -> None:
    log = fuzz.log("ELF files in a wheel")

    @budget(16)
    @given(elf_in_wheel_recipes())
    def run(recipe: dict[str, Any]) -> None:
        fuzz.run(recipe, log)

    run()
    assert_clean(log)


def test_elf_file(fuzz: FuzzSession) -> None:
    log = fuzz.log("ELF files on their own")

    @budget(16)
    @given(elf_file_recipes())
    def run(recipe: dict[str, Any]) -> None:
        fuzz.run(recipe, log)

    run()
    assert_clean(log)


def test_killed_repair(fuzz: FuzzSession) -> None:
    log = fuzz.log("repair killed, then run again")

    @budget(6)
    @given(kill_recipes())
    def run(recipe: dict[str, Any]) -> None:
        fuzz.run(recipe, log)

    run()
    assert_clean(log)


@pytest.mark.fuzz_long
def test_verify_on_hostile_wheels(fuzz: FuzzSession) -> None:
    """verify (a venv and a pip install per input, about 1.5 s) on wheels that still open; in CI it
    runs on the regression cases only."""
    log = fuzz.log("verify")

    @budget(20)
    @given(dist_info_recipes())
    def run(recipe: dict[str, Any]) -> None:
        fuzz.run({**recipe, "commands": ["verify"]}, log, with_pip=True)

    run()
    assert_clean(log)
