"""Index options shared by the commands that talk to a package index (resolved the way pip does)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slimwheel.index.client import IndexClient
    from slimwheel.index.config import IndexSettings
    from slimwheel.index.dist_files import IndexDistFiles

__all__ = ["add_dist_files_arguments", "add_index_arguments", "open_dist_files", "open_index_client"]


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


def add_dist_files_arguments(parser: argparse.ArgumentParser) -> None:
    """What check's simulation needs to know of non-NVIDIA requirements (torch...)."""
    parser.add_argument(
        "--offline",
        action="store_true",
        help="ask no index for the files of non-NVIDIA requirements (torch...): use slimwheel's cache only; "
        "what is not cached stays unresolved",
    )
    parser.add_argument(
        "--preloaded",
        action="append",
        default=[],
        metavar="DIST",
        help="a distribution whose libraries are loaded before this wheel's (torch, when the package "
        "imports torch first; one a requirement requires, such as libucx-cu12 under libucxx-cu12, "
        "read at its newest release or at the range given: 'librmm-cu12==26.10.*'): a soname it ships "
        "counts as found, with a warning; repeatable",
    )
    add_index_arguments(parser)


def index_settings(args: argparse.Namespace) -> IndexSettings:
    from slimwheel.index.config import resolve_index_settings

    return resolve_index_settings(
        index_url=args.index_url,
        extra_index_urls=tuple(args.extra_index_url),
        find_links=tuple(args.find_links),
        no_index=args.no_index,
        isolated=args.isolated,
    )


def open_dist_files(args: argparse.Namespace) -> IndexDistFiles:
    """The files of non-NVIDIA requirements, read from the index (resolved, and asked, only when a
    wheel needs a library that only such a requirement can provide)."""
    from slimwheel.index.cache import Cache
    from slimwheel.index.dist_files import IndexDistFiles

    return IndexDistFiles(
        lambda: index_settings(args), cache=Cache.default(), offline=args.offline, refresh=args.refresh
    )


def open_index_client(args: argparse.Namespace) -> IndexClient:
    from slimwheel.cli._common import output_of
    from slimwheel.index.cache import Cache
    from slimwheel.index.client import IndexClient

    return IndexClient(index_settings(args), cache=Cache.default(), progress=output_of(args).progress())
