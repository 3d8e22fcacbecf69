"""Ask package indexes about projects, read remote wheels lazily, and download with a cache."""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import shutil
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import httpx
from packaging.utils import canonicalize_name

from slimwheel.errors import IndexUnavailableError, InputError, UsageError
from slimwheel.index._http import (
    ACCEPT_SIMPLE,
    RequestStats,
    get,
    make_http_client,
    status_error,
)
from slimwheel.index.cache import Cache, CachedPage, atomic_writer, safe_filename
from slimwheel.index.config import IndexSettings
from slimwheel.index.errors import FileTooLargeError, HashMismatchError, ProjectNotFoundError
from slimwheel.index.lazy import RangeFile
from slimwheel.index.simple import (
    DistributionFile,
    FileFilter,
    ParsedPage,
    ProjectPage,
    file_url_to_path,
    merge_pages,
    parse_html_page,
    parse_page,
    project_of_filename,
)
from slimwheel.progress import SILENT, Progress

if TYPE_CHECKING:
    from slimwheel.wheel import Wheel

__all__ = ["DistributionFile", "IndexClient", "ProgressCallback", "ProjectPage"]

ProgressCallback = Callable[[int, "int | None"], None]
"""Called with (bytes so far, total bytes or None) while a download runs."""

_ACCEPT_HTML = "text/html"
_VALID_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)  # PEP 508
_CHUNK = 1024 * 1024


