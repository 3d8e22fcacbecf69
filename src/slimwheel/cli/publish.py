"""``slimwheel publish WHEEL... --to DEST``: upload wheels and update a static index (a folder or S3) in
one step, safely against concurrent publishers and kills."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slimwheel.publish import Store, WheelFacts

__all__ = ["HELP", "add_arguments", "add_destination_arguments", "open_destination", "print_document", "run"]

HELP = (
    "upload wheels into a static package index on a folder or S3 (PEP 503 + 691 pages, .metadata files), "
    "refusing changed files and names that exist on the public index"
)


def add_destination_arguments(
    parser: argparse.ArgumentParser, *, channel: bool = True, flag: str = "--to"
) -> None:
    parser.add_argument(
        flag,
        dest="destination",
        required=True,
        metavar="DEST",
        help="the index root: a folder, a file:// URL, or s3://BUCKET/PREFIX (endpoint and credentials "
        "from the usual AWS settings)",
    )
    if channel:
        parser.add_argument(
            "--channel", default="", metavar="NAME", help="a separate index under the root (nightly, test...)"
        )
    parser.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    parser.add_argument("--json", action="store_true", help="print a JSON document")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL", help="the wheels to publish")
    add_destination_arguments(parser)
    parser.add_argument(
        "--allow-public-name",
        action="append",
        default=[],
        metavar="NAME",
        help="publish this project although the public index has one of that name (it is yours); repeatable",
    )
    parser.add_argument(
        "--public-index-url",
        metavar="URL",
        help="the public index the names are checked against (default: pip's index, found as pip finds it)",
    )
    parser.add_argument(
        "--offline", action="store_true", help="do not check the names against the public index"
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="do not install and import each new wheel before listing it"
    )
    parser.add_argument(
        "--verify-index-url",
        metavar="URL",
        help="where verify installs the wheel's dependencies from (default: this channel of the index)",
    )


def open_destination(args: argparse.Namespace) -> Store:
    from slimwheel.publish import open_store

    return open_store(args.destination)


def print_document(command: str, payload: dict[str, Any]) -> None:
    from slimwheel.report import dump_report

    print(dump_report(command, payload))


def run(args: argparse.Namespace) -> int:
    from slimwheel.publish import apply_publish, check_public_names, index_url, plan_publish, read_wheels
    from slimwheel.publish.layout import check_channel

    check_channel(args.channel)
    wheels = read_wheels(args.wheels)
    store = open_destination(args)
    try:
        own = index_url(store, args.channel)
        settings = None
        if not args.offline:
            from slimwheel.index.config import resolve_index_settings

            settings = resolve_index_settings(index_url=args.public_index_url)
        names = check_public_names(
            {wheel.project for wheel in wheels},
            settings,
            allowed=args.allow_public_name,
            own_urls=[own] if own else [],
        )
        plan = plan_publish(store, wheels, channel=args.channel, names=names)
        if args.dry_run:
            _report(args, {"dry_run": True, "plan": plan})
            return 0
        verifier = None if args.no_verify else _verifier(args, own, wheels)
        result = apply_publish(store, plan, wheels, verifier=verifier)
        _report(args, {"dry_run": False, "plan": plan, "result": result})
    finally:
        store.close()
    return 0


def _verifier(args: argparse.Namespace, own: str | None, wheels: tuple[WheelFacts, ...]) -> Any:
    from slimwheel.catalog.store import load_catalog
    from slimwheel.verify import verify_wheel

    catalog = load_catalog(None)
    folders = tuple(dict.fromkeys(str(Path(wheel.path).parent) for wheel in wheels))

    def verify(wheel: WheelFacts) -> str | None:
        # The staged index: this channel as it is, plus the wheels of this publish (not yet listed).
        report = verify_wheel(
            Path(wheel.path), catalog, index_url=args.verify_index_url or own, find_links=folders
        )
        if report.ok:
            return None
        return "; ".join(
            f"{p.message} (CUDA {p.cuda_major}'s install)" if p.cuda_major is not None else p.message
            for p in report.problems
        )

    return verify


def _report(args: argparse.Namespace, payload: dict[str, Any]) -> None:
    if args.json:
        print_document("publish", payload)
        return
    plan = payload["plan"]
    for check in plan.names:
        if check.found_on:
            print(f"note: {check.project} is also on {', '.join(check.found_on)} (allowed by name)")
    for file in plan.files:
        print(f"{file.action:8} {file.filename}")
    result = payload.get("result")
    where = plan.index_url or plan.destination
    if result is None:
        print(f"dry run: nothing written; pip would read {where}")
        return
    requests = result.requests
    print(
        f"published to {where}: {len(result.uploaded)} files written, projects changed: "
        f"{', '.join(result.projects_changed) or 'none'} ({requests.requests} store requests, "
        f"{result.seconds:.2f} s)"
    )
