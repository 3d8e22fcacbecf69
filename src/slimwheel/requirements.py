"""How pip reads a package's requirements for one target, written once for every command.

- ``scope_of``/``read_requirements``: whether a Requires-Dist line is installed on the target always,
  only with an extra, or never. An extra-gated requirement (``nvidia-cudnn-cu12; extra == "cudnn"``) is
  installed only when the user asks for the extra, so it never satisfies a DT_NEEDED the package
  always has.
- ``merge_specifiers``: a range repair computed, joined to the author's for the same distribution
  without the clauses the author's already imply (``~=13.0`` rather than ``>=13.0,<14,~=13.0``).
- ``expand_requirements``: the requirement graph, transitively through NVIDIA's own metadata in the
  catalog, extras followed once per release. check simulates every release it reaches
  (``RequirementGraph.reachable``); repair looks for conflicts in the newest consistent set,
  the targets command lists the newest, verify pins the lowest (``RequirementGraph.select``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import Specifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from slimwheel.platforms import Platform

if TYPE_CHECKING:
    from packaging.tags import Tag

    from slimwheel.catalog.model import Catalog, Release

__all__ = [
    "DEVELOPMENT_EXTRAS",
    "ReleaseRequirements",
    "RequirementEdge",
    "RequirementGraph",
    "RequirementScope",
    "Selection",
    "WheelRequirement",
    "brought_in",
    "expand_requirements",
    "installed_with",
    "is_development_extra",
    "marker_environment",
    "merge_specifiers",
    "only_with_extras",
    "plainest_extra",
    "python_of_tags",
    "read_requirements",
    "requirement_name",
    "scope_of",
]


class RequirementScope(enum.Enum):
    ALWAYS = "always"  # installed with the package on this target
    EXTRA = "extra"  # installed only when one of ``extras`` is asked for
    NEVER = "never"  # its marker excludes this target


@dataclass(frozen=True)
class WheelRequirement:
    """One Requires-Dist line as pip reads it for one target."""

    text: str  # as written
    name: str  # canonical distribution name
    requirement: Requirement
    scope: RequirementScope
    extras: tuple[str, ...] = ()  # the extras that bring it in (scope EXTRA)


# Marker text names extras as ``extra == "cudnn"`` (either quote, either side).
_EXTRA_NAME = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]|['"]([^'"]+)['"]\s*==\s*extra""")


def scope_of(
    marker: Marker | None, environment: Mapping[str, str], offered: Iterable[str] = ()
) -> tuple[RequirementScope, tuple[str, ...]]:
    """Whether a requirement with ``marker`` is installed on the target ``environment`` always, only
    with some extras (which), or never. ``offered``: the package's Provides-Extra names."""
    if marker is None or _true(marker, {**environment, "extra": ""}):
        return RequirementScope.ALWAYS, ()
    named = {a or b for a, b in _EXTRA_NAME.findall(str(marker))}
    candidates = sorted(named | set(offered))
    extras = tuple(e for e in candidates if _true(marker, {**environment, "extra": e}))
    return (RequirementScope.EXTRA, extras) if extras else (RequirementScope.NEVER, ())


def _true(marker: Marker, environment: Mapping[str, str]) -> bool:
    try:
        return marker.evaluate(dict(environment))
    except Exception:  # noqa: BLE001 - an unknown variable: pip would fail loudly, so count it in
        return True


def plainest_extra(extras: Iterable[str]) -> str:
    """The extra to name in an example install, of several that bring the same thing: the shortest,
    then the first by name (cuda-cccl's ``cu12``, not ``bench-cu12`` or ``minimal-cu12``)."""
    return min(extras, key=lambda extra: (len(extra), extra))


def read_requirements(
    lines: Iterable[str], environment: Mapping[str, str], offered: Iterable[str] = ()
) -> tuple[WheelRequirement, ...]:
    """Each parseable Requires-Dist line with its scope on the target (unparseable lines are skipped:
    pip refuses them, and ``check`` reports them)."""
    offered = tuple(offered)
    found = []
    for text in lines:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        scope, extras = scope_of(requirement.marker, environment, offered)
        found.append(WheelRequirement(text, canonicalize_name(requirement.name), requirement, scope, extras))
    return tuple(found)


