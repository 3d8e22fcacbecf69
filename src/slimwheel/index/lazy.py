"""A read-only, seekable file over an HTTP URL that fetches only the byte ranges that are read.

A wheel's table of contents sits at its end, so the first request asks for the last 16 KiB: that
tells the size and holds the zip's end record, and often the whole central directory. Later reads
fetch what is missing with read-ahead that grows while reads stay sequential. When the central
directory is bigger than the tail, the request that fetches it also takes about as many bytes again
from just before it, where wheel builders put ``.dist-info`` (RECORD is about as long as the
directory), so METADATA and RECORD usually need no request of their own. If the server ignores
ranges, the body is streamed once into a temporary file and served from there.
"""

from __future__ import annotations

import bisect
import io
import re
import struct
import tempfile
import threading
from collections import OrderedDict
from typing import IO

import httpx

from slimwheel._io import seek_position
from slimwheel.errors import IndexUnavailableError
from slimwheel.index._http import RequestStats, get, status_error

__all__ = ["RangeFile"]

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)", re.IGNORECASE)
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)", re.IGNORECASE)


class RangeFile(io.RawIOBase):
    """A readable, seekable view of ``url`` built from HTTP Range requests.

    ``tail_size`` is the first (suffix) request; ``min_fetch`` the least any later request asks for;
    ``max_fetch`` caps how far read-ahead grows; ``max_memory`` bounds the bytes kept in memory
    (the least recently used spans go first), and the spool size when ranges are not supported.
    ``expected_size``, when the index told us, is checked against what the server says.
    """

    def __init__(
        self,
        url: str,
        client: httpx.Client,
        *,
        stats: RequestStats | None = None,
        tail_size: int = 16 * 1024,
        min_fetch: int = 8 * 1024,
        max_fetch: int = 8 * 1024 * 1024,
        max_memory: int = 64 * 1024 * 1024,
        expected_size: int | None = None,
        retries: int = 2,
    ) -> None:
        super().__init__()
        self.url = url
        self._client = client
        self._shared_stats = stats
        self.stats = RequestStats()  # this file's own requests, for measurements
        self._min_fetch = max(min_fetch, 1)
        # Read-ahead beyond a quarter of the memory bound would evict itself before it is used.
        self._max_fetch = max(min(max_fetch, max_memory // 4), self._min_fetch)
        self._max_memory = max_memory
        self._retries = retries
        self._lock = threading.RLock()
        self._position = 0
        self._spans: OrderedDict[int, bytes] = OrderedDict()  # start -> bytes, least recent first
        self._starts: list[int] = []  # sorted keys of _spans; spans never overlap
        self._memory = 0
        self._last_end = -1
        self._readahead = self._min_fetch
        self._spool: IO[bytes] | None = None
        self._directory: tuple[int, int] | None = None  # the zip central directory, once the tail shows it
        self._size = self._open(max(tail_size, 1))
        if expected_size is not None and expected_size != self._size:
            raise IndexUnavailableError(
                url, f"the server has {self._size} bytes but the index lists {expected_size}"
            )

    # -- io.RawIOBase -----------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def ranges_supported(self) -> bool:
        """False when the server ignored Range and the whole body was downloaded."""
        return self._spool is None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if self.closed:
            raise ValueError("seek on a closed file")
        self._position = seek_position(offset, whence, self._position, self._size)
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def read(self, size: int | None = -1) -> bytes:
        if self.closed:
            raise ValueError("read from a closed file")
        with self._lock:
            start = self._position
            end = self._size if size is None or size < 0 else min(self._size, start + size)
            if start >= end:
                return b""
            data = self._read_span(start, end)
            self._position = end
            return data

    def readall(self) -> bytes:
        return self.read(-1)

    def close(self) -> None:
        with self._lock:
            if self._spool is not None:
                self._spool.close()
            self._spans.clear()
            self._starts.clear()
            self._memory = 0
        super().close()

    # -- fetching ---------------------------------------------------------------------------------

    def _open(self, tail_size: int) -> int:
        """Ask for the tail; learn the size from it. Returns the size."""
        with get(
            self._client,
            self.url,
            stats=self._counters(),
            headers=_range(f"-{tail_size}"),
            retries=self._retries,
        ) as response:
            if response.status_code == 206:
                parsed = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
                if parsed and parsed.group(3) != "*":
                    first, size = int(parsed.group(1)), int(parsed.group(3))
                    tail = response.read()
                    self._store(first, tail)
                    self._directory = _central_directory(tail, first, size)
                    return size
            if response.status_code == 200:
                return self._spool_body(response)
            if response.status_code == 416:
                unsatisfied = _UNSATISFIED_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
                if unsatisfied and int(unsatisfied.group(1)) == 0:
                    return 0  # an empty file: no range of it can be satisfied
                if unsatisfied:
                    # Some servers refuse suffix ranges but say the size; ask for the tail explicitly.
                    size = int(unsatisfied.group(1))
                    data = self._fetch(max(size - tail_size, 0), size, size)
                    if data is not None:
                        self._store(max(size - tail_size, 0), data)
                    return size
            if response.status_code not in (206, 416):
                raise status_error(self.url, response)
        # A 206 without a usable total, or a 416 without one: the size is unknown, so read it all.
        return self._download_whole()

    def _read_span(self, start: int, end: int) -> bytes:
        if self._spool is not None:
            self._spool.seek(start)
            return self._spool.read(end - start)
        missing = self._missing(start, end)
        if missing is not None:
            gap_start, gap_end = missing
            sequential = gap_start == self._last_end
            self._readahead = min(self._readahead * 2, self._max_fetch) if sequential else self._min_fetch
            fetch_end = min(self._size, max(gap_end, gap_start + self._readahead))
            fetch_start, fetch_end = self._around_directory(gap_start, fetch_end)
            data = self._fetch(fetch_start, fetch_end, self._size)
            if data is None:  # the server stopped honouring ranges mid-way
                return self._read_span(start, end)
            self._store(fetch_start, data)
            self._last_end = fetch_end
        data = self._assemble(start, end)
        self._evict()
        return data

    def _around_directory(self, gap_start: int, fetch_end: int) -> tuple[int, int]:
        """Where a fetch for ``gap_start`` starts and ends: for the central directory's first gap,
        from before it (the last members, dist-info's, sit there) to its end, in one request
        (the reader asks for the directory a piece at a time)."""
        if self._directory is None:
            return gap_start, fetch_end
        directory_start, directory_size = self._directory
        directory_end = directory_start + directory_size
        if not directory_start <= gap_start < directory_end:
            return gap_start, fetch_end
        self._directory = None  # only once: later reads are of members, read as asked
        share = self._max_memory // 4
        behind = min(directory_size + 64 * 1024, share)
        start = max(0, min(gap_start, directory_start - behind))
        return start, min(self._size, max(fetch_end, min(directory_end, gap_start + share)))

    def _fetch(self, start: int, end: int, size: int) -> bytes | None:
        """Bytes [start, end), or None when the server sent the whole file instead (now spooled)."""
        with get(
            self._client,
            self.url,
            stats=self._counters(),
            headers=_range(f"{start}-{end - 1}"),
            retries=self._retries,
        ) as response:
            if response.status_code == 200:
                self._spool_body(response)
                return None
            if response.status_code != 206:
                raise status_error(self.url, response)
            parsed = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
            # Joined here, not by response.read(): that keeps the body on the response too, and
            # responses sit in reference cycles, so an evicted span would live until the next
            # garbage collection (14 spans of 2 MiB, measured, while streaming a member).
            body = b"".join(response.iter_bytes())
        if (
            parsed is None
            or int(parsed.group(1)) != start
            or parsed.group(3) not in ("*", str(size))
            or len(body) != int(parsed.group(2)) - start + 1
        ):
            raise IndexUnavailableError(
                self.url,
                f"asked for bytes {start}-{end - 1} of {size} and got "
                f"{response.headers.get('Content-Range', 'no Content-Range')} ({len(body)} bytes)",
                hint="the file may have changed on the server; retry",
            )
        return body

    def _spool_body(self, response: httpx.Response) -> int:
        spool = tempfile.SpooledTemporaryFile(max_size=self._max_memory)  # noqa: SIM115 - closed in close()
        for chunk in response.iter_bytes(1024 * 1024):
            spool.write(chunk)
        size = spool.tell()
        if self._spool is not None:
            self._spool.close()
        self._spool = spool
        self._spans.clear()
        self._starts.clear()
        self._memory = 0
        return size

    def _download_whole(self) -> int:
        with get(self._client, self.url, stats=self._counters(), retries=self._retries) as response:
            if response.status_code != 200:
                raise status_error(self.url, response)
            return self._spool_body(response)

    def _counters(self) -> _BothStats:
        return _BothStats(self.stats, self._shared_stats)

    # -- span bookkeeping -------------------------------------------------------------------------

    def _missing(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest range covering every byte of [start, end) that is not in memory."""
        first: int | None = None
        last = start
        position = start
        index = max(bisect.bisect_right(self._starts, start) - 1, 0)
        while position < end:
            if index >= len(self._starts):
                first, last = (position if first is None else first), end
                break
            span_start = self._starts[index]
            span_end = span_start + len(self._spans[span_start])
            if span_end <= position:
                index += 1
            elif span_start > position:
                first = position if first is None else first
                position = last = min(span_start, end)
            else:
                position = span_end
                index += 1
        return None if first is None else (first, last)

    def _store(self, start: int, data: bytes) -> None:
        if not data:
            return
        end = start + len(data)
        # Trim or drop what the new span covers, so spans never overlap.
        index = max(bisect.bisect_right(self._starts, start) - 1, 0)
        while index < len(self._starts) and self._starts[index] < end:
            span_start = self._starts[index]
            span = self._spans[span_start]
            span_end = span_start + len(span)
            if span_end <= start:
                index += 1
                continue
            del self._spans[span_start]
            del self._starts[index]
            self._memory -= len(span)
            if span_start < start:
                self._insert(span_start, span[: start - span_start])
                index += 1
            if span_end > end:
                self._insert(end, span[end - span_start :])
        self._insert(start, data)

    def _insert(self, start: int, data: bytes) -> None:
        bisect.insort(self._starts, start)
        self._spans[start] = data
        self._memory += len(data)

    def _assemble(self, start: int, end: int) -> bytes:
        parts: list[bytes] = []
        position = start
        index = max(bisect.bisect_right(self._starts, start) - 1, 0)
        while position < end:
            span_start = self._starts[index]
            span = self._spans[span_start]
            if span_start + len(span) <= position:
                index += 1
                continue
            parts.append(span[position - span_start : end - span_start])
            position = min(end, span_start + len(span))
            self._spans.move_to_end(span_start)
            index += 1
        return b"".join(parts)

    def _evict(self) -> None:
        # The most recent span stays, or read-ahead would be thrown away before it is read.
        while self._memory > self._max_memory and len(self._spans) > 1:
            span_start, span = self._spans.popitem(last=False)
            self._starts.remove(span_start)
            self._memory -= len(span)


class _BothStats(RequestStats):
    """Counts into a file's own counters and the client's shared ones at once."""

    def __init__(self, own: RequestStats, shared: RequestStats | None) -> None:
        super().__init__()
        self._targets = [own] if shared is None else [own, shared]

    def add(self, *, requests: int = 0, bytes_received: int = 0) -> None:
        for target in self._targets:
            target.add(requests=requests, bytes_received=bytes_received)


_END_RECORD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_END_RECORD = struct.Struct("<4sQ2H2L4Q")


def _central_directory(tail: bytes, tail_start: int, size: int) -> tuple[int, int] | None:
    """(offset, size) of the zip central directory from the file's tail, if the tail shows it.

    Only a hint for read-ahead: zipfile does the real parsing, so anything odd just returns None.
    """
    position = tail.rfind(b"PK\x05\x06")
    if position < 0 or position + _END_RECORD.size > len(tail):
        return None
    fields = _END_RECORD.unpack_from(tail, position)
    directory_size, directory_start = fields[5], fields[6]
    if 0xFFFFFFFF in (directory_size, directory_start):
        locator_at = position - _ZIP64_LOCATOR.size
        if locator_at < 0 or tail[locator_at : locator_at + 4] != b"PK\x06\x07":
            return None
        record_at = _ZIP64_LOCATOR.unpack_from(tail, locator_at)[2] - tail_start
        if record_at < 0 or record_at + _ZIP64_END_RECORD.size > len(tail):
            return None
        if tail[record_at : record_at + 4] != b"PK\x06\x06":
            return None
        record = _ZIP64_END_RECORD.unpack_from(tail, record_at)
        directory_size, directory_start = record[8], record[9]
    if directory_start + directory_size > size:
        return None
    return directory_start, directory_size


def _range(spec: str) -> dict[str, str]:
    # identity: byte offsets must be offsets of the file, not of a compressed transfer.
    return {"Range": f"bytes={spec}", "Accept-Encoding": "identity"}
