"""A real PEP 503 + PEP 691 simple index on 127.0.0.1, served from a directory of distribution files.

Routes: ``/simple/`` (the project list), ``/simple/<project>/`` (content negotiation on Accept between
PEP 691 JSON, API version 1.1, and PEP 503 HTML), ``/files/<filename>`` (single byte ranges, suffix
ranges included, unless ``ranges`` is off) and ``/files/<filename>.metadata`` (PEP 658, when
``core_metadata`` is on). Switches can be flipped while the server runs; counters record requests
and body bytes per path, so tests can assert how much a client fetched.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import threading
import urllib.parse
import zipfile
from collections import Counter
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

__all__ = ["IndexServer", "RequestRecord"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_V1_TYPE = "application/vnd.pypi.simple.v1+html"
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
_CHUNK = 256 * 1024


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    range: str | None
    status: int
    content_type: str | None


@dataclass(frozen=True)
class _Dist:
    filename: str
    project: str
    version: str
    path: Path
    sha256: str
    size: int


class IndexServer:
    """The server; use as a context manager or call ``start`` / ``stop``."""

    def __init__(
        self,
        directory: Path,
        *,
        json_api: bool = True,
        ranges: bool = True,
        core_metadata: bool = False,
        etags: bool = True,
    ) -> None:
        self.directory = directory
        self.json_api = json_api  # False: HTML pages only, whatever the client accepts
        self.ranges = ranges  # False: Range is ignored, every file answer is 200 with the whole body
        self.core_metadata = core_metadata  # serve and announce PEP 658 .metadata files
        self.etags = etags
        self.requires_python: dict[str, str] = {}  # filename -> Requires-Python to announce
        self.yanked: dict[str, str | bool] = {}  # filename -> True or a reason
        self.tampered: dict[str, bytes] = {}  # filename -> bytes served instead of the listed file
        self.failures: dict[str, int] = {}  # path -> how many 503 answers to give before serving
        self.log: list[RequestRecord] = []
        self.requests: Counter[str] = Counter()
        self.bytes_sent: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._hashes: dict[tuple[str, int, int], str] = {}
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.index = self
        self._thread: threading.Thread | None = None

    # -- lifetime --------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def simple_url(self) -> str:
        return f"{self.url}/simple/"

    def file_url(self, filename: str) -> str:
        return f"{self.url}/files/{urllib.parse.quote(filename)}"

    def start(self) -> IndexServer:
        if self._thread is None:
            # A short poll interval makes stop() quick, which keeps many small tests fast.
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.02},
                name="index-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> IndexServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # -- counters --------------------------------------------------------------------------------

    def request_count(self, prefix: str = "/") -> int:
        with self._lock:
            return sum(count for path, count in self.requests.items() if path.startswith(prefix))

    def bytes_count(self, prefix: str = "/") -> int:
        with self._lock:
            return sum(count for path, count in self.bytes_sent.items() if path.startswith(prefix))

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.bytes_sent.clear()
            self.log.clear()

    def _record(self, record: RequestRecord) -> None:
        # Counted before the answer goes out, so a client that has its answer sees it counted.
        with self._lock:
            self.log.append(record)
            self.requests[record.path] += 1

    def _count_bytes(self, path: str, sent: int) -> None:
        with self._lock:
            self.bytes_sent[path] += sent

    def _take_failure(self, path: str) -> bool:
        with self._lock:
            if self.failures.get(path, 0) > 0:
                self.failures[path] -= 1
                return True
            return False

    # -- content ---------------------------------------------------------------------------------

    def distributions(self) -> list[_Dist]:
        dists = []
        for path in sorted(self.directory.iterdir()):
            split = _split(path.name)
            if split is None or not path.is_file():
                continue
            stat = path.stat()
            key = (path.name, stat.st_size, stat.st_mtime_ns)
            with self._lock:
                digest = self._hashes.get(key)
            if digest is None:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                with self._lock:
                    self._hashes[key] = digest
            dists.append(_Dist(path.name, split[0], split[1], path, digest, stat.st_size))
        return dists

    def metadata_of(self, dist: _Dist) -> bytes:
        with zipfile.ZipFile(dist.path) as archive:
            name = next(
                n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1
            )
            return archive.read(name)

    def project_json(self, project: str, dists: list[_Dist]) -> bytes:
        files = []
        for dist in dists:
            entry: dict[str, object] = {
                "filename": dist.filename,
                "url": f"../../files/{urllib.parse.quote(dist.filename)}",
                "hashes": {"sha256": dist.sha256},
                "size": dist.size,
                "upload-time": "2020-01-01T00:00:00.000000Z",
            }
            if dist.filename in self.requires_python:
                entry["requires-python"] = self.requires_python[dist.filename]
            if dist.filename in self.yanked:
                entry["yanked"] = self.yanked[dist.filename]
            if self.core_metadata and dist.filename.endswith(".whl"):
                metadata_hash = {"sha256": hashlib.sha256(self.metadata_of(dist)).hexdigest()}
                entry["core-metadata"] = metadata_hash
                entry["dist-info-metadata"] = metadata_hash
            files.append(entry)
        document = {
            "meta": {"api-version": "1.1"},
            "name": project,
            "files": files,
            "versions": sorted({dist.version for dist in dists}),
        }
        return json.dumps(document).encode()

    def project_html(self, project: str, dists: list[_Dist]) -> bytes:
        lines = [
            "<!DOCTYPE html>",
            "<html><head><meta name='pypi:repository-version' content='1.1'>",
            f"<title>Links for {html.escape(project)}</title></head><body>",
            f"<h1>Links for {html.escape(project)}</h1>",
        ]
        for dist in dists:
            attributes = [f'href="../../files/{urllib.parse.quote(dist.filename)}#sha256={dist.sha256}"']
            if dist.filename in self.requires_python:
                attributes.append(
                    f'data-requires-python="{html.escape(self.requires_python[dist.filename])}"'
                )
            if dist.filename in self.yanked:
                reason = self.yanked[dist.filename]
                attributes.append(
                    f'data-yanked="{html.escape(reason)}"' if isinstance(reason, str) else "data-yanked"
                )
            if self.core_metadata and dist.filename.endswith(".whl"):
                digest = hashlib.sha256(self.metadata_of(dist)).hexdigest()
                attributes.append(f'data-core-metadata="sha256={digest}"')
                attributes.append(f'data-dist-info-metadata="sha256={digest}"')
            lines.append(f"<a {' '.join(attributes)}>{html.escape(dist.filename)}</a><br/>")
        lines.append("</body></html>")
        return "\n".join(lines).encode()

    def root(self, as_json: bool) -> bytes:
        projects = sorted({dist.project for dist in self.distributions()})
        if as_json:
            return json.dumps(
                {"meta": {"api-version": "1.1"}, "projects": [{"name": p} for p in projects]}
            ).encode()
        anchors = "".join(f'<a href="{p}/">{p}</a>\n' for p in projects)
        return f"<!DOCTYPE html><html><body>\n{anchors}</body></html>".encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    index: IndexServer

    def handle_error(self, request: object, client_address: object) -> None:  # noqa: ARG002
        # A client that hangs up mid-body (a lazy reader that has what it needs) is not a failure.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; Nagle plus delayed ACKs would stall each by 40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: ARG002
        return

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _serve(self, *, body: bool) -> None:
        index = self.server.index
        path = urllib.parse.urlsplit(self.path).path
        if index._take_failure(path):
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, b"try again\n", "text/plain", body=body)
            return
        if path == "/simple/":
            as_json = self._negotiate() == JSON_TYPE
            self._send_page(index.root(as_json), JSON_TYPE if as_json else "text/html", body=body)
        elif path.startswith("/simple/"):
            self._serve_project(path, body=body)
        elif path.startswith("/files/"):
            self._serve_file(urllib.parse.unquote(path.removeprefix("/files/")), body=body)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain", body=body)

    def _serve_project(self, path: str, *, body: bool) -> None:
        index = self.server.index
        name = path.removeprefix("/simple/").rstrip("/")
        canonical = canonicalize_name(name)
        if name != canonical or not path.endswith("/"):
            # PEP 503: redirect to the normalised URL, with its trailing slash.
            index._record(RequestRecord(self.command, path, None, 301, None))
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", f"/simple/{canonical}/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        dists = [dist for dist in index.distributions() if dist.project == canonical]
        if not dists:
            self._send(HTTPStatus.NOT_FOUND, b"no such project\n", "text/plain", body=body)
            return
        chosen = self._negotiate()
        page = (
            index.project_json(canonical, dists)
            if chosen == JSON_TYPE
            else index.project_html(canonical, dists)
        )
        self._send_page(page, chosen, body=body)

    def _serve_file(self, filename: str, *, body: bool) -> None:
        index = self.server.index
        dists = {dist.filename: dist for dist in index.distributions()}
        if filename.endswith(".metadata") and index.core_metadata and filename[: -len(".metadata")] in dists:
            self._send(
                HTTPStatus.OK,
                index.metadata_of(dists[filename[: -len(".metadata")]]),
                "text/plain",
                body=body,
            )
            return
        if filename not in dists:
            self._send(HTTPStatus.NOT_FOUND, b"no such file\n", "text/plain", body=body)
            return
        tampered = index.tampered.get(filename)
        size = len(tampered) if tampered is not None else dists[filename].size
        wanted = self.headers.get("Range") if index.ranges else None
        span = _parse_range(wanted, size) if wanted else None
        extra = {"Accept-Ranges": "bytes"} if index.ranges else {}
        if isinstance(span, str):
            headers = {**extra, "Content-Range": f"bytes */{size}"}
            self._send(
                HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE, b"", "text/plain", body=body, headers=headers
            )
            return
        first, last = span if span is not None else (0, size - 1)
        if tampered is not None:
            data = tampered[first : last + 1]
        else:
            # Read only the asked-for span: tests make hundreds of range requests into 30 MB files.
            with dists[filename].path.open("rb") as handle:
                handle.seek(first)
                data = handle.read(last + 1 - first)
        if span is None:
            self._send(HTTPStatus.OK, data, "application/octet-stream", body=body, headers=extra)
        else:
            headers = {**extra, "Content-Range": f"bytes {first}-{last}/{size}"}
            self._send(
                HTTPStatus.PARTIAL_CONTENT, data, "application/octet-stream", body=body, headers=headers
            )

    def _negotiate(self) -> str:
        """The best of the types we offer for the Accept header; ties go to plain HTML."""
        offered = ["text/html", HTML_V1_TYPE] + ([JSON_TYPE] if self.server.index.json_api else [])
        accept = self.headers.get("Accept") or "*/*"
        best, best_q = "text/html", -1.0
        for media in offered:
            quality = _quality(accept, media)
            if quality > best_q:
                best, best_q = media, quality
        return best if best_q > 0 else "text/html"

    def _send_page(self, page: bytes, content_type: str, *, body: bool) -> None:
        headers = {"Vary": "Accept"}
        if self.server.index.etags:
            etag = f'"{hashlib.sha256(page + content_type.encode()).hexdigest()[:20]}"'
            headers["ETag"] = etag
            if self.headers.get("If-None-Match") == etag:
                self._send(HTTPStatus.NOT_MODIFIED, b"", content_type, body=False, headers=headers)
                return
        self._send(HTTPStatus.OK, page, content_type, body=body, headers=headers)

    def _send(
        self,
        status: HTTPStatus,
        data: bytes,
        content_type: str,
        *,
        body: bool,
        headers: dict[str, str] | None = None,
    ) -> None:
        path = urllib.parse.urlsplit(self.path).path
        index = self.server.index
        index._record(RequestRecord(self.command, path, self.headers.get("Range"), int(status), content_type))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if status != HTTPStatus.NOT_MODIFIED:
            self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if body and status != HTTPStatus.NOT_MODIFIED:
            try:
                for start in range(0, len(data), _CHUNK):
                    chunk = data[start : start + _CHUNK]
                    index._count_bytes(path, len(chunk))
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True


def _quality(accept: str, media: str) -> float:
    """The q value ``accept`` gives ``media``: the most specific matching entry decides."""
    major = media.split("/", 1)[0]
    best: tuple[int, float] = (-1, 0.0)
    for entry in accept.split(","):
        kind, *parameters = (part.strip() for part in entry.split(";"))
        quality = 1.0
        for parameter in parameters:
            key, _, value = parameter.partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        specificity = 2 if kind == media else 1 if kind == f"{major}/*" else 0 if kind == "*/*" else -1
        if specificity > best[0]:
            best = (specificity, quality)
    return best[1] if best[0] >= 0 else 0.0


def _parse_range(header: str, size: int) -> tuple[int, int] | str | None:
    """(first, last) for one satisfiable range, "unsatisfiable", or None to send the whole body."""
    found = _RANGE.fullmatch(header.strip())
    if found is None or (not found.group(1) and not found.group(2)):
        return None  # several ranges or nonsense: RFC 9110 lets us ignore the header
    if not found.group(1):
        suffix = int(found.group(2))
        if suffix == 0 or size == 0:
            return "unsatisfiable"
        return max(size - suffix, 0), size - 1
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) else size - 1
    if first >= size or last < first:
        return "unsatisfiable"
    return first, min(last, size - 1)


def _split(filename: str) -> tuple[str, str] | None:
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return str(name), str(version)
        if filename.endswith((".tar.gz", ".zip")):
            sdist_name, sdist_version = parse_sdist_filename(filename)
            return str(sdist_name), str(sdist_version)
    except ValueError:
        return None
    return None