def installed_with(
    requirements: Sequence[WheelRequirement], own: str, extras: Iterable[str] = ()
) -> tuple[WheelRequirement, ...]:
    """The requirements ``pip install own[extras]`` installs on the target: those always in force,
    and those of each extra asked for, following the wheel's references to its own extras
    (nvmath-python's ``cu12`` brings ``nvmath-python[sysctk12]``), which are left out themselves.
    Two extras are two installs: conflicts between them are no conflict (``cu12`` against ``cu13``)."""
    own = canonicalize_name(own)
    wanted = [canonicalize_name(extra) for extra in extras]
    asked: set[str] = set()
    found: list[WheelRequirement] = []

    def take(requirement: WheelRequirement) -> None:
        if requirement.name == own:  # own[extra]: that extra's lines too
            wanted.extend(canonicalize_name(extra) for extra in requirement.requirement.extras)
        elif requirement not in found:
            found.append(requirement)

    for requirement in requirements:
        if requirement.scope is RequirementScope.ALWAYS:
            take(requirement)
    while wanted:
        extra = wanted.pop()
        if extra in asked:
            continue
        asked.add(extra)
        for requirement in requirements:
            if requirement.scope is RequirementScope.EXTRA and extra in (
                canonicalize_name(name) for name in requirement.extras
            ):
                take(requirement)
    return tuple(found)


def only_with_extras(requirements: Sequence[WheelRequirement], own: str) -> dict[str, tuple[str, ...]]:
    """The distributions ``pip install own[extra]`` installs and a plain install does not, each with
    the extras that bring it in (cudaq-qec-cu12: tensorrt-cu12 -> 'all', 'trt-decoder')."""
    plain = {requirement.name for requirement in installed_with(requirements, own)}
    offered = sorted({e for r in requirements if r.scope is RequirementScope.EXTRA for e in r.extras})
    found: dict[str, tuple[str, ...]] = {}
    for extra in offered:
        for requirement in installed_with(requirements, own, [extra]):
            if requirement.name not in plain and extra not in found.get(requirement.name, ()):
                found[requirement.name] = (*found.get(requirement.name, ()), extra)
    return found


# Extras that install what a package's developers use (its tests, docs, linters), not what its users
# run: cuvs-cu13 and pylibraft-cu13 bring cupy-cuda13x[ctk] with 'test' only.
DEVELOPMENT_EXTRAS = frozenset(
    {"test", "tests", "testing", "dev", "devel", "develop", "development", "doc", "docs", "documentation"}
    | {"lint", "linting", "typing", "type", "types", "style", "check", "qa", "ci", "coverage"}
    | {"bench", "benchmark", "benchmarks", "build"}
)


def is_development_extra(extra: str) -> bool:
    """Whether ``extra`` names one that installs what the package's developers use (``test``, ``docs``,
    ``dev``), by the first word of its canonical name: ``tests``, ``Testing`` and ``dev-tools`` alike."""
    return canonicalize_name(extra).split("-")[0] in DEVELOPMENT_EXTRAS


def python_of_tags(tags: Iterable[Tag]) -> str | None:
    """The Python a wheel's markers are evaluated for: the oldest CPython its tags are built for
    (``cp311-cp311`` -> ``3.11``); None for ``py3`` wheels and for ``abi3`` ones (the stable ABI:
    any CPython from the one named). vllm 0.9.2 is ``cp38-abi3``: checked as for 3.8, none of its
    requirements (torch 2.7 has no cp38 wheel) could be read, and every library torch provides was
    reported missing."""
    found = []
    for tag in tags:
        match = re.fullmatch(r"cp3(\d+)", tag.interpreter)
        if match and tag.abi != "abi3":
            found.append(int(match[1]))
    return f"3.{min(found)}" if found else None


