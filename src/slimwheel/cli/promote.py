"""``slimwheel promote DIST==VER --from CH --to CH --root DEST``: copy a release's files from one
channel to another inside the store (no download) and list them there."""

from __future__ import annotations

import argparse

from slimwheel.cli.publish import add_destination_arguments, open_destination, print_document

__all__ = ["HELP", "add_arguments", "run"]

HELP = "copy a release from one channel of a static index to another (server-side, byte-identical)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("release", metavar="DIST==VER", help="the release to promote")
    parser.add_argument(
        "--from", dest="source", required=True, metavar="CHANNEL", help="the channel it is in"
    )
    parser.add_argument(
        "--to", dest="target", required=True, metavar="CHANNEL", help="the channel to add it to"
    )
    add_destination_arguments(parser, channel=False, flag="--root")


def run(args: argparse.Namespace) -> int:
    from slimwheel.publish import apply_promote, plan_promote

    store = open_destination(args)
    try:
        plan = plan_promote(store, args.release, source=args.source, target=args.target)
        changed = False if args.dry_run or not plan.changes else apply_promote(store, plan)
    finally:
        store.close()
    if args.json:
        print_document("promote", {"dry_run": args.dry_run, "plan": plan, "changed": changed})
    else:
        state = "dry run: would copy" if args.dry_run else "copied"
        counts = f"{len(plan.copies)} of {len(plan.files)} files"
        print(f"{plan.project}=={plan.version} {args.source} -> {args.target}: {state} {counts}")
    return 0