class IndexClient:
    """A client for the indexes and find-links locations in ``settings``.

    Use it as a context manager; it closes the HTTP client only if it made it. It is safe to use
    from several threads: ``projects`` does so with ``max_workers`` threads.
    """

    def __init__(
        self,
        settings: IndexSettings,
        *,
        cache: Cache | None = None,
        http: httpx.Client | None = None,
        max_workers: int = 8,
        retries: int = 2,
        progress: Progress = SILENT,
    ) -> None:
        self.settings = settings
        self._progress = progress  # told of each download (bytes), unless download() is given its own
        self.cache = cache
        self.stats = RequestStats()
        self._http = http if http is not None else make_http_client(max_workers)
        self._owns_http = http is None
        self._max_workers = max(max_workers, 1)
        self._retries = retries

    def __enter__(self) -> IndexClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    # -- project pages ----------------------------------------------------------------------------

    def project(self, name: str, *, refresh: bool = False, keep: FileFilter | None = None) -> ProjectPage:
        """Files of ``name`` from every index, then every find-links location, merged.

        ``refresh`` revalidates cached pages even when they are still fresh. ``keep``: only the files
        whose name it accepts are parsed and listed (``ProjectPage.skipped`` counts the others).
        """
        if not _VALID_NAME.fullmatch(name):
            raise UsageError(f"{name!r} is not a valid project name")
        canonical = canonicalize_name(name)
        found: list[tuple[str, ParsedPage]] = []
        searched = []
        for index_url in self.settings.index_urls:
            page_url = _project_url(index_url, canonical)
            searched.append(page_url)
            page = self._index_page(page_url, refresh=refresh)
            if page is not None:
                parsed = parse_page(page.body, page.content_type, page.page_url, index_url, keep=keep)
                found.append((page_url, parsed))
        for location in self.settings.find_links:
            searched.append(location)
            files = self._find_links(location, canonical, refresh=refresh)
            if files:
                # Filtered after the project's own: a location that lists only other projects adds nothing.
                kept = tuple(file for file in files if keep is None or keep(file.filename))
                found.append((location, ParsedPage(kept, None, len(files) - len(kept))))
        if not found:
            raise ProjectNotFoundError(name, searched)
        return merge_pages(canonical, found)

    def projects(self, names: Iterable[str], *, refresh: bool = False) -> dict[str, ProjectPage]:
        """``project`` for each name, concurrently; keyed by the names as given."""
        unique = list(dict.fromkeys(names))
        if not unique:
            return {}
        pool = ThreadPoolExecutor(max_workers=min(self._max_workers, len(unique)))
        try:
            futures = {name: pool.submit(self.project, name, refresh=refresh) for name in unique}
            return {name: future.result() for name, future in futures.items()}
        finally:
            # On the first failure, do not wait for pages nobody will look at.
            pool.shutdown(wait=True, cancel_futures=True)

    def _index_page(self, page_url: str, *, refresh: bool) -> CachedPage | None:
        local = file_url_to_path(page_url)
        if local is None:
            return self._fetch_page(page_url, ACCEPT_SIMPLE, refresh=refresh)
        # pip reads only <index>/<project>/index.html from a file: index.
        html = local / "index.html"
        return CachedPage(html.as_uri(), "text/html", html.read_bytes()) if html.is_file() else None

    def _find_links(self, location: str, project: str, *, refresh: bool) -> list[DistributionFile]:
        scheme = urllib.parse.urlsplit(location).scheme
        if scheme in ("http", "https"):
            page = self._fetch_page(location, _ACCEPT_HTML, refresh=refresh)
            if page is None:
                return []
            files = list(parse_page(page.body, page.content_type, page.page_url, location).files)
        else:
            path = file_url_to_path(location) if scheme == "file" else Path(location).absolute()
            if path is None or not path.exists():
                return []
            if path.is_dir():
                files = [_local_file(entry, location) for entry in sorted(path.iterdir()) if entry.is_file()]
            elif path.suffix in (".html", ".htm"):
                text = path.read_text(encoding="utf-8", errors="replace")
                files = list(parse_html_page(text, path.as_uri(), location).files)
            else:
                files = [_local_file(path, location)]
        return [file for file in files if project_of_filename(file.filename) == project]

    def _fetch_page(self, url: str, accept: str, *, refresh: bool) -> CachedPage | None:
        """A page by HTTP, from the cache while fresh, revalidated with its ETag afterwards."""
        cached = self.cache.load_page(url) if self.cache is not None else None
        if (
            cached is not None
            and self.cache is not None
            and not refresh
            and cached.is_fresh(self.cache.page_ttl)
        ):
            return cached
        headers = {"Accept": accept, **(cached.validators() if cached is not None else {})}
        with get(self._http, url, stats=self.stats, headers=headers, retries=self._retries) as response:
            if response.status_code == 304 and cached is not None:
                page = replace(cached, fetched_at=time.time())
            elif response.status_code in (404, 410):
                return None
            elif response.status_code != 200:
                raise status_error(url, response)
            else:
                page = CachedPage(
                    url=url,
                    content_type=response.headers.get("Content-Type", "text/html"),
                    body=response.read(),
                    etag=response.headers.get("ETag"),
                    last_modified=response.headers.get("Last-Modified"),
                    fetched_at=time.time(),
                    base_url=str(response.url),
                )
        if self.cache is not None:
            self.cache.store_page(page)
        return page

    # -- wheels -----------------------------------------------------------------------------------

    def open_wheel(self, file: DistributionFile, *, max_memory: int | None = None) -> Wheel:
        """The wheel, read lazily over HTTP Range requests, or from disk when it is local or cached.
        ``max_memory`` bounds the bytes of the remote file kept in memory (default: RangeFile's)."""
        from slimwheel.wheel import Wheel

        if not file.is_wheel:
            raise InputError(file.url, "not a wheel", hint="only wheels can be opened")
        local = self._local_copy(file)
        if local is not None:
            return Wheel.open(local)
        bound = {} if max_memory is None else {"max_memory": max_memory}
        remote = RangeFile(
            file.url, self._http, stats=self.stats, expected_size=file.size, retries=self._retries, **bound
        )
        # The buffered wrapper is the BinaryIO Wheel wants; closing the wheel closes the range file.
        return Wheel.from_fileobj(io.BufferedReader(remote), file.filename, closefd=True)

    @contextlib.contextmanager
    def stream_range(self, file: DistributionFile, start: int, length: int) -> Iterator[Iterator[bytes]]:
        """Bytes [start, start + length) of ``file``, streamed from one request in pieces as they come
        (a local or cached file is read from disk): for reading a whole member of a remote wheel
        without holding it, where range reads of a few MiB would each pay a round trip."""
        local = self._local_copy(file)
        if local is not None:
            yield _file_pieces(local, start, length)
            return
        headers = {"Range": f"bytes={start}-{start + length - 1}"} if length else {}
        with get(self._http, file.url, stats=self.stats, headers=headers, retries=self._retries) as response:
            if response.status_code not in (200, 206):
                raise status_error(file.url, response)
            # A server that ignores Range sends the whole file: skip to ``start``.
            skip = start if response.status_code == 200 else 0
            yield _window(response.iter_bytes(_STREAM_PIECE), skip, length, file.url)

    def fetch_metadata(self, file: DistributionFile) -> bytes:
        """The wheel's METADATA: the PEP 658 file when the index has one, else from the lazy wheel."""
        if file.core_metadata:
            data = self._read_small(file.metadata_url)
            if data is not None:
                _check_hashes(file.metadata_url, data, file.core_metadata_hashes)
                return data
        with self.open_wheel(file) as wheel:
            return wheel.metadata_bytes()

    def _read_small(self, url: str) -> bytes | None:
        local = file_url_to_path(url)
        if local is not None:
            return local.read_bytes() if local.is_file() else None
        with get(self._http, url, stats=self.stats, retries=self._retries) as response:
            if response.status_code in (404, 410):
                return None
            if response.status_code != 200:
                raise status_error(url, response)
            return response.read()

    def _local_copy(self, file: DistributionFile) -> Path | None:
        local = file.local_path
        if local is not None:
            if not local.is_file():
                raise IndexUnavailableError(file.url, "the file the index lists does not exist")
            return local
        if self.cache is not None:
            return self.cache.cached_file(file.filename, sha256=file.sha256, url=file.url)
        return None

    # -- downloads --------------------------------------------------------------------------------

    def download(
        self,
        file: DistributionFile,
        dest: Path | None = None,
        *,
        progress: ProgressCallback | None = None,
        limit: int | None = None,
    ) -> Path:
        """Download ``file`` into the cache (and into the directory ``dest`` when given).

        The body is streamed to a temporary name, checked against the listed hashes and size, and
        renamed into place; a file already in the cache (or in ``dest`` with the right hash) is
        reused without any request. Progress goes to ``progress``, else to the client's reporter.
        ``limit``: the most bytes to accept, for a file read whole in memory afterwards.
        """
        try:
            name = safe_filename(file.filename)
        except ValueError as error:
            raise IndexUnavailableError(file.url, str(error)) from error
        existing = self._local_copy(file)
        if existing is None and dest is not None:
            candidate = dest / name
            if candidate.is_file() and file.hashes and _matches(candidate, file.hashes):
                return candidate
        if existing is None:
            if self.cache is not None:
                existing = self.cache.file_path(name, sha256=file.sha256, url=file.url)
            elif dest is not None:
                existing = dest / name
            else:
                raise UsageError("download needs a cache or a destination directory")
            self._stream_to(file, existing, progress, limit)
        if dest is None or existing == dest / name:
            return existing
        return _place(existing, dest / name)

    def _stream_to(
        self,
        file: DistributionFile,
        target: Path,
        progress: ProgressCallback | None,
        limit: int | None = None,
    ) -> None:
        if limit is not None and file.size is not None and file.size > limit:
            raise FileTooLargeError(file.url, limit, file.size)
        hashers = _hashers(file.hashes)
        headers = {"Accept-Encoding": "identity"}
        with get(self._http, file.url, stats=self.stats, headers=headers, retries=self._retries) as response:
            if response.status_code != 200:
                raise status_error(file.url, response)
            length = response.headers.get("Content-Length")
            total = (
                file.size if file.size is not None else (int(length) if length and length.isdigit() else None)
            )
            with (
                _progress_reporter(progress, self._progress, file.filename, total) as report,
                atomic_writer(target) as out,
            ):
                received = 0
                for chunk in response.iter_bytes(_CHUNK):
                    out.write(chunk)
                    for hasher in hashers.values():
                        hasher.update(chunk)
                    received += len(chunk)
                    if limit is not None and received > limit:
                        raise FileTooLargeError(file.url, limit)
                    report(received, total)
                if file.size is not None and received != file.size:
                    raise IndexUnavailableError(
                        file.url,
                        f"received {received} bytes but the index lists {file.size}",
                        hint="the download was cut short or the file changed; retry",
                    )
                _compare(file.url, hashers, dict(file.hashes))


