"""Errors of the index client, refining the project-wide IndexUnavailableError."""

from __future__ import annotations

from collections.abc import Sequence

from slimwheel.errors import IndexUnavailableError

__all__ = ["FileTooLargeError", "HashMismatchError", "ProjectNotFoundError"]


class ProjectNotFoundError(IndexUnavailableError):
    """No configured index or find-links location knows the project."""

    def __init__(self, project: str, searched: Sequence[str]) -> None:
        where = ", ".join(searched) or "nowhere (--no-index and no --find-links)"
        super().__init__(
            where,
            f"no project named {project!r}",
            hint="check the name, or pass --index-url, --extra-index-url or --find-links",
        )
        self.project = project
        self.searched = tuple(searched)


class HashMismatchError(IndexUnavailableError):
    """The bytes received do not match the hash or size the index listed."""

    def __init__(self, url: str, algorithm: str, expected: str, actual: str) -> None:
        super().__init__(
            url,
            f"{algorithm} mismatch: the index lists {expected} but the download has {actual}",
            hint="the file changed or was corrupted in transit; retry, or report it to the index",
        )
        self.algorithm = algorithm
        self.expected = expected
        self.actual = actual


class FileTooLargeError(IndexUnavailableError):
    """A file fetched to be read whole in memory is bigger than the caller allows."""

    def __init__(self, url: str, limit: int, listed: int | None = None) -> None:
        what = f"the index lists {listed} bytes" if listed is not None else "the download goes on"
        super().__init__(url, f"{what}, more than the {limit} expected", hint="it is not the file expected")
        self.limit = limit
