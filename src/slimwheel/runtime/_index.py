"""Shared library files that installed distributions list in their RECORD, across ``sys.path``.

Reading RECORD, rather than probing a table of folders, means a file NVIDIA moves or renames in its
next release is still found: whatever pip installed is listed. Every ``*.dist-info`` directly inside
an absolute ``sys.path`` entry counts (venvs, ``pip install --target`` folders on ``PYTHONPATH``, the
user site, unzipped bundles). Relative entries (``''`` is the current directory) are skipped: the
loader never looks in the current directory.

``importlib.metadata`` is not used: importing it alone costs more than this whole scan in a typical
environment. A RECORD without any ``.so`` in it (most pure-Python distributions) is skipped after
one substring test.
"""

# os.path, not pathlib: importing pathlib costs the loader a few milliseconds at every start.
# ruff: noqa: PTH112, PTH116, PTH117, PTH118, PTH123

from __future__ import annotations

import os
import sys

from ._names import (
    is_library_file_name,
    major_from_distribution,
    major_from_folder,
    normalize_distribution,
)
from ._record import Record

# Annotations only: collections.abc would import collections at every start of a process.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["InstalledFile", "WheelIndex"]

_REQUIRES_TOOLKIT = r"^cuda-toolkit(?:\[[^\]]*\])?\s*(?:==|~=|>=)\s*(?P<major>[0-9]+)\b"
_CLASSIFIER = r"NVIDIA CUDA\s*::\s*(?P<major>[0-9]+)\b"


class InstalledFile(Record):
    """A library file an installed distribution's RECORD lists (``path`` absolute, normalized)."""

    __slots__ = ("dist_info", "distribution", "name", "path", "site", "size", "version")
    path: str
    name: str  # the file name
    distribution: str  # PEP 503 normalized: "nvidia-cudss-cu13"
    version: str
    dist_info: str  # the .dist-info folder
    site: str  # the sys.path entry that holds it
    size: int | None  # as RECORD states it

    def __init__(
        self,
        *,
        path: str,
        name: str,
        distribution: str,
        version: str,
        dist_info: str,
        site: str,
        size: int | None,
    ) -> None:
        self._set(
            path=path, name=name, distribution=distribution, version=version, dist_info=dist_info, site=site,
            size=size,
        )  # fmt: skip


