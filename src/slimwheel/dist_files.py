"""Which library files a required distribution installs: the interface ``check`` asks, and plain data.

``check`` knows NVIDIA's wheels from the catalog. For any other ``Requires-Dist`` (``torch``,
``tensorrt``, ``jaxlib``...) it asks a :class:`DistFileSource` for the library files of the releases
that the requirement allows on the target platform and Python. The real source reads them from the
package index (``slimwheel.index.dist_files.IndexDistFiles``: the zip listings of remote wheels,
through HTTP Range requests, cached on disk); :class:`StaticDistFiles` answers from lists in memory
(for callers that already know them, and tests).

Only shared library files matter (installed paths such as ``torch/lib/libc10.so``), and the soname of
each is taken to be its file name: the ELF files themselves are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from slimwheel.platforms import Platform

__all__ = [
    "DistFileSource",
    "ReleaseFiles",
    "RequirementFiles",
    "StaticDistFiles",
    "is_library_path",
    "pick_versions",
]

# libc10.so, libtorch_cpu.so, libnvinfer.so.10, libfoo.so.1.2.3, _C.cpython-311-x86_64-linux-gnu.so
_LIBRARY = re.compile(r"[^/]+\.so(?:\.[0-9A-Za-z_]+)*$")


def is_library_path(path: str) -> bool:
    """Whether an installed path is named like an ELF shared object (a file that DT_NEEDED can name)."""
    return not path.endswith("/") and _LIBRARY.search(path.rsplit("/", 1)[-1]) is not None


@dataclass(frozen=True)
class ReleaseFiles:
    """The library files one release installs on the target, from the wheel pip would pick there."""

    distribution: str  # canonical name
    version: str
    wheel: str  # the wheel's file name
    files: tuple[str, ...]  # installed paths (relative to site-packages) of its library files, sorted
    # Its wheel's Requires-Dist lines, once read (``DistFileSource.with_requires``); None: not read.
    requires: tuple[str, ...] | None = None


@dataclass(frozen=True)
class RequirementFiles:
    """The answer for one requirement: the releases read, out of those it allows, or why none were."""

    requirement: str  # as written
    distribution: str  # canonical name
    allowed: tuple[str, ...] = ()  # versions it allows that have a wheel for the target, oldest first
    releases: tuple[ReleaseFiles, ...] = ()  # the versions read (a bounded choice of ``allowed``)
    problem: str | None = None  # why the files are not known (offline, the index failed, no wheel)

    @property
    def known(self) -> bool:
        """Whether every release it names was read: only then do its files take part."""
        return self.problem is None and bool(self.releases)


class DistFileSource(Protocol):
    """Answers which library files the releases that a requirement allows install.

    ``python`` is ``"3.11"`` for a ``cp311`` wheel, None when the checked wheel names no CPython.
    Implementations return a ``problem`` rather than raise when the files cannot be learned; ``check``
    treats a raised ``SlimwheelError`` the same way.
    """

    def requirement_files(
        self, requirement: Requirement, *, platform: Platform, python: str | None
    ) -> RequirementFiles: ...

    def with_requires(self, release: ReleaseFiles) -> ReleaseFiles:
        """``release`` with its wheel's Requires-Dist read (``requires``), for the requirements it
        brings in turn; unchanged (``requires`` None) when they cannot be learned."""
        ...


def pick_versions(allowed: Iterable[str], *, oldest: int = 1, newest: int = 1) -> tuple[str, ...]:
    """The ``oldest`` oldest and ``newest`` newest of ``allowed`` (sorted, oldest first), once each.

    Reading every release of a large distribution is too costly; a library that moves or is renamed
    inside a requirement's range shows between its two ends, which is where ``check`` looks.
    """
    from packaging.version import Version

    ordered = sorted(set(allowed), key=Version)
    chosen = ordered[: max(oldest, 0)] + (ordered[-newest:] if newest > 0 else [])
    return tuple(sorted(set(chosen), key=Version))


class StaticDistFiles:
    """A :class:`DistFileSource` over releases known in advance: distribution -> its releases.

    Releases are for the target already (no platform or Python filtering); the versions the
    requirement allows are chosen as :func:`pick_versions` does, and a distribution it does not know
    is answered with a problem.
    """

    def __init__(
        self, releases: Mapping[str, Iterable[ReleaseFiles]], *, oldest: int = 1, newest: int = 1
    ) -> None:
        from packaging.utils import canonicalize_name

        self._releases = {canonicalize_name(name): tuple(found) for name, found in releases.items()}
        self._oldest = oldest
        self._newest = newest

    def requirement_files(
        self,
        requirement: Requirement,
        *,
        platform: Platform,  # noqa: ARG002 - the releases given are for the target already
        python: str | None,  # noqa: ARG002
    ) -> RequirementFiles:
        from packaging.utils import canonicalize_name

        name = canonicalize_name(requirement.name)
        known = self._releases.get(name)
        if known is None:
            return RequirementFiles(str(requirement), name, problem=f"no files known for {name}")
        by_version = {release.version: release for release in known}
        allowed = tuple(requirement.specifier.filter(sorted_versions(by_version)))
        if not allowed:
            return RequirementFiles(
                str(requirement), name, problem=f"no release of {name} that it allows is known"
            )
        chosen = pick_versions(allowed, oldest=self._oldest, newest=self._newest)
        return RequirementFiles(
            str(requirement), name, allowed, tuple(by_version[version] for version in chosen)
        )

    def with_requires(self, release: ReleaseFiles) -> ReleaseFiles:
        """The release as given: its ``requires`` is what the caller knew."""
        return release


def sorted_versions(versions: Iterable[str]) -> list[str]:
    """Versions oldest first; ones that do not parse are left out."""
    from packaging.version import InvalidVersion, Version

    parsed = []
    for text in set(versions):
        try:
            parsed.append((Version(text), text))
        except InvalidVersion:
            continue
    return [text for _, text in sorted(parsed)]
