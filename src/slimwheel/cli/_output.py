"""How a command talks to the person running it: ``-q``/``-v``, progress on a terminal, warnings once
each and grouped, and tables that fit a terminal or print as plain columns in a pipe.

One :class:`Output` is made per run by ``main`` from the parsed options and handed to the command as
``args.out``: nothing here is process-global, so two runs in one process (tests) cannot mix."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from slimwheel.progress import SILENT, Advance, Progress, Unit

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

__all__ = ["Output", "RichProgress"]

# A pipe has no width: lines are not wrapped there (grep and diff want one fact per line), whatever
# COLUMNS says; on a terminal COLUMNS, when set, overrides the terminal's own width (as rich does).
_PIPE_WIDTH = 1000


@dataclass(frozen=True)
class _Warning:
    text: str
    fix: str | None
    verbose_only: bool


@dataclass(frozen=True)
class Output:
    """The output settings of one run. ``quiet`` drops warnings, notes and progress (never errors or a
    ``--json`` document); ``verbose`` adds notes. ``stdout``/``stderr`` default to the process's."""

    command: str
    quiet: bool = False
    verbose: int = 0
    json: bool = False
    stdout: IO[str] | None = None
    stderr: IO[str] | None = None
    columns: int | None = None
    # Collected while the command runs, printed grouped by ``flush_warnings`` (a list: in order, each once).
    _warnings: list[_Warning] = field(default_factory=list, compare=False, repr=False)
    # One reporter per run, so that a step opened inside another finds the bar already drawn.
    _progress: Progress = field(default=SILENT, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.quiet or self.json) and _isatty(self.err):
            from rich.console import Console

            object.__setattr__(self, "_progress", RichProgress(Console(file=self.err, stderr=True)))

    @classmethod
    def from_args(cls, command: str, *, quiet: bool, verbose: int, json: bool) -> Output:
        columns = os.environ.get("COLUMNS", "")
        return cls(
            command,
            quiet=quiet,
            verbose=verbose,
            json=json,
            columns=int(columns) if columns.isdigit() and int(columns) > 0 else None,
        )

    # -- streams ----------------------------------------------------------------------------------

    @property
    def out(self) -> IO[str]:
        return self.stdout if self.stdout is not None else sys.stdout

    @property
    def err(self) -> IO[str]:
        return self.stderr if self.stderr is not None else sys.stderr

    @property
    def terminal(self) -> bool:
        """stdout is a terminal: tables get boxes and the terminal's width."""
        return _isatty(self.out)

    def console(self) -> Console:
        from rich.console import Console

        width = (self.columns or None) if self.terminal else _PIPE_WIDTH
        return Console(
            file=self.out if self.terminal else _TrimmedLines(self.out),
            width=width,
            highlight=False,
            soft_wrap=False,
            force_terminal=self.terminal,
            no_color=not self.terminal,
        )

    def table(self, title: str, columns: tuple[str, ...], *, no_wrap: tuple[str, ...] = ()) -> Table:
        """A table with box lines on a terminal, plain aligned columns (no box drawing) in a pipe.

        ``no_wrap``: columns whose cells are names that must never break mid-name (sonames)."""
        from rich import box
        from rich.table import Table

        table = Table(
            title=title,
            title_justify="left",
            box=box.SQUARE if self.terminal else None,
            show_edge=self.terminal,
            pad_edge=self.terminal,
            header_style="bold" if self.terminal else "",
        )
        for column in columns:
            table.add_column(column, overflow="fold", no_wrap=column in no_wrap)
        return table

    # -- messages ---------------------------------------------------------------------------------

    def error(self, message: str) -> None:
        """Always printed, whatever ``-q`` says."""
        print(f"slimwheel {self.command}: error: {message}", file=self.err)

    def warn(self, message: str, *, fix: str | None = None, verbose_only: bool = False) -> None:
        """Kept for ``flush_warnings``: the same text twice is said once; ``fix`` says what to do, once
        for every warning that shares it; ``verbose_only`` ones show with ``-v`` only."""
        entry = _Warning(message, fix, verbose_only)
        if entry not in self._warnings:
            self._warnings.append(entry)

    def note(self, message: str) -> None:
        """Said with ``-v`` only: detail a user rarely needs."""
        if self.verbose and not self.quiet:
            print(f"slimwheel {self.command}: {message}", file=self.err)

    def discard_warnings(self) -> None:
        """Forget the warnings collected: the run ended on bad input, whose one line is all it says
        (a warning about the catalog is no help for a wheel that is refused)."""
        self._warnings.clear()

    def flush_warnings(self) -> None:
        """Print the warnings collected, grouped by what to do about them, and forget them."""
        shown = [w for w in self._warnings if not self.quiet and (self.verbose or not w.verbose_only)]
        self._warnings.clear()
        groups: dict[str | None, list[str]] = {}
        for warning in shown:
            groups.setdefault(warning.fix, []).append(warning.text)
        for fix, texts in groups.items():
            if len(texts) == 1:
                print(f"slimwheel {self.command}: warning: {texts[0]}", file=self.err)
            else:
                print(f"slimwheel {self.command}: {len(texts)} warnings:", file=self.err)
                for text in texts:
                    print(f"  - {text}", file=self.err)
            if fix:
                print(f"  what to do: {fix}", file=self.err)

    # -- progress ---------------------------------------------------------------------------------

    def progress(self) -> Progress:
        """A bar on stderr when it is a terminal and neither ``--json`` nor ``-q`` was given; else silent."""
        return self._progress


@dataclass(frozen=True)
class RichProgress:
    """Draws each step as a transient rich bar (bytes and rate for downloads) on ``console``."""

    console: Console

    @contextlib.contextmanager
    def step(self, description: str, *, total: int | None = None, unit: Unit = "steps") -> Iterator[Advance]:
        from rich.errors import LiveError
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20)]
        if unit == "bytes":
            columns += [DownloadColumn(), TransferSpeedColumn()]
        elif total is not None:
            columns.append(MofNCompleteColumn())
        columns.append(TimeElapsedColumn())
        bar = Progress(*columns, console=self.console, transient=True)
        try:
            bar.start()
        except LiveError:  # a step inside a step: the outer one's bar stays, this one is not drawn
            yield lambda _done: None
            return
        try:
            # Short enough that bytes, rate and time fit beside it on an 80-column terminal.
            short = description if len(description) <= 40 else description[:39] + "…"
            task = bar.add_task(short, total=total)
            yield lambda done: bar.update(task, completed=done)
        finally:
            bar.stop()


class _TrimmedLines(io.StringIO):
    """Passes text on without the spaces rich pads table lines with (a pipe's reader gains nothing
    from them, and diff and grep see them)."""

    def __init__(self, target: IO[str]) -> None:
        super().__init__()
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:  # only passed on, never kept
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._target.write(line.rstrip(" ") + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._target.write(self._pending.rstrip(" "))
            self._pending = ""
        self._target.flush()

    def isatty(self) -> bool:
        return False


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream is not a terminal
        return False