class WheelIndex:
    """Every ``lib*.so*`` file listed by a distribution installed on the given paths.

    Built once per ``load``/``preload`` call (``preload`` shares one across its libraries), or
    once by a caller that passes it in; nothing is cached between calls, so a distribution installed
    while the process runs is seen by the next call. CUDA majors read from METADATA are remembered
    per index.
    """

    def __init__(self, paths: Sequence[str] | None = None) -> None:
        self.sites: list[str] = []  # searched, in sys.path order
        self.skipped: list[str] = []  # relative sys.path entries, never searched
        self.by_name: dict[str, list[InstalledFile]] = {}
        self._by_real: dict[str, list[InstalledFile]] | None = None
        self._metadata_major: dict[str, tuple[int | None, str | None]] = {}
        self._dist_infos: list[tuple[str, str, str, str]] = []  # (site, dist-info, name, version)
        seen: set[str] = set()
        for entry in sys.path if paths is None else paths:
            if not entry or not os.path.isabs(entry):
                self.skipped.append(entry or "'' (the current directory)")
                continue
            real = os.path.realpath(entry)
            if real in seen or not os.path.isdir(entry):
                continue
            seen.add(real)
            self.sites.append(entry)
            self._scan_site(entry)

    def _scan_site(self, site: str) -> None:
        try:
            entries = sorted(e.name for e in os.scandir(site) if e.name.endswith(".dist-info"))
        except OSError:
            return
        for folder in entries:
            name, _, version = folder[: -len(".dist-info")].rpartition("-")
            if not name:
                continue
            dist_info = os.path.join(site, folder)
            distribution = normalize_distribution(name)
            self._dist_infos.append((site, dist_info, distribution, version))
            try:
                with open(os.path.join(dist_info, "RECORD"), "rb") as stream:
                    record = stream.read()
            except OSError:
                continue  # an egg-style or broken install: nothing to list
            if b".so" not in record:
                continue
            for relative, size in _record_libraries(record):
                path = os.path.normpath(relative if os.path.isabs(relative) else os.path.join(site, relative))
                filename = relative.rsplit("/", 1)[-1]
                found = InstalledFile(
                    path=path, name=filename, distribution=distribution, version=version, dist_info=dist_info,
                    site=site, size=size,
                )  # fmt: skip
                self.by_name.setdefault(filename, []).append(found)

    def files(self, names: Iterable[str]) -> list[InstalledFile]:
        """Installed files with these names that exist, in sys.path order; a path two distributions
        both list (cuDNN cu12 and cu13 share ``nvidia/cudnn/lib``) goes to the one whose RECORD
        size matches the file on disk."""
        chosen: dict[str, InstalledFile] = {}
        order: list[str] = []
        for name in names:
            for item in self.by_name.get(name, ()):
                try:
                    size = os.stat(item.path).st_size
                except OSError:
                    continue  # listed, but removed or overwritten since
                previous = chosen.get(item.path)
                if previous is None:
                    order.append(item.path)
                    chosen[item.path] = item
                elif previous.size != size and item.size == size:
                    chosen[item.path] = item
        return [chosen[path] for path in order]

    def owner(self, path: str) -> InstalledFile | None:
        """The installed file at ``path`` (symlinks resolved), e.g. for a library already mapped."""
        if self._by_real is None:
            self._by_real = {}
            for items in self.by_name.values():
                for item in items:
                    self._by_real.setdefault(os.path.realpath(item.path), []).append(item)
        claims = self._by_real.get(os.path.realpath(path), [])
        if len(claims) < 2:
            return claims[0] if claims else None
        try:  # two distributions list this path: the one whose RECORD size matches the file
            size = os.stat(path).st_size
        except OSError:
            return claims[0]
        return next((item for item in claims if item.size == size), claims[0])

    def cuda_major(self, item: InstalledFile) -> tuple[int | None, str | None]:
        """The CUDA major of the distribution a file belongs to, and where it was read: the name
        suffix (-cu13), the folder (nvidia/cu13/), then METADATA (a cuda-toolkit==13.* requirement or
        an ``Environment :: GPU :: NVIDIA CUDA :: 13`` classifier). The soname never decides it:
        libcusparse.so.12 ships for CUDA 12 and 13."""
        major = major_from_distribution(item.distribution)
        if major is not None:
            return major, "distribution name"
        major = major_from_folder(item.path)
        if major is not None:
            return major, "folder"
        if item.dist_info not in self._metadata_major:
            self._metadata_major[item.dist_info] = _metadata_major(item.dist_info)
        return self._metadata_major[item.dist_info]

    def dist_info(self, distribution: str) -> str | None:
        """The first ``.dist-info`` folder on the searched paths for this distribution name."""
        wanted = normalize_distribution(distribution)
        for _site, dist_info, name, _version in self._dist_infos:
            if name == wanted:
                return dist_info
        return None


def _record_libraries(record: bytes) -> list[tuple[str, int | None]]:
    """(path, size) of every ``lib*.so[.N]`` file a RECORD lists. Only lines holding ``.so`` are
    looked at (bytes.find carries the scan over torch-sized RECORDs). Quoted (csv) paths are left out:
    a library file name with a comma or quote in it is not one NVIDIA or a linker would write."""
    found = []
    position = record.find(b".so")
    while position != -1:
        start = record.rfind(b"\n", 0, position) + 1
        end = record.find(b"\n", position)
        if end < 0:
            end = len(record)
        path, comma, rest = record[start:end].rstrip(b"\r").partition(b",")
        if comma and not path.startswith(b'"'):
            relative = path.decode("utf-8", "surrogateescape")
            if is_library_file_name(relative.rsplit("/", 1)[-1]):
                size = rest.rsplit(b",", 1)[-1].strip()
                found.append((relative, int(size) if size.isdigit() else None))
        position = record.find(b".so", end)
    return found


def _metadata_major(dist_info: str) -> tuple[int | None, str | None]:
    # The email parser and re cost more to import than the rest of the loader; only a distribution
    # with neither a -cuNN suffix nor a cuNN folder needs them.
    import re
    from email.parser import HeaderParser

    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8", errors="replace") as stream:
            headers = HeaderParser().parse(stream)
    except OSError:
        return None, None
    for requirement in headers.get_all("Requires-Dist") or ():
        if ";" in requirement and "extra" in requirement.split(";", 1)[1]:
            continue  # an extra's requirement says nothing about the distribution itself
        match = re.match(_REQUIRES_TOOLKIT, requirement.strip())
        if match:
            return int(match["major"]), "METADATA"
    for classifier in headers.get_all("Classifier") or ():
        match = re.search(_CLASSIFIER, classifier)
        if match:
            return int(match["major"]), "METADATA"
    return None, None
