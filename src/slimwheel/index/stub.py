"""Wheel-stub source distributions: an sdist whose build fetches the real wheel from another index.

NVIDIA serves TensorRT's distributions (``tensorrt-cu13-libs``...) on the public index as sdists of
15 kB whose ``pyproject.toml`` names the build backend ``wheel_stub.buildapi`` and, under
``[tool.wheel_stub]``, the ``index_url`` that backend downloads the wheel from when pip builds it.
pip's install of such a requirement therefore installs that index's wheel, which is the one whose
files ``check`` must know. This module reads the index an sdist names, without running anything.
"""

from __future__ import annotations

import importlib
import io
import posixpath
import sys
import tarfile
import urllib.parse
from typing import Any

__all__ = ["SDIST_LIMIT", "wheel_stub_index"]

SDIST_LIMIT = 1 << 20  # a wheel-stub sdist is about 15 kB; a bigger sdist is not read
_PYPROJECT_LIMIT = 64 << 10
_MEMBERS_READ = 32  # pyproject.toml comes among an sdist's first files
_BACKEND = "wheel_stub.buildapi"
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def wheel_stub_index(sdist: bytes) -> str | None:
    """The ``index_url`` a wheel-stub sdist (``.tar.gz`` bytes) fetches its wheel from; None for any
    other sdist, or one that cannot be read: it is then an sdist like others, whose files are
    unknown."""
    pyproject = _top_pyproject(sdist)
    if pyproject is None:
        return None
    toml: Any = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    try:
        settings = toml.loads(pyproject.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):  # tomllib.TOMLDecodeError is a ValueError
        return None
    build = settings.get("build-system")
    tool = settings.get("tool")
    if not isinstance(build, dict) or build.get("build-backend") != _BACKEND or not isinstance(tool, dict):
        return None
    stub = tool.get("wheel_stub")
    url = stub.get("index_url") if isinstance(stub, dict) else None
    if not isinstance(url, str):
        return None
    parsed = urllib.parse.urlsplit(url)
    # As pip: an index over plain HTTP only on this machine (pip ignores any other without
    # --trusted-host, which an sdist cannot give).
    if parsed.scheme != "https" and not (parsed.scheme == "http" and parsed.hostname in _LOOPBACK):
        return None
    return url


def _top_pyproject(sdist: bytes) -> bytes | None:
    """The ``<name>-<version>/pyproject.toml`` of an sdist, read from memory with its size bounded
    (nothing is extracted to disk); None when there is none among its first members."""
    try:
        with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as archive:
            for _, member in zip(range(_MEMBERS_READ), archive, strict=False):
                parts = posixpath.normpath(member.name).split("/")
                if len(parts) != 2 or parts[1] != "pyproject.toml":
                    continue
                if not member.isfile() or member.size > _PYPROJECT_LIMIT:
                    return None
                handle = archive.extractfile(member)
                return handle.read(_PYPROJECT_LIMIT) if handle is not None else None
    except (tarfile.TarError, OSError, EOFError):
        return None
    return None
