"""A fork server for the fuzz suite: run ``slimwheel`` commands as child processes without paying
Python's and slimwheel's import time (about 0.3 s) for each one.

Started as ``python -I tests/support/fuzz_forkserver.py [--src DIR]`` (DIR: a checkout's src/ to import
slimwheel from); it imports slimwheel's CLI and the modules the commands load, then reads one JSON
request per line on stdin::

    {"argv": [...], "cwd": DIR, "env": {...}, "stdout": FILE, "stderr": FILE,
     "memory": BYTES, "timeout": SECONDS}

and for each forks a child that becomes what ``slimwheel ARGV`` would be: its own process group, the
given environment (``TMPDIR`` included: tempfile's cached folder is reset), working folder, stdin from
/dev/null, stdout and stderr to the files, ``RLIMIT_AS`` set; then it runs ``slimwheel.cli.main`` as
``console_main`` does, an uncaught exception printing its traceback and exiting 1, as the interpreter
would. The server answers one JSON line: ``{"rc", "signal", "timed_out", "seconds", "max_rss_kib"}``.
After ``timeout`` the child's whole process group is killed (SIGKILL); so is whatever it left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def _preload() -> None:
    # What the commands import lazily: loaded once here, shared by every child.
    import slimwheel.analysis
    import slimwheel.catalog.store
    import slimwheel.check
    import slimwheel.repair.pipeline
    import slimwheel.report
    import slimwheel.sources
    import slimwheel.verify
    import slimwheel.wheel
    from slimwheel.cli.main import build_parser

    build_parser()
    import rich.console
    import rich.table

    _ = (rich.console, rich.table, slimwheel.analysis, slimwheel.catalog.store, slimwheel.check)
    _ = (slimwheel.repair.pipeline, slimwheel.report, slimwheel.sources, slimwheel.verify, slimwheel.wheel)


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the command, run it, never return."""
    code = 1
    try:
        os.setpgid(0, 0)
        memory = int(request.get("memory") or 0)
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for source, target in ((null, 0), (out, 1), (err, 2)):
            os.dup2(source, target)
            os.close(source)
        sys.stdin = Path(os.devnull).open(encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # read TMPDIR again
        os.chdir(request["cwd"])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = ["slimwheel", *request["argv"]]
        from slimwheel.cli.main import main

        code = main(request["argv"])
    except SystemExit as exc:  # what sys.exit does with its argument
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 (what the interpreter does with any uncaught exception)
        try:
            traceback.print_exc()
        finally:
            code = 1
    finally:
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001 (a full disk, a closed pipe: the exit status still counts)
            code = code or 120
        try:
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)


def _serve_one(request: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(request)
    with contextlib.suppress(OSError):  # the child did it first, or is gone
        os.setpgid(pid, pid)
    timed_out = False
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], float(request.get("timeout", 60)))
        if not ready:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
    finally:
        os.close(pidfd)
    _, status, usage = os.wait4(pid, 0)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)  # anything the command left running
    return {
        "rc": os.waitstatus_to_exitcode(status),
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 3),
        "max_rss_kib": usage.ru_maxrss,
    }


def serve(arguments: list[str]) -> None:
    if arguments[:1] == ["--src"]:  # slimwheel from another checkout's src/ (SLIMWHEEL_FUZZ_SRC)
        sys.path.insert(0, arguments[1])
    _preload()
    import slimwheel

    print(json.dumps({"ready": os.getpid(), "slimwheel": slimwheel.__file__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        print(json.dumps(_serve_one(json.loads(line))), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1:])
