"""``slimwheel repair WHEEL... -w OUTDIR``: make a wheel use NVIDIA's wheels instead of its own copies."""

from __future__ import annotations

import argparse
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slimwheel.cli._common import (
    add_catalog_argument,
    human_size,
    load_catalog_from_args,
    output_of,
    parse_cuda_majors,
)
from slimwheel.cli._index import add_dist_files_arguments, open_dist_files
from slimwheel.errors import SlimwheelError, UsageError
from slimwheel.wording import and_list

if TYPE_CHECKING:
    from slimwheel.catalog.model import Catalog
    from slimwheel.cli._output import Output
    from slimwheel.repair import EmbeddedLoader, RepairPlan
    from slimwheel.repair.environment import BuildEnvironment
    from slimwheel.repair.pipeline import OutputCheck, RepairOutcome, RepairRefusedError
    from slimwheel.repair.plan import ElfEdit
    from slimwheel.wheel import Wheel

HELP = "drop vendored NVIDIA libraries, add Requires-Dist and RPATHs to NVIDIA's wheels, record it all"
EXIT_CODES = (
    "exit status: 0 every wheel written (or, with --dry-run, would be) and passing check; 1 a wheel "
    "fails check (not written, unless --allow-broken); 2 bad usage or input (the worst of the wheels "
    "wins); 130 interrupted."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL")
    parser.add_argument(
        "-w",
        "--wheel-dir",
        type=Path,
        default=Path("wheelhouse"),
        metavar="OUTDIR",
        help="output folder (default: wheelhouse, in the current folder)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan; write nothing")
    parser.add_argument("--json", action="store_true", help="print a slimwheel.repair/1 JSON document")
    parser.add_argument(
        "--policy",
        choices=("compatible", "minimum", "exact"),
        default="compatible",
        help="version range: up to the first release that moves or renames the library (default), "
        "only a lower bound, or the linked version exactly",
    )
    parser.add_argument(
        "--cuda",
        metavar="N[,N...]",
        help="the CUDA major the wheel was built for, where several could fit; for a wheel built for "
        "several majors, one (its other majors' files are left to the host) or several (12,13: each "
        "file linked to its own major's wheels, each major's requirements behind an extra, cu12, cu13)",
    )
    parser.add_argument(
        "--linked-version",
        action="append",
        default=[],
        metavar="LIB=VERSION",
        help="the provider version the wheel was linked against, e.g. cudss=1.0.0.35",
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="LIB", help="only these libraries (cudss, or a soname)"
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="LIB",
        help="leave these alone, to the host (cublas, every soname of it, or libcublas.so.11 alone): their "
        "copies stay, and check's not-found is a warning",
    )
    parser.add_argument(
        "--optional",
        action="append",
        default=[],
        metavar="LIB[=EXTRA]",
        help="require LIB's NVIDIA wheel only under an extra (default: the library's name), for a "
        "library the package loads only on request: `--optional cutensor` writes `cutensor-cu12...; "
        'extra == "cutensor"` and Provides-Extra: cutensor',
    )
    parser.add_argument("--runpath", action="store_true", help="write DT_RUNPATH instead of DT_RPATH")
    parser.add_argument(
        "--drop-unused-needed",
        action="store_true",
        help="remove the DT_NEEDED entries of NVIDIA libraries a file imports no symbol from (what "
        "-Wl,--as-needed would have left out; show lists them as unused-needed), and the requirements "
        "only they made",
    )
    parser.add_argument(
        "--force", action="store_true", help="also drop copies Python may load by path and a bundled driver"
    )
    parser.add_argument(
        "--build-python",
        metavar="PYTHON",
        help="read linked versions and the providers' own needs from this interpreter's environment "
        "(default: the one slimwheel runs in)",
    )
    parser.add_argument(
        "--isolated-environment",
        action="store_true",
        help="do not read linked versions from the NVIDIA wheels installed in this environment",
    )
    parser.add_argument(
        "--no-auditwheel",
        action="store_true",
        help="repair a linux_* wheel as it is (its tag stays linux_*, which PyPI refuses)",
    )
    parser.add_argument(
        "--plat", help="auditwheel's target for linux_* wheels (default: the lowest that fits)"
    )
    parser.add_argument(
        "--embed-loader",
        nargs="?",
        const="",
        action=_EmbedLoader,
        metavar="PACKAGE",
        help="copy slimwheel.runtime into the package, with a call at its import that loads the NVIDIA "
        "libraries, so it needs no slimwheel at run time (default: the packages whose extension modules "
        "need them; --embed-loader=PKG[,PKG] names them)",
    )
    parser.add_argument(
        "--allow-broken",
        action="store_true",
        help=(
            "write the wheel even when check finds errors in it, the input's own or ones repair "
            "introduced (exit status stays 1)"
        ),
    )
    parser.add_argument(
        "--keep-extras-optional",
        action="store_true",
        help="a provider the wheel requires only under an extra stays optional (for packages that "
        "dlopen NVIDIA libraries on demand); by default repair adds it as a hard requirement",
    )
    add_catalog_argument(parser)
    add_dist_files_arguments(parser)


class _EmbedLoader(argparse.Action):
    """``--embed-loader`` alone (packages picked from the manifest), or ``--embed-loader=PKG[,PKG]``;
    repeatable. A wheel right after the bare option would be taken for its value: that is refused."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,  # noqa: ARG002
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,  # noqa: ARG002
    ) -> None:
        asked: list[str] = list(getattr(namespace, self.dest) or [])
        given = values if isinstance(values, str) else ""
        for name in filter(None, (part.strip() for part in given.split(","))):
            if not all(part.isidentifier() for part in name.split(".")):
                raise argparse.ArgumentError(
                    self,
                    f"{name!r} is not a package name: write --embed-loader=PACKAGE, or put a bare "
                    "--embed-loader after the wheels",
                )
            if name not in asked:
                asked.append(name)
        setattr(namespace, self.dest, asked)


def _linked_versions(pairs: list[str]) -> dict[str, tuple[str, ...]]:
    """``--linked-version LIB=VERSION``, repeated: library name -> its versions, in the order given (a
    several-major repair takes one a major)."""
    from slimwheel.repair.plan import versions_by_name

    parsed = []
    for pair in pairs:
        name, sep, version = (part.strip() for part in pair.partition("="))
        if not sep or not name or not version:
            raise UsageError(f"--linked-version {pair!r}: expected LIB=VERSION, e.g. cudss=1.0.0.35")
        parsed.append((name, version))
    return versions_by_name(parsed)


_OPTIONAL_SPEC = re.compile(r"(?P<library>[^=<>!~\s]+)(?:=(?P<extra>[^=]*))?")


def _optional_extras(specs: list[str]) -> dict[str, str]:
    """``--optional LIB[=EXTRA]``: library name -> extra, normalized as PEP 685 compares them."""
    from packaging.utils import canonicalize_name

    from slimwheel.metadata import is_extra_name
    from slimwheel.names import parse_library_spec

    found: dict[str, str] = {}
    for spec in specs:
        parts = _OPTIONAL_SPEC.fullmatch(spec.strip())
        if parts is None:
            raise UsageError(
                f"--optional {spec!r}: expected LIB or LIB=EXTRA (no version)",
                hint="e.g. --optional cutensor or --optional nccl=distributed",
            )
        library, extra = parts["library"], parts["extra"] or ""
        name = parse_library_spec(library).name
        extra = extra.strip() or name
        if not is_extra_name(extra):
            raise UsageError(
                f"--optional {spec!r}: {extra!r} is not an extra's name",
                hint="letters, digits, '.', '_' and '-', e.g. --optional nccl=distributed",
            )
        found[name] = canonicalize_name(extra)
    return found


def run(args: argparse.Namespace) -> int:
    from slimwheel.catalog.exports import IndexExports
    from slimwheel.index.cache import Cache
    from slimwheel.names import left_to_host_name, parse_library_spec
    from slimwheel.repair import RepairOptions, VersionPolicy
    from slimwheel.repair.pipeline import RepairRefusedError, prepare_output_dir, repair_wheel
    from slimwheel.report import dump_report

    majors = parse_cuda_majors(args.cuda) if args.cuda is not None else ()
    catalog = load_catalog_from_args(args)
    options = RepairOptions(
        policy=VersionPolicy(args.policy),
        cuda_major=majors[0] if len(majors) == 1 else None,
        cuda_majors=majors if len(majors) > 1 else (),
        linked_versions=_linked_versions(args.linked_version),
        only=frozenset(parse_library_spec(name).name for name in args.only),
        exclude=frozenset(left_to_host_name(name) for name in args.exclude),
        use_runpath=args.runpath,
        force=args.force,
        keep_extras_optional=args.keep_extras_optional,
        optional=_optional_extras(args.optional),
        drop_unused=args.drop_unused_needed,
    )
    environment = _environment(args)
    out = output_of(args)
    if not args.dry_run:
        prepare_output_dir(args.wheel_dir)  # an unusable -w fails before any work
    results: list[dict[str, Any]] = []
    failed = False
    worst = 0  # one wheel that cannot be repaired does not stop the others: its error's exit code
    with open_dist_files(args) as dist_files:
        # What NVIDIA's releases export, read through the same index client (offline: the cache only).
        exports = IndexExports(lambda: dist_files.client, Cache.default())
        for original in args.wheels:
            catalog_warnings: list[tuple[str, str]] = []

            def learned(wheel: Wheel) -> Catalog:
                nonlocal catalog, catalog_warnings
                catalog, catalog_warnings = _with_required_releases(catalog, wheel, args)
                return catalog

            try:
                outcome = repair_wheel(
                    original,
                    args.wheel_dir,
                    catalog,
                    options=options,
                    environment=environment,
                    embed=args.embed_loader,
                    dry_run=args.dry_run,
                    use_auditwheel=not args.no_auditwheel,
                    plat=args.plat,
                    allow_broken=args.allow_broken,
                    dist_files=dist_files,
                    preloaded=tuple(args.preloaded),
                    exports=exports,
                    progress=out.progress(),
                    catalog_for=learned,
                )
            except RepairRefusedError as refused:
                _warn(out, catalog_warnings)
                failed = True
                outcome = refused.outcome
                if not args.json:
                    _render(outcome, out)
                _say_refused(refused, out)
            except SlimwheelError as error:
                if error.exit_code != 2:  # bad input: its one line, no word on the catalog
                    _warn(out, catalog_warnings)
                worst = max(worst, error.exit_code)
                text = str(error)
                named = (
                    text if text.startswith((original.name, str(original))) else f"{original.name}: {text}"
                )
                out.error(named)
                results.append({"input": str(original), "error": text, "exit_code": error.exit_code})
                continue
            else:
                _warn(out, catalog_warnings)
                failed = failed or not outcome.ok
                if not args.json:
                    _render(outcome, out)
                _say_check(outcome, out)
            results.append(_outcome_json(outcome))
    if args.json:
        print(dump_report("repair", {"dry_run": args.dry_run, "wheels": results}), file=out.out)
    return max(worst, 1 if failed else 0)


def _environment(args: argparse.Namespace) -> BuildEnvironment | None:
    """Where installed NVIDIA wheels are looked at: none (--isolated-environment), another
    interpreter's (--build-python), or this one's."""
    from slimwheel.repair.environment import BuildEnvironment

    if args.isolated_environment:
        return None
    if args.build_python:
        return BuildEnvironment.of_interpreter(args.build_python)
    return BuildEnvironment()


def _with_required_releases(
    catalog: Catalog, wheel: Wheel, args: argparse.Namespace
) -> tuple[Catalog, list[tuple[str, str]]]:
    """The wheel's word counts: NVIDIA distributions it requires that the catalog does not know (CUDA
    11's cuDNN) are learned from the index first, and kept in the user's catalog for the next run.
    Also the warnings (message, what to do) for those that were not learned: said once the wheel's
    repair is known, not when it is refused as bad input."""
    from slimwheel.catalog.learn import learn_on_demand, unknown_nvidia_requirements
    from slimwheel.catalog.store import user_catalog_path
    from slimwheel.cli._index import open_index_client
    from slimwheel.errors import IndexUnavailableError

    names = unknown_nvidia_requirements(catalog, wheel.distribution, wheel.requires_dist())
    if not names:
        return catalog, []
    listed = ", ".join(names)
    out = output_of(args)
    fix = f"run `slimwheel catalog update {' '.join(names)}` once with the index reachable"
    if args.offline:
        return catalog, [(f"{listed}: not in the catalog (--offline: not learned)", fix)]
    try:
        with open_index_client(args) as client, out.progress().step(f"learning {listed}"):
            return learn_on_demand(catalog, names, client, save_to=user_catalog_path()), []
    except IndexUnavailableError as exc:
        return catalog, [(f"{listed}: not in the catalog, and not learned: {exc}", fix)]


def _warn(out: Output, warnings: list[tuple[str, str]]) -> None:
    for message, fix in warnings:
        out.warn(message, fix=fix)


def _outcome_json(outcome: RepairOutcome) -> dict[str, Any]:
    audited = outcome.auditwheel_output
    return {
        "input": str(outcome.input),
        "auditwheel": {"excluded": list(outcome.auditwheel_excluded), "output": audited} if audited else None,
        "output": str(outcome.output) if outcome.output else None,
        "size_before": outcome.size_before,
        "size_after": outcome.size_after,
        "plan": outcome.plan,
        "check": outcome.check,
    }


def _say_refused(refused: RepairRefusedError, out: Output) -> None:
    name = refused.outcome.input.name
    out.error(f"{name}: not written (--allow-broken writes it anyway):")
    _say_problems(name, refused.outcome.check, out)


def _say_problems(name: str, check: OutputCheck, out: Output) -> None:
    """One line per problem: the files, the sonames and why; what repair caused apart from what it
    found. Files with the same problem share a line (pylibcudf's 129 extensions that each need
    libcudf.so from another wheel: one line, not 129), and so do the sonames that the same files miss
    for the same reason (cuequivariance's extension needs six of torch's libraries: one line, not six).
    Problems with one cause, whatever each file searched, share a line unless -v asks for each: fbgemm-gpu's
    19 files that need torch's libraries are one line on --preloaded torch, not ten."""
    from slimwheel.check.words import problem_lines

    for label, problems in (
        ("repair introduced", check.introduced),
        ("the input had it too", check.inherited),
    ):
        for where, message in problem_lines(problems, verbose=bool(out.verbose)):
            out.error(f"{name}: {where}: {message} [{label}]" if where else f"{name}: {message} [{label}]")


def _say_check(outcome: RepairOutcome, settings: Output) -> None:
    check = outcome.check
    if not check.ran or check.passes:
        return
    name = outcome.output.name if outcome.output else outcome.input.name
    settings.error(f"{name}: written with --allow-broken although it fails check ({check.errors} errors):")
    _say_problems(name, check, settings)


def _warn_plan(plan: RepairPlan, settings: Output) -> None:
    """The plan's warnings, each once; the providers not installed here to read, as one -v note."""
    for line in plan.warnings:
        settings.warn(line)
    if plan.unread_providers:
        names = ", ".join(plan.unread_providers)
        settings.warn(
            f"the NVIDIA libraries that {names} need in turn are not listed in the manifest: they are not "
            "installed here to read, nor read into the catalog; their own RPATHs find them at run time, so "
            "nothing needs doing (install them here, pass --build-python, or run "
            "`slimwheel catalog update --needed`, to list them)",
            verbose_only=True,
        )


def _edit_lines(edit: ElfEdit, verb: str) -> list[str]:
    """The lines (rich markup) that say what ``edit`` does to its file."""
    from rich.markup import escape

    lines = [
        f"  {verb} rename    {escape(edit.path)}: NEEDED {escape(old)} -> {escape(new)}"
        for old, new in edit.replace_needed
    ]
    lines += [
        f"  {verb} remove    {escape(edit.path)}: NEEDED {escape(name)}  [dim]("
        + (
            "it imports no symbol from it: --drop-unused-needed"
            if name in edit.unused
            else "its library loads it itself; nothing of it is bound"
        )
        + ")[/dim]"
        for name in edit.remove_needed
    ]
    if edit.search_path is not None:
        kind = "RUNPATH" if edit.runpath else "RPATH"
        why = f"  [dim]({escape(edit.reason)})[/dim]" if edit.reason else ""
        if edit.search_path:
            lines.append(
                f"  {verb} set {kind:<7} {escape(edit.path)}: {escape(':'.join(edit.search_path))}{why}"
            )
        else:
            lines.append(f"  {verb} remove {kind:<7} {escape(edit.path)}{why}")
    return lines


def _render(outcome: RepairOutcome, settings: Output) -> None:
    from rich.markup import escape

    plan, path, output, excluded = outcome.plan, outcome.input, outcome.output, outcome.auditwheel_excluded
    out = settings.console()
    verb = "would" if output is None else "did"
    if plan.cuda_majors:
        cuda = f"CUDA {and_list([str(major) for major in plan.cuda_majors])}, each file its own"
    else:
        cuda = "no CUDA major" if plan.cuda_major is None else f"CUDA {plan.cuda_major}"
    # Every value is escaped: rich reads "[...]" as markup, and requirements carry extras in brackets
    # (cuda-toolkit[cublas,cudart]==12.*), which it would silently drop.
    out.print(f"[bold]{escape(path.name)}[/bold] ({cuda}, {escape(str(plan.platform))})")
    if excluded:
        out.print(
            f"  did run   auditwheel repair -> {escape(plan.wheel)}, excluding {escape(', '.join(excluded))}"
        )
    for name in plan.drop:
        out.print(f"  {verb} drop      {escape(name)}")
    for edit in plan.edits:
        for line in _edit_lines(edit, verb):
            out.print(line)
    for requirement in plan.requirements:
        out.print(
            f"  {verb} require   {escape(requirement.requirement)}  "
            f"[dim](linked {escape(requirement.linked_version)} from {escape(requirement.version_source)}; "
            f"{escape(requirement.range_reason)})[/dim]"
        )
    for line in plan.kept_requirements:
        out.print(f"  kept      Requires-Dist: {escape(line)}")
    for line in plan.made_hard:
        out.print(f"  [yellow]made hard[/yellow] {escape(line)}")
    for line in plan.narrowed:
        out.print(f"  [yellow]narrowed[/yellow] {escape(line)}")
    for line in plan.kept_optional:
        out.print(f"  kept optional {escape(line)}")
    out.print(f"  {verb} record    {escape(plan.manifest_path)} ({len(plan.manifest.libraries)} libraries)")
    for loader in plan.embedded:
        _render_embedded(loader, verb, settings)
    for line in plan.left_alone:
        out.print(f"  [yellow]left alone[/yellow] {escape(line)}")
    _warn_plan(plan, settings)
    check = outcome.check
    if output is not None:
        after, before = human_size(outcome.size_after), human_size(outcome.size_before)
        out.print(f"  wrote {escape(str(output))}: {after} (was {before})")
        _render_check(outcome, settings)
    elif check.ran and not check.passes:
        out.print(
            f"  [red]not written[/red]: check finds {len(check.introduced)} errors repair introduced "
            f"and {len(check.inherited)} the input had too"
        )
    elif check.ran:  # --dry-run, written to a scratch folder, checked, thrown away
        after, before = human_size(outcome.size_after), human_size(outcome.size_before)
        out.print(f"  would write {after} (was {before})")
        _render_check(outcome, settings)


def _render_check(outcome: RepairOutcome, settings: Output) -> None:
    check = outcome.check
    if check.passes:
        kinds = ", ".join(f"{count} {kind}" for kind, count in check.warning_kinds.items())
        settings.console().print(
            f"  [green]check passes[/green] ({check.warnings} warnings{': ' + kinds if kinds else ''})"
        )
    else:
        settings.console().print(
            f"  [red]check fails[/red]: {check.errors} errors, {check.warnings} warnings"
        )


def _render_embedded(loader: EmbeddedLoader, verb: str, settings: Output) -> None:
    from rich.markup import escape

    out = settings.console()
    folder = posixpath.dirname(loader.files[0].path) if loader.files else loader.package
    size = human_size(sum(f.size for f in loader.files))
    line = f"  {verb} embed     {escape(folder)}/: {len(loader.files)} files of slimwheel.runtime ({size})"
    if loader.replaced:
        line += f", replacing the {len(loader.replaced)} an earlier --embed-loader wrote"
    out.print(line)
    init = loader.init
    call = init.lines[3]
    if not init.changes_anything:
        out.print(f"  kept      {escape(init.path)}: line {init.after_line + 1} already calls {escape(call)}")
        return
    where = f"after line {init.after_line}" if init.after_line else "at the top"
    if init.removed is not None:
        where += f", replacing the call at lines {init.removed[0]}-{init.removed[1]}"
    out.print(f"  {verb} call      {escape(call)} in {escape(init.path)}, {where}")
