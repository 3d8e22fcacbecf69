"""The run-time loader's errors: one hierarchy under ``RuntimeLoadError``.

``RuntimeLoadError`` is an ``OSError`` so that code which already guards a ``ctypes.CDLL`` call with
``except OSError`` keeps working when it switches to ``slimwheel.runtime.load``. Each message is one
paragraph: what was wanted, every place searched (with what was found there and why it was not
used), and the pip command that fixes it. The same facts are attributes, for callers that branch.
"""

from __future__ import annotations

__all__ = [
    "CudaMajorConflictError",
    "LibraryConflictError",
    "LibraryLoadError",
    "LibraryNotFoundError",
    "LibraryVersionError",
    "ManifestNotFoundError",
    "RuntimeLoadError",
]


class RuntimeLoadError(OSError):
    """A library could not be loaded as asked."""

    def __init__(
        self,
        message: str,
        *,
        wanted: str = "",
        searched: tuple[str, ...] = (),
        paths: tuple[str, ...] = (),
        pip_command: str | None = None,
    ) -> None:
        text = " ".join(message.split())
        if searched:
            text += " Searched: " + "; ".join(searched) + "."
        if pip_command:
            text += f" To fix: {pip_command}"
        super().__init__(text)
        self.message = text
        self.wanted = wanted
        self.searched = searched
        self.paths = paths  # the files involved: the copy found or loaded, and the one it conflicts with
        self.pip_command = pip_command

    def __str__(self) -> str:
        return self.message


class LibraryNotFoundError(RuntimeLoadError):
    """No copy fits: none found, or each one found was rejected (wrong CUDA major, unloadable)."""


class LibraryVersionError(RuntimeLoadError):
    """The copies found (or the one already loaded) are older than the minimum asked for."""


class CudaMajorConflictError(RuntimeLoadError):
    """The library's CUDA major differs from the one asked for or the one this process already uses."""


class LibraryConflictError(RuntimeLoadError):
    """The override variable names one copy while the process already has another one loaded."""


class LibraryLoadError(RuntimeLoadError):
    """dlopen refused every copy found (a missing dependency, another architecture); dlerror is kept."""


class ManifestNotFoundError(RuntimeLoadError):
    """``preload``: the distribution is not on sys.path, or has no readable slimwheel.json."""
