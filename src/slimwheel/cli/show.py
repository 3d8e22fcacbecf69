"""``slimwheel show WHEEL``: what a wheel bundles, links statically and needs, and what slimming saves."""

from __future__ import annotations

import argparse
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
    from slimwheel.analysis import IdentifiedRelease, WheelReport
    from slimwheel.cli._output import Output

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
    return print_wheel_reports("show", catalog, reports, _render, as_json=args.json, out=output_of(args))


def _render(report: WheelReport, settings: Output) -> None:
    from slimwheel.analysis import Resolution

    out = settings.console()
    out.print(
        f"[bold]{report.filename}[/bold]  {human_size(report.size)}  (catalog: {report.catalog_origin})"
    )
    table = settings.table("ELF files", ("file", "size", "soname", "needs -> resolves to", "rpath / runpath"))
    for elf in report.elf_files:
        lines = [
            f"{n.soname} -> {n.resolution.value}"
            + (f" ({', '.join(n.provided_by[:3])})" if n.provided_by else "")
            for n in elf.needed
            if n.resolution is not Resolution.SYSTEM
        ]
        system = sum(1 for n in elf.needed if n.resolution is Resolution.SYSTEM)
        if system:
            lines.append(f"+ {system} system libraries")
        needs = "\n".join(lines)
        paths = []
        if elf.rpath:
            paths.append("RPATH " + ":".join(elf.rpath))
        if elf.runpath:
            paths.append("RUNPATH " + ":".join(elf.runpath))
        table.add_row(
            elf.path, human_size(elf.size), elf.soname or "", needs or (elf.error or ""), "\n".join(paths)
        )
    out.print(table)
    if report.vendored:
        vendored = settings.table(
            "Vendored NVIDIA libraries", ("file", "original soname", "style", "size", "NVIDIA wheel", "match")
        )
        for copy in report.vendored:
            found = copy.identified
            vendored.add_row(
                copy.path,
                copy.original_soname,
                copy.style.value,
                human_size(copy.size),
                f"{found.distribution} {found.version}\n{found.official_path}" if found else "none known",
                _match_text(found),
            )
        out.print(vendored)
    if report.static:
        static = settings.table(
            "NVIDIA code linked statically",
            ("file", "library", "symbols", "~bytes", "exported", "version strings"),
        )
        for code in report.static:
            static.add_row(
                code.path,
                code.library,
                str(code.symbols),
                human_size(code.symbol_bytes),
                "yes" if code.exported else "no",
                ", ".join(code.version_strings),
            )
        out.print(static)
    fatbins = [(elf.path, elf.fatbin_size) for elf in report.elf_files if elf.fatbin_size]
    for path, size in fatbins:
        out.print(f"device code (.nv_fatbin) in {path}: {human_size(size)}")
    if report.findings:
        findings = settings.table("Findings", ("severity", "file", "finding"))
        for finding in report.findings:
            findings.add_row(finding.severity.value, finding.path, finding.message)
        out.print(findings)
    saved = report.size - report.projected_size
    share = f" ({100 * saved / report.size:.0f}% smaller)" if report.size else ""
    out.print(
        f"projected size once slimmed: {human_size(report.projected_size)} "
        f"(now {human_size(report.size)}){share}"
    )


def _match_text(found: IdentifiedRelease | None) -> str:
    if found is None:
        return ""
    text = f"{found.confidence.value} ({found.evidence})"
    return text + (f", 1 of {found.candidates} releases" if found.candidates > 1 else "")
