"""Helpers every command shares: catalog options, the output settings, sizes."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from slimwheel.cli._output import Output
from slimwheel.errors import UsageError
from slimwheel.report import human_size

if TYPE_CHECKING:
    from slimwheel.catalog.model import Catalog

__all__ = [
    "add_catalog_argument",
    "human_size",
    "load_catalog_from_args",
    "output_of",
    "print_wheel_reports",
]


class _WheelReport(Protocol):
    @property
    def has_errors(self) -> bool: ...


_Report = TypeVar("_Report", bound=_WheelReport)


def print_wheel_reports(
    command: str,
    catalog: Catalog,
    reports: Sequence[_Report],
    render: Callable[[_Report, Output], None],
    *,
    as_json: bool,
    out: Output,
) -> int:
    """One report per wheel, as ``--json`` or rendered; exit 1 when any has an error-level finding."""
    if as_json:
        from slimwheel.report import dump_report

        print(dump_report(command, {"catalog": catalog.origin, "wheels": reports}), file=out.out)
    else:
        for report in reports:
            render(report, out)
    return 1 if any(report.has_errors for report in reports) else 0


def parse_cuda_majors(text: str) -> tuple[int, ...]:
    """``--cuda 12,13``: the CUDA majors, sorted, each once."""
    try:
        majors = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise UsageError(f"--cuda {text!r}: expected a CUDA major, or majors like 12,13") from exc
    if not majors:
        raise UsageError(f"--cuda {text!r}: expected a CUDA major, or majors like 12,13")
    return tuple(majors)


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


def output_of(args: argparse.Namespace) -> Output:
    """The run's output settings (``main`` puts them on ``args``); defaults for a Namespace made by hand."""
    found = getattr(args, "out", None)
    if isinstance(found, Output):
        return found
    return Output(getattr(args, "command", None) or "", json=bool(getattr(args, "json", False)))
