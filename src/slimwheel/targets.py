"""Which targets (CUDA major x platform x Python) have NVIDIA wheels for the libraries a package needs.

Pure functions over a :class:`Catalog`; ``slimwheel plan`` refreshes the catalog from the live index
first unless told ``--offline``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from slimwheel.catalog.model import Catalog, LibraryProvider, Release
from slimwheel.names import LibrarySpec
from slimwheel.platforms import Platform, manylinux_tag
from slimwheel.requirements import expand_requirements, marker_environment

__all__ = [
    "PlannedLibrary",
    "Target",
    "TargetPlan",
    "compare_plans",
    "plan_targets",
    "plan_to_dict",
]


@dataclass(frozen=True, order=True)
class Target:
    cuda_major: int
    platform: Platform
    python: str | None = None  # "3.12"; None: any Python 3

    @property
    def label(self) -> str:
        python = f" py{self.python}" if self.python else ""
        return f"CUDA {self.cuda_major} {self.platform.key}{python}"


@dataclass(frozen=True)
class PlannedLibrary:
    name: str  # what was asked: a soname stem, or a dependency's distribution name
    distribution: str
    version: str
    wheel: str
    path: str  # installed path of the library file
    glibc: tuple[int, int] | None
    dependency_of: str | None = None  # set for NVIDIA wheels pulled in by Requires-Dist

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0]

    @property
    def file(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class TargetPlan:
    target: Target
    libraries: tuple[PlannedLibrary, ...]
    missing: tuple[str, ...]  # asked-for libraries with no wheel here: link statically

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def manylinux(self) -> str | None:
        """The lowest manylinux tag all of this target's NVIDIA wheels install on."""
        if self.target.platform.os != "linux":
            return None
        levels = [lib.glibc for lib in self.libraries if lib.glibc]
        return manylinux_tag(max(levels), self.target.platform.arch) if levels else None


def _python_ok(release: Release, python: str | None) -> bool:
    if python is None or not release.requires_python:
        return True
    try:
        return Version(python) in SpecifierSet(release.requires_python)
    except ValueError:
        return True


def _newest(catalog: Catalog, target: Target, *, name: str, specifier: str = "") -> LibraryProvider | None:
    spec = SpecifierSet(specifier)
    for provider in catalog.providers(name=name, cuda_major=target.cuda_major, platform=target.platform):
        wheel = provider.release.wheel_for(target.platform)
        if wheel is not provider.wheel:
            continue
        if spec and provider.release.parsed_version not in spec:
            continue
        if _python_ok(provider.release, target.python):
            return provider
    return None


def _dependencies(
    catalog: Catalog, target: Target, planned: Sequence[PlannedLibrary]
) -> list[PlannedLibrary]:
    """NVIDIA wheels that the ``planned`` releases require on this target, transitively (extras
    asked for included): the newest consistent set with a wheel for the platform, each listed after
    the release that asked for it, depth first."""
    roots = [("", Requirement(f"{lib.distribution}=={lib.version}")) for lib in planned]
    graph = expand_requirements(catalog, roots, marker_environment(target.platform, target.python))
    chosen = graph.select(
        "newest", usable=lambda release: release.wheel_for(target.platform) is not None
    ).chosen
    children: dict[tuple[str, str], list[str]] = {}
    for edge in graph.edges:
        if edge.parent is not None and edge.name in chosen:
            asked = children.setdefault(edge.parent[:2], [])
            if edge.name not in asked:
                asked.append(edge.name)
    listed = {lib.distribution for lib in planned}
    found: list[PlannedLibrary] = []

    def visit(release: Release) -> None:
        for name in children.get(release.key, ()):
            if name in listed:
                continue
            listed.add(name)
            dependency = chosen[name]
            wheel = dependency.wheel_for(target.platform)
            assert wheel is not None  # usable= admitted only releases with one
            main = min(wheel.libraries, key=lambda lib: len(lib.filename), default=None)
            found.append(
                PlannedLibrary(
                    name=name,
                    distribution=name,
                    version=dependency.version,
                    wheel=wheel.filename,
                    path=main.path if main else "",
                    glibc=wheel.glibc(target.platform),
                    dependency_of=release.distribution,
                )
            )
            visit(dependency)

    for lib in planned:
        if lib.distribution in chosen:
            visit(chosen[lib.distribution])
    return found


def plan_targets(
    catalog: Catalog, libraries: Sequence[LibrarySpec], targets: Iterable[Target]
) -> list[TargetPlan]:
    plans = []
    for target in sorted(targets):
        planned: list[PlannedLibrary] = []
        missing: list[str] = []
        for spec in libraries:
            provider = _newest(catalog, target, name=spec.name, specifier=spec.specifier)
            if provider is None:
                missing.append(str(spec))
                continue
            planned.append(
                PlannedLibrary(
                    name=spec.name,
                    distribution=provider.distribution,
                    version=provider.version,
                    wheel=provider.wheel.filename,
                    path=provider.library.path,
                    glibc=provider.wheel.glibc(target.platform),
                )
            )
        planned += _dependencies(catalog, target, planned)
        plans.append(TargetPlan(target, tuple(planned), tuple(missing)))
    return plans


def plan_to_dict(plans: Sequence[TargetPlan], libraries: Sequence[LibrarySpec]) -> dict[str, Any]:
    return {
        "libraries": [str(spec) for spec in libraries],
        "targets": [
            {
                "cuda": plan.target.cuda_major,
                "platform": plan.target.platform.key,
                "python": plan.target.python,
                "complete": plan.complete,
                "manylinux": plan.manylinux,
                "missing": list(plan.missing),
                "libraries": [
                    {
                        "name": lib.name,
                        "distribution": lib.distribution,
                        "version": lib.version,
                        "wheel": lib.wheel,
                        "folder": lib.folder,
                        "file": lib.file,
                        "glibc": ".".join(map(str, lib.glibc)) if lib.glibc else None,
                        "dependency_of": lib.dependency_of,
                    }
                    for lib in plan.libraries
                ],
            }
            for plan in plans
        ],
    }


def _shape(document: Mapping[str, Any]) -> dict[tuple[Any, ...], Any]:
    """What ``--expect`` compares: availability, provider, folder and file per target, not versions."""
    shape: dict[tuple[Any, ...], Any] = {}
    for target in document.get("targets", ()):
        key = (target.get("cuda"), target.get("platform"), target.get("python"))
        shape[key] = {
            "missing": sorted(target.get("missing", ())),
            "manylinux": target.get("manylinux"),
            "libraries": sorted(
                (lib.get("name"), lib.get("distribution"), lib.get("folder"), lib.get("file"))
                for lib in target.get("libraries", ())
                if not lib.get("dependency_of")
            ),
        }
    return shape


def compare_plans(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """Differences between a saved plan and a new one, one line each."""
    before, after = _shape(expected), _shape(actual)
    lines = []
    for key in sorted(set(before) | set(after), key=str):
        label = f"CUDA {key[0]} {key[1]}" + (f" py{key[2]}" if key[2] else "")
        if key not in after:
            lines.append(f"{label}: no longer planned")
        elif key not in before:
            lines.append(f"{label}: new target")
        elif before[key] != after[key]:
            for field_name in ("missing", "manylinux", "libraries"):
                if before[key][field_name] != after[key][field_name]:
                    lines.append(
                        f"{label}: {field_name} was {before[key][field_name]}, now {after[key][field_name]}"
                    )
    return lines
