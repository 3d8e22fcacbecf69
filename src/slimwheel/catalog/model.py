"""What NVIDIA's wheels provide, as plain data, and the queries every command asks of it.

A :class:`Catalog` holds one :class:`Release` per distribution version, each with its wheel files and
the shared libraries inside them. It is learned from the index (``slimwheel.catalog.learn``), never
written by hand, and stored as a compact snapshot (``slimwheel.catalog.store``).
"""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from slimwheel.names import soname_stem
from slimwheel.platforms import Platform, glibc_of_tag, platform_of_tag

__all__ = [
    "Catalog",
    "CudaMajorSource",
    "LibraryFile",
    "LibraryProvider",
    "Release",
    "SafeRange",
    "WheelFacts",
    "left_out_reason",
    "range_clauses",
]


class CudaMajorSource(enum.Enum):
    """Where a release's CUDA major was read from; a soname alone never tells."""

    NAME_SUFFIX = "name suffix"  # nvidia-cudss-cu13
    TOOLKIT_REQUIREMENT = "cuda-toolkit requirement"  # Requires-Dist: cuda-toolkit[...]==13.*
    CLASSIFIER = "classifier"  # Environment :: GPU :: NVIDIA CUDA :: 13
    TOOLKIT_PIN = "pinned by cuda-toolkit"  # cuda-toolkit 13.0.2 requires nvidia-cusparse==12.6.3.3.*
    FOLDER = "folder"  # files under nvidia/cu13/
    TOOLKIT_VERSION = "cuda-toolkit version"  # cuda-toolkit 13.0.2 itself is CUDA 13
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class LibraryFile:
    """One shared library inside an NVIDIA wheel, at its installed path (relative to site-packages)."""

    path: str
    size: int | None
    sha256: str | None
    soname: str  # the DLL name on Windows
    soname_confirmed: bool = False  # False: inferred from the file name, not yet read from the ELF
    build_id: str | None = None
    # The file's own DT_NEEDED, in order, as read from its ELF (``catalog update --needed``, the shipped
    # snapshot): the NVIDIA libraries a provider needs in turn, known without installing it. None: not read.
    needed: tuple[str, ...] | None = None

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path)

    @property
    def filename(self) -> str:
        return posixpath.basename(self.path)

    @property
    def name(self) -> str:
        """The soname stem: ``cudss`` for ``nvidia/cu13/lib/libcudss.so.1``."""
        return _stem_of(self.path)


@lru_cache(maxsize=4096)
def _stem_of(path: str) -> str:
    # A catalog lists thousands of files at a few hundred paths: each is parsed once.
    return soname_stem(posixpath.basename(path))


@dataclass(frozen=True)
class WheelFacts:
    filename: str
    platform_tags: tuple[str, ...]
    size: int | None
    sha256: str | None
    libraries: tuple[LibraryFile, ...]

    @cached_property
    def platforms(self) -> frozenset[Platform]:
        return frozenset(p for p in map(platform_of_tag, self.platform_tags) if p is not None)

    def glibc(self, platform: Platform) -> tuple[int, int] | None:
        """The lowest glibc this wheel runs on for ``platform`` (the oldest of its manylinux tags)."""
        levels = [
            level
            for tag in self.platform_tags
            if platform_of_tag(tag) == platform and (level := glibc_of_tag(tag)) is not None
        ]
        return min(levels) if levels else None

    def supports(self, platform: Platform) -> bool:
        return platform in self.platforms


@dataclass(frozen=True)
class Release:
    """One version of one NVIDIA distribution."""

    distribution: str  # canonical name
    version: str
    cuda_major: int | None
    cuda_major_source: CudaMajorSource
    requires_dist: tuple[str, ...]
    wheels: tuple[WheelFacts, ...]
    requires_python: str | None = None

    @cached_property
    def parsed_version(self) -> Version:
        return Version(self.version)

    def wheel_for(self, platform: Platform) -> WheelFacts | None:
        """The wheel that serves ``platform``, preferring the one with the oldest glibc requirement."""
        candidates = [wheel for wheel in self.wheels if wheel.supports(platform)]
        if not candidates:
            return None
        return min(candidates, key=lambda w: (w.glibc(platform) or (0, 0), w.filename))

    @property
    def key(self) -> tuple[str, str]:
        return (self.distribution, self.version)


