"""Run every slimwheel command on one hostile input, in a child process under a memory and a time limit,
and judge what it did against the promises every command keeps (README, "Exit codes"):

- ``exit-code``: 0, 1 or 2, and not killed (by a signal, or by the time limit: ``time``);
- ``traceback``: none on stderr;
- ``one-line``: exit 2 prints exactly one line on stderr, ``slimwheel CMD: error: ...`` (or argparse's
  ``error: slimwheel CMD: ...``);
- ``json``: ``--json`` prints one ``slimwheel.CMD/1`` document whenever it exits 0 or 1;
- ``input``: the input's bytes (sha256) are unchanged, and nothing appeared beside it;
- ``output``: after ``repair -w``, the folder holds nothing (nothing hidden either: no ``.tmp``, no
  staging folder) or exactly one wheel that ``python -m zipfile -t`` accepts, without duplicate names,
  whose RECORD lists every member once with a sha256-or-better hash and size that match; one wheel
  when it exits 0, none when it exits 2 or refuses (1 without ``--allow-broken``);
- ``dry-run``: ``repair --dry-run`` writes nothing under ``-w``;
- ``temp``: the private ``TMPDIR`` and the working folder are empty afterwards;
- ``expect``: what a regression case adds (see ``check_expectations``).

Commands run through a fork server (tests/support/fuzz_forkserver.py: a child per command, forked
from a process that has slimwheel imported; ~10x cheaper than a fresh interpreter) or, with
``SLIMWHEEL_FUZZ_RUNNER=subprocess``, as ``python -m slimwheel`` (what the console script runs).
Both give each command its own process group, ``RLIMIT_AS``, a timeout that kills the group, an
empty working folder and ``TMPDIR``.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tests.support.fuzz_inputs import FuzzBase, apply_recipe, input_kind, recipe_digest

__all__ = [
    "COMMANDS",
    "Command",
    "Failure",
    "FailureLog",
    "ForkServer",
    "Limits",
    "Observation",
    "Runner",
    "SubprocessRunner",
    "check_expectations",
    "check_wheel_file",
    "describe",
    "exercise",
    "exercise_kill",
    "judge",
    "make_runner",
    "select_commands",
]

_FORKSERVER = Path(__file__).with_name("fuzz_forkserver.py")
_OFFLINE = ("--offline", "--no-index", "--isolated")
_ERROR_LINE = re.compile(r"^(slimwheel [a-z-]+: error: |error: slimwheel)")
_TRACEBACK = "Traceback (most recent call last)"
_WEAK_HASHES = frozenset({"md5", "sha1"})
_RECORD_HASHES = frozenset(
    {
        "sha224",
        "sha256",
        "sha384",
        "sha512",
        "sha3_224",
        "sha3_256",
        "sha3_384",
        "sha3_512",
        "blake2b",
        "blake2s",
    }
)


@dataclass(frozen=True)
class Limits:
    memory: int = 2 << 30  # RLIMIT_AS of each command
    timeout: float = 30.0  # seconds, then the command's process group is killed


@dataclass(frozen=True)
class Command:
    """One command line; ``{input}``, ``{out}``, ``{catalog}`` and ``{empty}`` are filled in per run."""

    key: str
    args: tuple[str, ...]
    kinds: frozenset[str] = frozenset({"wheel", "elf", "fifo"})
    json: str | None = None  # the schema's command name when it prints --json
    writes: bool = False  # repair -w that may write
    dry_run: bool = False
    allow_broken: bool = False
    pip: bool = False  # verify: creates a venv and runs pip (about 1.5 s)

    @property
    def name(self) -> str:
        return self.args[0]


_CAT = ("--catalog", "{catalog}")
_REPAIR = ("repair", "{input}", "-w", "{out}", *_CAT, *_OFFLINE, "--isolated-environment")
COMMANDS: tuple[Command, ...] = (
    Command("show", ("show", "{input}", *_CAT)),
    Command("show-json", ("show", "{input}", "--json", "--verify", *_CAT), json="show"),
    Command("check", ("check", "{input}", *_CAT, *_OFFLINE)),
    Command("check-json", ("check", "{input}", "--json", *_CAT, *_OFFLINE), json="check"),
    Command("repair", _REPAIR, writes=True),
    Command("repair-dry-json", (*_REPAIR, "--dry-run", "--json"), json="repair", dry_run=True),
    Command(
        "repair-json-broken-embed",
        (*_REPAIR, "--json", "--allow-broken", "--embed-loader"),
        json="repair",
        writes=True,
        allow_broken=True,
    ),
    Command("verify", ("verify", "{input}", "--find-links", "{empty}", *_CAT), pip=True),
)


@dataclass(frozen=True)
class RunResult:
    rc: int
    timed_out: bool
    seconds: float
    max_rss_kib: int
    stdout: str
    stderr: str


class Runner(Protocol):
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        files: Path,
        timeout: float | None = None,
    ) -> RunResult: ...

    def close(self) -> None: ...


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _limit_memory(memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _wait(pid: int, timeout: float) -> tuple[int, bool, int]:
    """Wait for ``pid`` (a process group leader) at most ``timeout`` s, then kill its group."""
    timed_out = False
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        if not ready:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
    finally:
        os.close(pidfd)
    _, status, usage = os.wait4(pid, 0)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    return os.waitstatus_to_exitcode(status), timed_out, usage.ru_maxrss


class SubprocessRunner:
    """``python -m slimwheel ARGV``: a fresh interpreter per command (what the console script does)."""

    def __init__(self, limits: Limits, src: Path | None = None) -> None:
        self.limits = limits
        self.src = src

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        files: Path,
        timeout: float | None = None,
    ) -> RunResult:
        started = time.monotonic()
        memory = self.limits.memory
        with (files / "stdout").open("wb") as out, (files / "stderr").open("wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "slimwheel", *argv],
                cwd=cwd,
                env=env if self.src is None else {**env, "PYTHONPATH": str(self.src)},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=lambda: _limit_memory(memory),  # noqa: PLW1509 (no threads start in the child)
            )
            rc, timed_out, rss = _wait(process.pid, self.limits.timeout if timeout is None else timeout)
            process.returncode = rc
        return RunResult(
            rc,
            timed_out,
            round(time.monotonic() - started, 3),
            rss,
            _read_text(files / "stdout"),
            _read_text(files / "stderr"),
        )

    def close(self) -> None:
        return None


class ForkServer:
    """Children forked from a server that has slimwheel imported (see fuzz_forkserver.py)."""

    def __init__(self, limits: Limits, log: Path, src: Path | None = None) -> None:
        self.limits = limits
        self.log = log
        self.src = src
        self.process: subprocess.Popen[str] | None = None
        self.slimwheel = ""  # where the server imported slimwheel from

    def _start(self) -> subprocess.Popen[str]:
        with self.log.open("a") as log:
            process = subprocess.Popen(
                [sys.executable, "-I", str(_FORKSERVER), *(["--src", str(self.src)] if self.src else [])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=self.log.parent,
                start_new_session=True,
            )
        ready = self._read_line(process, 60)
        if ready is None or "ready" not in json.loads(ready):
            process.kill()
            raise RuntimeError(f"the fuzz fork server did not start; see {self.log}")
        self.slimwheel = str(json.loads(ready)["slimwheel"])
        return process

    @staticmethod
    def _read_line(process: subprocess.Popen[str], timeout: float) -> str | None:
        stdout = process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], timeout)
        if not ready:
            return None
        line = stdout.readline()
        return line or None

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        files: Path,
        timeout: float | None = None,
    ) -> RunResult:
        limit = self.limits.timeout if timeout is None else timeout
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        request = {
            "argv": list(argv),
            "cwd": str(cwd),
            "env": env,
            "stdout": str(files / "stdout"),
            "stderr": str(files / "stderr"),
            "memory": self.limits.memory,
            "timeout": limit,
        }
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        line = self._read_line(self.process, limit + 60)
        if line is None:
            self.close()
            raise RuntimeError(f"the fuzz fork server stopped answering; see {self.log}")
        answer: dict[str, Any] = json.loads(line)
        return RunResult(
            int(answer["rc"]),
            bool(answer["timed_out"]),
            float(answer["seconds"]),
            int(answer["max_rss_kib"]),
            _read_text(files / "stdout"),
            _read_text(files / "stderr"),
        )

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def make_runner(kind: str, limits: Limits, scratch: Path, src: Path | None = None) -> Runner:
    """``src``: run slimwheel from this folder (another checkout's ``src/``) instead of the installed one."""
    if kind == "subprocess":
        return SubprocessRunner(limits, src)
    if kind != "fork":
        raise ValueError(f"SLIMWHEEL_FUZZ_RUNNER={kind!r}: expected fork or subprocess")
    scratch.mkdir(parents=True, exist_ok=True)
    return ForkServer(limits, scratch / "forkserver.log", src)


# -- what one run did, and what it should have done ------------------------------------------------


@dataclass(frozen=True)
class Observation:
    command: Command
    argv: tuple[str, ...]
    result: RunResult
    written: tuple[str, ...]  # what -w holds afterwards (relative paths, hidden ones too)


@dataclass(frozen=True)
class Failure:
    command: str  # the Command key
    prop: str
    detail: str
    argv: tuple[str, ...] = ()
    stderr_tail: str = ""

    def signature(self) -> str:
        """What groups the same bug across commands and inputs: the property, and what went wrong
        (the last stderr line for a crash or a bad exit, else the detail), paths, quotes and numbers
        blurred."""
        crash = self.prop in ("traceback", "one-line", "exit-code")
        basis = (self.stderr_tail.strip().splitlines() or [self.detail])[-1] if crash else self.detail
        basis = re.sub(r"'[^']*'|\"[^\"]*\"|/\S+|\d+", "_", basis)
        return f"{self.prop}: {basis[:160]}"


def _tail(text: str, lines: int = 4, width: int = 400) -> str:
    kept = text.strip().splitlines()[-lines:]
    return "\n".join(line if len(line) <= width else line[:width] + "..." for line in kept)


def _snapshot(path: Path) -> tuple[str, tuple[str, ...]]:
    """What the input is (its sha256, or 'fifo') and what its folder holds."""
    mode = path.lstat().st_mode
    if stat.S_ISFIFO(mode):
        what = "fifo"
    elif stat.S_ISREG(mode):
        digest = hashlib.sha256()
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
        what = digest.hexdigest()
    else:
        what = f"mode {mode:o}"
    return what, tuple(sorted(child.name for child in path.parent.iterdir()))


def _listing(folder: Path) -> tuple[str, ...]:
    if not folder.exists():
        return ()
    found = []
    for parent, dirs, files in os.walk(folder):
        found += [str((Path(parent) / name).relative_to(folder)) for name in (*dirs, *files)]
    return tuple(sorted(found))


def check_wheel_file(path: Path) -> list[str]:
    """Problems of a written wheel: zip integrity (``python -m zipfile -t``), duplicate names, RECORD."""
    problems: list[str] = []
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return [f"{path.name}: not a readable zip ({exc})"]
    with archive:
        try:
            bad = archive.testzip()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            return [f"{path.name}: zipfile -t fails ({exc})"]
        if bad is not None:
            return [f"{path.name}: zipfile -t fails: bad CRC in {bad!r}"]
        names = [info.filename for info in archive.infolist()]
        if len(set(names)) != len(names):
            problems.append(f"{path.name}: duplicate member names")
        records = [n for n in names if n.endswith(".dist-info/RECORD") and n.count("/") == 1]
        if len(records) != 1:
            return [*problems, f"{path.name}: {len(records)} RECORD files"]
        try:
            rows = list(csv.reader(io.StringIO(archive.read(records[0]).decode("utf-8"))))
        except (UnicodeDecodeError, csv.Error) as exc:
            return [*problems, f"{path.name}: RECORD unreadable ({exc})"]
        problems += _record_problems(archive, rows, records[0], path.name)
    return problems


def _record_problems(archive: zipfile.ZipFile, rows: list[list[str]], record: str, wheel: str) -> list[str]:
    problems = []
    listed: dict[str, list[str] | None] = {}
    for line in rows:
        if not line:
            continue
        if line[0] in listed:
            problems.append(f"{wheel}: RECORD lists {line[0]!r} twice")
        listed[line[0]] = line
    unsigned = {record, record + ".jws", record + ".p7s"}
    for info in archive.infolist():
        name = info.filename
        if name.endswith("/") or name in unsigned:
            continue
        row = listed.pop(name, None)
        if row is None:
            problems.append(f"{wheel}: {name!r} is not in RECORD")
            continue
        if len(row) != 3:
            problems.append(f"{wheel}: RECORD line for {name!r} has {len(row)} fields")
            continue
        algorithm, _, digest = row[1].partition("=")
        data = archive.read(info)
        if algorithm in _WEAK_HASHES or algorithm not in _RECORD_HASHES:
            problems.append(f"{wheel}: RECORD hashes {name!r} with {algorithm or 'nothing'!r}")
        else:
            actual = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()
            if actual != digest.rstrip("="):
                problems.append(f"{wheel}: RECORD's hash of {name!r} does not match its bytes")
        if row[2] != str(len(data)):
            problems.append(f"{wheel}: RECORD gives {name!r} size {row[2][:40]!r}, it has {len(data)} bytes")
    listed.pop(record, None)
    problems += [f"{wheel}: RECORD lists {name!r}, which is not in the wheel" for name in listed]
    return problems


def _status_problems(result: RunResult) -> Iterable[tuple[str, str]]:
    if result.timed_out:
        yield "time", f"still running after the time limit ({result.seconds:.0f} s): killed"
    elif result.rc < 0:
        yield "exit-code", f"killed by signal {-result.rc}"
    elif result.rc not in (0, 1, 2):
        yield "exit-code", f"exit status {result.rc}"
    if _TRACEBACK in result.stderr:
        yield "traceback", "a traceback on stderr"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.rc == 2 and not result.timed_out:
        if len(lines) != 1:
            yield "one-line", f"exit 2 with {len(lines)} lines on stderr"
        elif not _ERROR_LINE.match(lines[0]):
            yield "one-line", f"exit 2, but stderr is not an error line: {lines[0][:200]!r}"


def _json_problems(command: Command, result: RunResult) -> Iterable[tuple[str, str]]:
    if not command.json or result.timed_out or not (result.rc in (0, 1) or result.stdout.strip()):
        return
    try:
        document = json.loads(result.stdout)
    except ValueError as exc:
        yield "json", f"--json printed no JSON document ({exc}); stdout: {_tail(result.stdout, 2)!r}"
        return
    schema = document.get("schema") if isinstance(document, dict) else None
    if schema != f"slimwheel.{command.json}/1":
        yield "json", f"--json printed schema {schema!r}"


def _state_problems(
    folder: Path, before: tuple[str, tuple[str, ...]], input_path: Path
) -> Iterable[tuple[str, str]]:
    after = _snapshot(input_path)
    if after[0] != before[0]:
        yield "input", f"the input changed: {before[0][:12]} -> {after[0][:12]}"
    if after[1] != before[1]:
        yield "input", f"the input's folder changed: {sorted(set(after[1]) ^ set(before[1]))}"
    leftovers = [f"tmp/{name}" for name in _listing(folder / "tmp")]
    leftovers += [f"cwd/{name}" for name in _listing(folder / "cwd")]
    if leftovers:
        yield "temp", f"left behind: {', '.join(leftovers[:5])}"


def judge(
    observation: Observation, folder: Path, before: tuple[str, tuple[str, ...]], input_path: Path
) -> list[Failure]:
    """The generic properties of one run (see the module docstring)."""
    command, result = observation.command, observation.result
    found = [*_status_problems(result), *_json_problems(command, result)]
    found += _state_problems(folder, before, input_path)
    if command.dry_run and observation.written:
        found.append(("dry-run", f"--dry-run wrote {', '.join(observation.written[:5])}"))
    if command.writes and not result.timed_out:
        found += _output_problems(observation, folder / "wheelhouse")
    return [
        Failure(command.key, prop, detail, observation.argv, _tail(result.stderr)) for prop, detail in found
    ]


def _output_problems(observation: Observation, out: Path) -> Iterable[tuple[str, str]]:
    command, rc, written = observation.command, observation.result.rc, observation.written
    wheels = [
        name for name in written if name.endswith(".whl") and "/" not in name and not name.startswith(".")
    ]
    if len(written) > 1 or (written and not wheels):
        yield "output", f"-w holds more than one wheel, or something else: {', '.join(written[:6])}"
        return
    if rc == 0 and not wheels:
        yield "output", "exit 0, but no wheel was written"
    if rc == 2 and wheels:
        yield "output", f"exit 2, but {wheels[0]} was written"
    if rc == 1 and wheels and not command.allow_broken:
        yield "output", f"exit 1 without --allow-broken, but {wheels[0]} was written"
    for wheel in wheels:
        for problem in check_wheel_file(out / wheel):
            yield "output", f"exit {rc}: {problem}"


def check_expectations(recipe: dict[str, Any], observations: Sequence[Observation]) -> list[Failure]:
    """A regression case's own promises, beyond the generic ones. ``expect`` may hold:

    - ``exit``: {command: [codes]}: the exit statuses allowed;
    - ``mention``: {command: text}: stdout or stderr names it (a member path, say);
    - ``warn``: {command: text}: stderr names it;
    - ``forbid``: {command: text}: neither says it;
    - ``max_rss_mib``: {command: MiB}: peak resident memory;
    - ``same_verdict``: [commands]: they all refuse the input (exit 2), or none does.

    A command is a key (``repair-dry-json``), ``NAME*`` (every run of ``repair``), or ``*`` (all).
    """
    expect = recipe.get("expect") or {}
    failures: list[Failure] = []

    def matching(selector: str) -> list[Observation]:
        return [
            o
            for o in observations
            if selector in ("*", o.command.key)
            or (selector.endswith("*") and selector[:-1] == o.command.name)
        ]

    def fail(observation: Observation, detail: str) -> None:
        failures.append(
            Failure(
                observation.command.key, "expect", detail, observation.argv, _tail(observation.result.stderr)
            )
        )

    for selector, codes in (expect.get("exit") or {}).items():
        for observation in matching(selector):
            if observation.result.rc not in codes and not observation.result.timed_out:
                fail(observation, f"exit {observation.result.rc}, expected one of {codes}")
    for selector, text in (expect.get("mention") or {}).items():
        for observation in matching(selector):
            if text not in observation.result.stdout + observation.result.stderr:
                fail(observation, f"says nothing about {text!r} (exit {observation.result.rc})")
    for selector, text in (expect.get("warn") or {}).items():
        for observation in matching(selector):
            if text not in observation.result.stderr:
                fail(observation, f"names nothing about {text!r} on stderr (exit {observation.result.rc})")
    for selector, text in (expect.get("forbid") or {}).items():
        for observation in matching(selector):
            if text in observation.result.stdout + observation.result.stderr:
                fail(observation, f"says {text!r} (exit {observation.result.rc})")
    for selector, mib in (expect.get("max_rss_mib") or {}).items():
        for observation in matching(selector):
            used = observation.result.max_rss_kib // 1024
            if used > int(mib):
                fail(observation, f"peak memory {used} MiB, expected at most {mib} MiB")
    same = [o for selector in expect.get("same_verdict") or () for o in matching(selector)]
    refused = {o.command.key for o in same if o.result.rc == 2}
    if refused and len(refused) != len({o.command.key for o in same}):
        others = ", ".join(
            f"{o.command.key} exit {o.result.rc}" for o in same if o.command.key not in refused
        )
        fail(same[0], f"inconsistent: {', '.join(sorted(refused))} exit 2 (unreadable input), but {others}")
    return failures


def _fill(command: Command, *, input_path: Path, out: Path, base: FuzzBase) -> tuple[str, ...]:
    values = {
        "{input}": str(input_path),
        "{out}": str(out),
        "{catalog}": str(base.catalog),
        "{empty}": str(base.empty),
    }
    return tuple(values.get(arg, arg) for arg in command.args)


def select_commands(recipe: dict[str, Any], *, with_pip: bool) -> list[Command]:
    """The commands for this input: those for its kind, those the recipe names (keys, or ``NAME*`` for
    every run of a command), verify only if asked or named."""
    kind = input_kind(recipe)
    named = recipe.get("commands")
    chosen = []
    for command in COMMANDS:
        if kind not in command.kinds:
            continue
        if named is not None and command.key not in named and f"{command.name}*" not in named:
            continue
        if command.pip and not (with_pip or (named is not None and command.key in named)):
            continue
        chosen.append(command)
    return chosen


_OUT_SENTINEL = b"not a folder: repair must leave this file alone\n"


def _prepare_out(recipe: dict[str, Any], folder: Path) -> tuple[Path, Path | None]:
    """The ``-w`` of a run: a fresh path, or the unusable one the recipe's ``out`` names
    (``existing-file``, ``under-file``, or a literal path such as ``/dev/null``); and the sentinel file
    that must come through unchanged."""
    wanted = recipe.get("out")
    if wanted is None:
        return folder / "wheelhouse", None
    if wanted == "existing-file":
        sentinel = folder / "wheelhouse"
        sentinel.write_bytes(_OUT_SENTINEL)
        return sentinel, sentinel
    if wanted == "under-file":
        sentinel = folder / "a-file"
        sentinel.write_bytes(_OUT_SENTINEL)
        return sentinel / "wheelhouse", sentinel
    return Path(wanted), None


def exercise(
    recipe: dict[str, Any],
    base: FuzzBase,
    runner: Runner,
    scratch: Path,
    *,
    with_pip: bool = False,
) -> tuple[list[Failure], list[Observation]]:
    """Make the input, run each command on it, judge each run; ``scratch`` is emptied afterwards.

    After a command runs out of time the others are not run (each would cost the whole limit again
    on a hang); the failure says so. A recipe with ``kill_after_ms`` is run by ``exercise_kill``."""
    if "kill_after_ms" in recipe:
        return exercise_kill(recipe, base, runner, scratch)
    if scratch.exists():
        shutil.rmtree(scratch)
    input_path = apply_recipe(recipe, base, scratch / "input")
    before = _snapshot(input_path)
    failures: list[Failure] = []
    observations: list[Observation] = []
    commands = select_commands(recipe, with_pip=with_pip)
    try:
        for index, command in enumerate(commands):
            folder = scratch / f"run{index}"
            for sub in ("tmp", "cwd"):
                (folder / sub).mkdir(parents=True)
            out, sentinel = _prepare_out(recipe, folder)
            argv = _fill(command, input_path=input_path, out=out, base=base)
            env = {**base.environment, "TMPDIR": str(folder / "tmp")}
            result = runner.run(argv, cwd=folder / "cwd", env=env, files=folder)
            observation = Observation(command, argv, result, _listing(out) if sentinel is None else ())
            observations.append(observation)
            failures += judge(observation, folder, before, input_path)
            if sentinel is not None and sentinel.read_bytes() != _OUT_SENTINEL:
                failures.append(
                    Failure(
                        command.key,
                        "output",
                        f"the file at -w changed: {sentinel.name}",
                        argv,
                        _tail(result.stderr),
                    )
                )
            if result.timed_out:
                skipped = [c.key for c in commands[index + 1 :]]
                if skipped:
                    failures.append(
                        Failure(command.key, "time", f"not run after the hang: {', '.join(skipped)}")
                    )
                break
        failures += check_expectations(recipe, observations)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return failures, observations


def exercise_kill(
    recipe: dict[str, Any], base: FuzzBase, runner: Runner, scratch: Path
) -> tuple[list[Failure], list[Observation]]:
    """``repair -w`` killed (SIGKILL, its whole process group) ``kill_after_ms`` after it starts, then
    run again to the end with the same ``-w`` and ``TMPDIR``. Whenever the kill lands: the killed run
    never leaves a wheel under its final name that is not whole, and after the second run ``-w``
    holds exactly that one valid wheel, nothing hidden, and ``TMPDIR`` is empty (a later run cleans
    what a killed one left, or the killed one left nothing where it could be stranded)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    input_path = apply_recipe(recipe, base, scratch / "input")
    before = _snapshot(input_path)
    folder = scratch / "run"
    for sub in ("tmp", "cwd"):
        (folder / sub).mkdir(parents=True)
    command = next(c for c in COMMANDS if c.key == "repair")
    out = folder / "wheelhouse"
    argv = _fill(command, input_path=input_path, out=out, base=base)
    env = {**base.environment, "TMPDIR": str(folder / "tmp")}
    failures: list[Failure] = []
    observations: list[Observation] = []
    try:
        delay = float(recipe["kill_after_ms"]) / 1000
        killed = runner.run(argv, cwd=folder / "cwd", env=env, files=folder, timeout=delay)
        observations.append(Observation(command, argv, killed, _listing(out)))
        for name in _listing(out):
            if name.endswith(".whl") and not name.startswith(".") and "/" not in name:
                failures += [
                    Failure(command.key, "output", f"killed after {delay * 1000:.0f} ms: {problem}", argv)
                    for problem in check_wheel_file(out / name)
                ]
        result = runner.run(argv, cwd=folder / "cwd", env=env, files=folder)
        second = Observation(command, argv, result, _listing(out))
        observations.append(second)
        judged = judge(second, folder, before, input_path)
        where = f"(the run after one killed at {delay * 1000:.0f} ms"
        where += f", which had left {', '.join(observations[0].written) or 'nothing'} under -w)"
        failures += [Failure(f.command, f.prop, f"{f.detail} {where}", f.argv, f.stderr_tail) for f in judged]
        if result.rc == 0 and len(second.written) != 1:
            failures.append(Failure(command.key, "output", f"-w holds {list(second.written)} {where}", argv))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return failures, observations


@dataclass
class FailureLog:
    """Failures across the examples of one test, one entry per distinct signature, with the first
    recipe that showed it (saved as a regression case when ``save_to`` is set)."""

    test: str
    save_to: Path | None = None
    seen: dict[str, tuple[Failure, dict[str, Any], list[str]]] = field(default_factory=dict)
    examples: int = 0
    seconds: float = 0.0
    outcomes: dict[str, dict[int, int]] = field(default_factory=dict)  # command -> exit status -> runs

    def add(
        self, recipe: dict[str, Any], failures: Sequence[Failure], observations: Sequence[Observation] = ()
    ) -> None:
        """One input's failures: a signature seen before counts the command (once per input)."""
        self.examples += 1
        for observation in observations:
            codes = self.outcomes.setdefault(observation.command.key, {})
            codes[observation.result.rc] = codes.get(observation.result.rc, 0) + 1
        new = False
        for failure in failures:
            key = failure.signature()
            if key not in self.seen:
                self.seen[key] = (failure, recipe, [])
                new = True
            self.seen[key][2].append(failure.command)
        if new and self.save_to is not None:
            self._save(recipe, failures)

    def _save(self, recipe: dict[str, Any], failures: Sequence[Failure]) -> None:
        assert self.save_to is not None
        self.save_to.mkdir(parents=True, exist_ok=True)
        digest = recipe_digest(recipe)
        saved = {
            "name": f"found-{digest}",
            "why": f"found by {self.test}: "
            + "; ".join(sorted({f"{f.command} {f.prop}: {f.detail}" for f in failures}))[:800],
            **{k: v for k, v in recipe.items() if k not in ("name", "why")},
        }
        (self.save_to / f"found-{digest}.json").write_text(json.dumps(saved, indent=1) + "\n")

    def coverage(self) -> str:
        """How often each command ended in each exit status: inputs that all end in exit 2 at the
        door test little beyond the reader."""
        return "; ".join(
            f"{command} " + " ".join(f"{rc}:{count}" for rc, count in sorted(codes.items()))
            for command, codes in self.outcomes.items()
        )

    def summary(self) -> str:
        lines = [f"{self.test}: {len(self.seen)} distinct failures in {self.examples} inputs"]
        for key, (failure, recipe, commands) in self.seen.items():
            counted = ", ".join(f"{c} x{commands.count(c)}" for c in dict.fromkeys(commands))
            lines.append(f"- {key}  [{counted}]")
            lines.append(f"  {failure.detail}")
            if failure.argv:
                lines.append(f"  $ slimwheel {' '.join(failure.argv)}")
            if failure.stderr_tail:
                lines += [f"  | {line}" for line in failure.stderr_tail.splitlines()]
            lines.append(f"  recipe: {json.dumps(recipe, sort_keys=True)[:1500]}")
        return "\n".join(lines)


def describe(observations: Sequence[Observation]) -> str:
    """One line per run (for a failing regression case's message)."""
    return "\n".join(
        f"  {o.command.key}: exit {o.result.rc}{' (timed out)' if o.result.timed_out else ''} "
        f"in {o.result.seconds:.2f} s, {o.result.max_rss_kib // 1024} MiB"
        for o in observations
    )