def marker_environment(platform: Platform, python: str | None) -> dict[str, str]:
    """Just enough of PEP 508's environment to evaluate NVIDIA's markers for a target."""
    machine = {"amd64": "AMD64", "arm64": "ARM64"}.get(platform.arch, platform.arch)
    version = python or "3.12"
    return {
        "sys_platform": "win32"
        if platform.is_windows
        else "linux"
        if platform.os == "linux"
        else platform.os,
        "platform_system": "Windows"
        if platform.is_windows
        else "Linux"
        if platform.os == "linux"
        else platform.os,
        "platform_machine": machine,
        "os_name": "nt" if platform.is_windows else "posix",
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


# -- the requirement graph -----------------------------------------------------------------------

Prefer = Literal["newest", "lowest"]


@dataclass(frozen=True)
class RequirementEdge:
    """One requirement on an NVIDIA distribution the catalog knows: who asked, and which of its
    releases the target admits within the specifier (oldest first)."""

    requirement: Requirement
    name: str  # canonical
    required_by: str  # "" for the package itself, else "<dist> <version>" or "<dist>[<extra>] <version>"
    parent: tuple[str, str, str] | None  # (distribution, version, extra) of the release that asked
    admitted: tuple[Release, ...]

    @property
    def text(self) -> str:
        return str(self.requirement)

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(release.version for release in self.admitted)


@dataclass(frozen=True)
class Selection:
    """One consistent pick per distribution (the newest or the lowest release that every requirement
    in force allows), as pip's resolver would end when it prefers that end of each range."""

    chosen: Mapping[str, Release]
    constraints: Mapping[str, tuple[RequirementEdge, ...]]  # the requirements in force, per distribution
    conflicts: tuple[str, ...]  # distributions no release of which satisfies every requirement in force


@dataclass(frozen=True)
class RequirementGraph:
    """Every requirement on a known NVIDIA distribution that a package's own requirements can bring
    in on one target, transitively, extras included (each extra followed once per release).

    It is a union over everything pip could pick: every admitted release of every distribution is
    expanded, not one resolver answer, so a check can cover the whole allowed range. A release that
    breaks one of the package's own (root) requirements on its distribution is never expanded: pip
    installs one version that satisfies every direct requirement on a name. ``select`` answers the
    single-resolution questions (the newest or the lowest consistent set) from the same graph.
    """

    edges: tuple[RequirementEdge, ...]
    candidates: Mapping[str, tuple[Release, ...]]  # per distribution: releases the target admits

    def edges_to(self, name: str) -> tuple[RequirementEdge, ...]:
        return tuple(edge for edge in self.edges if edge.name == name)

    def reachable(self) -> dict[str, tuple[Release, ...]]:
        """Per distribution, the releases some requirement admits and the root requirements allow
        (oldest first): the releases that can be installed."""
        roots = self._root_specifiers()
        found: dict[str, dict[str, Release]] = {}
        for edge in self.edges:
            for release in edge.admitted:
                if _within(release, roots.get(edge.name, ())):
                    found.setdefault(edge.name, {})[release.version] = release
        return {
            name: tuple(sorted(releases.values(), key=lambda r: r.parsed_version))
            for name, releases in sorted(found.items())
        }

    def select(self, prefer: Prefer, usable: Callable[[Release], bool] | None = None) -> Selection:
        """The releases pip ends with when it prefers the ``prefer`` end of every range: settled until
        the requirements of the chosen releases (and of the extras asked of them) stop changing it;
        when a chosen release's requirement leaves another name with no release, that release is
        ruled out and the rest settled again (pip's backtracking, greedily). ``usable``: a further
        filter (a wheel for the platform)."""
        excluded: set[tuple[str, str]] = set()
        first: Selection | None = None  # the first conflict names its cause best, should none settle
        while True:
            selection = self._settle(prefer, usable, excluded)
            if not selection.conflicts:
                return selection
            first = first or selection
            culprits = [
                edge.parent[:2]
                for name in selection.conflicts
                for edge in selection.constraints[name]
                if edge.parent is not None and edge.parent[:2] not in excluded
            ]
            if not culprits:
                return first
            excluded.add(culprits[0])

    def _settle(
        self, prefer: Prefer, usable: Callable[[Release], bool] | None, excluded: set[tuple[str, str]]
    ) -> Selection:
        chosen: dict[str, Release] = {}
        constraints: dict[str, tuple[RequirementEdge, ...]] = {}
        conflicts: tuple[str, ...] = ()
        for _round in range(len(self.candidates) + 2):
            constraints = self._in_force(chosen)
            picked: dict[str, Release] = {}
            missing = []
            for name, edges in constraints.items():
                fitting = [
                    release
                    for release in self.candidates.get(name, ())
                    if release.key not in excluded
                    and (usable is None or usable(release))
                    and _within(release, [edge.requirement.specifier for edge in edges])
                ]
                if fitting:
                    picked[name] = fitting[-1] if prefer == "newest" else fitting[0]
                elif self.candidates.get(name):
                    missing.append(name)
            conflicts = tuple(sorted(missing))
            if {n: r.version for n, r in picked.items()} == {n: r.version for n, r in chosen.items()}:
                break
            chosen = picked
        return Selection(chosen, constraints, conflicts)

    def _root_specifiers(self) -> dict[str, list[SpecifierSet]]:
        roots: dict[str, list[SpecifierSet]] = {}
        for edge in self.edges:
            if edge.parent is None:
                roots.setdefault(edge.name, []).append(edge.requirement.specifier)
        return roots

    def _in_force(self, chosen: Mapping[str, Release]) -> dict[str, tuple[RequirementEdge, ...]]:
        """The root requirements, and those of the chosen releases (an extra's only once some
        requirement in force asks for that extra)."""
        roots = [edge for edge in self.edges if edge.parent is None]
        active = roots
        while True:  # grows monotonically: more requirements in force can only ask for more extras
            extras: dict[str, set[str]] = {}
            for edge in active:
                extras.setdefault(edge.name, set()).update(edge.requirement.extras)
            grown = roots + [
                edge
                for edge in self.edges
                if edge.parent is not None
                and edge.parent[0] in chosen
                and chosen[edge.parent[0]].version == edge.parent[1]
                and (not edge.parent[2] or edge.parent[2] in extras.get(edge.parent[0], ()))
            ]
            if len(grown) == len(active):
                break
            active = grown
        found: dict[str, list[RequirementEdge]] = {}
        for edge in active:
            found.setdefault(edge.name, []).append(edge)
        return {name: tuple(edges) for name, edges in sorted(found.items())}


def _within(release: Release, specifiers: Iterable[SpecifierSet]) -> bool:
    return all(spec.contains(release.parsed_version, prereleases=False) for spec in specifiers)


def expand_requirements(
    catalog: Catalog,
    roots: Iterable[tuple[str, Requirement]],
    environment: Mapping[str, str],
    admits: Callable[[Release], bool] | None = None,
    brought: ReleaseRequirements | None = None,
) -> RequirementGraph:
    """The requirement graph of a package whose own requirements are ``roots``: (who asks, as the
    answers should name them; the requirement). Their markers are not evaluated: pass those in force
    on the target (see ``read_requirements``). ``environment``: the target's marker
    environment; ``admits``: whether pip could install a release there at all (platform, CUDA major,
    Requires-Python), version ranges aside. Requirements on distributions the catalog does not know
    and direct URLs are left out (the catalog cannot answer for them). ``brought``: what each release
    brings in on this ``environment``, kept across the calls of a caller that expands several graphs
    (parsing NVIDIA's requirement lines is most of the cost)."""
    if brought is None:
        brought = ReleaseRequirements(environment)
    elif brought.environment != dict(environment):
        raise ValueError("expand_requirements: `brought` was made for another marker environment")
    allowed = admits or _stable
    candidates: dict[str, tuple[Release, ...]] = {}

    def admitted(name: str, requirement: Requirement) -> tuple[Release, ...]:
        if name not in candidates:
            candidates[name] = tuple(r for r in catalog.releases_of(name) if allowed(r))
        return tuple(r for r in candidates[name] if _within(r, [requirement.specifier]))

    edges: list[RequirementEdge] = []
    seen_edges: set[tuple[tuple[str, str, str] | None, str]] = set()
    queue: list[tuple[Requirement, str, tuple[str, str, str] | None]] = []
    for label, requirement in roots:
        queue.append((requirement, label, None))
    root_specifiers: dict[str, list[SpecifierSet]] = {}
    for requirement, _, _ in queue:
        root_specifiers.setdefault(canonicalize_name(requirement.name), []).append(requirement.specifier)
    expanded: set[tuple[str, str, str]] = set()
    while queue:
        requirement, required_by, parent = queue.pop(0)
        name = canonicalize_name(requirement.name)
        if name not in catalog.distributions or requirement.url:
            continue
        if (parent, str(requirement)) in seen_edges:
            continue  # the same line twice (20,000 times, once) says nothing new
        seen_edges.add((parent, str(requirement)))
        edge = RequirementEdge(requirement, name, required_by, parent, admitted(name, requirement))
        edges.append(edge)
        for release in edge.admitted:
            if not _within(release, root_specifiers.get(name, ())):
                continue
            for extra in ("", *sorted(requirement.extras)):
                key = (name, release.version, extra)
                if key in expanded:
                    continue
                expanded.add(key)
                label = f"{name}[{extra}] {release.version}" if extra else f"{name} {release.version}"
                for child in brought.of(release, extra):
                    queue.append((child, label, key))
    return RequirementGraph(tuple(edges), candidates)


def merge_specifiers(ours: Sequence[str], authors: SpecifierSet) -> list[str]:
    """Our clauses (``>=13.0.48``, ``<14``, ``==13.0.48``) that the author's range does not already
    imply, and the author's clauses that ours left do not: the merged range is the same set of
    versions, each bound written once. Only what is sure is left out: a clause whose implication
    this cannot work out is kept."""
    kept = [clause for clause in ours if not _implied(Specifier(clause), authors)]
    mine = SpecifierSet(",".join(kept))
    merged = kept + [str(spec) for spec in authors if str(spec) not in kept and not _implied(spec, mine)]
    # Lower bounds, then exclusions (!=), then upper bounds; within each, by text: a SpecifierSet's
    # order is a set's.
    return sorted(merged, key=lambda clause: (_READING_ORDER.get(Specifier(clause).operator, 4), clause))


_READING_ORDER = {">=": 0, ">": 0, "~=": 1, "==": 1, "!=": 2, "<": 3, "<=": 3}


def _implied(clause: Specifier, authors: SpecifierSet) -> bool:
    """Every version the author's clauses allow also satisfies ``clause`` (a ``>=``, ``<``, ``!=``
    or ``==`` of a plain version)."""
    try:
        bound = Version(clause.version)
    except InvalidVersion:
        return False
    if clause.operator in ("==", "!="):
        if any(spec.operator == clause.operator and spec.version == clause.version for spec in authors):
            return True
        if clause.operator == "==":
            return False
    for spec in authors:
        lower, upper, inclusive = _bounds(spec)
        below = upper is not None and (upper < bound or (upper == bound and not inclusive))
        if clause.operator == "!=" and (below or (lower is not None and lower > bound)):
            return True  # the author's range does not reach the version left out
        if clause.operator == ">=" and lower is not None and lower >= bound:
            return True
        if clause.operator == "<" and below:
            return True
    return False


def _bounds(spec: Specifier) -> tuple[Version | None, Version | None, bool]:
    """The lowest and highest version ``spec`` allows, as far as a plain reading goes: (lower,
    upper, whether upper itself is allowed). ``~=13.0`` is [13.0, 14) and ``==13.0.*`` [13.0, 13.1)."""
    text, operator = spec.version, spec.operator
    wildcard = operator == "==" and text.endswith(".*")
    try:
        version = Version(text[:-2] if wildcard else text)
    except InvalidVersion:
        return None, None, False
    release = version.release
    if operator == "~=" and len(release) >= 2:
        return version, _next(release[:-1]), False
    if wildcard:
        return version, _next(release), False
    if operator == "==":
        return version, version, True
    if operator in (">=", ">"):
        return version, None, False
    if operator == "<":
        return None, version, False
    if operator == "<=":
        return None, version, True
    return None, None, False


def _next(prefix: tuple[int, ...]) -> Version:
    """The first version past every version starting with ``prefix`` (``(13,)`` -> 14)."""
    return Version(".".join(map(str, (*prefix[:-1], prefix[-1] + 1))))


def _stable(release: Release) -> bool:
    return not (release.parsed_version.is_prerelease or release.parsed_version.is_devrelease)


def brought_in(lines: Iterable[str], environment: Mapping[str, str], extra: str) -> Iterator[Requirement]:
    """The requirements a release adds when installed plainly (``extra`` empty), or the ones that only
    asking for ``extra`` adds."""
    for text in lines:
        requirement = _parsed(text)
        if requirement is not None and _brings(requirement.marker, environment, extra):
            yield requirement


def requirement_name(text: str) -> str:
    """The canonical name of the distribution a requirement's text asks for; "" when it does not parse."""
    requirement = _parsed(text)
    return canonicalize_name(requirement.name) if requirement is not None else ""


def _parsed(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None  # NVIDIA's metadata is not the package author's to fix


def _brings(marker: Marker | None, environment: Mapping[str, str], extra: str) -> bool:
    scope, extras = scope_of(marker, environment, (extra,) if extra else ())
    if not extra:
        return scope is RequirementScope.ALWAYS
    return scope is RequirementScope.EXTRA and extra in extras


def _marker_text(text: str) -> str | None:
    """A Requires-Dist line's marker as written, read without parsing the line (``""``: none); None
    where the text alone cannot tell: in a URL requirement a ``;`` may be the URL's."""
    if "@" in text:
        return None
    _, semicolon, marker = text.partition(";")
    return marker.strip() if semicolon else ""


class ReleaseRequirements:
    """``brought_in`` for the releases of the catalog on one target, each answer and each line's
    parse and verdict kept: cuda-toolkit lists about 40 Requires-Dist lines in each of its releases,
    which one repair of a RAPIDS wheel (``cuda-toolkit[cublas,curand,cusolver,cusparse]==12.*``)
    read about 59,000 times over, once per extra, per distribution and per graph (20 of its 27 s)."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self.environment: dict[str, str] = dict(environment)
        self._lines: dict[str, Requirement | None] = {}
        # By marker text: a few dozen markers (``extra == "cublas"``...) stand on thousands of lines,
        # and a line whose marker leaves it out is not parsed at all.
        self._verdicts: dict[tuple[str, str], bool] = {}
        self._markers: dict[str, Marker | None] = {}  # None: not a marker pip reads
        self._releases: dict[tuple[str, str, str], tuple[Requirement, ...]] = {}

    def of(self, release: Release, extra: str = "") -> tuple[Requirement, ...]:
        """What ``release`` adds when installed plainly, or what asking for ``extra`` adds."""
        key = (release.distribution, release.version, extra)
        found = self._releases.get(key)
        if found is None:
            found = self._releases[key] = tuple(self._brought_in(release.requires_dist, extra))
        return found

    def _brought_in(self, lines: Iterable[str], extra: str) -> Iterator[Requirement]:
        for text in lines:
            marker = _marker_text(text)
            if marker is not None and not self._verdict(marker, extra):
                continue
            if text not in self._lines:
                self._lines[text] = _parsed(text)
            requirement = self._lines[text]
            if requirement is None:
                continue
            if marker is None and not _brings(requirement.marker, self.environment, extra):
                continue
            yield requirement

    def _verdict(self, marker: str, extra: str) -> bool:
        verdict = self._verdicts.get((marker, extra))
        if verdict is None:
            if marker not in self._markers:
                try:
                    self._markers[marker] = Marker(marker) if marker else None
                except InvalidMarker:
                    self._markers[marker] = None
            parsed = self._markers[marker]
            # A marker pip cannot read: the line does not parse either, and pip refuses it.
            verdict = (not marker or parsed is not None) and _brings(parsed, self.environment, extra)
            self._verdicts[(marker, extra)] = verdict
        return verdict
