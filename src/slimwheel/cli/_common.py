"""Helpers every command shares: catalog options, the console, sizes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from rich.console import Console

    from slimwheel.catalog.model import Catalog

__all__ = ["add_catalog_argument", "console", "human_size", "load_catalog_from_args", "print_wheel_reports"]


class _WheelReport(Protocol):
    @property
    def has_errors(self) -> bool: ...


_Report = TypeVar("_Report", bound=_WheelReport)


def print_wheel_reports(
    command: str,
    catalog: Catalog,
    reports: Sequence[_Report],
    render: Callable[[_Report], None],
    *,
    as_json: bool,
) -> int:
    """One report per wheel, as ``--json`` or rendered; exit 1 when any has an error-level finding."""
    if as_json:
        from slimwheel.report import dump_report

        print(dump_report(command, {"catalog": catalog.origin, "wheels": reports}))
    else:
        for report in reports:
            render(report)
    return 1 if any(report.has_errors for report in reports) else 0


def add_catalog_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        type=Path,
        metavar="FILE",
        help="a catalog snapshot that overlays the shipped one and the user's copy",
    )


def load_catalog_from_args(args: argparse.Namespace) -> Catalog:
    from slimwheel.catalog.store import load_catalog

    return load_catalog(args.catalog)


def console() -> Console:
    from rich.console import Console

    # Wide enough for paths when piped; a terminal's own width when interactive.
    return Console(width=None if sys.stdout.isatty() else 160, highlight=False, soft_wrap=False)


def human_size(size: int | None) -> str:
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
