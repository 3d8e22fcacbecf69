"""An on-disk cache of downloaded files (by sha256) and project pages (with their validators).

Everything is written under a temporary name and renamed into place, so readers in other threads or
processes never see half a file.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["Cache", "CachedPage", "atomic_writer", "safe_filename"]

_PAGE_FORMAT = 1


@dataclass(frozen=True)
class CachedPage:
    """A project page as last received, with what is needed to revalidate it."""

    url: str
    content_type: str
    body: bytes
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: float = 0.0
    base_url: str = ""  # where the page really came from, after redirects; links are relative to it

    @property
    def page_url(self) -> str:
        return self.base_url or self.url

    def is_fresh(self, ttl: float, now: float | None = None) -> bool:
        age = (time.time() if now is None else now) - self.fetched_at
        return 0 <= age < ttl

    def validators(self) -> dict[str, str]:
        """Headers for a conditional request."""
        headers: dict[str, str] = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass(frozen=True)
class Cache:
    """A cache rooted at ``root``; pages younger than ``page_ttl`` seconds are used without asking."""

    root: Path
    page_ttl: float = 600.0

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None, *, page_ttl: float = 600.0) -> Cache:
        """``SLIMWHEEL_CACHE_DIR``, else ``$XDG_CACHE_HOME/slimwheel``, else ``~/.cache/slimwheel``."""
        env = os.environ if environ is None else environ
        if env.get("SLIMWHEEL_CACHE_DIR"):
            return cls(Path(env["SLIMWHEEL_CACHE_DIR"]), page_ttl)
        if env.get("XDG_CACHE_HOME"):
            return cls(Path(env["XDG_CACHE_HOME"]) / "slimwheel", page_ttl)
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return cls(home / ".cache" / "slimwheel", page_ttl)

    def file_path(self, filename: str, *, sha256: str | None, url: str) -> Path:
        """Where a distribution file lives: by its sha256 when known, else by its URL."""
        if sha256:
            key = sha256.lower()
            return self.root / "files" / key[:2] / key / safe_filename(filename)
        key = hashlib.sha256(url.encode()).hexdigest()
        return self.root / "files" / "by-url" / key[:2] / key / safe_filename(filename)

    def cached_file(self, filename: str, *, sha256: str | None, url: str) -> Path | None:
        path = self.file_path(filename, sha256=sha256, url=url)
        return path if path.is_file() else None

    def _page_path(self, url: str) -> Path:
        key = hashlib.sha256(url.encode()).hexdigest()
        return self.root / "pages" / key[:2] / f"{key}.json"

    def load_page(self, url: str) -> CachedPage | None:
        try:
            record = json.loads(self._page_path(url).read_text(encoding="utf-8"))
            if record.get("format") != _PAGE_FORMAT or record.get("url") != url:
                return None
            return CachedPage(
                url=url,
                content_type=str(record["content_type"]),
                body=base64.b64decode(record["body"]),
                etag=record.get("etag"),
                last_modified=record.get("last_modified"),
                fetched_at=float(record["fetched_at"]),
                base_url=str(record.get("base_url") or ""),
            )
        except (OSError, ValueError, KeyError, TypeError):
            # A missing or damaged entry is only a cache miss.
            return None

    def store_page(self, page: CachedPage) -> None:
        record = {
            "format": _PAGE_FORMAT,
            "url": page.url,
            "content_type": page.content_type,
            "etag": page.etag,
            "last_modified": page.last_modified,
            "fetched_at": page.fetched_at,
            "base_url": page.base_url,
            "body": base64.b64encode(page.body).decode("ascii"),
        }
        with contextlib.suppress(OSError), atomic_writer(self._page_path(page.url)) as handle:
            handle.write(json.dumps(record).encode())


@contextlib.contextmanager
def atomic_writer(target: Path) -> Iterator[IO[bytes]]:
    """Write to a temporary file next to ``target`` and rename it there only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - renamed or removed below
        dir=target.parent, prefix=f".{target.name}.", suffix=".part", delete=False
    )
    temporary = Path(handle.name)
    try:
        with handle:
            yield handle
        temporary.replace(target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def safe_filename(filename: str) -> str:
    """The last path component of a name an index gave us; never a way out of the cache."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if name in ("", ".", "..") or name.startswith("."):
        raise ValueError(f"unsafe file name from the index: {filename!r}")
    return name
