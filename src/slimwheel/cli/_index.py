"""Index options shared by the commands that talk to a package index (resolved the way pip does)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slimwheel.index.client import IndexClient

__all__ = ["add_index_arguments", "open_index_client"]


def add_index_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("package index (as pip resolves it when not given)")
    group.add_argument("--index-url", "-i", metavar="URL", help="base URL of a simple index (PEP 503/691)")
    group.add_argument(
        "--extra-index-url", action="append", default=[], metavar="URL", help="another index to merge in"
    )
    group.add_argument(
        "--find-links",
        "-f",
        action="append",
        default=[],
        metavar="PATH_OR_URL",
        help="a folder or page of wheels",
    )
    group.add_argument("--no-index", action="store_true", help="use --find-links only, no index")
    group.add_argument(
        "--isolated", action="store_true", help="ignore PIP_* variables and the user's pip configuration"
    )
    group.add_argument("--refresh", action="store_true", help="do not use cached index pages")


def open_index_client(args: argparse.Namespace) -> IndexClient:
    from slimwheel.index.cache import Cache
    from slimwheel.index.client import IndexClient
    from slimwheel.index.config import resolve_index_settings

    settings = resolve_index_settings(
        index_url=args.index_url,
        extra_index_urls=tuple(args.extra_index_url),
        find_links=tuple(args.find_links),
        no_index=args.no_index,
        isolated=args.isolated,
    )
    return IndexClient(settings, cache=Cache.default())
