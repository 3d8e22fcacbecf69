"""`import slimwheel` and the CLI's start pull in nothing heavy; commands import what they need."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("httpx", "rich", "packaging", "slimwheel.analysis", "slimwheel.catalog", "slimwheel.index", "isal")


def _modules_after(statement: str) -> set[str]:
    probe = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(output.split())


def test_import_slimwheel_is_light() -> None:
    loaded = _modules_after("import slimwheel")
    assert not {m for m in loaded if m.startswith(HEAVY)}


def test_the_cli_parser_is_light() -> None:
    loaded = _modules_after("from slimwheel.cli.main import build_parser; build_parser()")
    assert not {m for m in loaded if m.startswith(HEAVY)}
