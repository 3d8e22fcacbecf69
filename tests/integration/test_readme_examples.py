"""The README's examples that need no network run as written (with ``--offline``, answered from the
shipped catalog) and say what the README says they say."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from slimwheel.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.DOTALL)


def _commands(block: str) -> list[str]:
    """One command per line, continuation lines joined, comments and prompts dropped."""
    joined = block.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        text = line.split("#", 1)[0].strip().removeprefix("$ ")
        if text.startswith("slimwheel "):
            commands.append(text)
    return commands


def _run(command: str, cwd: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``slimwheel ...`` with ``--offline`` added, and ``> FILE`` honoured, run in ``cwd``."""
    words = shlex.split(command)
    target = None
    if ">" in words:
        at = words.index(">")
        target, words = cwd / words[at + 1], words[:at]
    arguments = [cwd / w if w.startswith("docs/") else w for w in words[1:]]
    code = main([*map(str, arguments), "--offline"])
    captured = capsys.readouterr()
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(captured.out)
    return code, captured.out, captured.err


def test_the_plan_markdown_example_prints_what_the_readme_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (block,) = [b for b in _blocks() if "--markdown" in b and "\n|" in b]
    first, *shown = block.strip().splitlines()
    (command,) = _commands(first)
    code, out, err = _run(command, tmp_path, capsys)
    assert code == 0, err
    assert out.strip().splitlines() == shown


def test_the_ci_example_passes_on_day_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = [b for b in _blocks() if "--expect" in b and "--strict" in b]
    save, check = _commands(block)
    code, _, err = _run(save, tmp_path, capsys)
    assert code == 0, err
    code, _, err = _run(check, tmp_path, capsys)
    assert code == 0, err  # nothing changed since the answer was saved, and no target lacks a wheel
    assert (tmp_path / "docs" / "nvidia-wheels.json").read_text().startswith("{")
