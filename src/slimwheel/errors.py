"""One error hierarchy. Every message is one line that says what went wrong and what to do next.

The CLI prints ``str(error)`` and exits with ``error.exit_code``; library callers can read the data
attributes instead of parsing the text.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "CatalogError",
    "ElfError",
    "IndexUnavailableError",
    "InputError",
    "SlimwheelError",
    "UsageError",
    "WheelError",
]


class SlimwheelError(Exception):
    """Base of every error slimwheel raises on purpose."""

    exit_code: ClassVar[int] = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        text = " ".join(self.message.split())
        if self.hint:
            text = f"{text} ({' '.join(self.hint.split())})"
        return text


class UsageError(SlimwheelError):
    """The command line or an argument is malformed."""


class InputError(SlimwheelError):
    """An input file could not be read or is not what it claims to be."""

    def __init__(self, path: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{path}: {message}", hint=hint)
        self.path = path
        self.reason = message

    def __reduce__(self) -> tuple[object, ...]:
        # Raised in analysis worker processes: it must survive the trip back (pickle calls the class
        # with self.args, which holds only the rendered message).
        return (_rebuild_input_error, (type(self), self.path, self.reason, self.hint))


class WheelError(InputError):
    """A wheel is unreadable, unsafe (hostile paths, symlinks) or inconsistent with its RECORD."""


class ElfError(InputError):
    """A file is not ELF, or is truncated. Analysis turns this into a finding about the file."""


class IndexUnavailableError(SlimwheelError):
    """A package index could not be reached or answered something unusable."""

    def __init__(self, url: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{url}: {message}", hint=hint)
        self.url = url
        self.reason = message

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_input_error, (type(self), self.url, self.reason, self.hint))


def _rebuild_input_error(
    kind: type[InputError | IndexUnavailableError], where: str, reason: str, hint: str | None
) -> SlimwheelError:
    return kind(where, reason, hint=hint)


class CatalogError(SlimwheelError):
    """The NVIDIA catalog is missing, unreadable, or cannot answer a query."""
