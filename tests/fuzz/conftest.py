"""The fuzz suite's session: the base inputs, a runner (fork server), the budget.

Knobs (environment variables):

- ``SLIMWHEEL_FUZZ_EXAMPLES=N``: the long budget: N examples per property-based test instead of the
  small CI numbers; it also runs ``verify`` on every fuzzed wheel, runs the tests marked ``fuzz_long``,
  a 60 s limit per command, and saves each newly failing input as a regression case under
  tests/fuzz/regressions/found/ (``SLIMWHEEL_FUZZ_SAVE=DIR`` elsewhere).
- ``SLIMWHEEL_FUZZ_SEED=N``: draw with this seed instead of hypothesis' fixed derandomized one.
- ``SLIMWHEEL_FUZZ_RUNNER=subprocess``: run ``python -m slimwheel`` per command (slower) instead of
  forking from a server that has slimwheel imported.
- ``SLIMWHEEL_FUZZ_SRC=DIR``: fuzz the slimwheel in DIR (another checkout's ``src/``, say the last
  release's) instead of the installed one; the base inputs are still built with the installed one.
- ``SLIMWHEEL_FUZZ_TIMEOUT`` (seconds, default 30) and ``SLIMWHEEL_FUZZ_MEMORY`` (MiB, default 2048):
  the limits of each command.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, seed, settings

from tests.support.elfbuild import find_tool
from tests.support.fuzz_inputs import FuzzBase, build_fuzz_base
from tests.support.fuzz_runner import Failure, FailureLog, Limits, Observation, Runner, exercise, make_runner

REGRESSIONS = Path(__file__).parent / "regressions"
LONG = bool(os.environ.get("SLIMWHEEL_FUZZ_EXAMPLES"))
F = TypeVar("F", bound=Callable[..., Any])


def examples(default: int) -> int:
    """This test's number of examples: ``default`` in CI, ``SLIMWHEEL_FUZZ_EXAMPLES`` in a long run."""
    return int(os.environ.get("SLIMWHEEL_FUZZ_EXAMPLES") or default)


def budget(default: int) -> Callable[[F], F]:
    """Hypothesis settings for one fuzz test: a fixed seed, no database, no shrinking (every example
    costs several child processes; failures are collected, not raised, so nothing would shrink)."""
    chosen = os.environ.get("SLIMWHEEL_FUZZ_SEED")
    configured = settings(
        max_examples=examples(default),
        derandomize=chosen is None,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )

    def decorate(function: F) -> F:
        decorated = configured(function)
        return seed(int(chosen))(decorated) if chosen is not None else decorated

    return decorate


@dataclass
class FuzzSession:
    base: FuzzBase
    runner: Runner
    scratch: Path
    with_pip: bool
    save_to: Path | None
    src: Path | None  # SLIMWHEEL_FUZZ_SRC: the slimwheel under test, when not the installed one

    def log(self, test: str) -> FailureLog:
        return FailureLog(test, self.save_to)

    def run(self, recipe: dict[str, Any], log: FailureLog, *, with_pip: bool | None = None) -> None:
        """One example: exercise every command on the input, collect what failed (never raises, so
        that hypothesis goes on to the next example)."""
        started = time.monotonic()
        pip = self.with_pip if with_pip is None else with_pip
        failures, observations = exercise(
            recipe, self.base, self.runner, self.scratch / "example", with_pip=pip
        )
        log.seconds += time.monotonic() - started
        log.add(recipe, failures, observations)

    def replay(self, recipe: dict[str, Any]) -> tuple[list[Failure], list[Observation]]:
        return exercise(recipe, self.base, self.runner, self.scratch / "replay", with_pip=True)


def assert_clean(log: FailureLog) -> None:
    print(f"{log.test}: {log.examples} inputs in {log.seconds:.1f} s; exit statuses: {log.coverage()}")
    if log.seen:
        pytest.fail(log.summary(), pytrace=False)


@pytest.fixture(scope="session")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzSession]:
    missing = [tool for tool in ("gcc", "patchelf", "objcopy") if find_tool(tool) is None]
    if missing:
        pytest.skip(f"building the fuzz base needs {', '.join(missing)}")
    root = tmp_path_factory.mktemp("fuzz")
    base = build_fuzz_base(root / "base")
    limits = Limits(
        memory=int(os.environ.get("SLIMWHEEL_FUZZ_MEMORY") or 2048) << 20,
        timeout=float(os.environ.get("SLIMWHEEL_FUZZ_TIMEOUT") or (60 if LONG else 30)),
    )
    given = os.environ.get("SLIMWHEEL_FUZZ_SRC")
    src = Path(given).resolve() if given else None
    runner = make_runner(os.environ.get("SLIMWHEEL_FUZZ_RUNNER") or "fork", limits, root / "runner", src)
    save = os.environ.get("SLIMWHEEL_FUZZ_SAVE")
    save_to = Path(save) if save else (REGRESSIONS / "found" if LONG else None)
    try:
        yield FuzzSession(base, runner, root / "scratch", LONG, save_to, src)
    finally:
        runner.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="long fuzz budget only: set SLIMWHEEL_FUZZ_EXAMPLES=N")
    for item in items:
        if "fuzz_long" in item.keywords and not LONG:
            item.add_marker(skip)
