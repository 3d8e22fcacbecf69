"""Errors of ``slimwheel publish`` and its sibling commands, refining the project-wide hierarchy."""

from __future__ import annotations

from typing import ClassVar

from slimwheel.errors import SlimwheelError

__all__ = [
    "ConflictError",
    "DestinationError",
    "ImmutableFileError",
    "IndexStateError",
    "PublicNameError",
    "PublishRefusedError",
]


class DestinationError(SlimwheelError):
    """The destination (a folder, an ``s3://`` URL) cannot be used or answered something unusable."""


class IndexStateError(DestinationError):
    """A page or state object in the index is unreadable (written by something else, or damaged)."""


class PublishRefusedError(SlimwheelError):
    """The index was left as it was because publishing would break one of its promises."""

    exit_code: ClassVar[int] = 1


class ImmutableFileError(PublishRefusedError):
    """A file of that name is already in the index with other bytes: files never change."""

    def __init__(self, filename: str, listed: str, given: str) -> None:
        super().__init__(
            f"{filename}: the index already holds a file of this name with sha256 {listed[:16]}..., "
            f"this one has {given[:16]}...",
            hint="files are immutable: publish a new version (or a new build tag) instead",
        )
        self.filename = filename
        self.listed = listed
        self.given = given


class PublicNameError(PublishRefusedError):
    """A project name also exists on the public index (dependency confusion)."""

    def __init__(self, names: tuple[str, ...], index_urls: tuple[str, ...]) -> None:
        flags = " ".join(f"--allow-public-name {name}" for name in names)
        super().__init__(
            f"{', '.join(names)}: also a project on {', '.join(index_urls)}; an install that merges "
            "indexes could take the public one",
            hint=f"rename the project, or pass {flags} if the public project is yours",
        )
        self.names = names
        self.index_urls = index_urls


class ConflictError(DestinationError):
    """A conditional write lost: the object changed (or appeared) since it was read."""

    def __init__(self, key: str) -> None:
        super().__init__(f"{key}: changed by another writer", hint="read it again and retry")
        self.key = key
