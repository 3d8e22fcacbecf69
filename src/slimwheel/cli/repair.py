"""``slimwheel repair WHEEL... -w OUTDIR``: make a wheel use NVIDIA's wheels instead of its own copies."""

from __future__ import annotations

import argparse
import posixpath
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slimwheel.cli._common import add_catalog_argument, console, human_size, load_catalog_from_args
from slimwheel.errors import UsageError

if TYPE_CHECKING:
    from slimwheel.catalog.model import Catalog
    from slimwheel.repair import EmbeddedLoader, RepairOptions, RepairPlan
    from slimwheel.repair.environment import BuildEnvironment
    from slimwheel.wheel import Wheel

HELP = "drop vendored NVIDIA libraries, add Requires-Dist and RPATHs to NVIDIA's wheels, record it all"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL")
    parser.add_argument("-w", "--wheel-dir", type=Path, default=Path("wheelhouse"), help="output folder")
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
        "--cuda", type=int, help="the CUDA major the wheel was built for, when both could fit"
    )
    parser.add_argument(
        "--linked-version",
        action="append",
        default=[],
        metavar="LIB=VERSION",
        help="the provider version the wheel was linked against, e.g. cudss=1.0.0.35",
    )
    parser.add_argument("--only", action="append", default=[], metavar="LIB", help="only these libraries")
    parser.add_argument("--exclude", action="append", default=[], metavar="LIB", help="leave these alone")
    parser.add_argument("--runpath", action="store_true", help="write DT_RUNPATH instead of DT_RPATH")
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
    add_catalog_argument(parser)


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


def _linked_versions(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        name, sep, version = pair.partition("=")
        if not sep or not name or not version:
            raise UsageError(f"--linked-version {pair!r}: expected LIB=VERSION, e.g. cudss=1.0.0.35")
        found[name.strip()] = version.strip()
    return found


def run(args: argparse.Namespace) -> int:
    from slimwheel.repair import RepairOptions, VersionPolicy
    from slimwheel.repair.environment import BuildEnvironment
    from slimwheel.report import dump_report

    catalog = load_catalog_from_args(args)
    options = RepairOptions(
        policy=VersionPolicy(args.policy),
        cuda_major=args.cuda,
        linked_versions=_linked_versions(args.linked_version),
        only=frozenset(args.only),
        exclude=frozenset(args.exclude),
        use_runpath=args.runpath,
        force=args.force,
    )
    if args.isolated_environment:
        environment = None
    elif args.build_python:
        environment = BuildEnvironment.of_interpreter(args.build_python)
    else:
        environment = BuildEnvironment()
    embed = None if args.embed_loader is None else tuple(args.embed_loader)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="slimwheel-auditwheel-") as scratch:
        for index, original in enumerate(args.wheels):
            scratch_dir = Path(scratch) / str(index)
            results.append(
                _repair_one(
                    original,
                    scratch_dir,
                    args=args,
                    catalog=catalog,
                    options=options,
                    environment=environment,
                    embed=embed,
                )
            )
    if args.json:
        print(dump_report("repair", {"dry_run": args.dry_run, "wheels": results}))
    return 0


