"""``slimwheel doctor [LIB...]``: renders ``slimwheel.doctor.diagnose_libraries``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from slimwheel.cli._common import output_of
from slimwheel.doctor import DEFAULT_LIBRARIES, LibraryDiagnosis

if TYPE_CHECKING:
    from slimwheel.cli._output import Output

HELP = "show where each NVIDIA library would be loaded from, which copy wins and why, and its version"
EXIT_CODES = (
    "exit status: 0 all well (with no library named, always: the default list is a survey); 1 a "
    "library named on the command line is found nowhere or fails to load; 2 bad usage or input (a "
    "name that is not a soname or soname stem); 130 interrupted."
)


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
    from slimwheel.doctor import diagnose_libraries
    from slimwheel.report import dump_report
    from slimwheel.runtime import process_cuda_major

    libraries = tuple(args.libraries) or DEFAULT_LIBRARIES
    diagnoses = diagnose_libraries(libraries, cuda=args.cuda, policy=args.policy, load=not args.no_load)
    if args.json:
        payload = {
            "python": sys.executable,
            "policy": args.policy,
            "cuda": args.cuda,
            "process_cuda_major": process_cuda_major(),
            "sys_path": list(sys.path),
            "libraries": diagnoses,
        }
        print(dump_report("doctor", payload), file=output_of(args).out)
    else:
        _render(diagnoses, args, output_of(args))
    # Only libraries named on the command line count as a problem when they cannot be loaded.
    named_failures = [d for d in diagnoses if args.libraries and (d.load_error or d.would_load is None)]
    return 1 if named_failures else 0


def _render(diagnoses: list[LibraryDiagnosis], args: argparse.Namespace, settings: Output) -> None:
    from rich.markup import escape

    out = settings.console()
    out.print(
        f"[bold]{escape(sys.executable)}[/bold]  policy {args.policy}"
        + (f", CUDA {args.cuda}" if args.cuda else "")
    )
    summary = settings.table(
        "Libraries", ("library", "would load", "from", "version", "library version", "CUDA", "note")
    )
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
    # The places searched are the same for every library that is found nowhere: said once, after them.
    nowhere: dict[tuple[str, ...], list[str]] = {}
    for d in diagnoses:
        if not d.candidates:
            # Only the per-library variable (SLIMWHEEL_CUDSS_PATH) differs: it is named once, generically.
            common = tuple(place for place in d.searched if not place.startswith("SLIMWHEEL_"))
            nowhere.setdefault(common, []).append(d.library)
            continue
        table = settings.table(
            f"{d.library}: {d.why}", ("candidate", "source", "distribution", "CUDA", "verdict")
        )
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
    for searched, names in nowhere.items():
        out.print(f"not found: {', '.join(names)}")
        out.print(f"  searched: {escape('; '.join(('SLIMWHEEL_<LIB>_PATH', *searched)))}")
        out.print("  to install one: pip install nvidia-<library>-cu<CUDA major>, e.g. nvidia-cudss-cu12")
    if not args.no_load:
        out.print("Versions are read by loading each library in a fresh child process.")