def _project_url(index_url: str, project: str) -> str:
    return f"{index_url.rstrip('/')}/{urllib.parse.quote(project)}/"


def _local_file(path: Path, location: str) -> DistributionFile:
    return DistributionFile(
        filename=path.name, url=path.resolve().as_uri(), size=path.stat().st_size, index_url=location
    )


def _hashers(hashes: Iterable[tuple[str, str]]) -> dict[str, hashlib._Hash]:
    algorithms = {name for name, _ in hashes if name in hashlib.algorithms_available}
    return {name: hashlib.new(name) for name in sorted(algorithms | {"sha256"})}


def _compare(url: str, hashers: dict[str, hashlib._Hash], expected: dict[str, str]) -> None:
    for name, hasher in hashers.items():
        want = expected.get(name)
        if want is not None and hasher.hexdigest() != want.lower():
            raise HashMismatchError(url, name, want.lower(), hasher.hexdigest())


def _check_hashes(url: str, data: bytes, hashes: Iterable[tuple[str, str]]) -> None:
    hashers = _hashers(hashes)
    for hasher in hashers.values():
        hasher.update(data)
    _compare(url, hashers, dict(hashes))


def _matches(path: Path, hashes: Iterable[tuple[str, str]]) -> bool:
    hashers = _hashers(hashes)
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            for hasher in hashers.values():
                hasher.update(chunk)
    expected = dict(hashes)
    return all(hasher.hexdigest() == expected[name] for name, hasher in hashers.items() if name in expected)