@dataclass(frozen=True)
class LibraryProvider:
    """An answer to "who provides this library": the release, its wheel and the file."""

    release: Release
    wheel: WheelFacts
    library: LibraryFile

    @property
    def distribution(self) -> str:
        return self.release.distribution

    @property
    def version(self) -> str:
        return self.release.version


_CUDA_SUFFIX = re.compile(r"-cu\d+(?=-libs$|$)")


def _family(distribution: str) -> str:
    """``nvidia-cudnn-cu12`` -> ``nvidia-cudnn``: one library's wheels across CUDA majors."""
    return _CUDA_SUFFIX.sub("", canonicalize_name(distribution))


def range_clauses(lower: str, upper: str | None, skipped: Iterable[str] = ()) -> tuple[str, ...]:
    """``>=lower``, ``!=`` each skipped version, ``<upper`` (none when ``upper`` is None)."""
    return (f">={lower}", *(f"!={version}" for version in skipped), *((f"<{upper}",) if upper else ()))


def left_out_reason(skipped: Iterable[tuple[str, str]]) -> str:
    """Why each skipped version is left out (``2.8.0 left out: it drops libcutensorMg.so.2``), or ""."""
    return "; ".join(f"{version} left out: it {what}" for version, what in skipped)


@dataclass(frozen=True)
class SafeRange:
    """Versions of ``distribution`` that keep ``soname`` in ``folder``: ``>=lower,<upper``."""

    distribution: str
    soname: str
    folder: str
    lower: str
    upper: str | None  # None: no release past ``lower`` changed it, and the next major is not capped either
    upper_reason: str  # why the range ends there
    # Releases inside the range that lack the library where a later one in it ships it again
    # (cutensor-cu12 2.8.0 dropped libcutensorMg.so.2, 2.8.1 restored it): (version, what it did).
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def clauses(self) -> tuple[str, ...]:
        """``>=lower``, ``!=`` each skipped release, ``<upper``."""
        return range_clauses(self.lower, self.upper, [version for version, _ in self.skipped])

    @property
    def specifier(self) -> str:
        return ",".join(self.clauses)

    @property
    def skipped_reason(self) -> str:
        """``2.8.0 left out: it drops libcutensorMg.so.2``, or ""."""
        return left_out_reason(self.skipped)

    @property
    def requirement(self) -> str:
        return f"{self.distribution}{self.specifier}"


