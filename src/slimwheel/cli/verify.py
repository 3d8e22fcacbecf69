"""``slimwheel verify WHEEL``: install it into a fresh venv, import what it contains, and say where each
NVIDIA library was mapped from."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slimwheel.cli._common import add_catalog_argument, load_catalog_from_args, output_of

if TYPE_CHECKING:
    from rich.console import Console

    from slimwheel.cli._output import Output
    from slimwheel.verify import VerifyPlan, VerifyReport

HELP = (
    "install a wheel with its dependencies into a fresh venv, import its packages and extension modules in "
    "a fresh process, and check "
    "that each NVIDIA library was mapped once, from its provider's wheel"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("wheel", type=Path, metavar="WHEEL", help="a .whl")
    parser.add_argument(
        "--index-url",
        default=None,
        metavar="URL",
        help="install from this index only (pip runs --isolated; default: pip's own configuration)",
    )
    parser.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="DIR",
        help="install from this folder of wheels (with --no-index unless --index-url is given); repeatable",
    )
    parser.add_argument(
        "--import",
        dest="import_names",
        action="append",
        default=[],
        metavar="NAME",
        help="a module to import; repeatable; the names given replace the default: every top-level "
        "package and module of the wheel and each extension module this Python can load, by its dotted name",
    )
    parser.add_argument(
        "--lowest",
        action="store_true",
        help="pin the lowest NVIDIA releases its requirements allow (catalog) to prove the floor loads",
    )
    extras = parser.add_mutually_exclusive_group()
    extras.add_argument(
        "--extra",
        dest="extras",
        action="append",
        default=None,
        metavar="NAME",
        help="install the wheel with this extra of its own; repeatable; the names given replace the "
        "default: the extras its slimwheel manifest needs for the NVIDIA libraries repair left behind them",
    )
    extras.add_argument(
        "--no-extras", dest="extras", action="store_const", const=[], help="install the wheel with no extra"
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="ORIGINAL",
        help="also verify the wheel WHEEL was made from (before repair), with the same options, and fail "
        "only on problems it does not have: what the repair broke, not what the package does anyway",
    )
    parser.add_argument(
        "--python",
        default=None,
        metavar="PYTHON",
        help="make each venv with this interpreter (python3.12, or a path), to verify a wheel for another "
        "Python than the one running slimwheel (default: this one)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would be installed, imported and loaded, each venv's; install nothing",
    )
    parser.add_argument("--json", action="store_true", help="print a slimwheel.verify/1 JSON document")
    add_catalog_argument(parser)


def run(args: argparse.Namespace) -> int:
    from slimwheel.errors import InputError
    from slimwheel.report import dump_report
    from slimwheel.verify import plan_verify, verify_against, verify_wheel

    for given in (args.wheel, args.against):
        if given is not None and not given.exists():
            raise InputError(str(given), "no such file")
    # Anything else that is not a regular file (a FIFO, a device, a folder) is refused, without
    # blocking, when verify_wheel opens it.
    catalog = load_catalog_from_args(args)
    options: dict[str, Any] = {
        "index_url": args.index_url,
        "find_links": tuple(args.find_links),
        "import_names": tuple(args.import_names),
        "lowest": args.lowest,
        "extras": None if args.extras is None else tuple(args.extras),
        "python": args.python,
    }
    planning = dict(options)
    options["progress"] = output_of(args).progress()
    wheels = [args.wheel] if args.against is None else [args.wheel, args.against]
    if args.dry_run:
        return _dry_run(args, catalog.origin, [plan_verify(wheel, catalog, **planning) for wheel in wheels])
    if args.against is not None:
        report = verify_against(args.wheel, args.against, catalog, **options)
    else:
        report = verify_wheel(args.wheel, catalog, **options)
    if args.json:
        document = {"catalog": catalog.origin, "ok": report.ok, **_fields(report)}
        print(dump_report("verify", document), file=output_of(args).out)
    else:
        _render(report, output_of(args))
    return 0 if report.ok else 1


def _dry_run(args: argparse.Namespace, catalog: str, plans: list[VerifyPlan]) -> int:
    """``--dry-run``: each plan (the wheel's, and with --against the original's), nothing installed."""
    from rich.markup import escape

    from slimwheel.report import dump_report

    settings = output_of(args)
    if args.json:
        document = {"catalog": catalog, "dry_run": True, "plan": plans[0], "against": plans[1:] or None}
        print(dump_report("verify", document), file=settings.out)
        return 0
    out = settings.console()
    for plan in plans:
        out.print(
            f"[bold]{escape(plan.wheel)}[/bold]  dry run: nothing installed  (pip configuration: "
            f"{plan.pip_configuration}{': ' + escape(' '.join(plan.sources)) if plan.sources else ''})"
        )
        out.print(f"  each venv made with {escape(plan.python.described)}")
        for install in plan.installs:
            major = f" (CUDA {install.cuda_major}'s libraries)" if install.cuda_major is not None else ""
            out.print(f"  a fresh venv{major}: pip install {escape(install.requirement)}")
            if install.pins:
                pins = ", ".join(f"{p.distribution}=={p.version}" for p in install.pins)
                out.print(f"    lowest pins: {escape(pins)}")
            imported = [target.name for target in install.imports if target.importable]
            if imported:
                out.print(f"    would import, in one fresh process: {escape(', '.join(imported))}")
            for target in install.imports:
                if not target.importable:
                    out.print(f"    would not import {escape(target.name)}: {escape(target.error or '')}")
            if install.libraries:
                out.print(f"    would load, after the imports: {escape(', '.join(install.libraries))}")
            if install.programs:
                out.print(f"    would trace: {escape(', '.join(install.programs))}")
            for load in install.left_alone:
                out.print(f"    would leave {escape(load.member)}: {escape(load.error or '')}")
    return 0


def _fields(report: VerifyReport) -> dict[str, object]:
    from slimwheel.report import to_jsonable

    document: dict[str, object] = to_jsonable(report)
    return document


_IMPORT_COLOURS = {"ok": "green", "failed": "red", "skipped": "yellow", "not-run": "red"}


def _render(report: VerifyReport, settings: Output) -> None:
    from rich.markup import escape

    out = settings.console()
    imported = ", ".join(dict.fromkeys(i.name for i in report.imports if i.status != "skipped"))
    what = f"import {imported}" if imported else "load its shared libraries"
    out.print(
        f"[bold]{escape(report.wheel)}[/bold]  {escape(what)}  "
        f"(pip configuration: {report.pip_configuration})"
    )
    if report.python:
        out.print(f"venv made with {escape(report.python)}")
    if report.runs:
        each = ", ".join(
            f"CUDA {run.cuda_major} ({', '.join(run.extras) or 'no extra'})" if run.cuda_major is not None
            else ", ".join(run.extras) or "no extra"
            for run in report.runs
        )  # fmt: skip
        out.print(
            "one install per CUDA major, each with its own extras alone (a user installs one "
            f"major's): {escape(each)}"
        )
    elif report.extras:
        out.print("with the extras: " + escape(", ".join(report.extras)))
    if report.pins:
        out.print("lowest pins: " + escape(", ".join(f"{p.distribution}=={p.version}" for p in report.pins)))
    if report.imports:
        table = settings.table("imports", ("module", "from", "result"))
        for result in report.imports:
            colour = _IMPORT_COLOURS.get(result.status, "")
            status = f"[{colour}]{result.status}[/{colour}]" if colour else result.status
            detail = f": {escape(result.error)}" if result.error else ""
            if result.called and result.status == "ok":
                detail = f", then {escape(result.called)}, as its consumers call it"
            table.add_row(escape(result.name), escape(result.member or "--import"), status + detail)
        out.print(table)
    if report.loads:
        programs = any(load.kind == "program" for load in report.loads)
        title = "the wheel's other shared libraries, loaded after the imports"
        if programs:
            title = "the wheel's other shared libraries, loaded after the imports, and its programs, traced"
        table = settings.table(title, ("file", "result"))
        for load in report.loads:
            colour = _IMPORT_COLOURS.get(load.status, "")
            status = f"[{colour}]{load.status}[/{colour}]" if colour else load.status
            detail = f": {escape(load.error)}" if load.error else ""
            if load.after:
                detail = f" once {escape(', '.join(load.after))} was loaded (not on its search path)"
            elif load.kind == "program" and load.status == "ok":
                detail = " (its libraries all found; traced, not run)"
            table.add_row(escape(load.member), status + detail)
        out.print(table)
    if report.libraries:
        table = settings.table("NVIDIA libraries mapped", ("library", "path", "distribution", "expected"))
        for library in report.libraries:
            owner = escape(library.distribution or "none")
            table.add_row(
                escape(library.soname),
                escape(library.path),
                owner if library.ok else f"[red]{owner}[/red]",
                escape(", ".join(library.expected)),
            )
        out.print(table)
    _render_end(report, out, verbose=bool(settings.verbose))


def _render_end(report: VerifyReport, out: Console, *, verbose: bool) -> None:
    """The problems, what this machine could not judge, and the verdict; ``verbose``: each problem of
    the original's that the wheel does not have, not only how many of each kind."""
    from rich.markup import escape

    shared = set(report.against.shared) if report.against is not None else set()
    for problem in report.problems:
        where = f" (CUDA {problem.cuda_major}'s install)" if problem.cuda_major is not None else ""
        if problem in shared:
            out.print(f"[yellow]{problem.kind}[/yellow]{where} (the original too): {escape(problem.message)}")
        else:
            out.print(f"[red]{problem.kind}[/red]{where}: {escape(problem.message)}")
    gone = report.against.gone if report.against is not None else ()
    for problem in gone if verbose else ():
        out.print(f"[green]gone[/green] {problem.kind} (the original's): {escape(problem.message)}")
    if gone and not verbose:
        kinds: dict[str, int] = {}
        for problem in gone:
            kinds[problem.kind] = kinds.get(problem.kind, 0) + 1
        counted = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
        out.print(f"[green]gone[/green] of the original's problems: {counted} (-v says each)")
    if report.stand_ins:
        out.print(
            f"[yellow]stand-ins[/yellow]: {escape(', '.join(report.stand_ins))}: this machine has no NVIDIA "
            "driver, so the files that need it were loaded with a stand-in whose functions return an "
            "error (loaded, not run: where their NVIDIA libraries come from is judged, not the GPU code)"
        )
    if report.unjudged:
        out.print(
            f"[yellow]not judged[/yellow]: {escape(', '.join(report.unjudged))}: only libraries whose "
            "load was skipped need them (they need the NVIDIA driver, which this machine lacks, or a "
            "library the wheel leaves to the host or to an extra; the loads table says which: verify "
            "where it is installed judges them)"
        )
    verdict = "[green]passes[/green]" if report.ok else "[red]fails[/red]"
    unjudged = f", {len(report.unjudged)} not judged" if report.unjudged else ""
    mapped = f"{len(report.libraries)} NVIDIA libraries mapped{unjudged}"
    if report.against is None:
        out.print(f"{verdict}: {mapped}, {len(report.problems)} problems")
        return
    against = report.against
    out.print(
        f"{verdict} against {escape(Path(against.wheel).name)}: {mapped}, {len(against.new)} problems "
        f"the original does not have, {len(against.shared)} it has too, {len(against.gone)} of its gone"
    )
