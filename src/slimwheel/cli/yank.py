"""``slimwheel yank DIST==VER --root DEST``: mark a release yanked (PEP 592): pip and uv skip it unless it
is pinned exactly."""

from __future__ import annotations

import argparse

from slimwheel.cli.publish import add_destination_arguments, open_destination, print_document

__all__ = ["HELP", "add_arguments", "run"]

HELP = "mark a release of a static index yanked (PEP 592), or --undo it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", metavar="DIST==VER", help="the release to yank")
    add_destination_arguments(parser, flag="--root")
    parser.add_argument("--reason", metavar="TEXT", help="why (shown by pip when the release is installed)")
    parser.add_argument("--undo", action="store_true", help="un-yank the release")


def run(args: argparse.Namespace) -> int:
    from slimwheel.publish import apply_yank, plan_yank

    store = open_destination(args)
    try:
        plan = plan_yank(store, args.release, channel=args.channel, reason=args.reason, undo=args.undo)
        changed = False if args.dry_run or not plan.changes else apply_yank(store, plan)
    finally:
        store.close()
    if args.json:
        print_document("yank", {"dry_run": args.dry_run, "plan": plan, "changed": changed})
    else:
        verb = "un-yank" if plan.undo else "yank"
        state = "dry run: would " if args.dry_run else ""
        print(
            f"{state}{verb} {plan.project}=={plan.version}: {', '.join(plan.files)}"
            + ("" if plan.changes else " (already so)")
        )
    return 0
