"""``slimwheel show WHEEL``: what a wheel bundles, links statically and needs, and what slimming saves."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from slimwheel.cli._common import (
    add_catalog_argument,
    human_size,
    load_catalog_from_args,
    output_of,
    print_wheel_reports,
)
from slimwheel.cli._index import add_index_arguments, open_index_client

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.table import Table

    from slimwheel.analysis import IdentifiedRelease, WheelReport
    from slimwheel.catalog.model import Catalog
    from slimwheel.check import CheckReport
    from slimwheel.cli._output import Output
    from slimwheel.html_report import RepairOutlook

HELP = "show what a wheel bundles or links statically, what it needs, and what NVIDIA's wheels could provide"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "wheels",
        nargs="+",
        type=Path,
        metavar="WHEEL",
        help="a .whl, a single ELF file, or a folder of files",
    )
    parser.add_argument("--json", action="store_true", help="print a slimwheel.show/1 JSON document")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write one self-contained HTML page: a size map of each wheel (area = bytes) before and "
        "after repair, coloured by what repair would do, these tables and check's (with --json too)",
    )
    parser.add_argument("--verify", action="store_true", help="also check every member against RECORD")
    parser.add_argument(
        "--no-strings", action="store_true", help="skip scanning .rodata for NVIDIA version strings (faster)"
    )
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="confirm vendored copies that match only by name by comparing GNU build-ids with the official "
        "files (reads those members from the index once; cached)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        help="worker processes for big wheels (default: CPUs, at most 4)",
    )
    add_catalog_argument(parser)
    add_index_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from slimwheel.analysis import analyse_wheel
    from slimwheel.sources import check_stored_elf_members, open_source
    from slimwheel.wheel import Wheel

    if args.html is not None:
        from slimwheel.html_report import check_html_path

        check_html_path(args.html)  # a bad path is refused before minutes of analysis, not after
    catalog = load_catalog_from_args(args)
    reports = []
    for path in args.wheels:
        with open_source(path) as source:
            if args.verify and isinstance(source, Wheel):
                source.verify()
            elif isinstance(source, Wheel):
                # Analysis reads stored members in place and checks no CRC: a damaged one is refused
                # here, as a deflated one is when analysis inflates it.
                check_stored_elf_members(source)
            reports.append(analyse_wheel(source, catalog, scan_strings=not args.no_strings, jobs=args.jobs))
    if args.confirm and any(report.vendored for report in reports):
        from slimwheel.catalog.confirm import BuildIdSource, confirm_report

        with open_index_client(args) as client:
            build_ids = BuildIdSource(client, client.cache)
            reports = [confirm_report(report, catalog, build_ids) for report in reports]
    if args.html is not None:
        _write_page(args, reports, catalog)
        output_of(args).note(f"wrote {args.html}")
    return print_wheel_reports("show", catalog, reports, _render, as_json=args.json, out=output_of(args))


def _write_page(args: argparse.Namespace, reports: Sequence[WheelReport], catalog: Catalog) -> None:
    from slimwheel import __version__
    from slimwheel.html_report import render_html, write_html

    paths: Sequence[Path] = args.wheels
    items = [(report, _outlook(path, report, catalog)) for path, report in zip(paths, reports, strict=True)]
    checks = _checks(args, paths, reports, catalog)
    write_html(args.html, render_html(items, checks=checks, generator=f"slimwheel {__version__} show --html"))


def _checks(
    args: argparse.Namespace, paths: Sequence[Path], reports: Sequence[WheelReport], catalog: Catalog
) -> list[CheckReport | str]:
    """What ``slimwheel check`` says of each wheel (its defaults: the wheel's platform, every CUDA major
    its requirements allow), from the analysis already made; or why it was not run: a wheel for
    Windows, or one whose tags and files name no platform (a pure ``py3-none-any`` wheel), which
    check runs on only with ``--platform``, an option show does not have. As check does, the index
    is resolved and asked only when a library is left that only a non-NVIDIA requirement (torch...)
    can provide."""
    from slimwheel.check import check_wheel
    from slimwheel.check.target import platform_of
    from slimwheel.cli._index import index_settings
    from slimwheel.errors import InputError
    from slimwheel.index.cache import Cache
    from slimwheel.index.dist_files import IndexDistFiles
    from slimwheel.sources import open_source

    checks: list[CheckReport | str] = []
    with IndexDistFiles(
        lambda: index_settings(args), cache=Cache.default(), refresh=args.refresh
    ) as dist_files:
        for path, report in zip(paths, reports, strict=True):
            with open_source(path) as source:
                machines = (elf.machine for elf in report.elf_files)
                try:
                    platform_of(source.filename, source.platform_tags, machines, None)
                except InputError:
                    tags = ", ".join(source.platform_tags) or "none"
                    checks.append(
                        "check was not run: it simulates glibc's loader on one Linux platform, which this "
                        f"wheel's platform tags ({tags}) and ELF files do not name; `slimwheel check "
                        "--platform manylinux_x86_64` checks it as a Linux wheel"
                    )
                    continue
                checks.append(check_wheel(source, catalog, dist_files=dist_files, report=report))
    return checks


def _outlook(path: Path, report: WheelReport, catalog: Catalog) -> RepairOutlook:
    """What repair would leave, from repair's own planning (pure and offline: no build environment,
    no index); the report's projection where repair would not plan (not a wheel, or it refuses)."""
    from slimwheel.errors import SlimwheelError
    from slimwheel.html_report import outlook_from_plan, outlook_from_report
    from slimwheel.repair.pipeline import copies_named_by_code
    from slimwheel.repair.plan import plan_repair
    from slimwheel.sources import open_source
    from slimwheel.wheel import Wheel

    with open_source(path) as source:
        if not isinstance(source, Wheel):
            return outlook_from_report(report, "not a wheel, so repair would not plan")
        try:
            plan = plan_repair(
                report,
                catalog,
                requires_dist=source.requires_dist(),
                dist_info=source.dist_info,
                named_by_code=copies_named_by_code(source, report),
                classifiers=source.metadata().get_all("Classifier") or (),
            )
        except SlimwheelError as exc:
            return outlook_from_report(report, f"repair would refuse: {exc}")
    return outlook_from_plan(report, plan)


