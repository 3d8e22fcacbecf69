"""What one build needs installed, and what of it is missing from the build environment.

The NVIDIA part is written from the same knowledge the CMake locator uses
(``slimwheel.build.locate``: each library's requirement, the companion headers its headers include,
nvcc's parts), so what ``get_requires_for_build_wheel`` asks pip for is what ``slimwheel_link_nvidia``
will look for. cuda-toolkit requirements for one major are merged into one line with the extras
sorted (``cuda-toolkit[crt,cudart]==13.*``).

pip does not call ``get_requires_for_build_wheel`` under ``--no-build-isolation``, so the backend
checks the same list against the installed distributions itself (:func:`missing_requirements`).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from slimwheel.build.locate import (
    companion_headers,
    header_requirement,
    library_requirement,
    nvcc_requirements,
)
from slimwheel.build.settings import BuildSettings, BuildSettingsError

__all__ = ["Missing", "build_requirements", "has_cuda_sources", "merge_requirements", "missing_requirements"]

# Folders a source scan skips: build trees, environments, VCS data (a .cu file there is not ours).
_SKIPPED = frozenset({"build", "dist", "node_modules", "__pycache__", "site-packages"})
_SCAN_LIMIT = 20_000  # files looked at before giving up (a huge tree: assume .cu sources)


@dataclass(frozen=True)
class Missing:
    """One requirement the build environment does not satisfy, and why."""

    requirement: str
    reason: str  # "not installed", "13.0.1 installed", "nvidia-cuda-crt not installed"


def has_cuda_sources(project: Path) -> bool:
    """Whether the source tree holds ``.cu`` files (only then does the build need nvcc)."""
    seen = 0
    stack = [project]
    while stack:
        folder = stack.pop()
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > _SCAN_LIMIT:
                return True
            if entry.name.startswith(".") or entry.name in _SKIPPED:
                continue
            if entry.is_dir() and not entry.is_symlink():
                stack.append(entry)
            elif entry.suffix == ".cu":
                return True
    return False


def build_requirements(
    settings: BuildSettings, *, cuda_sources: bool, static: Sequence[str] = ()
) -> tuple[str, ...]:
    """The NVIDIA wheels (with their headers' companions, and nvcc for ``.cu`` sources) for the
    build's CUDA major, then the selected frameworks' build requirements. ``static``: libraries with
    no wheel for this target (static-fallback), whose wheel is not asked for; a metapackage needs
    nothing."""
    if settings.distribution is not None and settings.distribution.metapackage:
        return ()
    major = settings.cuda
    nvidia: list[str] = []
    for library in settings.libraries:
        if library not in static:
            nvidia.append(library_requirement(library, major))
        nvidia.extend(header_requirement(header, major) for header in companion_headers(library))
    if cuda_sources:
        nvidia.extend(nvcc_requirements(major))
    frameworks = [r for framework in settings.selected for r in framework.build_requires]
    return merge_requirements([*nvidia, *frameworks])


def merge_requirements(lines: Iterable[str]) -> tuple[str, ...]:
    """One line per distribution and specifier, extras merged; first-seen order."""
    merged: dict[tuple[str, str, str], set[str]] = {}
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            raise BuildSettingsError(f"{line!r} is not a requirement ({exc})") from exc
        key = (requirement.name, str(requirement.specifier), str(requirement.marker or ""))
        merged.setdefault(key, set()).update(requirement.extras)
    result = []
    for (name, specifier, marker), extras in merged.items():
        extra = f"[{','.join(sorted(extras))}]" if extras else ""
        result.append(f"{name}{extra}{specifier}" + (f"; {marker}" if marker else ""))
    return tuple(result)


def missing_requirements(
    requirements: Sequence[str], paths: Sequence[str] | None = None
) -> tuple[Missing, ...]:
    """The requirements the environment of ``paths`` (default: this interpreter's) does not satisfy,
    extras followed one level down (``cuda-toolkit[crt]`` needs the crt wheel, not only cuda-toolkit)."""
    installed = _installed(paths)
    missing = []
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        reason = _unsatisfied(requirement, installed, depth=1)
        if reason is not None:
            missing.append(Missing(line, reason.removeprefix(f"{requirement.name} ")))
    return tuple(missing)


def _installed(paths: Sequence[str] | None) -> dict[str, importlib.metadata.Distribution]:
    found: dict[str, importlib.metadata.Distribution] = {}
    for distribution in _distributions(paths):
        name = distribution.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(name), distribution)  # the first on the path wins
    return found


def _distributions(paths: Sequence[str] | None) -> Iterator[importlib.metadata.Distribution]:
    if paths is None:
        yield from importlib.metadata.distributions()
    else:
        yield from importlib.metadata.distributions(path=list(paths))


def _unsatisfied(
    requirement: Requirement, installed: dict[str, importlib.metadata.Distribution], *, depth: int
) -> str | None:
    distribution = installed.get(canonicalize_name(requirement.name))
    if distribution is None:
        return f"{requirement.name} not installed"
    version = distribution.version
    if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
        return f"{requirement.name} {version} installed"
    if depth <= 0:
        return None
    for extra in sorted(requirement.extras):
        for line in distribution.requires or ():
            try:
                inner = Requirement(line)
            except InvalidRequirement:
                continue
            if inner.marker is None or not _for_extra(inner, extra):
                continue
            reason = _unsatisfied(inner, installed, depth=depth - 1)
            if reason is not None:
                return reason
    return None


def _for_extra(requirement: Requirement, extra: str) -> bool:
    marker = requirement.marker
    if marker is None:
        return False
    try:
        # Required under this extra, and not already without it (then it is no extra's own part).
        return marker.evaluate({"extra": extra}) and not marker.evaluate({"extra": ""})
    except UndefinedEnvironmentName:
        return False
