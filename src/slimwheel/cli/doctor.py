"""``slimwheel doctor [LIB...]``: every copy of each NVIDIA library this Python could load, which one
``slimwheel.runtime.load`` would pick and why, and its version, read by loading it in a child
process so that doctor's own process stays clean (and each library is judged as a fresh process
would see it)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slimwheel.errors import UsageError

if TYPE_CHECKING:
    from slimwheel.runtime import Candidate, Search, WheelIndex

HELP = "show where each NVIDIA library would be loaded from, which copy wins and why, and its version"

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "libraries",
        nargs="*",
        metavar="LIB",
        help=f"soname stems or exact sonames (default: {', '.join(DEFAULT_LIBRARIES)})",
    )
    parser.add_argument("--json", action="store_true", help="print a slimwheel.doctor/1 JSON document")
    parser.add_argument("--cuda", type=int, default=None, metavar="N", help="judge copies for CUDA major N")
    parser.add_argument(
        "--policy",
        choices=("wheel-first", "system-first", "wheel-only"),
        default="wheel-first",
        help="the search order load() would use (default: wheel-first)",
    )
    parser.add_argument(
        "--no-load",
        action="store_true",
        help="only search; do not load each library in a child process to read its version",
    )


def run(args: argparse.Namespace) -> int:
    from slimwheel.report import dump_report
    from slimwheel.runtime import WheelIndex, process_cuda_major

    libraries = tuple(args.libraries) or DEFAULT_LIBRARIES
    index = WheelIndex()
    try:
        diagnoses = [_diagnose(name, args, index) for name in libraries]
    except ValueError as exc:  # a malformed library name
        raise UsageError(str(exc)) from exc
    if args.json:
        payload = {
            "python": sys.executable,
            "policy": args.policy,
            "cuda": args.cuda,
            "process_cuda_major": process_cuda_major(),
            "sys_path": list(sys.path),
            "libraries": diagnoses,
        }
        print(dump_report("doctor", payload))
    else:
        _render(diagnoses, args)
    # Only libraries named on the command line count as a problem when they cannot be loaded.
    named_failures = [d for d in diagnoses if args.libraries and (d.load_error or d.would_load is None)]
    return 1 if named_failures else 0


def _diagnose(name: str, args: argparse.Namespace, index: WheelIndex) -> LibraryDiagnosis:
    from slimwheel.runtime import find, mapped_libraries
    from slimwheel.runtime._names import parse_library

    search = find(name, cuda=args.cuda, policy=args.policy, index=index)
    rows = tuple(_row(item.candidate, item.rejected) for item in search.considered)
    first = search.viable[0] if search.viable else None
    loaded, error, mapped = (None, None, ()) if args.no_load else _load_in_child(name, args)
    stem = parse_library(name).stem
    return LibraryDiagnosis(
        library=name,
        candidates=rows,
        searched=tuple(place.description for place in search.places),
        would_load=first.path if first else None,
        why=_why(search, first),
        loaded=loaded,
        loaded_in="not loaded (--no-load)" if args.no_load else "child process",
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
    name: str, args: argparse.Namespace
) -> tuple[ChildLoad | None, str | None, tuple[str, ...]]:
    argv = [sys.executable, "-c", _CHILD, json.dumps(sys.path), name, json.dumps(args.cuda), args.policy]
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


def _render(diagnoses: list[LibraryDiagnosis], args: argparse.Namespace) -> None:
    from rich.table import Table

    from slimwheel.cli._common import console

    out = console()
    out.print(
        f"[bold]{sys.executable}[/bold]  policy {args.policy}" + (f", CUDA {args.cuda}" if args.cuda else "")
    )
    summary = Table(title="Libraries", title_justify="left")
    for column in ("library", "would load", "from", "version", "library version", "CUDA", "note"):
        summary.add_column(column, overflow="fold")
    for d in diagnoses:
        loaded = d.loaded
        # The full message (every place searched) is in --json; the table keeps its first sentence.
        note = (
            d.load_error.split(" Searched: ", 1)[0] if d.load_error else ("" if d.would_load else "not found")
        )
        if loaded is None:
            summary.add_row(d.library, d.would_load or "-", "", "", "", "", note)
            continue
        summary.add_row(
            d.library,
            loaded.path,
            f"{loaded.how}\n{loaded.distribution}" if loaded.distribution else loaded.how,
            loaded.version or "",
            loaded.library_version or "",
            "" if loaded.cuda_major is None else str(loaded.cuda_major),
            note,
        )
    out.print(summary)
    for d in diagnoses:
        if not d.candidates:
            out.print(f"{d.library}: nothing found; searched {'; '.join(d.searched)}")
            continue
        table = Table(title=f"{d.library}: {d.why}", title_justify="left")
        for column in ("candidate", "source", "distribution", "CUDA", "verdict"):
            table.add_column(column, overflow="fold")
        for row in d.candidates:
            owner = f"{row.distribution} {row.version}" if row.distribution else ""
            major = f"{row.cuda_major} ({row.cuda_major_from})" if row.cuda_major is not None else "?"
            verdict = row.rejected or ("would load" if row.path == d.would_load else "fallback")
            table.add_row(row.path, row.source, owner, major, verdict)
        out.print(table)
        if d.mapped_by_load:
            out.print(f"  loading it mapped: {', '.join(d.mapped_by_load)}")
        if d.mapped_here:
            out.print(f"  already mapped in doctor's own process: {', '.join(d.mapped_here)}")
    if not args.no_load:
        out.print("Versions are read by loading each library in a fresh child process.")
