"""The analysis's worker process: ``python -c`` runs :func:`serve`, which reads its task pickled on
stdin and writes the outcomes, or the error it raised, pickled on stdout.

A plain child process rather than a ``multiprocessing`` pool: no resource tracker beside it (12 MiB
on the 200 MiB budget of a PyTorch repair), nothing imported but what reading members needs, and it
dies with its parent (``PR_SET_PDEATHSIG``) instead of inflating on for a run that was killed.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
from typing import Any, BinaryIO

__all__ = ["BOOTSTRAP", "serve"]

# Run with ``python -c``: the parent's sys.path comes first in the task, so the child imports the same
# slimwheel as the parent, wherever that was found.
BOOTSTRAP = (
    "import pickle, sys\n"
    "task = pickle.load(sys.stdin.buffer)\n"
    "sys.path[:] = task['sys_path']\n"
    "from slimwheel.analysis._worker import serve\n"
    "serve(task, sys.stdout.buffer)\n"
)
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """Be killed when ``parent`` goes (Linux); where prctl is missing, at least not start late."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def serve(task: dict[str, Any], out: BinaryIO) -> None:
    """Inspect ``task['names']`` of the wheel at ``task['path']``; write ("ok", outcomes) or
    ("error", exception) to ``out``."""
    from slimwheel.analysis.inspect import _inspect_in_worker

    _die_with(task["parent"])
    try:
        result: tuple[str, object] = (
            "ok",
            _inspect_in_worker(task),
        )
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it there
        result = ("error", exc)
    try:
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - an error that does not pickle still says what it was
        data = pickle.dumps(("error", RuntimeError(f"analysis worker: {result[1]!r} ({exc})")))
    out.write(data)
    out.flush()
    sys.stdout.flush()