def _place(source: Path, target: Path) -> Path:
    """Copy ``source`` to ``target`` atomically; a copy, so edits there cannot reach the cache."""
    with atomic_writer(target) as out, source.open("rb") as handle:
        shutil.copyfileobj(handle, out, _CHUNK)
    return target


@contextlib.contextmanager
def _progress_reporter(
    progress: ProgressCallback | None, reporter: Progress, filename: str, total: int | None
) -> Iterator[ProgressCallback]:
    if progress is not None:
        yield progress
        return
    # The library never draws: the reporter the caller gave (the CLI's bar on a terminal) does.
    with reporter.step(f"downloading {filename}", total=total, unit="bytes") as advance:
        yield lambda done, _total: advance(done)


_STREAM_PIECE = 1 << 20


def _file_pieces(path: Path, start: int, length: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(start)
        left = length
        while left > 0:
            piece = handle.read(min(_STREAM_PIECE, left))
            if not piece:
                raise IndexUnavailableError(str(path), f"ends before byte {start + length}")
            left -= len(piece)
            yield piece


def _window(pieces: Iterator[bytes], skip: int, length: int, url: str) -> Iterator[bytes]:
    """``length`` bytes of ``pieces`` after the first ``skip``; an early end is an error."""
    left = length
    for received in pieces:
        dropped = min(skip, len(received))
        skip -= dropped
        piece = received[dropped : dropped + left]
        if not piece:
            continue
        left -= len(piece)
        yield piece
        if left == 0:
            return
    if left:
        raise IndexUnavailableError(url, f"the answer ended {left} bytes early", hint="retry")
