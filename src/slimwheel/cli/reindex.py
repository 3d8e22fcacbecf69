"""``slimwheel reindex --root DEST``: rebuild a channel's pages from the files in the store and report
what disagreed (files written or removed by something other than slimwheel)."""

from __future__ import annotations

import argparse

from slimwheel.cli.publish import add_destination_arguments, open_destination, print_document

__all__ = ["HELP", "add_arguments", "run"]

HELP = "rebuild a static index's pages from the files in the store, reporting what disagreed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_destination_arguments(parser, flag="--root")


def run(args: argparse.Namespace) -> int:
    from slimwheel.publish import apply_reindex, plan_reindex

    store = open_destination(args)
    try:
        plan = plan_reindex(store, channel=args.channel)
        if plan.changes and not args.dry_run:
            apply_reindex(store, plan)
    finally:
        store.close()
    if args.json:
        document = {
            "dry_run": args.dry_run,
            "destination": plan.destination,
            "channel": plan.channel,
            "projects": plan.projects,
            "files": plan.files,
            "disagreements": plan.disagreements,
            "rewritten": [rebuilt.state.name for rebuilt in plan.rebuilt],
        }
        print_document("reindex", document)
    else:
        for item in plan.disagreements:
            print(f"{item.kind:9} {item.project} {item.filename or ''}: {item.message}")
        verb = "would rewrite" if args.dry_run else "rewrote"
        print(
            f"{plan.files} files in {len(plan.projects)} projects; {verb} {len(plan.rebuilt)} project pages"
        )
    return 0
