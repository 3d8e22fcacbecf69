"""Small source distributions whose install is known without building them.

NVIDIA serves TensorRT's distributions (``tensorrt-cu13-libs``...) on the public index as sdists of
15 kB whose ``pyproject.toml`` names the build backend ``wheel_stub.buildapi`` and, under
``[tool.wheel_stub]``, the ``index_url`` that backend downloads the wheel from when pip builds it.
pip's install of such a requirement therefore installs that index's wheel, which is the one whose
files ``check`` must know. Its metapackage ``tensorrt-cu13`` is an sdist of pure Python whose
``PKG-INFO`` (metadata 2.2 or later, Requires-Dist not dynamic, as PEP 643 makes binding) requires
those. This module reads both, without running anything.
"""

from __future__ import annotations

import email.parser
import importlib
import io
import posixpath
import sys
import tarfile
import urllib.parse
from typing import Any

from packaging.version import InvalidVersion, Version

__all__ = ["SDIST_LIMIT", "static_requirements", "wheel_stub_index"]

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


# Files that make a build compile something, which may then ship a library nobody can list unbuilt.
_NATIVE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".pyx", ".f", ".f90", ".rs", ".so")
_NATIVE_BUILDS = frozenset({"CMakeLists.txt", "meson.build", "Cargo.toml", "Makefile", "configure"})
_MEMBERS_LISTED = 4096
_PKG_INFO_LIMIT = 256 << 10


def static_requirements(sdist: bytes) -> tuple[str, ...] | None:
    """The Requires-Dist of an sdist (``.tar.gz`` bytes) that builds no native code and whose
    ``PKG-INFO`` binds them (metadata 2.2 or later, Requires-Dist not listed as Dynamic): what its
    built wheel requires, and that wheel ships no library. None for any other sdist, or one that
    cannot be read."""
    pkg_info = None
    try:
        with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as archive:
            for count, member in enumerate(archive):
                name = posixpath.basename(member.name)
                if count >= _MEMBERS_LISTED or name.endswith(_NATIVE_SUFFIXES) or name in _NATIVE_BUILDS:
                    return None
                parts = posixpath.normpath(member.name).split("/")
                if len(parts) == 2 and parts[1] == "PKG-INFO" and member.isfile():
                    if member.size > _PKG_INFO_LIMIT:
                        return None
                    handle = archive.extractfile(member)
                    pkg_info = handle.read(_PKG_INFO_LIMIT) if handle is not None else None
    except (tarfile.TarError, OSError, EOFError):
        return None
    if pkg_info is None:
        return None
    metadata = email.parser.BytesHeaderParser().parsebytes(pkg_info)
    try:
        version = Version(str(metadata.get("Metadata-Version", "")).strip())
    except InvalidVersion:
        return None
    dynamic = {str(field).strip().lower() for field in metadata.get_all("Dynamic") or ()}
    if version < Version("2.2") or "requires-dist" in dynamic:
        return None
    return tuple(str(line).strip() for line in metadata.get_all("Requires-Dist") or ())


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