def _version_or_none(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


# One library file of one wheel of one release: what a catalog index holds.
_Entry = tuple[Release, WheelFacts, LibraryFile]


@dataclass(frozen=True)
class Catalog:
    """All known releases, with lookups by soname, stem and sha256."""

    releases: tuple[Release, ...]
    origin: str = "empty"
    generated: str | None = None
    _by_key: dict[tuple[str, str], Release] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {release.key: release for release in self.releases})

    # -- building --------------------------------------------------------------------------------
    def overlaid_by(self, other: Catalog) -> Catalog:
        """This catalog with ``other``'s releases replacing same-version ones and adding new ones.

        What was read from a file's ELF (its DT_NEEDED, build-id, confirmed soname) stays when ``other``
        lists the same file (same wheel, path and sha256) without having read it: a user's catalog
        learned from RECORD alone does not erase what the shipped snapshot knows."""
        merged = dict(self._by_key)
        for key, release in other._by_key.items():
            old = merged.get(key)
            merged[key] = release if old is None else _keep_elf_facts(release, old)
        origin = other.origin if not self.releases else f"{self.origin} + {other.origin}"
        generated = max(filter(None, (self.generated, other.generated)), default=None)
        return Catalog(tuple(merged[k] for k in sorted(merged)), origin=origin, generated=generated)

    # -- lookups ---------------------------------------------------------------------------------
    def release(self, distribution: str, version: str) -> Release | None:
        return self._by_key.get((distribution, version))

    @cached_property
    def distributions(self) -> tuple[str, ...]:
        return tuple(sorted({release.distribution for release in self.releases}))

    def releases_of(self, distribution: str) -> tuple[Release, ...]:
        """Releases of one distribution, oldest first (versions that do not parse are left out)."""
        found = [r for r in self.releases if r.distribution == distribution and _version_or_none(r.version)]
        return tuple(sorted(found, key=lambda r: r.parsed_version))

    def iter_libraries(self) -> Iterator[LibraryProvider]:
        for release in self.releases:
            for wheel in release.wheels:
                for library in wheel.libraries:
                    yield LibraryProvider(release, wheel, library)

    @cached_property
    def _indexes(self) -> tuple[dict[str, list[_Entry]], dict[str, list[_Entry]], dict[str, list[_Entry]]]:
        """Library files by sha256, by soname stem and by soname, in one pass over the catalog. Plain
        tuples: a query wraps the few it returns, rather than the index wrapping thousands."""
        by_sha256: dict[str, list[_Entry]] = {}
        by_stem: dict[str, list[_Entry]] = {}
        by_soname: dict[str, list[_Entry]] = {}
        for release in self.releases:
            for wheel in release.wheels:
                for library in wheel.libraries:
                    entry = (release, wheel, library)
                    if library.sha256:
                        by_sha256.setdefault(library.sha256, []).append(entry)
                    by_stem.setdefault(library.name, []).append(entry)
                    by_soname.setdefault(library.soname, []).append(entry)
        return by_sha256, by_stem, by_soname

    @cached_property
    def library_names(self) -> frozenset[str]:
        """Every soname stem an NVIDIA wheel ships (``cudss``, ``cublasLt``, ``nvrtc-builtins`` ...)."""
        return frozenset(self._indexes[1])

    def by_sha256(self, sha256_hex: str) -> tuple[LibraryProvider, ...]:
        return tuple(LibraryProvider(*entry) for entry in self._indexes[0].get(sha256_hex.lower(), ()))

    def providers(
        self,
        *,
        soname: str | None = None,
        name: str | None = None,
        cuda_major: int | None = None,
        platform: Platform | None = None,
        include_prereleases: bool = False,
    ) -> tuple[LibraryProvider, ...]:
        """Who ships ``soname`` (or any file of stem ``name``) for CUDA ``cuda_major`` on ``platform``.

        Newest release first. The CUDA major is the release's, never guessed from the soname:
        ``libcusparse.so.12`` ships in CUDA 12 and CUDA 13 wheels alike.
        """
        if soname is not None:
            candidates: Iterable[LibraryProvider] = (
                LibraryProvider(*entry) for entry in self._indexes[2].get(soname, ())
            )
        elif name is not None:
            candidates = (LibraryProvider(*entry) for entry in self._indexes[1].get(name, ()))
        else:
            candidates = self.iter_libraries()
        found = [
            provider
            for provider in candidates
            if (cuda_major is None or provider.release.cuda_major == cuda_major)
            and (platform is None or provider.wheel.supports(platform))
            and (include_prereleases or not provider.release.parsed_version.is_prerelease)
        ]
        found.sort(key=lambda p: (p.release.parsed_version, p.release.distribution), reverse=True)
        return tuple(found)

    def needed_by(
        self,
        soname: str,
        *,
        folder: str | None = None,
        cuda_major: int | None = None,
        platform: Platform | None = None,
    ) -> tuple[str, ...] | None:
        """The DT_NEEDED of the official ``soname`` (in ``folder``) as the newest release that had it
        read says, for CUDA ``cuda_major``; None when no release's file was read.

        A wheel for ``platform`` answers first; else one for the same OS: a library's needs are the
        same on every architecture, and learning reads one Linux wheel per release.
        """
        found = [
            provider
            for provider in self.providers(soname=soname, cuda_major=cuda_major)
            if provider.library.needed is not None and (folder is None or provider.library.folder == folder)
        ]
        if platform is not None:
            same_os = [p for p in found if any(pl.os == platform.os for pl in p.wheel.platforms)]
            found = [p for p in same_os if p.wheel.supports(platform)] or same_os
        return found[0].library.needed if found else None

    def cuda_majors(self) -> tuple[int, ...]:
        return tuple(sorted({r.cuda_major for r in self.releases if r.cuda_major is not None}))

    def majors_shipping(self, soname: str, platform: Platform) -> frozenset[int]:
        """The CUDA majors of the releases that ship ``soname`` for ``platform``."""
        return frozenset(
            p.release.cuda_major
            for p in self.providers(soname=soname, platform=platform)
            if p.release.cuda_major is not None
        )

    def majors_serving(self, sonames: Iterable[str], platform: Platform) -> set[int] | None:
        """The CUDA majors whose wheels serve every one of ``sonames`` that some wheel ships (each ships
        it), else those none of them rules out, where the catalog's silence is no answer: it learns CUDA
        11's toolkit wheels but not ``nvidia-cudnn-cu11``, so ``libcudnn.so.8`` (found only in
        ``nvidia-cudnn-cu12``) must not rule out CUDA 11 for a wheel whose cuBLAS is
        ``libcublas.so.11``; a soname rules a major out only where the catalog knows its library's
        wheels for that major. Empty: the files are built for several majors; None: no wheel ships any."""
        by_soname = {s: majors for s in sonames if (majors := self.majors_shipping(s, platform))}
        if not by_soname:
            return None
        possible = set.intersection(*(set(majors) for majors in by_soname.values()))
        if possible:
            return possible
        candidates = set().union(*by_soname.values())
        covered_by_family = self._majors_by_family
        for soname, majors in by_soname.items():
            families = {_family(p.distribution) for p in self.providers(soname=soname, platform=platform)}
            covered = set().union(*(covered_by_family.get(f, set()) for f in families))
            candidates &= majors | (candidates - covered)
        return candidates

    def built_for_majors(self, sonames: Iterable[str], platform: Platform) -> tuple[int, ...]:
        """The CUDA majors files needing ``sonames`` are built for, where no one major serves them all
        (``majors_serving`` is empty): those that alone ship one of them (bitsandbytes 0.50.2 ships a
        library for each of CUDA 11, 12 and 13, and loads the one torch's CUDA asks for), where they are
        two or more; () otherwise."""
        sonames = tuple(sonames)
        if self.majors_serving(sonames, platform) != set():
            return ()
        alone = (self.majors_shipping(soname, platform) for soname in sonames)
        majors = sorted({next(iter(majors)) for majors in alone if len(majors) == 1})
        return tuple(majors) if len(majors) > 1 else ()

    @cached_property
    def _majors_by_family(self) -> dict[str, set[int]]:
        """Per library family (``nvidia-cudnn`` for ``nvidia-cudnn-cu12``), the majors it has releases for."""
        known: dict[str, set[int]] = {}
        for release in self.releases:
            if release.cuda_major is not None:
                known.setdefault(_family(release.distribution), set()).add(release.cuda_major)
        return known

    def safe_range(
        self, distribution: str, version: str, library_name: str, *, platform: Platform | None = None
    ) -> SafeRange | None:
        """The versions from ``version`` up that keep the library's soname and folder and CUDA major.

        The range ends at the first later release that moves, renames or drops the library (cuDSS
        0.x -> 1.x moved ``libcudss.so.0`` to ``.so.1``) or changes CUDA major. If none did, it ends at
        the next major version of the distribution, since NVIDIA bumps sonames with majors. A release
        that lacks it where a later one below that end ships it again as before is a gap, left out
        with ``!=`` (``skipped``): cutensor-cu12 2.8.0 dropped ``libcutensorMg.so.2`` and 2.8.1
        restored it, so the range is ``>=2.0.0,!=2.8.0,<3``, not ``<2.8.0``.

        A later release with no wheel for the platform (Linux x86_64 when none is given) is passed
        over when ``version`` has one: pip there never installs it, so what its other wheels ship
        says nothing (nvidia-cudnn-cu11 8.9.5.29 is a Windows wheel only; its ``cudnn64_8.dll``
        must not end a Linux range before 8.9.6.50).
        """
        start = _version_or_none(version)
        releases = [r for r in self.releases_of(distribution) if not r.parsed_version.is_prerelease]
        if start is None or not releases:
            return None
        first = next((r for r in releases if r.parsed_version >= start), None)
        if first is None:
            return None
        identity = _library_identity(first, library_name, platform)
        if identity is None:
            return None
        soname, folder = identity
        target = platform or Platform("linux", "x86_64")
        served = first.wheel_for(target) is not None
        next_major = Version(f"{start.major + 1}")
        # Releases that changed the library since the last one that had it as ``first`` does: a gap
        # when a later release restores it below the next major, else where the range ends.
        changed: list[tuple[Release, tuple[str, str] | None]] = []
        skipped: list[tuple[str, str]] = []
        end: tuple[str, str] | None = None
        for later in releases:
            if later.parsed_version <= first.parsed_version:
                continue
            if served and later.wheel_for(target) is None:
                continue
            if later.cuda_major != first.cuda_major:
                end = (later.version, f"{later.version} is for CUDA {later.cuda_major}")
                break
            later_identity = _library_identity(later, library_name, platform)
            if later_identity != identity:
                changed.append((later, later_identity))
                continue
            if later.parsed_version >= next_major:
                break
            for release, moved in changed:
                what = f"drops {soname}" if moved is None else f"ships {posixpath.join(*moved[::-1])}"
                skipped.append((release.version, what))
            changed.clear()
        if changed and (end is None or changed[0][0].parsed_version < Version(end[0])):
            release, moved = changed[0]
            what = "drops it" if moved is None else f"ships {posixpath.join(*moved[::-1])}"
            end = (release.version, f"{release.version} {what}")
        if end is None:
            end = (str(next_major), "next major version")
        return SafeRange(distribution, soname, folder, version, end[0], end[1], tuple(skipped))


