"""``slimwheel check WHEEL``: simulate the install and say where the loader would find each DT_NEEDED."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from slimwheel.cli._common import add_catalog_argument, load_catalog_from_args, output_of, print_wheel_reports
from slimwheel.cli._index import add_dist_files_arguments, open_dist_files

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from slimwheel.check import CheckReport, Lookup
    from slimwheel.cli._output import Output

HELP = (
    "simulate installing a wheel with the NVIDIA wheels and other distributions it requires and say "
    "where the dynamic loader finds each DT_NEEDED, for every version its Requires-Dist allows"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "wheels",
        nargs="+",
        type=Path,
        metavar="WHEEL",
        help="a .whl (a single ELF file or a folder works too)",
    )
    parser.add_argument("--json", action="store_true", help="print a slimwheel.check/1 JSON document")
    parser.add_argument(
        "--cuda", type=int, default=None, metavar="N", help="count only NVIDIA releases for CUDA major N"
    )
    parser.add_argument(
        "--platform",
        default=None,
        metavar="P",
        help="the target (default: from the wheel's platform tags), e.g. manylinux_aarch64",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="LIB",
        help="a library left to the host (nvinfer, every soname of it, or libnvinfer.so.10 alone): not "
        "finding it is a warning",
    )
    add_catalog_argument(parser)
    add_dist_files_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from slimwheel.check import check_wheel
    from slimwheel.names import left_to_host_name
    from slimwheel.platforms import parse_platform
    from slimwheel.sources import check_stored_elf_members, open_source
    from slimwheel.wheel import Wheel

    platform = parse_platform(args.platform) if args.platform else None
    catalog = load_catalog_from_args(args)
    reports = []
    # The index is resolved, and asked, only when a wheel needs a library that only a non-NVIDIA
    # requirement can provide.
    with open_dist_files(args) as dist_files:
        for path in args.wheels:
            with open_source(path) as source:
                if isinstance(source, Wheel):
                    # As show does: a damaged stored member is refused (exit 2), not analysed.
                    check_stored_elf_members(source)
                reports.append(
                    check_wheel(
                        source,
                        catalog,
                        cuda_major=args.cuda,
                        platform=platform,
                        dist_files=dist_files,
                        preloaded=args.preloaded,
                        host_provided=[left_to_host_name(name) for name in args.exclude],
                    )
                )
    return print_wheel_reports("check", catalog, reports, _render, as_json=args.json, out=output_of(args))


def _render(report: CheckReport, settings: Output) -> None:
    from rich.markup import escape

    from slimwheel.analysis import Resolution
    from slimwheel.check.words import search_path_words

    out = settings.console()
    cuda = f", CUDA {report.cuda_major}" if report.cuda_major is not None else ", no CUDA major"
    python = f", Python {report.python}" if report.python else ""
    out.print(
        f"[bold]{escape(report.filename)}[/bold]  {report.platform.key}{cuda}{python}  "
        f"(catalog: {escape(report.catalog_origin)})"
    )
    if report.recorded:  # not flags the user gave: say where they came from
        out.print(f"  counting on what its slimwheel.json records: {escape('; '.join(report.recorded))}")
    if report.requirements:
        out.print(_requirements_table(report, settings))
    if report.requirement_files:
        out.print(_requirement_files_table(report, settings))
    # One row per fact (a soname and one place it is found), so that no cell can wrap out of line with
    # its neighbour; on a terminal a file's name stands on its first row only, in a pipe on every row
    # (grep finds a file's lookups).
    # On a terminal the search path goes under the file's name (a column of its own would squeeze the
    # answers at 80 columns); in a pipe it keeps its column, on the file's first row.
    columns = (
        ("file", "needs", "found") if settings.terminal else ("file", "needs", "found", "rpath / runpath")
    )
    files = settings.table("DT_NEEDED lookups", columns, no_wrap=("needs",))
    for file in report.files:
        rows: list[tuple[str, str]] = []
        system = 0
        for needed in file.needed:
            if all(lookup.resolution is Resolution.SYSTEM for lookup in needed.lookups):
                system += 1
                continue
            for index, lookup in enumerate(needed.lookups):
                # Versions matter only where they change the answer.
                found = _lookup_text(lookup, with_versions=len(needed.lookups) > 1)
                rows.append((escape(needed.soname) if index == 0 or not settings.terminal else "", found))
        if system:
            rows.append((f"+ {system} system libraries", "system"))
        if not rows:
            rows.append(("", escape(file.error or "")))
        paths = search_path_words(file.rpath, file.runpath)
        for index, (name, found) in enumerate(rows):
            first = index == 0
            if settings.terminal:
                label = escape(file.installed_path) + "".join(f"\n[dim]{escape(p)}[/dim]" for p in paths)
                files.add_row(label if first else "", name, found, end_section=index == len(rows) - 1)
            else:
                files.add_row(
                    escape(file.installed_path), name, found, escape(" ".join(paths)) if first else ""
                )
    out.print(files)
    if report.findings:
        findings = settings.table("Findings", ("severity", "file", "finding"))
        for finding in report.findings:
            findings.add_row(finding.severity.value, escape(finding.path), escape(finding.message))
        out.print(findings)
    _errors_by_cause(report, out)
    _warnings_by_kind(report, out)
    verdict = "[red]fails[/red]" if report.has_errors else "[green]passes[/green]"
    out.print(f"{verdict}: {report.errors} errors, {report.warnings} warnings")


_MANY_WARNINGS = 8  # fewer read well in the findings table alone


def _errors_by_cause(report: CheckReport, out: Console) -> None:
    """The errors again, files and sonames of one cause on one line, where that says them in fewer
    lines (fbgemm-gpu 1.9.0: 89 errors of torch's libraries not found, one line on --preloaded torch)."""
    from rich.markup import escape

    from slimwheel.check.words import problem_lines
    from slimwheel.findings import Severity

    errors = [finding for finding in report.findings if finding.severity is Severity.ERROR]
    lines = problem_lines(errors, verbose=False, rest_named="the findings name them")
    if len(lines) >= len(errors):
        return
    out.print(f"The {len(errors)} errors by cause:")
    for where, message in lines:
        out.print(f"  {escape(where)}: {escape(message)}" if where else f"  {escape(message)}")


def _warnings_by_kind(report: CheckReport, out: Console) -> None:
    """The warnings that say the same of every file and soname, again, one line per kind, where there
    are many (openmm-unofficial-cu12 8.3.0rc2: 44 warnings, of two kinds but one)."""
    from rich.markup import escape

    from slimwheel.check.words import gist_lines
    from slimwheel.findings import Severity

    warnings = [finding for finding in report.findings if finding.severity is Severity.WARNING]
    lines = gist_lines(warnings, rest_named="the findings name them")
    if len(warnings) < _MANY_WARNINGS or not lines:
        return
    out.print(f"The {len(warnings)} warnings by kind (of those that say the same of each file):")
    for kind, text in lines:
        out.print(f"  {escape(kind)}: {escape(text)}")


def _requirements_table(report: CheckReport, settings: Output) -> Table:
    """One row per NVIDIA distribution; the JSON document keeps every requirement line."""
    from rich.markup import escape

    from slimwheel.check.words import requirement_rows

    table = settings.table(
        "NVIDIA distributions it brings in", ("distribution", "required by", "versions allowed here")
    )
    for distribution, required_by, allowed in requirement_rows(report):
        table.add_row(escape(distribution), escape(required_by), escape(allowed) or "[red]none[/red]")
    return table


def _requirement_files_table(report: CheckReport, settings: Output) -> Table:
    """The other requirements whose library files were looked up on the index."""
    from rich.markup import escape

    from slimwheel.check.words import versions_words

    table = settings.table(
        "Other requirements, their library files read from the index",
        ("requirement", "versions read (of those allowed here)", "library files"),
    )
    for answer in report.requirement_files:
        if answer.problem is not None:
            table.add_row(escape(answer.requirement), f"[yellow]{escape(answer.problem)}[/yellow]", "")
            continue
        read = ", ".join(release.version for release in answer.releases)
        counts = ", ".join(str(len(release.files)) for release in answer.releases)
        table.add_row(
            escape(answer.requirement),
            escape(f"{read} (of {versions_words(answer.allowed)})"),
            escape(counts),
        )
    return table


def _lookup_text(lookup: Lookup, *, with_versions: bool) -> str:
    from rich.markup import escape

    from slimwheel.check.words import lookup_words

    def mark(style: str, text: str) -> str:
        return f"[{style}]{text}[/{style}]"

    return lookup_words(lookup, with_versions=with_versions, escape=escape, mark=mark)
