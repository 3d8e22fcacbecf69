"""The lines `slimwheel check` prints after its findings: the errors by cause, the warnings by kind."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

__all__ = ["summary_line"]


def summary_line(
    argv: Sequence[str], capsys: pytest.CaptureFixture[str], *, status: int, heading: str, starts: str
) -> str:
    """Run ``slimwheel`` with ``argv`` (it must exit ``status``), and return the one line of its output
    that starts with ``starts``, under the summary whose heading is ``heading``."""
    from slimwheel.cli import main

    assert main(list(argv)) == status
    out = capsys.readouterr().out
    assert heading in out, out
    (line,) = [line for line in out.splitlines() if line.startswith(starts)]
    return line
