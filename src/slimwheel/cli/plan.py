"""``slimwheel plan LIB...``: which targets have NVIDIA wheels for these libraries; which link statically."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slimwheel.cli._common import add_catalog_argument, load_catalog_from_args, output_of, parse_cuda_majors
from slimwheel.cli._index import add_index_arguments, open_index_client
from slimwheel.errors import InputError, UsageError

if TYPE_CHECKING:
    from slimwheel.catalog.model import Catalog
    from slimwheel.cli._output import Output
    from slimwheel.names import LibrarySpec
    from slimwheel.targets import TargetPlan

HELP = "for every CUDA major x platform (x Python): the newest NVIDIA wheel for each library, or none"
EXIT_CODES = (
    "exit status: 0 all well; 1 with --strict, a target lacks a wheel, or with --expect, the answer "
    "changed; 2 bad usage or input (a library no NVIDIA wheel is known to ship); 130 interrupted."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("libraries", nargs="+", metavar="LIB", help="soname stems, e.g. cudss or cudss>=1.0")
    parser.add_argument("--cuda", default=None, help="CUDA majors, comma-separated (default: 12,13)")
    parser.add_argument(
        "--platform",
        action="append",
        default=[],
        metavar="P",
        help="target platform (repeatable; default: manylinux_x86_64, manylinux_aarch64, win_amd64)",
    )
    parser.add_argument("--python", default=None, help="Python versions, comma-separated (e.g. 3.10,3.13)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print a slimwheel.plan/1 JSON document")
    output.add_argument("--markdown", action="store_true", help="print a Markdown table for a project's docs")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target lacks a wheel")
    parser.add_argument(
        "--expect",
        type=Path,
        metavar="FILE",
        help="exit 1 when the answer differs from this saved --json output",
    )
    parser.add_argument("--offline", action="store_true", help="answer from the catalog only; ask no index")
    add_catalog_argument(parser)
    add_index_arguments(parser)


def _majors(text: str | None) -> list[int]:
    return [12, 13] if not text else list(parse_cuda_majors(text))


def _pythons(text: str | None) -> list[str | None]:
    if not text:
        return [None]
    pythons: list[str | None] = []
    for part in text.split(","):
        pieces = part.strip().split(".")
        if len(pieces) != 2 or not all(p.isdigit() for p in pieces):
            raise UsageError(f"--python {text!r}: expected versions like 3.10,3.13")
        pythons.append(part.strip())
    return pythons


def _refresh(
    catalog: Catalog, args: argparse.Namespace, libraries: list[LibrarySpec], majors: list[int]
) -> Catalog:
    """Ask the live index about the distributions that ship these libraries (and the obvious new names)."""
    from slimwheel.catalog.learn import learn_catalog

    names = {
        p.distribution
        for spec in libraries
        for p in catalog.providers(name=spec.name, include_prereleases=True)
    }
    for spec in libraries:
        for major in majors:
            names.add(f"nvidia-{spec.name.lower()}-cu{major}")
    progress = output_of(args).progress()
    with open_index_client(args) as client, progress.step("asking the index", total=None) as advance:
        fresh = learn_catalog(
            client,
            sorted(names),
            previous=catalog,
            follow_toolkit=False,
            follow_requirements=True,
            refresh=args.refresh,
            progress=lambda _what, done, _total: advance(done),
        )
    return catalog.overlaid_by(fresh)


def _refuse_unknown(catalog: Catalog, libraries: list[LibrarySpec]) -> None:
    """A name no NVIDIA wheel ships is a typo far more often than a gap: exit 2 with the nearest names,
    rather than "none: link statically here" everywhere."""
    import difflib

    known = sorted({p.library.name for p in catalog.iter_libraries()})
    lowered = {name.lower(): name for name in known}
    for spec in libraries:
        if spec.name.lower() in lowered:
            continue
        near = difflib.get_close_matches(spec.name.lower(), list(lowered), n=3, cutoff=0.6)
        hint = (
            "did you mean " + " or ".join(lowered[n] for n in near) + "?"
            if near
            else "name a soname stem, e.g. cudss for libcudss.so.0; `slimwheel catalog show` lists them"
        )
        raise UsageError(f"{spec.name}: no NVIDIA wheel in the catalog ships this library", hint=hint)


def run(args: argparse.Namespace) -> int:
    from slimwheel.names import parse_library_spec
    from slimwheel.platforms import DEFAULT_TARGET_PLATFORMS, parse_platform
    from slimwheel.report import dump_report
    from slimwheel.targets import Target, compare_plans, plan_targets, plan_to_dict

    libraries = [parse_library_spec(text) for text in args.libraries]
    majors = _majors(args.cuda)
    platforms = [parse_platform(p) for p in args.platform] or list(DEFAULT_TARGET_PLATFORMS)
    pythons = _pythons(args.python)
    expected: dict[str, Any] | None = None
    if args.expect is not None:
        try:
            expected = json.loads(args.expect.read_text())
        except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise InputError(str(args.expect), f"cannot read the saved plan ({exc})") from exc
    catalog = load_catalog_from_args(args)
    if not args.offline:
        catalog = _refresh(catalog, args, libraries, majors)
    _refuse_unknown(catalog, libraries)
    out = output_of(args)
    targets = [Target(m, p, py) for m in majors for p in platforms for py in pythons]
    plans = plan_targets(catalog, libraries, targets)
    document = plan_to_dict(plans, libraries)
    if args.json:
        print(dump_report("plan", {"catalog": catalog.origin, **document}), file=out.out)
    elif args.markdown:
        print(_markdown(plans, libraries), file=out.out)
    else:
        _render(plans, libraries, out)
    status = 0
    if args.strict and any(not plan.complete for plan in plans):
        gaps = ", ".join(f"{p.target.label} ({', '.join(p.missing)})" for p in plans if not p.complete)
        out.error(
            f"no NVIDIA wheel for {gaps} (name the targets you ship with --platform/--cuda, or drop "
            "--strict and keep --expect to be told only of changes)"
        )
        status = 1
    if expected is not None:
        differences = compare_plans(expected, json.loads(dump_report("plan", document)))
        for line in differences:
            print(f"slimwheel plan: changed: {line}", file=out.err)
        if differences:
            status = 1
    return status


def _cell(plan: TargetPlan, spec: LibrarySpec, code: bool) -> str:
    for lib in plan.libraries:
        if lib.name == spec.name and lib.dependency_of is None:
            path = f"`{lib.path}`" if code else lib.path
            return f"{lib.version} {path}"
    return "none: link statically here"


def _markdown(plans: list[TargetPlan], libraries: list[LibrarySpec]) -> str:
    show_python = any(plan.target.python for plan in plans)
    header = (
        ["CUDA", "platform"]
        + (["Python"] if show_python else [])
        + [str(s) for s in libraries]
        + ["manylinux"]
    )
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for plan in plans:
        row = [str(plan.target.cuda_major), plan.target.platform.key]
        row += [plan.target.python or ""] if show_python else []
        row += [_cell(plan, spec, code=True) for spec in libraries]
        row.append(plan.manylinux or ("n/a" if plan.target.platform.os != "linux" else ""))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _render(plans: list[TargetPlan], libraries: list[LibrarySpec], out: Output) -> None:
    columns = ("target", *(str(s) for s in libraries), "needs also", "manylinux")
    table = out.table("NVIDIA wheels per target", columns)
    for plan in plans:
        dependencies = ", ".join(f"{d.distribution} {d.version}" for d in plan.libraries if d.dependency_of)
        table.add_row(
            plan.target.label,
            *(_cell(plan, spec, code=False) for spec in libraries),
            dependencies,
            plan.manylinux or "",
        )
    out.console().print(table)
