"""The library files of any distribution's releases, read from the package index without downloading.

For a requirement (``torch>=2.4``) and a target (platform, Python), the project page gives the
releases it allows that have a wheel pip could install there; of those, the oldest and the newest are
read (``pick_versions``). A wheel is read lazily: the zip's central directory through HTTP Range
requests (about 1.2 MiB of a 900 MB torch wheel), and only the names of shared library files are
kept. Each wheel's list is cached under ``<cache>/dist-files/``, keyed by the wheel's sha256 (else
its URL), so the next run reads no wheel again; project pages are cached by the index client
(fresh for its ``page_ttl``, then revalidated with their ETag).

``offline``: no request at all. Project pages come from the cache whatever their age, wheel lists
from the cache; anything missing makes the answer a problem ("offline"), never an empty list.
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.parser
import hashlib
import json
import math
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import httpx
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, parse_tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from slimwheel.dist_files import ReleaseFiles, RequirementFiles, is_library_path, pick_versions
from slimwheel.errors import SlimwheelError
from slimwheel.index.cache import Cache, atomic_writer
from slimwheel.index.client import IndexClient
from slimwheel.index.config import IndexSettings
from slimwheel.index.errors import FileTooLargeError
from slimwheel.index.simple import DistributionFile
from slimwheel.index.stub import SDIST_LIMIT, static_requirements, wheel_stub_index
from slimwheel.platforms import Platform, glibc_of_tag, platform_of_tag

if TYPE_CHECKING:
    from slimwheel.index.simple import ProjectPage

__all__ = ["IndexDistFiles", "OfflineError", "WheelFilter", "wheel_rank"]

_FORMAT = 1


class OfflineError(SlimwheelError):
    """A request was about to be made while offline."""


def _refuse(request: httpx.Request) -> httpx.Response:
    raise OfflineError(f"{request.url}: offline, and not in slimwheel's cache")


class IndexDistFiles:
    """A ``DistFileSource`` backed by the package index (see the module's docstring).

    ``settings`` may be a callable, so that pip's configuration is read only when a lookup happens.
    ``oldest``/``newest``: how many of the allowed releases to read at each end of the range. Use it
    as a context manager, or call ``close``, to close the index client once it was opened.
    """

    def __init__(
        self,
        settings: IndexSettings | Callable[[], IndexSettings],
        *,
        cache: Cache | None = None,
        offline: bool = False,
        refresh: bool = False,
        oldest: int = 1,
        newest: int = 1,
        max_workers: int = 4,
    ) -> None:
        self._settings = settings
        self._cache = cache
        self.offline = offline
        self._refresh = refresh and not offline
        self._oldest = oldest
        self._newest = newest
        self._max_workers = max(max_workers, 1)
        self._client: IndexClient | None = None
        self._http: httpx.Client | None = None
        # The clients of the indexes wheel-stub sdists name, by URL, and the distributions each serves.
        self._stub_clients: dict[str, IndexClient] = {}
        self._served_by: dict[str, IndexClient] = {}

    # -- lifetime ---------------------------------------------------------------------------------

    def __enter__(self) -> IndexDistFiles:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        for client in self._stub_clients.values():
            client.close()
        self._stub_clients.clear()
        self._served_by.clear()
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._http is not None:
            self._http.close()
            self._http = None

    @property
    def client(self) -> IndexClient:
        """The index client, made on first use (offline: one whose every request fails)."""
        if self._client is None:
            settings = self._settings if isinstance(self._settings, IndexSettings) else self._settings()
            cache = self._cache
            if self.offline:
                # Any cached page will do; anything else would need a request, which the transport refuses.
                cache = dataclasses.replace(cache, page_ttl=math.inf) if cache is not None else None
                self._http = httpx.Client(transport=httpx.MockTransport(_refuse))
            self._client = IndexClient(settings, cache=cache, http=self._http, max_workers=self._max_workers)
        return self._client

    # -- DistFileSource ---------------------------------------------------------------------------

    def requirement_files(
        self, requirement: Requirement, *, platform: Platform, python: str | None
    ) -> RequirementFiles:
        name = canonicalize_name(requirement.name)
        text = str(requirement)
        where = _target_words(platform, python)
        try:
            # Only the wheels that could be chosen are parsed: numpy's page lists over 4,000 files.
            wanted = WheelFilter(requirement.specifier, platform, python)
            page = self.client.project(name, refresh=self._refresh, keep=wanted)
            installable = _installable(page, requirement, platform, python)
            client = self.client
            if not installable and (sdist := self._small_sdist(self.client.project(name), requirement)):
                # An sdist that fetches its wheel from another index when built (TensorRT's): that
                # index's wheel is what pip installs.
                followed = self._through_wheel_stub(sdist, requirement, platform, python)
                if isinstance(followed, str):
                    return RequirementFiles(text, name, problem=followed)
                if followed is not None:
                    client, installable = followed
                    self._served_by[name] = client
                elif (requires := static_requirements(sdist.content)) is not None:
                    # A metapackage of pure Python (tensorrt-cu13): no library, and what it requires.
                    release = ReleaseFiles(name, sdist.version, sdist.file.filename, (), requires)
                    return RequirementFiles(text, name, (sdist.version,), (release,))
            if not installable:
                # The message names the newest releases of all the files: those need the whole page.
                page = self.client.project(name)
                versions = _versions_of(page)
                newest = ", ".join(versions[-3:]) or "none"
                # A pin of a release the index does not have (vllm 0.34.0's flashinfer-python==0.7.3)
                # is another fault than a release with no wheel for this target.
                allowed_here = requirement.specifier.filter(versions, prereleases=True)
                missing = (
                    f"the index has no release of {name} that it allows"
                    if not any(True for _ in allowed_here)
                    else f"no release of {name} that it allows has a wheel for {where}"
                )
                return RequirementFiles(text, name, problem=f"{missing} (newest on the index: {newest})")
            allowed = tuple(installable)
            chosen = pick_versions(allowed, oldest=self._oldest, newest=self._newest)
            files = [installable[version] for version in chosen]
            with ThreadPoolExecutor(max_workers=min(self._max_workers, len(files))) as pool:
                listed = list(pool.map(lambda file: self._library_files(file, client), files))
        except OfflineError:
            return RequirementFiles(
                text, name, problem=f"offline, and {name}'s files for {where} are not in slimwheel's cache"
            )
        except SlimwheelError as error:
            return RequirementFiles(text, name, problem=str(error))
        releases = tuple(
            ReleaseFiles(name, version, file.filename, paths)
            for version, file, paths in zip(chosen, files, listed, strict=True)
        )
        return RequirementFiles(text, name, allowed, releases)

    def with_requires(self, release: ReleaseFiles) -> ReleaseFiles:
        """Its wheel's Requires-Dist, from the index's PEP 658 METADATA file (else the wheel's own,
        by range requests), cached beside its file list; unchanged when that fails or is offline."""
        if release.requires is not None:
            return release
        client = self._served_by.get(release.distribution, self.client)
        try:
            page = client.project(release.distribution, keep=lambda filename: filename == release.wheel)
            file = next((f for f in page.files if f.filename == release.wheel), None)
            if file is None:
                return release
            requires = self._load_requires(file)
            if requires is None:
                metadata = email.parser.BytesHeaderParser().parsebytes(client.fetch_metadata(file))
                requires = tuple(str(line).strip() for line in metadata.get_all("Requires-Dist") or ())
                self._store_requires(file, requires)
        except SlimwheelError:  # offline (OfflineError) included: the requirements stay unread
            return release
        return dataclasses.replace(release, requires=requires)

    def _load_requires(self, file: DistributionFile) -> tuple[str, ...] | None:
        entry = self._entry(file)
        if entry is None:
            return None
        try:
            record = json.loads(entry.with_suffix(".requires.json").read_text(encoding="utf-8"))
            if record.get("format") != _FORMAT or record.get("filename") != file.filename:
                return None
            return tuple(str(line) for line in record["requires"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _store_requires(self, file: DistributionFile, requires: Sequence[str]) -> None:
        entry = self._entry(file)
        if entry is None:
            return
        record = {"format": _FORMAT, "filename": file.filename, "requires": list(requires)}
        with contextlib.suppress(OSError), atomic_writer(entry.with_suffix(".requires.json")) as handle:
            handle.write(json.dumps(record).encode())

    # -- wheel-stub sdists ------------------------------------------------------------------------

    def _small_sdist(self, page: ProjectPage, requirement: Requirement) -> _Sdist | None:
        """The newest ``.tar.gz`` sdist ``requirement`` allows, read into memory where it is no bigger
        than a wheel-stub or a metapackage (``SDIST_LIMIT``); None otherwise, or where there is none."""
        sdists: dict[Version, DistributionFile] = {}
        for file in page.files:
            with contextlib.suppress(InvalidSdistFilename, InvalidVersion):
                _, version = parse_sdist_filename(file.filename)
                if file.filename.endswith(".tar.gz") and not file.is_yanked:
                    sdists[version] = file
        allowed = sorted(requirement.specifier.filter(sdists), reverse=True)
        if not allowed:
            return None
        sdist = sdists[allowed[0]]
        if sdist.size is not None and sdist.size > SDIST_LIMIT:
            return None  # a wheel-stub is a few kB: this one builds the project itself
        with tempfile.TemporaryDirectory(prefix="slimwheel-stub-") as folder:
            try:
                path = self.client.download(
                    sdist, None if self._cache is not None else Path(folder), limit=SDIST_LIMIT
                )
            except FileTooLargeError:  # listed with no size
                return None
            if path.stat().st_size > SDIST_LIMIT:  # a local file, which download does not bound
                return None
            return _Sdist(str(allowed[0]), sdist, path.read_bytes())

    def _through_wheel_stub(
        self, sdist: _Sdist, requirement: Requirement, platform: Platform, python: str | None
    ) -> tuple[IndexClient, dict[str, DistributionFile]] | str | None:
        """The client of the index that ``sdist``, the newest allowed of a project with no wheel for
        the target, fetches its wheel from (``slimwheel.index.stub``), and that index's installable
        wheels; a problem when that index cannot be read or has none; None when it is no wheel-stub."""
        url = wheel_stub_index(sdist.content)
        if url is None:
            return None
        name = canonicalize_name(requirement.name)
        stub = f"the index serves {name} {sdist.version} as a wheel-stub sdist, whose build fetches its wheel"
        stub += f" from {url}"
        client = self._stub_clients.get(url)
        if client is None:
            client = self._stub_clients[url] = IndexClient(
                IndexSettings(url, origin=f"named by {sdist.file.filename}"),
                cache=self.client.cache,
                http=self._http,
                max_workers=self._max_workers,
            )
        wanted = WheelFilter(requirement.specifier, platform, python)
        try:
            installable = _installable(
                client.project(name, refresh=self._refresh, keep=wanted), requirement, platform, python
            )
        except SlimwheelError as error:
            return f"{stub}: {error}"
        if not installable:
            return f"{stub}, which has no wheel of it that it allows for {_target_words(platform, python)}"
        return client, installable

    # -- one wheel --------------------------------------------------------------------------------

    def _library_files(self, file: DistributionFile, client: IndexClient) -> tuple[str, ...]:
        cached = self._load(file)
        if cached is not None:
            return cached
        with client.open_wheel(file) as wheel:
            paths = tuple(
                sorted(
                    {
                        installed
                        for member in wheel.members
                        if not member.name.endswith("/")
                        and is_library_path(installed := wheel.installed_path(member.name))
                    }
                )
            )
        self._store(file, paths)
        return paths

    def _entry(self, file: DistributionFile) -> Path | None:
        if self._cache is None:
            return None
        key = (file.sha256 or "").lower() or hashlib.sha256(file.url.encode()).hexdigest()
        return self._cache.root / "dist-files" / key[:2] / f"{key}.json"

    def _load(self, file: DistributionFile) -> tuple[str, ...] | None:
        entry = self._entry(file)
        if entry is None:
            return None
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
            if record.get("format") != _FORMAT or record.get("filename") != file.filename:
                return None
            return tuple(str(path) for path in record["files"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged: a cache miss

    def _store(self, file: DistributionFile, paths: Sequence[str]) -> None:
        entry = self._entry(file)
        if entry is None:
            return
        record = {"format": _FORMAT, "filename": file.filename, "url": file.url, "files": list(paths)}
        with contextlib.suppress(OSError), atomic_writer(entry) as handle:
            handle.write(json.dumps(record).encode())


# -- which wheel pip would install ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Sdist:
    """One small sdist read into memory: the release it is, its file on the index, its bytes."""

    version: str
    file: DistributionFile
    content: bytes


def _target_words(platform: Platform, python: str | None) -> str:
    """The target as messages name it: ``manylinux_x86_64, Python 3.11``."""
    return f"{platform.key}" + (f", Python {python}" if python else "")


def wheel_rank(filename: str, platform: Platform, python: str | None) -> tuple[int, int, int] | None:
    """How well a wheel fits the target, lower is better; None when pip could not install it there.

    A CPython-specific tag beats ``abi3``, which beats a pure ``py3`` one; then the oldest glibc.
    ``python`` None accepts any CPython or pure tag.
    """
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return _rank_tags(tags, platform, python)


def _rank_tags(tags: frozenset[Tag], platform: Platform, python: str | None) -> tuple[int, int, int] | None:
    best: tuple[int, int, int] | None = None
    for tag in tags:
        if tag.platform != "any" and platform_of_tag(tag.platform) != platform:
            continue
        kind = _interpreter_rank(tag.interpreter, tag.abi, python)
        if kind is None:
            continue
        glibc = glibc_of_tag(tag.platform)
        rank = (kind, 1 if tag.platform == "any" else 0, (glibc[0] * 1000 + glibc[1]) if glibc else 0)
        best = rank if best is None or rank < best else best
    return best


def _interpreter_rank(interpreter: str, abi: str, python: str | None) -> int | None:
    if python is None:
        return 0 if interpreter.startswith(("cp3", "py3")) else None
    major, _, minor = python.partition(".")
    nodot = f"{major}{minor}"
    if interpreter == f"cp{nodot}" and abi in (f"cp{nodot}", "abi3", "none"):
        return 0
    if interpreter.startswith("cp3") and abi == "abi3" and interpreter[3:].isdigit():
        return 1 if int(interpreter[3:]) <= int(minor) else None
    if interpreter in ("py3", f"py{nodot}") and abi == "none":
        return 2
    return None


class WheelFilter:
    """Which file names of a project page could be the wheel ``_installable`` picks: a ``FileFilter``.

    It says False only for a name that ``_installable`` would leave out (not a wheel, a wheel with no
    tag for the target, a version the specifier excludes) and True whenever in doubt (a name it cannot
    read), so that filtering first chooses the same files. The tag triple and the version of a name
    repeat across a page's files, so each distinct one is judged once; ``judged`` counts those.
    """

    def __init__(self, specifier: SpecifierSet, platform: Platform, python: str | None) -> None:
        self._specifier = specifier
        self._platform = platform
        self._python = python
        self._tags: dict[str, bool] = {}
        self._versions: dict[str, bool] = {}

    @property
    def judged(self) -> int:
        return len(self._tags) + len(self._versions)

    def __call__(self, filename: str) -> bool:
        if not filename.endswith(".whl"):
            return False
        stem = filename[:-4]
        dashes = stem.count("-")
        if dashes not in (4, 5):
            return False  # not a wheel name parse_wheel_filename accepts
        # name-version[-build]-python-abi-platform, as parse_wheel_filename splits it
        parts = stem.split("-", dashes - 2)
        fits = self._tags.get(parts[-1])
        if fits is None:
            fits = self._tags[parts[-1]] = self._fits(parts[-1])
        if not fits:
            return False
        allowed = self._versions.get(parts[1])
        if allowed is None:
            allowed = self._versions[parts[1]] = self._allows(parts[1])
        return allowed

    def _fits(self, tags: str) -> bool:
        try:
            return _rank_tags(parse_tag(tags), self._platform, self._python) is not None
        except ValueError:
            return True  # unreadable here: left to parse_wheel_filename's verdict

    def _allows(self, version: str) -> bool:
        try:
            normalized = str(Version(version))
        except InvalidVersion:
            return True
        # Prereleases pass: whether they count depends on the other versions, which
        # ``SpecifierSet.filter`` decides later over the wheels kept.
        return self._specifier.contains(normalized, prereleases=True)


def _installable(
    page: ProjectPage, requirement: Requirement, platform: Platform, python: str | None
) -> dict[str, DistributionFile]:
    """version -> the wheel pip would pick for the target, for each version the requirement allows."""
    pinned = any(spec.operator in ("==", "===") and "*" not in spec.version for spec in requirement.specifier)
    best: dict[str, tuple[tuple[int, int, int], str, DistributionFile]] = {}
    python_allows: dict[str, bool] = {}  # a page names a few Requires-Python for thousands of files
    for file in page.wheels:
        version = file.version
        if version is None or (file.is_yanked and not pinned):  # PEP 592: yanked only when pinned
            continue
        if python and file.requires_python:
            allows = python_allows.get(file.requires_python)
            if allows is None:
                allows = python_allows[file.requires_python] = _python_allowed(python, file.requires_python)
            if not allows:
                continue
        rank = wheel_rank(file.filename, platform, python)
        if rank is None:
            continue
        candidate = (rank, file.filename, file)
        if version not in best or candidate[:2] < best[version][:2]:
            best[version] = candidate
    allowed = set(requirement.specifier.filter(best))
    return {version: best[version][2] for version in sorted(allowed, key=Version) if version in best}


def _python_allowed(python: str, requires_python: str) -> bool:
    try:
        return Version(python) in SpecifierSet(requires_python)
    except (InvalidVersion, ValueError):
        return True  # unreadable: pip would not rule the file out for it either


def _versions_of(page: ProjectPage) -> list[str]:
    found = set()
    for file in page.files:
        with contextlib.suppress(InvalidVersion, TypeError):
            if file.version is not None:
                found.add(Version(file.version))
    return [str(version) for version in sorted(found)]
