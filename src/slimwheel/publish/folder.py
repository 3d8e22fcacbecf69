"""An index in a local folder, to be served by any static web server (``python -m http.server``).

Every write goes to a temporary file in ``<root>/.slimwheel/tmp`` (same filesystem) and is renamed into
place, so a reader sees whole files only. A write that must not replace anything is a hard link of the
temporary file (``link`` fails where the name exists: atomic, no lock needed). A conditional write over a
page holds that page's lock (``flock`` on ``<root>/.slimwheel/locks/<hash>``) across compare and rename.
A temporary file is held under ``flock`` by its writer; one left by a killed writer is removed by the next.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from slimwheel._scratch import LOCKING, lock_new_file, release, remove_abandoned_files
from slimwheel.publish.errors import ConflictError, DestinationError
from slimwheel.publish.store import ObjectInfo, StoredObject, StoreStats

if LOCKING:
    import fcntl

__all__ = ["CONTROL_FOLDER", "FolderStore"]

CONTROL_FOLDER = ".slimwheel"  # locks and temporary files; never part of the index
_TEMPORARY = re.compile(r"[0-9a-f]{16}\.tmp")
_CHUNK = 1024 * 1024


class FolderStore:
    """A folder holding an index root (created on the first write)."""

    pages_at_folder_keys = False

    def __init__(self, root: Path, *, description: str | None = None) -> None:
        self.root = root.absolute()
        self.description = description or str(root)
        self.stats = StoreStats()
        self._cleaned = False
        if self.root.exists() and not self.root.is_dir():
            raise DestinationError(f"{self.description}: not a folder", hint="give a folder for the index")

    # -- reading ---------------------------------------------------------------------------------

    def public_url(self, key: str) -> str | None:
        url = self._path(key).as_uri()
        return url + "/" if key.endswith("/") and not url.endswith("/") else url

    def read(self, key: str) -> StoredObject | None:
        self.stats.add("reads")
        try:
            data = self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as error:
            raise self._error(key, error) from error
        return StoredObject(key, data, _etag(data), None)

    def head(self, key: str) -> ObjectInfo | None:
        self.stats.add("heads")
        try:
            size = self._path(key).stat().st_size
        except (FileNotFoundError, NotADirectoryError):
            return None
        return ObjectInfo(key, size, "", None)

    def sha256_of(self, key: str) -> str | None:
        self.stats.add("reads")
        digest = hashlib.sha256()
        try:
            with self._path(key).open("rb") as handle:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return digest.hexdigest()

    def list(self, prefix: str) -> Iterator[ObjectInfo]:
        folder = self._path(prefix.rpartition("/")[0]) if "/" in prefix else self.root
        found: list[ObjectInfo] = []
        for directory, names, files in os.walk(folder):
            self.stats.add("lists")
            names[:] = sorted(name for name in names if name != CONTROL_FOLDER)
            for name in files:
                path = Path(directory) / name
                key = path.relative_to(self.root).as_posix()
                if key.startswith(prefix):
                    with suppress(OSError):
                        found.append(ObjectInfo(key, path.stat().st_size, "", None))
        yield from sorted(found, key=lambda info: info.key)

    # -- writing ---------------------------------------------------------------------------------

    def write(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str,  # noqa: ARG002 - a static server derives it from the name
        if_match: str | None = None,
        if_absent: bool = False,
        sha256: str | None = None,  # noqa: ARG002 - a folder keeps no metadata
    ) -> str:
        target = self._path(key)
        self.stats.add("writes")
        with self._temporary() as (temporary, descriptor):
            _write_all(descriptor, data)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                if if_absent:
                    self._link(temporary, target, key)
                elif if_match is not None:
                    with self._locked(key):
                        current = self._current_etag(target)
                        if current != if_match:
                            raise ConflictError(key)
                        temporary.replace(target)
                else:
                    temporary.replace(target)
            except OSError as error:
                raise self._error(key, error) from error
        return _etag(data)

    def upload(self, key: str, source: Path, *, content_type: str, sha256: str) -> bool:  # noqa: ARG002
        self.stats.add("writes")
        target = self._path(key)
        with self._temporary() as (temporary, descriptor):
            with source.open("rb") as handle, os.fdopen(os.dup(descriptor), "wb") as out:
                shutil.copyfileobj(handle, out, _CHUNK)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                self._link(temporary, target, key)
            except ConflictError:
                return False
            except OSError as error:
                raise self._error(key, error) from error
        return True

    def copy(self, source_key: str, key: str, *, content_type: str, sha256: str) -> bool:
        return self.upload(key, self._path(source_key), content_type=content_type, sha256=sha256)

    def close(self) -> None:
        return

    # -- helpers ---------------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        parts = key.strip("/").split("/") if key.strip("/") else []
        if any(part in ("", ".", "..") for part in parts):
            raise DestinationError(f"{key!r}: not a key of this index")
        return self.root.joinpath(*parts)

    def _error(self, key: str, error: OSError) -> DestinationError:
        return DestinationError(
            f"{self._path(key)}: {error.strerror or error}", hint="check that the folder is writable"
        )

    @staticmethod
    def _link(temporary: Path, target: Path, key: str) -> None:
        try:
            os.link(temporary, target)
        except FileExistsError as error:
            raise ConflictError(key) from error

    @staticmethod
    def _current_etag(target: Path) -> str | None:
        try:
            return _etag(target.read_bytes())
        except FileNotFoundError:
            return None

    @contextmanager
    def _temporary(self) -> Iterator[tuple[Path, int]]:
        folder = self.root / CONTROL_FOLDER / "tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DestinationError(
                f"{folder}: {error.strerror or error}", hint="check that the folder is writable"
            ) from error
        if not self._cleaned:
            remove_abandoned_files(folder, _TEMPORARY)  # left by writers killed mid-write
            self._cleaned = True
        while True:
            path = folder / f"{secrets.token_hex(8)}.tmp"
            try:
                descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            except FileExistsError:
                continue
            if lock_new_file(descriptor, path):
                break
            os.close(descriptor)
        try:
            yield path, descriptor
        finally:
            with suppress(OSError):
                path.unlink()  # still there unless renamed; a link leaves both names
            release(descriptor)
            os.close(descriptor)

    @contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        folder = self.root / CONTROL_FOLDER / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        # Lock files are never removed: removing one could let two writers lock two different files.
        lock = folder / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".lock")
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            if LOCKING:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _etag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
