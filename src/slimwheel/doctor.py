"""Every copy of each NVIDIA library this Python could load, which one ``slimwheel.runtime.load`` would
pick and why, and its version, read by loading it in a child process so that the caller's process
stays clean (and each library is judged as a fresh process would see it).

``diagnose_libraries`` is the library call; ``slimwheel doctor`` renders what it returns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slimwheel.errors import UsageError

if TYPE_CHECKING:
    from slimwheel.runtime import Candidate, Search, WheelIndex

__all__ = [
    "DEFAULT_LIBRARIES",
    "CandidateRow",
    "ChildLoad",
    "LibraryDiagnosis",
    "diagnose_libraries",
]

DEFAULT_LIBRARIES = (
    "cudss",
    "cublas",
    "cublasLt",
    "cudart",
    "nvrtc",
    "cudnn",
    "nccl",
    "cusparse",
    "cufft",
    "curand",
    "cusolver",
)

# Run in a child: load one library as a fresh process would, report it and what loading mapped.
_CHILD = r"""
import json, sys
sys.path[:] = json.loads(sys.argv[1])
from slimwheel.runtime import RuntimeLoadError, load, mapped_libraries
before = {m.path for m in mapped_libraries()}
result = {}
try:
    loaded = load(sys.argv[2], cuda=json.loads(sys.argv[3]), policy=sys.argv[4])
except RuntimeLoadError as exc:
    result["error"] = f"{type(exc).__name__}: {exc}"
else:
    result["loaded"] = {
        "path": loaded.path, "soname": loaded.soname, "how": loaded.how.value,
        "distribution": loaded.distribution, "version": loaded.version,
        "library_version": loaded.library_version, "cuda_major": loaded.cuda_major,
        "cuda_major_from": loaded.cuda_major_from,
    }
result["mapped"] = [m.path for m in mapped_libraries() if m.path not in before]
print(json.dumps(result))
"""


@dataclass(frozen=True)
class CandidateRow:
    path: str
    soname: str
    source: str
    distribution: str | None
    version: str | None
    cuda_major: int | None
    cuda_major_from: str | None
    rejected: str | None


@dataclass(frozen=True)
class ChildLoad:
    """What ``load`` did in a fresh child process (``loaded_in`` says so in the JSON)."""

    path: str
    soname: str
    how: str
    distribution: str | None
    version: str | None
    library_version: str | None
    cuda_major: int | None
    cuda_major_from: str | None


@dataclass(frozen=True)
class LibraryDiagnosis:
    library: str
    candidates: tuple[CandidateRow, ...]
    searched: tuple[str, ...]
    would_load: str | None  # the path load() tries first
    why: str
    loaded: ChildLoad | None  # None with --no-load, or when loading failed
    loaded_in: str  # "child process" or "not loaded (--no-load)"
    load_error: str | None
    mapped_by_load: tuple[str, ...]  # files the child had mapped after loading that it had not before
    mapped_here: tuple[str, ...]  # copies doctor's own process already has mapped


def diagnose_libraries(
    libraries: Sequence[str],
    *,
    cuda: int | None = None,
    policy: str = "wheel-first",
    load: bool = True,
) -> list[LibraryDiagnosis]:
    """One diagnosis per library name (soname stem or exact soname). ``load``: also load each in a
    fresh child process to read its version and what loading mapped."""
    from slimwheel.runtime import WheelIndex

    index = WheelIndex()
    try:
        return [_diagnose(name, cuda, policy, load, index) for name in libraries]
    except ValueError as exc:  # a malformed library name
        raise UsageError(str(exc)) from exc


def _diagnose(name: str, cuda: int | None, policy: str, load: bool, index: WheelIndex) -> LibraryDiagnosis:
    from slimwheel.runtime import find, mapped_libraries
    from slimwheel.runtime._names import parse_library

    search = find(name, cuda=cuda, policy=policy, index=index)
    rows = tuple(_row(item.candidate, item.rejected) for item in search.considered)
    first = search.viable[0] if search.viable else None
    loaded, error, mapped = _load_in_child(name, cuda, policy) if load else (None, None, ())
    stem = parse_library(name).stem
    return LibraryDiagnosis(
        library=name,
        candidates=rows,
        searched=tuple(place.description for place in search.places),
        would_load=first.path if first else None,
        why=_why(search, first),
        loaded=loaded,
        loaded_in="child process" if load else "not loaded (--no-load)",
        load_error=error,
        mapped_by_load=mapped,
        mapped_here=tuple(m.path for m in mapped_libraries(stem)),
    )


def _row(candidate: Candidate, rejected: str | None) -> CandidateRow:
    return CandidateRow(
        path=candidate.path,
        soname=candidate.soname,
        source=candidate.source.value,
        distribution=candidate.distribution,
        version=candidate.version,
        cuda_major=candidate.cuda_major,
        cuda_major_from=candidate.cuda_major_from,
        rejected=rejected,
    )


def _why(search: Search, first: Candidate | None) -> str:
    from slimwheel.runtime import Source

    if first is None:
        return "no copy found fits" if search.considered else "no copy found"
    if first.source is Source.OVERRIDE:
        return f"{search.override} is set, and beats every other source"
    order = " > ".join(source.value for source in search.policy.order)
    reason = f"the first {first.source.value} copy in {search.policy.value} order ({order})"
    if first.source is Source.WHEEL:
        reason += ", highest soname version, then highest CUDA major, then sys.path order"
    skipped = sum(1 for item in search.considered if item.rejected)
    return reason + (f"; {skipped} rejected" if skipped else "")


def _load_in_child(
    name: str, cuda: int | None, policy: str
) -> tuple[ChildLoad | None, str | None, tuple[str, ...]]:
    argv = [sys.executable, "-c", _CHILD, json.dumps(sys.path), name, json.dumps(cuda), policy]
    try:
        process = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=120, env=os.environ
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"could not run the child process: {exc}", ()
    if process.returncode != 0:
        # A crash while loading (a library's constructor failing) is itself the diagnosis.
        tail = (process.stderr.strip().splitlines() or [f"exit status {process.returncode}"])[-1]
        return None, f"the child process failed ({process.returncode}): {tail}", ()
    result = json.loads(process.stdout)
    loaded = ChildLoad(**result["loaded"]) if "loaded" in result else None
    return loaded, result.get("error"), tuple(result.get("mapped", ()))
