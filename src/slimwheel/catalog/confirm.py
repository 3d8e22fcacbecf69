"""Confirm which NVIDIA release a vendored copy is, by comparing GNU build-ids with the official file.

auditwheel and patchelf rewrite a copy (new SONAME, moved notes), so its sha256 no longer matches, but
the build-id survives. NVIDIA's own files keep the build-id at their end, so the official member has
to be read (through a lazy remote wheel: only that member's bytes). Each official build-id is read
once and kept in the cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from slimwheel.analysis import Confidence, IdentifiedRelease, VendoredCopy, WheelReport
from slimwheel.catalog.model import Catalog, LibraryProvider
from slimwheel.elf import read_elf
from slimwheel.errors import SlimwheelError

if TYPE_CHECKING:
    from slimwheel.index import Cache, IndexClient

__all__ = ["BuildIdSource", "confirm_report"]

_MAX_CANDIDATES = 12


class BuildIdSource:
    """The GNU build-id of an official library file, from the catalog, the cache, or the index."""

    def __init__(self, client: IndexClient, cache: Cache | None) -> None:
        self._client = client
        self._cache_dir = cache.root / "build-ids" if cache is not None else None
        self.fetched = 0  # members actually read over the network, for reports and tests

    def _cache_path(self, provider: LibraryProvider) -> Path | None:
        if self._cache_dir is None:
            return None
        key = provider.library.sha256 or f"{provider.wheel.filename}/{provider.library.path}"
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self._cache_dir / digest[:2] / digest

    def build_id(self, provider: LibraryProvider) -> str | None:
        if provider.library.build_id:
            return provider.library.build_id
        path = self._cache_path(provider)
        if path is not None and path.is_file():
            return path.read_text().strip() or None
        found = self._read_official(provider)
        if path is not None:
            _write_atomically(path, found or "")
        return found

    def _read_official(self, provider: LibraryProvider) -> str | None:
        page = self._client.project(provider.distribution)
        files = [f for f in page.files if f.filename == provider.wheel.filename]
        if not files:
            return None
        self.fetched += 1
        with self._client.open_wheel(files[0]) as wheel:
            member = next(
                (m.name for m in wheel.members if wheel.installed_path(m.name) == provider.library.path), None
            )
            if member is None:
                return None
            with wheel.seekable_member(member) as stream:
                return read_elf(stream, path=f"{files[0].filename}:{member}", symbols=False).build_id


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".build-id.", dir=path.parent)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    Path(temporary).replace(path)


def _candidates(catalog: Catalog, copy: VendoredCopy, machine: str | None) -> Sequence[LibraryProvider]:
    providers = catalog.providers(soname=copy.original_soname, include_prereleases=True)
    arch = {"x86_64": "x86_64", "aarch64": "aarch64"}.get(machine or "")
    if arch:
        providers = tuple(p for p in providers if any(pl.arch == arch for pl in p.wheel.platforms))
    found = copy.identified
    if found is not None and found.confidence is Confidence.BY_NAME:
        # The file's own version narrows the search: 1.0.0 -> releases 1.0.0.*.
        same = [p for p in providers if p.version == found.version]
        providers = tuple(same) + tuple(p for p in providers if p.version != found.version)
    return providers[:_MAX_CANDIDATES]


def confirm_report(report: WheelReport, catalog: Catalog, source: BuildIdSource) -> WheelReport:
    """The report with each not-yet-exact vendored copy confirmed (or not) by build-id."""
    elf_by_path = {elf.path: elf for elf in report.elf_files}
    confirmed = []
    for copy in report.vendored:
        elf = elf_by_path.get(copy.path)
        if copy.identified is not None and copy.identified.confidence is Confidence.EXACT:
            confirmed.append(copy)
            continue
        if elf is None or not elf.build_id:
            confirmed.append(copy)
            continue
        match = None
        for provider in _candidates(catalog, copy, elf.machine):
            try:
                official = source.build_id(provider)
            except SlimwheelError:
                continue  # an unreachable or odd wheel: try the next candidate
            if official == elf.build_id:
                match = provider
                break
        if match is None:
            confirmed.append(copy)
            continue
        identified = IdentifiedRelease(
            distribution=match.distribution,
            version=match.version,
            cuda_major=match.release.cuda_major,
            confidence=Confidence.EXACT,
            official_path=match.library.path,
            candidates=1,
            evidence="build-id",
            soname=match.library.soname,
        )
        confirmed.append(dataclasses.replace(copy, identified=identified))
    return dataclasses.replace(report, vendored=tuple(confirmed))
