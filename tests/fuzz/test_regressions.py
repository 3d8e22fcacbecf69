"""Every input that once failed, replayed on every run: tests/fuzz/regressions/**/*.json, one recipe
each (tests/support/fuzz_inputs.py), with every command, verify included, and the case's own
``expect`` (tests/support/fuzz_runner.py, check_expectations)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fuzz.conftest import REGRESSIONS, FuzzSession
from tests.support.fuzz_runner import describe

pytestmark = pytest.mark.fuzz

CASES = sorted(REGRESSIONS.rglob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    recipe: dict[str, Any] = json.loads(path.read_text())
    return recipe


@pytest.mark.parametrize("case", CASES, ids=[str(p.relative_to(REGRESSIONS).with_suffix("")) for p in CASES])
def test_regression(case: Path, fuzz: FuzzSession) -> None:
    recipe = _load(case)
    failures, observations = fuzz.replay(recipe)
    if failures:
        lines = [f"{case.name}: {recipe.get('why', '')}", describe(observations)]
        for failure in failures:
            lines.append(f"- {failure.command} {failure.prop}: {failure.detail}")
            if failure.argv:
                lines.append(f"  $ slimwheel {' '.join(failure.argv)}")
            lines += [f"  | {line}" for line in failure.stderr_tail.splitlines()]
        pytest.fail("\n".join(lines), pytrace=False)


def test_regression_cases_are_small() -> None:
    """Recipes, not binaries: each case stays well under 100 KB."""
    assert CASES
    for case in CASES:
        assert case.stat().st_size < 100_000, case
        recipe = _load(case)
        assert recipe["base"], case
