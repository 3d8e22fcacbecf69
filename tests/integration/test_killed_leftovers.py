"""What a SIGKILL strands is cleaned by the next run: WheelWriter's hidden temporary file, repair's
staging folder inside the output folder and its scratch folders in the temporary directory. Only
slimwheel's own patterns, and only those whose owner is gone: a run still going keeps its own.

Real processes, really killed: a writer that waits once it has started, and repairs held inside a
patchelf that sleeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from slimwheel.catalog.store import read_catalog
from slimwheel.repair import RepairOptions
from slimwheel.repair.pipeline import repair_wheel
from slimwheel.wheel import WheelWriter
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import fat_solver_wheel

REPO = Path(__file__).resolve().parents[2]
RECORD = "demo_lib-1.0.dist-info/RECORD"
NAME = "demo_lib-1.0-py3-none-any.whl"
WAIT = 60.0  # seconds a test waits for a child to reach the point where it is killed

WRITER = """
import sys, time
from pathlib import Path
from slimwheel.wheel import WheelWriter
with WheelWriter(Path(sys.argv[1])) as writer:
    writer.add_bytes("demo_lib/__init__.py", b"x" * 100000)
    print("ready", flush=True)
    time.sleep(600)
"""

REPAIR = """
import sys
from pathlib import Path
from slimwheel.catalog.store import read_catalog
from slimwheel.repair import RepairOptions
from slimwheel.repair.pipeline import repair_wheel
wheel, out, catalog, patchelf = sys.argv[1:]
repair_wheel(Path(wheel), Path(out), read_catalog(Path(catalog)), options=RepairOptions(cuda_major=13),
             patchelf=patchelf)
"""


POOL = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from slimwheel._scratch import private_folder
with private_folder(Path(sys.argv[1]), "slimwheel-repair-") as folder:
    (folder / "work").write_bytes(b"x")
    pool = ProcessPoolExecutor(1)  # forked: a worker like analysis's, which outlives a killed parent
    print(pool.submit(os.getpid).result(), flush=True)
    pool.submit(time.sleep, 600)
    time.sleep(600)
"""


def _environment(tmpdir: Path | None = None) -> dict[str, str]:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environment.get("PYTHONPATH")]))
    if tmpdir is not None:
        environment["TMPDIR"] = str(tmpdir)
    return environment


@contextmanager
def _started(argv: list[str], tmpdir: Path | None = None) -> Iterator[subprocess.Popen[str]]:
    """A child process, killed (SIGKILL, by its own id) at the end should the test leave it running."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment(tmpdir)
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=WAIT)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()  # not read to the end: a surviving grandchild may hold the pipe


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=WAIT)
    assert process.returncode == -signal.SIGKILL


def _names(folder: Path) -> set[str]:
    return {entry.name for entry in folder.iterdir()}


def _finish_a_wheel(out: Path) -> None:
    with WheelWriter(out) as writer:
        writer.add_bytes("demo_lib/__init__.py", b"")
        writer.close(RECORD)


def test_the_next_writer_removes_the_temporary_file_of_a_killed_one(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    # Not slimwheel's, or not a wheel's temporary file: never touched.
    foreign = [
        ".notes.txt.0123456789ab.tmp",
        "demo.whl.0123456789ab.tmp",
        ".demo.whl.tmp",
        ".demo.whl.xyz.tmp",
    ]
    for name in foreign:
        (out_dir / name).write_bytes(b"someone else's")
    with _started([sys.executable, "-c", WRITER, str(out_dir / NAME)]) as killed:
        assert killed.stdout is not None
        assert killed.stdout.readline() == "ready\n"
        (stranded,) = _names(out_dir) - set(foreign)
        assert stranded.startswith(f".{NAME}.")
        assert stranded.endswith(".tmp")
        _kill(killed)
        assert (out_dir / stranded).exists()  # what a kill leaves

        with _started([sys.executable, "-c", WRITER, str(out_dir / "other-1.0-py3-none-any.whl")]) as alive:
            assert alive.stdout is not None
            assert alive.stdout.readline() == "ready\n"
            (running,) = _names(out_dir) - set(foreign) - {stranded}

            _finish_a_wheel(out_dir / NAME)

            # The killed writer's file is gone, the running one's stays, and so does everything else.
            assert _names(out_dir) == {NAME, running, *foreign}
            _kill(alive)
    _finish_a_wheel(out_dir / NAME)
    assert _names(out_dir) == {NAME, *foreign}


def _sleeping_patchelf(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A patchelf that notes its process id and sleeps, as that same process (exec), until killed."""
    marker = tmp_path / f"{name}.pid"
    script = tmp_path / f"{name}-patchelf"
    script.write_text(
        f'#!/bin/sh\necho $$ > "{marker}.part"\nmv "{marker}.part" "{marker}"\nexec sleep 600\n'
    )
    script.chmod(0o755)
    return script, marker