def _keep_elf_facts(new: Release, old: Release) -> Release:
    """``new`` with the ELF facts of ``old``'s same files where ``new`` lacks them."""
    known = {
        (wheel.filename, lib.path, lib.sha256): lib
        for wheel in old.wheels
        for lib in wheel.libraries
        if lib.needed is not None or lib.build_id or lib.soname_confirmed
    }
    if not known:
        return new
    changed = False
    wheels = []
    for wheel in new.wheels:
        libraries = []
        for lib in wheel.libraries:
            before = known.get((wheel.filename, lib.path, lib.sha256)) if lib.sha256 else None
            if before is None or not (
                (lib.needed is None and before.needed is not None)
                or (not lib.build_id and before.build_id)
                or (not lib.soname_confirmed and before.soname_confirmed)
            ):
                libraries.append(lib)
                continue
            libraries.append(
                replace(
                    lib,
                    needed=lib.needed if lib.needed is not None else before.needed,
                    build_id=lib.build_id or before.build_id,
                    soname=lib.soname if lib.soname_confirmed else before.soname,
                    soname_confirmed=lib.soname_confirmed or before.soname_confirmed,
                )
            )
            changed = True
        wheels.append(replace(wheel, libraries=tuple(libraries)))
    return replace(new, wheels=tuple(wheels)) if changed else new


def _library_identity(
    release: Release, library_name: str, platform: Platform | None
) -> tuple[str, str] | None:
    """(soname, folder) of the library named ``library_name`` in ``release`` on ``platform``."""
    # Without a platform, compare like with like: Linux x86_64, where every NVIDIA library ships.
    preferred = release.wheel_for(platform or Platform("linux", "x86_64"))
    for wheel in (preferred,) if preferred else sorted(release.wheels, key=lambda w: w.filename):
        matches = sorted(
            (lib for lib in wheel.libraries if lib.name == library_name), key=lambda lib: len(lib.filename)
        )
        if matches:
            return matches[0].soname, matches[0].folder
    return None
