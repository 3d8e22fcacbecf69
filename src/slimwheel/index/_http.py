"""HTTP plumbing shared by the index client and lazy wheels: retries, counters, one-line errors."""

from __future__ import annotations

import errno
import socket
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from slimwheel._version import __version__
from slimwheel.errors import IndexUnavailableError

__all__ = [
    "ACCEPT_SIMPLE",
    "RequestStats",
    "StatsSnapshot",
    "get",
    "make_http_client",
    "status_error",
    "transport_error",
]

ACCEPT_SIMPLE = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
)
_NETWORK_HINT = "check --index-url or your network"
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class StatsSnapshot:
    """Counters at one moment; subtract two to measure what happened in between."""

    requests: int = 0
    bytes_received: int = 0

    def __sub__(self, other: StatsSnapshot) -> StatsSnapshot:
        return StatsSnapshot(self.requests - other.requests, self.bytes_received - other.bytes_received)


class RequestStats:
    """Thread-safe counters of HTTP requests sent and body bytes received."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = 0
        self._bytes = 0

    def add(self, *, requests: int = 0, bytes_received: int = 0) -> None:
        with self._lock:
            self._requests += requests
            self._bytes += bytes_received

    @property
    def requests(self) -> int:
        with self._lock:
            return self._requests

    @property
    def bytes_received(self) -> int:
        with self._lock:
            return self._bytes

    def snapshot(self) -> StatsSnapshot:
        with self._lock:
            return StatsSnapshot(self._requests, self._bytes)


def make_http_client(max_connections: int = 8) -> httpx.Client:
    return httpx.Client(
        follow_redirects=True,
        timeout=httpx.Timeout(60.0, connect=15.0),
        limits=httpx.Limits(max_connections=max(max_connections, 1) * 2),
        headers={"User-Agent": f"slimwheel/{__version__}"},
    )


def transport_error(url: str, error: BaseException) -> IndexUnavailableError:
    """A one-line error for a request that got no usable answer."""
    return IndexUnavailableError(url, f"cannot reach the index: {_describe(error)}", hint=_NETWORK_HINT)


def status_error(url: str, response: httpx.Response) -> IndexUnavailableError:
    reason = response.reason_phrase or "error"
    hint = "check the index URL and your credentials" if response.status_code in (401, 403) else None
    return IndexUnavailableError(url, f"the index answered HTTP {response.status_code} {reason}", hint=hint)


@contextmanager
def get(
    client: httpx.Client,
    url: str,
    *,
    stats: RequestStats,
    headers: Mapping[str, str] | None = None,
    retries: int = 2,
) -> Iterator[httpx.Response]:
    """GET ``url`` as a streamed response, retrying connection failures and 5xx answers.

    The caller checks the status; any transport failure, also while reading the body, becomes an
    IndexUnavailableError. Every attempt and every body byte is counted in ``stats``.
    """
    response = _send(client, url, stats=stats, headers=headers or {}, retries=retries)
    try:
        yield response
    except httpx.HTTPError as error:
        raise transport_error(url, error) from error
    finally:
        response.close()
        stats.add(bytes_received=response.num_bytes_downloaded)


def _send(
    client: httpx.Client, url: str, *, stats: RequestStats, headers: Mapping[str, str], retries: int
) -> httpx.Response:
    attempt = 0
    while True:
        stats.add(requests=1)
        try:
            response = client.send(client.build_request("GET", url, headers=dict(headers)), stream=True)
        except httpx.HTTPError as error:
            if attempt >= retries or not _retryable(error):
                raise transport_error(url, error) from error
        else:
            if response.status_code not in _RETRY_STATUSES or attempt >= retries:
                return response
            response.close()
            stats.add(bytes_received=response.num_bytes_downloaded)
        attempt += 1
        time.sleep(0.25 * 2 ** (attempt - 1))  # 0.25 s, 0.5 s, ...: enough for a restarting proxy


def _retryable(error: httpx.HTTPError) -> bool:
    # A refused connection or an unknown host will not fix itself within a second.
    if isinstance(error, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return False
    cause = _root_cause(error)
    return not isinstance(cause, ConnectionRefusedError | socket.gaierror | ssl.SSLError)


def _root_cause(error: BaseException) -> BaseException:
    seen: set[int] = set()
    while id(error) not in seen:
        seen.add(id(error))
        following = error.__cause__ or error.__context__
        if following is None:
            break
        error = following
    return error


def _describe(error: BaseException) -> str:
    cause = _root_cause(error)
    text = " ".join((str(error) or str(cause) or type(error).__name__).split())
    known = (
        (isinstance(error, httpx.TimeoutException) or isinstance(cause, TimeoutError), "timed out"),
        (
            isinstance(cause, ConnectionRefusedError)
            or getattr(cause, "errno", None) == errno.ECONNREFUSED
            or "Connection refused" in text,
            "connection refused",
        ),
        (
            isinstance(cause, socket.gaierror) or "Name or service not known" in text,
            "cannot resolve the host name",
        ),
        (isinstance(error, httpx.UnsupportedProtocol), "unsupported URL scheme"),
        (isinstance(cause, ssl.SSLError), f"TLS failure ({text})"),
    )
    return next((words for matched, words in known if matched), text)
