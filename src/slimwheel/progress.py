"""How far long work has got, told to whoever asks: the library calls a :class:`Progress`, the command
line draws it (the library itself never prints)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["SILENT", "Advance", "Progress", "Unit"]

Unit = Literal["steps", "bytes", "files"]

Advance = Callable[[int], None]
"""Called with how much is done so far (bytes, files or steps, as the step was opened with)."""


class Progress(Protocol):
    """Opens one step of work; ``total`` None: how much is unknown (a spinner, not a bar)."""

    def step(
        self, description: str, *, total: int | None = None, unit: Unit = "steps"
    ) -> AbstractContextManager[Advance]: ...


@dataclass(frozen=True)
class _Silent:
    """Reports nowhere: the default, so that library calls made without a reporter stay quiet."""

    @contextlib.contextmanager
    def step(self, description: str, *, total: int | None = None, unit: Unit = "steps") -> Iterator[Advance]:  # noqa: ARG002
        yield lambda _done: None


SILENT: Progress = _Silent()