def _wait_for(marker: Path, process: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + WAIT
    while not marker.exists():
        if process.poll() is not None:
            assert process.stderr is not None
            pytest.fail(f"the repair ended before patchelf ran: {process.stderr.read()}")
        assert time.monotonic() < deadline, "patchelf never ran"
        time.sleep(0.05)
    return int(marker.read_text())


def _stop_sleeper(pid: int) -> None:
    """The sleeping patchelf outlives the killed repair (as a real one would): it is ended by its id."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def no_sleeper_left(tmp_path: Path) -> Iterator[None]:
    """Should the test fail halfway, the sleeping patchelfs it started are ended all the same."""
    yield
    for marker in tmp_path.glob("*.pid"):
        with suppress(ValueError, OSError):
            _stop_sleeper(int(marker.read_text()))


@pytest.mark.usefixtures("no_sleeper_left")
def test_the_next_repair_removes_what_a_killed_one_left(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    before = fat.read_bytes()
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    killed_out, alive_out = tmp_path / "out", tmp_path / "out-alive"
    killed_patchelf, killed_marker = _sleeping_patchelf(tmp_path, "killed")
    alive_patchelf, alive_marker = _sleeping_patchelf(tmp_path, "alive")
    argv = [sys.executable, "-c", REPAIR, str(fat)]
    with _started([*argv, str(killed_out), str(own_catalog), str(killed_patchelf)], tmpdir) as killed:
        killed_sleeper = _wait_for(killed_marker, killed)
        killed_scratch = _names(tmpdir)
        with _started([*argv, str(alive_out), str(own_catalog), str(alive_patchelf)], tmpdir) as alive:
            alive_sleeper = _wait_for(alive_marker, alive)
            alive_scratch = _names(tmpdir) - killed_scratch
            alive_staging = _names(alive_out)
            _kill(killed)
            _stop_sleeper(killed_sleeper)
            # What the kill stranded: a staging folder (and its lock) in the output folder, scratch
            # folders (the pipeline's and apply's, with their locks) in the temporary directory.
            stranded = _names(killed_out)
            assert {name.startswith(".slimwheel-staging-") for name in stranded} == {True}
            assert len(stranded) == 2
            assert len(killed_scratch) == 4
            assert {name.startswith("slimwheel-repair-") for name in killed_scratch} == {True}
            assert len(alive_scratch) == 4

            # The next repair into the same folders, in this process.
            monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
            catalog = read_catalog(own_catalog)
            outcome = repair_wheel(fat, killed_out, catalog, options=RepairOptions(cuda_major=13))
            assert outcome.output is not None
            assert _names(killed_out) == {outcome.output.name}
            # The run still going keeps its folders.
            assert _names(tmpdir) == alive_scratch
            assert _names(alive_out) == alive_staging
            _kill(alive)
            _stop_sleeper(alive_sleeper)

    outcome = repair_wheel(fat, alive_out, catalog, options=RepairOptions(cuda_major=13))
    assert outcome.output is not None
    assert _names(alive_out) == {outcome.output.name}
    assert _names(tmpdir) == set()
    assert fat.read_bytes() == before


def test_a_worker_that_outlives_its_killed_parent_does_not_hold_its_folders(tmp_path: Path) -> None:
    """Forked workers inherit the parent's lock descriptors; a worker that lives on after the parent
    is killed (a process pool's does) must not keep the parent's leftovers locked for ever."""
    parent = tmp_path / "tmpdir"
    parent.mkdir()
    worker = None
    try:
        with _started([sys.executable, "-c", POOL, str(parent)]) as killed:
            assert killed.stdout is not None
            worker = int(killed.stdout.readline())
            stranded = _names(parent)
            assert len(stranded) == 2  # the folder and its lock
            _kill(killed)
        os.kill(worker, 0)  # still there, holding copies of the parent's descriptors
        from slimwheel._scratch import private_folder

        with private_folder(parent, "slimwheel-repair-") as folder:
            assert _names(parent) == {folder.name, f"{folder.name}.lock"}
        assert _names(parent) == set()
    finally:
        if worker is not None:
            _stop_sleeper(worker)


PROBE = """
import os, sys, tempfile
from pathlib import Path
from slimwheel._scratch import scratch_folder, temporary_directory
folder = sys.argv[1]
os.utime(folder, (1, 1))
found = tempfile.gettempdir() if sys.argv[2] == "stdlib" else temporary_directory()
mtime = os.stat(folder).st_mtime_ns
assert Path(found) == Path(folder), found
with scratch_folder("slimwheel-probe-") as made:
    assert made.parent == Path(folder), made
print(mtime)
"""


@pytest.mark.parametrize(("how", "writes"), [("stdlib", True), ("slimwheel", False)])
def test_finding_the_temporary_directory_writes_nothing_there(tmp_path: Path, how: str, writes: bool) -> None:
    """tempfile.gettempdir writes a randomly named probe file into $TMPDIR and removes it: a run killed
    in that instant strands it, and nothing can tell later that it was ours. slimwheel's own lookup
    (the one its scratch folders use) writes nothing; the stdlib case shows the test sees a probe."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    env = {**os.environ, "TMPDIR": str(folder)}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder), how], env=env, capture_output=True, text=True, check=True
    )
    assert (int(run.stdout) != 1_000_000_000) is writes, run.stdout
    assert list(folder.iterdir()) == []
