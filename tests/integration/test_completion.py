"""Shell completion through argcomplete, for real: the console script asked the way a shell asks
(argcomplete's variables), and the bash code ``slimwheel completion bash`` prints, sourced in a real
bash that then completes a command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SLIMWHEEL = Path(sys.executable).parent / "slimwheel"


def _ask(line: str, tmp_path: Path) -> list[str]:
    """The completions argcomplete gives for ``line`` (the cursor at its end), as the shell gets them."""
    answer = tmp_path / "answer"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    process = subprocess.run(
        [str(SLIMWHEEL)], check=False, env=env, capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 0, process.stderr
    text = answer.read_text()
    return sorted(c.strip() for c in text.split("\n")) if text else []


def test_commands_and_options_complete(tmp_path: Path) -> None:
    assert _ask("slimwheel rep", tmp_path) == ["repair"]
    assert {"publish", "promote"} <= set(_ask("slimwheel p", tmp_path))
    assert "--allow-broken" in _ask("slimwheel repair --allow", tmp_path)
    assert {"bash", "zsh"} <= set(_ask("slimwheel completion ", tmp_path))  # with the options


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_printed_bash_code_completes_in_a_real_bash(tmp_path: Path) -> None:
    code = subprocess.run(
        [str(SLIMWHEEL), "completion", "bash"], capture_output=True, text=True, check=True
    ).stdout
    script = tmp_path / "complete.bash"
    script.write_text(code)
    probe = f"""
source {script}
spec=$(complete -p slimwheel)
fn=${{spec#*-F }}; fn=${{fn%% *}}
COMP_WORDS=(slimwheel verif); COMP_CWORD=1; COMP_LINE="slimwheel verif"; COMP_POINT=${{#COMP_LINE}}
$fn slimwheel verif slimwheel
echo "${{COMPREPLY[@]}}"
"""
    env = {**os.environ, "PATH": f"{SLIMWHEEL.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    process = subprocess.run(
        ["bash", "-c", probe], check=False, capture_output=True, text=True, env=env, timeout=60
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.split() == ["verify"], process.stdout + process.stderr


def test_completion_without_argcomplete_is_one_line(tmp_path: Path) -> None:
    """Where argcomplete is missing: one line naming what to install, exit 2 (a real interpreter that
    cannot import it: an import blocker placed first on its path)."""
    blocker = tmp_path / "argcomplete"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('not installed here')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.run(
        [str(SLIMWHEEL), "completion", "bash"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert process.returncode == 2
    assert process.stderr.count("\n") == 1, process.stderr
    assert "slimwheel[completion]" in process.stderr