def _repair_one(
    original: Path,
    scratch: Path,
    *,
    args: argparse.Namespace,
    catalog: Catalog,
    options: RepairOptions,
    environment: BuildEnvironment | None,
    embed: tuple[str, ...] | None,
) -> dict[str, Any]:
    from slimwheel.analysis import analyse_wheel
    from slimwheel.repair import plan_repair
    from slimwheel.repair.apply import apply_plan
    from slimwheel.repair.auditwheel import needs_auditwheel, nvidia_sonames_to_exclude, run_auditwheel
    from slimwheel.repair.embed import embed_request, is_loader_file
    from slimwheel.wheel import Wheel

    path = original
    excluded: tuple[str, ...] = ()
    with Wheel.open(path) as wheel:
        report = analyse_wheel(wheel, catalog, unread=_copies_to_drop(wheel, catalog, options))
    if needs_auditwheel(report) and not args.no_auditwheel and not args.dry_run:
        excluded = nvidia_sonames_to_exclude(report)
        path = run_auditwheel(path, scratch, excluded, plat=args.plat)
    with Wheel.open(path) as wheel:
        if path != original:
            report = analyse_wheel(wheel, catalog, unread=_copies_to_drop(wheel, catalog, options))
        python_sources = {
            m.name: wheel.read_member(m.name)
            for m in wheel.members
            if m.name.endswith(".py") and m.file_size < 1 << 20 and not is_loader_file(m.name)
        }
        plan = plan_repair(
            report,
            catalog,
            requires_dist=wheel.requires_dist(),
            dist_info=wheel.dist_info,
            python_sources=python_sources,
            options=options,
            environment=environment,
            embed=None if embed is None else embed_request(wheel, embed),
        )
    output = None if args.dry_run else apply_plan(path, plan, args.wheel_dir)
    if not args.json:
        _render(plan, original, output, excluded)
    return {
        "input": str(original),
        "auditwheel": {"excluded": list(excluded), "output": path.name} if path != original else None,
        "output": str(output) if output else None,
        "size_before": original.stat().st_size,
        "size_after": output.stat().st_size if output else None,
        "plan": plan,
    }


def _copies_to_drop(wheel: Wheel, catalog: Catalog, options: RepairOptions) -> list[str]:
    """Copies repair will drop need not be read: inflating them is most of the work otherwise."""
    from slimwheel.analysis import named_like_copies

    return [name for name, stem in named_like_copies(wheel, catalog).items() if options.wants(stem)]


def _render(plan: RepairPlan, path: Path, output: Path | None, excluded: tuple[str, ...]) -> None:
    out = console()
    verb = "would" if output is None else "did"
    out.print(f"[bold]{path.name}[/bold] (CUDA {plan.cuda_major}, {plan.platform})")
    if excluded:
        out.print(f"  did run   auditwheel repair -> {plan.wheel}, excluding {', '.join(excluded)}")
    for name in plan.drop:
        out.print(f"  {verb} drop      {name}")
    for edit in plan.edits:
        for old, new in edit.replace_needed:
            out.print(f"  {verb} rename    {edit.path}: NEEDED {old} -> {new}")
        if edit.search_path is not None:
            kind = "RUNPATH" if edit.runpath else "RPATH"
            out.print(f"  {verb} set {kind:<7} {edit.path}: {':'.join(edit.search_path) or '(none)'}")
    for requirement in plan.requirements:
        out.print(
            f"  {verb} require   {requirement.requirement}  "
            f"[dim](linked {requirement.linked_version} from {requirement.version_source}; "
            f"{requirement.range_reason})[/dim]"
        )
    for line in plan.kept_requirements:
        out.print(f"  kept      Requires-Dist: {line}")
    out.print(f"  {verb} record    {plan.manifest_path} ({len(plan.manifest.libraries)} libraries)")
    for loader in plan.embedded:
        _render_embedded(loader, verb)
    for line in plan.left_alone:
        out.print(f"  [yellow]left alone[/yellow] {line}")
    for line in plan.warnings:
        print(f"slimwheel repair: warning: {line}", file=sys.stderr)
    if output is not None:
        before, after = path.stat().st_size, output.stat().st_size
        out.print(f"  wrote {output}: {human_size(after)} (was {human_size(before)})")


def _render_embedded(loader: EmbeddedLoader, verb: str) -> None:
    out = console()
    folder = posixpath.dirname(loader.files[0].path) if loader.files else loader.package
    size = human_size(sum(f.size for f in loader.files))
    line = f"  {verb} embed     {folder}/: {len(loader.files)} files of slimwheel.runtime ({size})"
    if loader.replaced:
        line += f", replacing the {len(loader.replaced)} an earlier --embed-loader wrote"
    out.print(line)
    init = loader.init
    call = init.lines[3]
    if not init.changes_anything:
        out.print(f"  kept      {init.path}: line {init.after_line + 1} already calls {call}")
        return
    where = f"after line {init.after_line}" if init.after_line else "at the top"
    if init.removed is not None:
        where += f", replacing the call at lines {init.removed[0]}-{init.removed[1]}"
    out.print(f"  {verb} call      {call} in {init.path}, {where}")
