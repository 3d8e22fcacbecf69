"""The fuzz harness itself: the bases pass, the fork server behaves like the console script, and the
checks catch what they are meant to catch (so a green fuzz run means something)."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest

from tests.fuzz.conftest import FuzzSession
from tests.support.fuzz_inputs import WHEEL_BASES, apply_recipe
from tests.support.fuzz_runner import (
    COMMANDS,
    Command,
    Limits,
    Observation,
    RunResult,
    SubprocessRunner,
    check_wheel_file,
    describe,
    exercise,
    judge,
)
from tests.support.zipforge import Entry, entries_from_zip, write_zip

pytestmark = pytest.mark.fuzz


@pytest.mark.parametrize("base", [*WHEEL_BASES, "elf:libcudss", "elf:ext_dynamic"])
def test_every_base_keeps_every_promise(base: str, fuzz: FuzzSession) -> None:
    failures, observations = exercise(
        {"base": base}, fuzz.base, fuzz.runner, fuzz.scratch / "sanity", with_pip=base == "solver-auditwheel"
    )
    assert not failures, describe(observations)
    codes = {o.command.key: o.result.rc for o in observations}
    if base.startswith("elf:"):
        assert codes["show"] == 0
        assert codes["repair"] == 2  # not a wheel
    else:
        assert codes["show"] == codes["repair"] == codes["repair-json-broken-embed"] == 0
        # The fat wheels bundle a copy NVIDIA's wheel provides; the repaired one resolves.
        assert codes["check"] == (0 if base == "solver-repaired" else 1)


def _normalised(text: str, *paths: Path) -> str:
    for path in paths:
        text = text.replace(str(path), "<path>")
    return re.sub(r"\d+\.\d+ s", "<s>", text)


@pytest.mark.parametrize(
    "recipe",
    [
        {"base": "solver-auditwheel"},
        {"base": "solver-plain", "ops": [{"op": "bytes", "action": "truncate", "permille": 500}]},
        {
            "base": "elf:libcudss",
            "ops": [{"op": "elf", "edit": {"elf": "header", "field": "e_shoff", "value": "size"}}],
        },
    ],
    ids=["base", "truncated", "elf-shoff"],
)
def test_fork_server_runs_commands_as_the_console_script_does(
    recipe: dict[str, object], fuzz: FuzzSession, tmp_path: Path
) -> None:
    """Same exit status, stdout and stderr from a forked child as from ``python -m slimwheel``."""
    chosen = [c for c in COMMANDS if c.key in ("show", "check-json", "repair")]
    direct = SubprocessRunner(Limits(timeout=60), fuzz.src)
    for index, command in enumerate(chosen):
        answers = []
        # Names of one length: rich wraps lines at 160 columns, paths included.
        for name, runner in (("fork", fuzz.runner), ("subp", direct)):
            folder = tmp_path / f"{name}{index}"
            (folder / "cwd").mkdir(parents=True)
            (folder / "tmp").mkdir()
            path = apply_recipe(recipe, fuzz.base, folder / "input")
            values = {"{input}": str(path), "{out}": str(folder / "out"), "{catalog}": str(fuzz.base.catalog)}
            argv = [values.get(arg, arg) for arg in command.args]
            env = {**fuzz.base.environment, "TMPDIR": str(folder / "tmp")}
            result = runner.run(argv, cwd=folder / "cwd", env=env, files=folder)
            answers.append(
                (result.rc, _normalised(result.stdout, folder), _normalised(result.stderr, folder))
            )
        assert answers[0] == answers[1], command.key


def _wheel(tmp_path: Path, entries: list[Entry], name: str = "w-1.0-py3-none-any.whl") -> Path:
    path = tmp_path / name
    path.write_bytes(write_zip(entries))
    return path


def _good_entries(fuzz: FuzzSession) -> list[Entry]:
    return entries_from_zip(fuzz.base.wheels["solver-auditwheel"].read_bytes())


def test_the_output_check_accepts_a_good_wheel_and_finds_a_bad_one(fuzz: FuzzSession, tmp_path: Path) -> None:
    assert check_wheel_file(fuzz.base.wheels["solver-repaired"]) == []
    assert check_wheel_file(_wheel(tmp_path, _good_entries(fuzz))) == []

    def broken(change: str) -> list[str]:
        entries = _good_entries(fuzz)
        init = next(e for e in entries if e.name == "solver/__init__.py")
        record = next(e for e in entries if e.name.endswith("RECORD"))
        assert isinstance(record.content, bytes)
        lines = record.content.decode().splitlines()
        if change == "crc":
            init.crc = 1
        elif change == "content":
            init.content = b"changed\n"
        elif change == "md5":
            lines = [re.sub(r"^(solver/__init__\.py),sha256=[^,]*", r"\1,md5=x", line) for line in lines]
        elif change == "missing":
            lines = [line for line in lines if not line.startswith("solver/__init__.py,")]
        elif change == "extra":
            lines.append("solver/gone.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0")
        elif change == "duplicate":
            entries.append(Entry(init.name, init.content))
        record.content = ("\n".join(lines) + "\n").encode()
        return check_wheel_file(_wheel(tmp_path, entries, f"{change}-1.0-py3-none-any.whl"))

    assert "bad CRC" in " ".join(broken("crc"))
    assert "does not match" in " ".join(broken("content"))
    assert "'md5'" in " ".join(broken("md5"))
    assert "not in RECORD" in " ".join(broken("missing"))
    assert "not in the wheel" in " ".join(broken("extra"))
    assert "duplicate" in " ".join(broken("duplicate"))


def _observation(command: Command, rc: int, stderr: str = "", stdout: str = "") -> Observation:
    return Observation(command, ("x",), RunResult(rc, False, 0.1, 1, stdout, stderr), ())


def test_the_judge_names_each_broken_promise(tmp_path: Path) -> None:
    show = next(c for c in COMMANDS if c.key == "show-json")
    path = tmp_path / "input.whl"
    path.write_bytes(b"x")
    for sub in ("tmp", "cwd"):
        (tmp_path / sub).mkdir()
    from tests.support.fuzz_runner import _snapshot

    before = _snapshot(path)

    def props(observation: Observation) -> set[str]:
        return {failure.prop for failure in judge(observation, tmp_path, before, path)}

    assert props(_observation(show, 2, "slimwheel show: error: x.whl: not a zip archive\n")) == set()
    assert props(_observation(show, 3)) == {"exit-code"}
    assert props(
        _observation(show, 1, "Traceback (most recent call last):\n", '{"schema": "slimwheel.show/1"}')
    ) == {"traceback"}
    assert props(_observation(show, 2, "slimwheel show: warning: w\nslimwheel show: error: e\n")) == {
        "one-line"
    }
    assert props(_observation(show, 0, "", "not json")) == {"json"}
    (tmp_path / "tmp" / "left").write_text("x")
    path.write_bytes(b"y")
    assert props(_observation(show, 0, "", '{"schema": "slimwheel.show/1"}')) == {"temp", "input"}


def test_a_zip_bomb_costs_the_test_nothing(fuzz: FuzzSession, tmp_path: Path) -> None:
    """A 1.5 GiB member is streamed into a 1.5 MB wheel; zipfile reads it back as 1.5 GiB."""
    recipe = {
        "base": "solver-plain",
        "ops": [{"op": "set", "name": "solver/big.bin", "data": {"zeros": 3 << 29}, "sync": False}],
    }
    path = apply_recipe(recipe, fuzz.base, tmp_path)
    assert path.stat().st_size < 4 << 20
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as archive:
        assert archive.getinfo("solver/big.bin").file_size == 3 << 29
