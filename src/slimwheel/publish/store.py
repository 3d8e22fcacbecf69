"""What every index store offers: objects by key, conditional writes, server-side copies, listings.

A store is a folder (``slimwheel.publish.folder``) or an S3 bucket (``slimwheel.publish.s3``). Keys are
``/``-separated and relative to the destination's root. The publish operations use only this interface,
so the same code (and the same safety argument) serves both.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from slimwheel.publish.errors import DestinationError

__all__ = ["ObjectInfo", "StatsSnapshot", "Store", "StoreStats", "StoredObject", "open_store"]


@dataclass(frozen=True)
class StoredObject:
    key: str
    data: bytes
    etag: str  # what a conditional write names to replace exactly this version
    content_type: str | None


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    etag: str
    sha256: str | None  # what the writer recorded (S3 user metadata); None where the store keeps none


@dataclass(frozen=True)
class StatsSnapshot:
    reads: int  # objects read whole (GET)
    heads: int  # objects asked about (HEAD, or a stat)
    writes: int  # objects written or copied
    lists: int  # listing requests (a page of 1,000 keys on S3, a folder on disk)

    @property
    def requests(self) -> int:
        return self.reads + self.heads + self.writes + self.lists


class StoreStats:
    """Counters of one store's requests (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = {"reads": 0, "heads": 0, "writes": 0, "lists": 0}

    def add(self, kind: str, count: int = 1) -> None:
        with self._lock:
            self._counts[kind] += count

    def snapshot(self) -> StatsSnapshot:
        with self._lock:
            return StatsSnapshot(**self._counts)


class Store(Protocol):
    """An object store holding one index root."""

    description: str  # the destination as the user named it, for messages
    stats: StoreStats
    # True where the store serves an object at a key ending in "/" (S3): the JSON page can then sit at
    # the project's own URL. A folder served by a plain web server can only answer index.html there.
    pages_at_folder_keys: bool

    def public_url(self, key: str) -> str | None:
        """Where a client reads ``key`` (file: or http:), when known."""
        ...

    def read(self, key: str) -> StoredObject | None: ...

    def head(self, key: str) -> ObjectInfo | None: ...

    def write(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str,
        if_match: str | None = None,
        if_absent: bool = False,
        sha256: str | None = None,
    ) -> str:
        """Write ``data`` at ``key`` whole (a reader sees the old bytes or the new, never a mix) and return
        the new etag. ``if_match``: only over that version; ``if_absent``: only where nothing is. A lost
        condition is a ConflictError and changes nothing."""
        ...

    def upload(self, key: str, source: Path, *, content_type: str, sha256: str) -> bool:
        """Write a file's bytes at ``key`` only where nothing is; False when something already was."""
        ...

    def copy(self, source_key: str, key: str, *, content_type: str, sha256: str) -> bool:
        """Copy an object inside the store (no download); False when ``key`` already existed."""
        ...

    def sha256_of(self, key: str) -> str | None:
        """The sha256 of the bytes at ``key`` (recorded at upload where the store keeps it, else read)."""
        ...

    def list(self, prefix: str) -> Iterator[ObjectInfo]:
        """Every object under ``prefix``, in key order (no sha256: a listing does not carry metadata)."""
        ...

    def close(self) -> None: ...


def open_store(destination: str) -> Store:
    """A folder (a path or ``file://`` URL) or an S3 prefix (``s3://bucket/prefix``)."""
    parts = urllib.parse.urlsplit(destination)
    if parts.scheme == "s3":
        from slimwheel.publish.s3 import S3Store

        if not parts.netloc:
            raise DestinationError(f"{destination}: no bucket named", hint="write s3://BUCKET/PREFIX")
        return S3Store(parts.netloc, parts.path.strip("/"), description=destination)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise DestinationError(f"{destination}: only local file: URLs are supported")
        path = Path(urllib.parse.unquote(parts.path))
    elif parts.scheme in ("",) or len(parts.scheme) == 1:  # a plain path (or a Windows drive letter)
        path = Path(destination)
    else:
        raise DestinationError(
            f"{destination}: unsupported destination",
            hint="give a folder, a file:// URL or s3://BUCKET/PREFIX",
        )
    from slimwheel.publish.folder import FolderStore

    return FolderStore(path, description=destination)