def _render(report: WheelReport, settings: Output) -> None:
    from rich.markup import escape

    out = settings.console()
    out.print(
        f"[bold]{escape(report.filename)}[/bold]  {human_size(report.size)}  "
        f"(catalog: {escape(report.catalog_origin)})"
    )
    # On a terminal a file's name is broken after a "/" rather than mid-name where it can be.
    path_width = max(16, out.width // 3 - 4) if settings.terminal else 0
    if report.elf_files:
        out.print(_elf_table(report, settings, path_width))
    else:
        out.print(_no_elf_files(report))
    if report.vendored:
        out.print(_vendored_table(report, settings, path_width))
    if report.static:
        static = settings.table(
            "NVIDIA code linked statically",
            ("file", "library", "API symbols", "their bytes", "exported", "version strings"),
        )
        for code in report.static:
            static.add_row(
                escape(code.path),
                escape(code.library),
                str(code.symbols),
                human_size(code.symbol_bytes),
                "yes" if code.exported else "no",
                escape(", ".join(code.version_strings)),
            )
        out.print(static)
    fatbins = [(elf.path, elf.fatbin_size) for elf in report.elf_files if elf.fatbin_size]
    for path, size in fatbins:
        out.print(f"device code (.nv_fatbin) in {escape(path)}: {human_size(size)}")
    if report.findings:
        findings = settings.table("Findings", ("severity", "file", "finding"))
        for finding in report.findings:
            findings.add_row(
                finding.severity.value, escape(_lines(finding.path, path_width)), escape(finding.message)
            )
        out.print(findings)
    saved = report.size - report.projected_size
    share = f" ({100 * saved / report.size:.0f}% smaller)" if report.size else ""
    out.print(
        f"projected size once slimmed: {human_size(report.projected_size)} "
        f"(now {human_size(report.size)}){share}"
    )


def _no_elf_files(report: WheelReport) -> str:
    """What an empty ELF table means: a pure wheel, or one for another OS, whose libraries show does
    not read (a Windows wheel's DLLs)."""
    from rich.markup import escape

    from slimwheel.platforms import platform_of_tag

    platforms = [p for p in map(platform_of_tag, report.platform_tags) if p is not None]
    if platforms and not any(p.os == "linux" for p in platforms):
        tags = ", ".join(report.platform_tags)
        return (
            f"no ELF files: a wheel for {escape(tags)}; show reads the ELF files a Linux wheel carries, "
            "not Windows DLLs or macOS dylibs"
        )
    return "no ELF files: nothing in this wheel is loaded by glibc's loader"


def _elf_table(report: WheelReport, settings: Output, path_width: int) -> Table:
    from rich.markup import escape

    from slimwheel.report import elf_rows

    # One row per fact (a file needs one library, found in one place), so that no cell's wrapped lines
    # can drift beside another's. On a terminal the file's own facts (size, soname, search path) stand
    # under its name on its first row (more columns would squeeze the answers at 80 columns); in a pipe
    # the file's name is on every row (grep finds its needs) and its facts have columns, on its first row.
    if settings.terminal:
        table = settings.table("ELF files", ("file", "needs", "resolves to"), no_wrap=("needs",))
    else:
        table = settings.table(
            "ELF files", ("file", "size", "soname", "needs", "resolves to", "rpath / runpath")
        )
    rows = elf_rows(report)
    for index, row in enumerate(rows):
        last = index + 1 == len(rows) or rows[index + 1].first
        if settings.terminal:
            label = ""
            if row.first:
                facts = ", ".join(filter(None, (row.size, row.soname and f"soname {row.soname}")))
                label = escape(_lines(row.file, path_width)) + f"\n[dim]{escape(facts)}[/dim]"
                if row.search_path:
                    label += f"\n[dim]{escape(row.search_path)}[/dim]"
            table.add_row(label, escape(row.needs), escape(row.resolves_to), end_section=last)
        else:
            first = row.first
            table.add_row(
                escape(row.file),
                row.size if first else "",
                escape(row.soname) if first else "",
                escape(row.needs),
                escape(row.resolves_to),
                escape(row.search_path) if first else "",
            )
    return table


def _vendored_table(report: WheelReport, settings: Output, path_width: int) -> Table:
    from rich.markup import escape

    columns: tuple[str, ...] = ("file", "original soname", "size", "NVIDIA wheel", "match")
    if not settings.terminal:
        columns = ("file", "original soname", "style", "size", "NVIDIA wheel", "installs as", "match")
    vendored = settings.table("Vendored NVIDIA libraries", columns, no_wrap=("original soname",))
    for copy in report.vendored:
        found = copy.identified
        release = f"{found.distribution} {found.version}" if found else "none known"
        if settings.terminal:
            # The naming style is the file's own fact: under its name, as the ELF table does.
            vendored.add_row(
                escape(_lines(copy.path, path_width)) + f"\n[dim]{copy.style.value} copy[/dim]",
                escape(copy.original_soname),
                human_size(copy.size),
                escape(release),
                escape(_match_text(found)),
            )
        else:
            vendored.add_row(
                escape(copy.path),
                escape(copy.original_soname),
                copy.style.value,
                human_size(copy.size),
                escape(release),
                escape(found.official_path) if found else "",
                escape(_match_text(found)),
            )
    return vendored


def _lines(path: str, width: int) -> str:
    """``path`` in lines of at most ``width`` characters, each broken after a "/" (a name longer than
    ``width`` stays whole here, and the table folds it); ``width`` 0: one line."""
    if width <= 0:
        return path
    lines = [""]
    for part in re.split(r"(?<=/)", path):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def _match_text(found: IdentifiedRelease | None) -> str:
    if found is None:
        return ""
    text = f"{found.confidence.value} ({found.evidence})"
    return text + (f", 1 of {found.candidates} releases" if found.candidates > 1 else "")
