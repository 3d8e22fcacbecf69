"""Wheel + Catalog -> CheckReport: where glibc's loader would find each DT_NEEDED once installed.

The install is simulated, not performed: the wheel's files at their installed paths (relative to
site-packages) plus the library files of every NVIDIA release its Requires-Dist allows on the target
platform, transitive requirements and cuda-toolkit's extras included. Each DT_NEEDED of each ELF file is
then looked up the way glibc's ``_dl_map_object`` does, for every allowed version of the providers
that ship a file of that name, so a range that admits a release without the library is caught.

Other requirements (``torch``, ``tensorrt``, ``jaxlib``: distributions the catalog does not know) take
part when a ``DistFileSource`` is given and some DT_NEEDED is neither this wheel's, an NVIDIA
library, nor a system one: their library files, for the oldest and newest release each requirement
allows on the target (``slimwheel.dist_files``), join the tree, and a file found there resolves to
the requirement (``Resolution.REQUIREMENT``). Their sonames are taken to be their file names. A
requirement whose files cannot be learned (offline, the index fails) adds nothing to the tree and a
warning, so what only it could provide stays unresolved: never a pass on a guess.

What is simulated, in glibc's order: the DT_RPATH of the object (ignored when it has DT_RUNPATH, as
glibc drops DT_RPATH then), the DT_RPATH of each object up its loader chain inside the wheel, then the
object's DT_RUNPATH. ``$ORIGIN`` is the folder of the object whose entry it is. What is not: the
Python executable's own RPATH, ``LD_LIBRARY_PATH``, ``ld.so.cache`` and the default folders (the
system and driver classes stand in for them), and libraries that are satisfied only because another
object loaded the same soname first (that depends on load order, so it is not counted on, unless the
caller names the requirement that loads it ``preloaded``: ``import torch`` loads ``torch/lib``).
"""

from __future__ import annotations

import dataclasses
import itertools
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from slimwheel.analysis import (
    ElfReport,
    Resolution,
    VendoredCopy,
    WheelReport,
    analyse_wheel,
    is_driver_library,
    is_system_library,
    rpath_problems,
)
from slimwheel.catalog.model import Catalog, Release, WheelFacts
from slimwheel.dist_files import DistFileSource, RequirementFiles
from slimwheel.errors import InputError, SlimwheelError, UsageError
from slimwheel.findings import Finding, FindingKind, Pin, Severity
from slimwheel.ldso import (
    EntryKind,
    EntryTag,
    SearchFolder,
    expand_entry,
    inherited_folders,
    search_folders,
    starts_with_origin,
)
from slimwheel.platforms import Platform, platform_of_tag
from slimwheel.requirements import RequirementScope, expand_requirements, marker_environment, scope_of
from slimwheel.sources import ArchiveSource
from slimwheel.wheel import Wheel

__all__ = [
    "CheckFinding",
    "CheckKind",
    "CheckReport",
    "EntryTag",
    "FileCheck",
    "Lookup",
    "NeededCheck",
    "Pin",
    "ProviderRelease",
    "RequirementCheck",
    "SearchFolder",
    "check_wheel",
]


# One vocabulary with show's (slimwheel.findings); the old names stay for callers.
CheckKind = FindingKind
CheckFinding = Finding


@dataclass(frozen=True)
class RequirementCheck:
    """What one Requires-Dist line (the wheel's, or an NVIDIA release's) allows on the platform."""

    requirement: str  # as written
    distribution: str  # canonical name
    required_by: (
        str  # "" for the wheel itself; else "nvidia-cudss-cu13 1.0.0.35" or "cuda-toolkit[cublas] 13.0.2"
    )
    versions: tuple[str, ...]  # releases the catalog knows that it admits here, oldest first


@dataclass(frozen=True)
class ProviderRelease:
    """An allowed release of a provider and the library files it installs (an NVIDIA distribution from
    the catalog in ``CheckReport.providers``; another requirement in ``CheckReport.requirement_files``)."""

    distribution: str
    version: str
    wheel: str | None  # the wheel for the platform; None for a metapackage release kept without one
    files: tuple[str, ...]  # installed paths, relative to site-packages


@dataclass(frozen=True)
class Lookup:
    """Where one DT_NEEDED is found under some of the allowed provider versions."""

    resolution: Resolution
    path: str | None = None  # installed path of the file found
    distribution: str | None = None  # the NVIDIA distribution that installs it; None: this wheel, or no file
    found_by: SearchFolder | None = None
    versions: tuple[Pin, ...] = ()  # the provider versions that give this answer; (): no version matters
    loaded_by: tuple[str, ...] = ()  # the loader chain (nearest first) it was seen under; (): loaded directly


@dataclass(frozen=True)
class NeededCheck:
    soname: str
    lookups: tuple[Lookup, ...]
    searched: tuple[str, ...] = ()  # folders searched, in order (under the first loader chain seen)

    @property
    def resolved(self) -> bool:
        return all(lookup.resolution is not Resolution.UNRESOLVED for lookup in self.lookups)


@dataclass(frozen=True)
class FileCheck:
    path: str  # archive member
    installed_path: str
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    needed: tuple[NeededCheck, ...] = ()
    loaded_by: tuple[str, ...] = ()  # installed paths of this wheel's files that load it
    error: str | None = None


@dataclass(frozen=True)
class CheckReport:
    filename: str
    distribution: str
    version: str
    platform: Platform
    cuda_major: int | None
    python: str | None  # from the wheel's cpXY tags; markers and Requires-Python use it
    requirements: tuple[RequirementCheck, ...]
    providers: tuple[ProviderRelease, ...]
    files: tuple[FileCheck, ...]
    findings: tuple[Finding, ...]
    catalog_origin: str
    # Requirements the catalog does not know, looked up through a DistFileSource (when one was given
    # and something was left to find): the releases read and their library files, or why not.
    requirement_files: tuple[RequirementFiles, ...] = ()
    preloaded: tuple[str, ...] = ()  # distributions whose libraries count as loaded before this wheel's

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)


# -- the platform ----------------------------------------------------------------------------------


def _platform_of(
    filename: str, platform_tags: Iterable[str], machines: Iterable[str | None], override: Platform | None
) -> Platform:
    """The wheel's Linux platform: from its tags, narrowed by its ELF machines when the tags name several."""
    if override is not None:
        if override.os != "linux":
            raise UsageError(
                f"--platform {override.key}: check simulates glibc's loader",
                hint="use manylinux_x86_64 or manylinux_aarch64",
            )
        return override
    tagged = {p for p in map(platform_of_tag, platform_tags) if p is not None}
    linux = {p for p in tagged if p.os == "linux"}
    if tagged and not linux:
        names = ", ".join(sorted(p.key for p in tagged))
        raise InputError(
            filename,
            f"is for {names}; check simulates glibc's loader",
            hint="pass --platform manylinux_x86_64 to check it as a Linux wheel anyway",
        )
    from_elf = {Platform("linux", m) for m in machines if m}
    candidates = (linux & from_elf or linux) if linux else from_elf
    if len(candidates) == 1:
        return next(iter(candidates))
    raise InputError(
        filename,
        "cannot tell which platform it is for (its tags and ELF files do not name one)",
        hint="pass --platform manylinux_x86_64 or manylinux_aarch64",
    )


def _python_of(source: ArchiveSource) -> str | None:
    """The oldest CPython the wheel is tagged for (``cp311`` -> ``3.11``); None for ``py3`` wheels."""
    if not isinstance(source, Wheel):
        return None
    found = []
    for tag in source.tags:
        match = re.fullmatch(r"cp3(\d+)", tag.interpreter)
        if match:
            found.append(int(match[1]))
    return f"3.{min(found)}" if found else None


# -- requirements ----------------------------------------------------------------------------------


def _always(marker: Marker | None, environment: Mapping[str, str]) -> bool:
    return scope_of(marker, environment)[0] is RequirementScope.ALWAYS


def _installable_wheel(release: Release, platform: Platform) -> WheelFacts | None:
    """The wheel pip would pick for ``platform``: a platform wheel, else a pure one."""
    wheel = release.wheel_for(platform)
    if wheel is not None:
        return wheel
    return next((w for w in release.wheels if not w.platforms), None)


@dataclass(frozen=True)
class _Target:
    platform: Platform
    cuda_major: int | None
    python: str | None

    def admits(self, release: Release) -> bool:
        """Whether pip could install ``release`` here (version range aside)."""
        if release.parsed_version.is_prerelease or release.parsed_version.is_devrelease:
            return False
        if self.cuda_major is not None and release.cuda_major not in (None, self.cuda_major):
            return False
        if self.python and release.requires_python:
            try:
                if Version(self.python) not in SpecifierSet(release.requires_python):
                    return False
            except ValueError:
                pass  # an unreadable Requires-Python: pip would not rule the release out for it either
        # The catalog keeps metapackage releases (cuda-toolkit) without wheels: their pins still count.
        return not release.wheels or _installable_wheel(release, self.platform) is not None


@dataclass
class _Resolver:
    """The NVIDIA releases a wheel's Requires-Dist can bring in, transitively and through extras: a
    query on the requirement graph (``slimwheel.requirements``), which is a union over everything
    reachable, not one resolver answer, so the check covers the whole allowed range. Here: the
    findings about the wheel's own lines, and the requirements the catalog cannot answer for."""

    catalog: Catalog
    target: _Target
    environment: dict[str, str]
    findings: list[Finding]
    own_name: str = ""  # the checked distribution: a requirement on itself (through an extra) is no provider
    checks: list[RequirementCheck] = field(default_factory=list)
    possible: dict[str, tuple[Release, ...]] = field(default_factory=dict)
    others: list[Requirement] = field(default_factory=list)  # direct requirements the catalog does not know

    def run(self, requires: Sequence[str]) -> None:
        direct: list[Requirement] = []
        seen: set[str] = set()
        for text in requires:
            requirement = self._parse(text)
            if requirement is None or not _always(requirement.marker, self.environment):
                continue  # an extra-gated requirement never serves a DT_NEEDED the package always has
            if str(requirement) in seen:
                continue  # a line repeated (20,000 times, once) says nothing new: each is weighed once
            seen.add(str(requirement))
            name = canonicalize_name(requirement.name)
            if name in self.catalog.distributions:
                direct.append(requirement)
            elif name != canonicalize_name(self.own_name):
                self.others.append(requirement)
        roots = [("", requirement) for requirement in direct]
        graph = expand_requirements(self.catalog, roots, self.environment, self.target.admits)
        for edge in graph.edges:
            self.checks.append(RequirementCheck(edge.text, edge.name, edge.required_by, edge.versions))
            if not edge.admitted:
                self._no_release(edge.requirement, edge.name, edge.required_by)
        self.possible = graph.reachable()

    def _parse(self, text: str) -> Requirement | None:
        try:
            return Requirement(text)
        except InvalidRequirement as exc:
            self.findings.append(
                Finding(
                    FindingKind.BAD_REQUIREMENT,
                    Severity.ERROR,
                    "",
                    f"Requires-Dist {text!r} does not parse: {exc}",
                )
            )
            return None

    def _no_release(self, requirement: Requirement, name: str, required_by: str) -> None:
        target = self.target
        where = target.platform.key + (f" CUDA {target.cuda_major}" if target.cuda_major is not None else "")
        known = ", ".join(r.version for r in self.catalog.releases_of(name)[-5:]) or "none"
        by = f" (required by {required_by})" if required_by else ""
        self.findings.append(
            Finding(
                FindingKind.NO_RELEASE,
                # A wheel's own requirement is its author's to fix; NVIDIA's pins may only be newer than
                # the catalog, which is why they warn.
                Severity.WARNING if required_by else Severity.ERROR,
                "",
                f"Requires-Dist {requirement}{by} admits no release of {name} for {where} that the "
                f"catalog knows (newest known: {known}); update the catalog or widen the range",
            )
        )

    def providers(self) -> list[ProviderRelease]:
        found = []
        for name in sorted(self.possible):
            for release in self.possible[name]:
                wheel = _installable_wheel(release, self.target.platform)
                files = tuple(library.path for library in wheel.libraries) if wheel else ()
                found.append(ProviderRelease(name, release.version, wheel.filename if wheel else None, files))
        return found


# -- the simulated tree and glibc's search -------------------------------------------------------


@dataclass(frozen=True)
class _WheelFile:
    member: str
    loadable: bool  # an ELF file that read cleanly
    vendored: bool  # a copy of an NVIDIA library


@dataclass(frozen=True)
class _Answer:
    resolution: Resolution
    path: str | None
    distribution: str | None
    found_by: SearchFolder | None


@dataclass
class _Tree:
    """The installed tree: this wheel's files, and per file name which provider versions ship it where."""

    wheel_files: dict[str, dict[str, _WheelFile]]  # folder -> file name -> member
    # file name -> distribution -> version -> the folders that version installs a file of that name in
    shipped: dict[str, dict[str, dict[str, frozenset[str]]]]
    versions: dict[str, list[str]]  # distribution -> allowed versions, oldest first
    requirements: frozenset[str] = frozenset()  # providers that are other requirements, not NVIDIA's
    preloaded: frozenset[str] = frozenset()  # providers whose files count as loaded before the wheel's
    _memo: dict[tuple[str, tuple[SearchFolder, ...]], list[tuple[_Answer, tuple[Pin, ...]]]] = field(
        default_factory=dict
    )

    @classmethod
    def build(
        cls,
        source: ArchiveSource,
        report: WheelReport,
        providers: Sequence[ProviderRelease],
        others: Sequence[ProviderRelease] = (),
        preloaded: Iterable[str] = (),
    ) -> _Tree:
        wheel_files: dict[str, dict[str, _WheelFile]] = {}
        loadable = {elf.installed_path: elf.error is None for elf in report.elf_files}
        vendored = {copy.path for copy in report.vendored}
        for member in source.members:
            if member.name.endswith("/"):
                continue
            installed = source.installed_path(member.name)
            folder, name = posixpath.split(installed)
            wheel_files.setdefault(folder, {})[name] = _WheelFile(
                member.name, loadable.get(installed, False), member.name in vendored
            )
        shipped: dict[str, dict[str, dict[str, frozenset[str]]]] = {}
        versions: dict[str, list[str]] = {}
        for provider in (*providers, *others):
            versions.setdefault(provider.distribution, []).append(provider.version)
            by_name: dict[str, set[str]] = {}
            for path in provider.files:
                folder, name = posixpath.split(path)
                by_name.setdefault(name, set()).add(folder)
            for name, folders in by_name.items():
                shipped.setdefault(name, {}).setdefault(provider.distribution, {})[provider.version] = (
                    frozenset(folders)
                )
        requirements = frozenset(provider.distribution for provider in others)
        return cls(wheel_files, shipped, versions, requirements, frozenset(preloaded) & requirements)

    def lookup(self, soname: str, folders: tuple[SearchFolder, ...]) -> list[tuple[_Answer, tuple[Pin, ...]]]:
        """The answers for ``soname`` over every combination of the versions of the providers that ship
        a file of that name: versions with the same folders for it are tried once, as a group."""
        key = (soname, folders)
        if key not in self._memo:
            self._memo[key] = self._lookup(soname, folders)
        return self._memo[key]

    def _lookup(
        self, soname: str, folders: tuple[SearchFolder, ...]
    ) -> list[tuple[_Answer, tuple[Pin, ...]]]:
        relevant = self.shipped.get(soname, {})
        per_distribution = []
        for distribution in sorted(relevant):
            groups: dict[frozenset[str], list[Pin]] = {}
            for version in self.versions[distribution]:
                where = relevant[distribution].get(version, frozenset())
                groups.setdefault(where, []).append(Pin(distribution, version))
            per_distribution.append([(distribution, where, pins) for where, pins in groups.items()])
        answers: dict[_Answer, list[Pin]] = {}
        for combination in itertools.product(*per_distribution):
            answer = self._search(soname, folders, [(d, where) for d, where, _ in combination])
            answers.setdefault(answer, []).extend(pin for _, _, pins in combination for pin in pins)
        return [(answer, tuple(dict.fromkeys(pins))) for answer, pins in answers.items()]

    def _search(
        self, soname: str, folders: Sequence[SearchFolder], installed: Sequence[tuple[str, frozenset[str]]]
    ) -> _Answer:
        for searched in folders:
            own = self.wheel_files.get(searched.folder, {}).get(soname)
            if own is not None:
                resolution = Resolution.VENDORED if own.vendored else Resolution.WHEEL
                return _Answer(resolution, posixpath.join(searched.folder, soname), None, searched)
            for distribution, where in installed:
                if searched.folder in where:
                    return _Answer(
                        Resolution.REQUIREMENT
                        if distribution in self.requirements
                        else Resolution.NVIDIA_WHEEL,
                        posixpath.join(searched.folder, soname),
                        distribution,
                        searched,
                    )
        # Not on the search path, but glibc reuses an object already loaded under that soname: counted
        # only for the requirements the caller says are loaded first (``import torch`` loads torch/lib).
        for distribution, where in installed:
            if distribution in self.preloaded and where:
                return _Answer(Resolution.REQUIREMENT, posixpath.join(min(where), soname), distribution, None)
        if is_driver_library(soname):
            return _Answer(Resolution.DRIVER, None, None, None)
        if is_system_library(soname):
            return _Answer(Resolution.SYSTEM, None, None, None)
        return _Answer(Resolution.UNRESOLVED, None, None, None)

    def wheel_file(self, path: str) -> _WheelFile | None:
        folder, name = posixpath.split(path)
        return self.wheel_files.get(folder, {}).get(name)


# -- putting it together ---------------------------------------------------------------------------


@dataclass
class _Simulation:
    tree: _Tree
    elfs: dict[str, ElfReport]  # installed path -> readable ELF file
    answers: dict[tuple[str, str], dict[_Answer, tuple[list[Pin], tuple[str, ...]]]] = field(
        default_factory=dict
    )
    searched: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    loaders: dict[str, set[str]] = field(default_factory=dict)
    _visited: set[tuple[str, tuple[SearchFolder, ...]]] = field(default_factory=set)
    _visited_paths: set[str] = field(default_factory=set)

    def run(self) -> None:
        needed_names = {
            need.soname
            for elf in self.elfs.values()
            for need in elf.needed
            if need.soname != posixpath.basename(elf.installed_path)
        }
        # Files no other file needs are loaded directly (extension modules, ctypes); their
        # dependencies are visited under the chain that loads them.
        for path in sorted(p for p in self.elfs if posixpath.basename(p) not in needed_names):
            self._visit(path, ())
        # Files that are needed but never found that way are still checked, as if loaded directly.
        for path in sorted(self.elfs):
            if path not in self._visited_paths:
                self._visit(path, ())

    def _visit(self, path: str, chain: tuple[str, ...]) -> None:
        obj = self.elfs[path]
        loaders = [self.elfs[p] for p in chain]
        # What a chain changes is the RPATH folders it passes down (to this file, and to the files it
        # loads): chains that pass down the same ones are visited once.
        inherited = inherited_folders(loaders)
        if (path, inherited) in self._visited:
            return
        self._visited.add((path, inherited))
        self._visited_paths.add(path)
        folders = search_folders(obj, loaders)
        for need in obj.needed:
            soname = need.soname
            self.searched.setdefault((path, soname), tuple(dict.fromkeys(f.folder for f in folders)))
            seen = self.answers.setdefault((path, soname), {})
            for answer, pins in self.tree.lookup(soname, folders):
                if answer in seen:
                    seen[answer][0].extend(p for p in pins if p not in seen[answer][0])
                else:
                    seen[answer] = (list(pins), chain)
                found = answer.path
                if (
                    answer.resolution in (Resolution.WHEEL, Resolution.VENDORED)
                    and found in self.elfs
                    and found != path
                    and found not in chain
                ):
                    self.loaders.setdefault(found, set()).add(path)
                    self._visit(found, (path, *chain))


def check_wheel(
    source: ArchiveSource,
    catalog: Catalog,
    *,
    cuda_major: int | None = None,
    platform: Platform | None = None,
    requires_dist: Sequence[str] | None = None,
    dist_files: DistFileSource | None = None,
    preloaded: Iterable[str] = (),
    kept_copies: Iterable[str] = (),
) -> CheckReport:
    """Simulate installing ``source`` with the NVIDIA wheels it requires, and look up every DT_NEEDED.

    ``platform``: the target (default: from the wheel's platform tags, else its ELF files' machine).
    ``cuda_major``: only NVIDIA releases for this CUDA major count. ``requires_dist``: the requirements
    to simulate (default: the wheel's METADATA; none for loose files). ``dist_files``: where the library
    files of requirements the catalog does not know come from (``IndexDistFiles`` reads them from the
    index); None: they are not simulated. It is asked only when some DT_NEEDED is left that neither
    this wheel, an NVIDIA wheel nor the system provides. ``preloaded``: required distributions whose
    library files count as already loaded when this wheel's are (``torch``, whose import loads
    ``torch/lib``): a soname they ship is found even off the search path, with a warning.
    ``kept_copies``: vendored copies (member paths) kept on purpose (``repair --exclude``, or named by
    the package's Python code): still reported, as warnings rather than errors.
    """
    report = analyse_wheel(source, catalog, scan_strings=False)
    target = _Target(
        _platform_of(source.filename, source.platform_tags, (e.machine for e in report.elf_files), platform),
        cuda_major,
        _python_of(source),
    )
    if requires_dist is None:
        requires_dist = source.requires_dist() if isinstance(source, Wheel) else ()
    findings: list[Finding] = []
    resolver = _Resolver(
        catalog,
        target,
        {**marker_environment(target.platform, target.python), "extra": ""},
        findings,
        source.distribution,
    )
    resolver.run(requires_dist)
    providers = resolver.providers()
    looked_up = _requirement_files(report, resolver.others, target, dist_files, findings)
    others = [
        ProviderRelease(release.distribution, release.version, release.wheel, release.files)
        for answer in looked_up
        if answer.known
        for release in answer.releases
    ]
    preloaded = tuple(sorted({canonicalize_name(name) for name in preloaded}))
    tree = _Tree.build(source, report, providers, others, preloaded)
    elfs = {elf.installed_path: elf for elf in report.elf_files if elf.error is None}
    simulation = _Simulation(tree, elfs)
    simulation.run()

    # Of show's findings, those about loading are check's too: the same findings, one vocabulary.
    findings += [finding for finding in report.findings if finding.kind in _CARRIED]
    context = _Context(report, catalog, target, tree, providers, findings, looked_up, frozenset(kept_copies))
    files = [context.file_check(elf, simulation) for elf in report.elf_files]
    order = {severity: i for i, severity in enumerate(Severity)}
    findings.sort(key=lambda f: (order[f.severity], f.path, f.kind.value, f.message))
    return CheckReport(
        filename=source.filename,
        distribution=source.distribution,
        version=source.version,
        platform=target.platform,
        cuda_major=cuda_major,
        python=target.python,
        requirements=tuple(resolver.checks),
        providers=tuple(providers),
        files=tuple(files),
        findings=tuple(findings),
        catalog_origin=catalog.origin,
        requirement_files=tuple(looked_up),
        preloaded=preloaded,
    )


def _requirement_files(
    report: WheelReport,
    requirements: Sequence[Requirement],
    target: _Target,
    source: DistFileSource | None,
    findings: list[Finding],
) -> list[RequirementFiles]:
    """The files of the requirements the catalog does not know, when something is left to find."""
    left = any(need.resolution is Resolution.UNRESOLVED for elf in report.elf_files for need in elf.needed)
    if source is None or not left:
        return []
    answers: list[RequirementFiles] = []
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        if requirement.url:
            answer = RequirementFiles(
                str(requirement), name, problem="a direct URL requirement: not looked up"
            )
        else:
            try:
                answer = source.requirement_files(requirement, platform=target.platform, python=target.python)
            except SlimwheelError as error:
                answer = RequirementFiles(str(requirement), name, problem=str(error))
            if answer.problem is None and not answer.releases:
                answer = dataclasses.replace(answer, problem="no release was read")
        answers.append(answer)
        if answer.problem is not None:
            findings.append(
                Finding(
                    FindingKind.REQUIREMENT_FILES_UNREAD,
                    Severity.WARNING,
                    "",
                    f"could not read {name}'s files ({answer.problem}): what only Requires-Dist "
                    f"{requirement} would install is not simulated, so a library it ships stays unresolved",
                )
            )
    return answers


_CARRIED = frozenset({FindingKind.BUNDLED_DRIVER, FindingKind.CORRUPT_ELF, FindingKind.NOT_ELF})


@dataclass
class _Context:
    """What turning the simulation's answers into findings needs."""

    report: WheelReport
    catalog: Catalog
    target: _Target
    tree: _Tree
    providers: Sequence[ProviderRelease]
    findings: list[Finding]
    looked_up: Sequence[RequirementFiles] = ()
    kept_copies: frozenset[str] = frozenset()  # vendored copies kept on purpose: warnings, not errors

    def file_check(self, elf: ElfReport, simulation: _Simulation) -> FileCheck:
        if elf.error is not None:
            return FileCheck(elf.path, elf.installed_path, error=elf.error)
        for label, entries in ((EntryTag.RPATH, elf.rpath), (EntryTag.RUNPATH, elf.runpath)):
            self.findings += rpath_problems(elf.path, label.value, entries)
            self._entry_findings(elf, label, entries)
        needed = []
        for soname in dict.fromkeys(n.soname for n in elf.needed):
            answers = simulation.answers.get((elf.installed_path, soname), {})
            lookups = tuple(
                Lookup(
                    answer.resolution,
                    answer.path,
                    answer.distribution,
                    answer.found_by,
                    tuple(sorted(pins, key=lambda p: (p.distribution, Version(p.version)))),
                    chain,
                )
                for answer, (pins, chain) in answers.items()
            )
            check = NeededCheck(soname, lookups, simulation.searched.get((elf.installed_path, soname), ()))
            needed.append(check)
            self._needed_findings(elf, check)
        loaders = tuple(sorted(simulation.loaders.get(elf.installed_path, ())))
        return FileCheck(elf.path, elf.installed_path, elf.rpath, elf.runpath, tuple(needed), loaders)

    def _entry_findings(self, elf: ElfReport, label: EntryTag, entries: Sequence[str]) -> None:
        """Entries the simulation cannot follow ($ORIGIN climbing out, $LIB); rpath_problems has the rest."""
        origin = posixpath.dirname(elf.installed_path)
        for entry in entries:
            kind, _ = expand_entry(entry, origin)
            if kind is EntryKind.OUTSIDE:
                self.findings.append(
                    Finding(
                        FindingKind.OUTSIDE_TREE,
                        Severity.WARNING,
                        elf.path,
                        f"{label.value} entry {entry!r} climbs out of site-packages from {origin or '.'}: "
                        "what it reaches depends on where the environment lives, so it is not searched",
                    )
                )
            elif kind is EntryKind.UNSIMULATED:
                self.findings.append(
                    Finding(
                        FindingKind.UNSIMULATED_ENTRY,
                        Severity.WARNING,
                        elf.path,
                        f"{label.value} entry {entry!r} depends on the host's glibc build: not searched",
                    )
                )

    def _needed_findings(self, elf: ElfReport, check: NeededCheck) -> None:
        soname = check.soname
        if not check.resolved and self._missing_requirement(elf, check):
            return
        for lookup in check.lookups:
            if lookup.resolution is Resolution.UNRESOLVED:
                self._unresolved(elf, check, lookup)
            elif lookup.resolution in (Resolution.WHEEL, Resolution.VENDORED) and lookup.path is not None:
                self._found_in_wheel(elf, soname, lookup.path)
            elif lookup.resolution is Resolution.NVIDIA_WHEEL and lookup.found_by is not None:
                self._split_install(elf, soname, lookup)
            elif lookup.resolution is Resolution.REQUIREMENT:
                if lookup.found_by is None:
                    self._preloaded(elf, soname, lookup)
                else:
                    self._split_install(elf, soname, lookup)

    def _nvidia_distributions(self, soname: str) -> list[str]:
        providers = self.catalog.providers(
            soname=soname, cuda_major=self.target.cuda_major, platform=self.target.platform
        )
        return list(dict.fromkeys(p.distribution for p in providers))

    @cached_property
    def _wheel_major(self) -> int | None:
        """The CUDA major the wheel is built for, where its requirements or its NVIDIA sonames say:
        only for advice, never to decide what resolves."""
        if self.target.cuda_major is not None:
            return self.target.cuda_major
        required = {
            release.cuda_major
            for provider in self.providers
            if (release := self.catalog.release(provider.distribution, provider.version)) is not None
            and release.cuda_major is not None
        }
        if len(required) == 1:
            return next(iter(required))
        possible: set[int] | None = None
        for soname in {n.soname for elf in self.report.elf_files for n in elf.needed}:
            majors = {
                p.release.cuda_major
                for p in self.catalog.providers(soname=soname, platform=self.target.platform)
                if p.release.cuda_major is not None
            }
            if majors:
                possible = majors if possible is None else possible & majors
        return next(iter(possible)) if possible and len(possible) == 1 else None

    def _missing_requirement(self, elf: ElfReport, check: NeededCheck) -> bool:
        """An NVIDIA soname that no required release ships: the cause to report, rather than "not found"."""
        soname = check.soname
        if is_driver_library(soname) or soname in self.tree.shipped:
            return False
        known = self.catalog.providers(soname=soname)
        if not known:
            return False
        candidates = self.catalog.providers(
            soname=soname, cuda_major=self.target.cuda_major, platform=self.target.platform
        )
        fitting = [p for p in candidates if p.release.cuda_major == self._wheel_major]
        candidates = tuple(fitting) or candidates  # advise the wheel's own CUDA major, not the newest
        here = list(dict.fromkeys(p.distribution for p in candidates))
        if candidates:
            newest = candidates[0]
            safe = self.catalog.safe_range(
                newest.distribution, newest.version, newest.library.name, platform=self.target.platform
            )
            advice = f"add Requires-Dist: {safe.requirement if safe else newest.distribution}"
            also = f" (also: {', '.join(here[1:])})" if len(here) > 1 else ""
            text = f"{', '.join(here[:1])} provides it{also}; {advice}"
        else:
            text = f"no NVIDIA wheel provides it for {self.target.platform.key}"
        self.findings.append(
            Finding(
                FindingKind.MISSING_REQUIREMENT,
                Severity.ERROR,
                elf.path,
                f"needs {soname}, an NVIDIA library, but no Requires-Dist brings it in: {text}",
                soname,
            )
        )
        return True

    def _unresolved(self, elf: ElfReport, check: NeededCheck, lookup: Lookup) -> None:
        soname = check.soname
        shipped = self.tree.shipped.get(soname, {})
        # The versions are named only where they change the answer.
        partial = bool(lookup.versions) and len(check.lookups) > 1
        versions = f" with {_pins_text(lookup.versions)}" if partial else ""
        loader = f" when loaded by {lookup.loaded_by[0]}" if lookup.loaded_by else ""
        if partial and not any(shipped.get(p.distribution, {}).get(p.version) for p in lookup.versions):
            why = "no file of that name in those versions"
        else:
            searched = ", ".join(folder or "." for folder in check.searched)
            why = f"searched {searched}" if searched else "no RPATH/RUNPATH folder inside site-packages"
            installs = sorted(
                {
                    f"{distribution} installs it in {folder}"
                    for distribution, by_version in shipped.items()
                    for folders in by_version.values()
                    for folder in folders
                }
            )
            why += f"; {', '.join(installs)}" if installs else ""
            why += self._requirement_hint(elf, shipped, check.searched)
        unread = [answer.distribution for answer in self.looked_up if not answer.known]
        if unread:
            why += f"; could not read the files of {', '.join(unread)}, which may ship it"
        self.findings.append(
            Finding(
                FindingKind.UNRESOLVED,
                Severity.ERROR,
                elf.path,
                f"needs {soname}: not found{versions}{loader} ({why})",
                soname,
                lookup.versions,
            )
        )

    def _found_in_wheel(self, elf: ElfReport, soname: str, path: str) -> None:
        found = self.tree.wheel_file(path)
        if found is None:
            return
        if not found.loadable:
            self.findings.append(
                Finding(
                    FindingKind.LOADS_UNREADABLE,
                    Severity.ERROR,
                    elf.path,
                    f"needs {soname}: the loader finds {found.member}, which is not a loadable ELF file",
                    soname,
                )
            )
            return
        copy = next((c for c in self.report.vendored if c.path == found.member), None)
        if copy is not None:
            self._vendored(elf, soname, copy)

    def _vendored(self, elf: ElfReport, soname: str, copy: VendoredCopy) -> None:
        here = self._nvidia_distributions(copy.original_soname)
        required = {p.distribution for p in self.providers}
        identified = copy.identified.distribution if copy.identified else None
        preferred = [d for d in here if d in required] or [d for d in here if d == identified] or here
        if not preferred:
            self.findings.append(
                Finding(
                    FindingKind.VENDORED,
                    Severity.INFO,
                    elf.path,
                    f"needs {soname}: a vendored copy of {copy.original_soname} ({copy.path}); "
                    f"no NVIDIA wheel provides it for {self.target.platform.key}",
                    soname,
                )
            )
            return
        distribution = preferred[0]
        kept = copy.path in self.kept_copies
        self.findings.append(
            Finding(
                FindingKind.VENDORED_WHILE_PROVIDED,
                Severity.WARNING if kept else Severity.ERROR,
                elf.path,
                f"needs {soname}: resolves to {copy.path}, a vendored copy of {copy.original_soname}, "
                f"which {distribution} provides; "
                + ("kept on purpose" if kept else f"require {distribution} and load it from there"),
                soname,
            )
        )

    def _requirement_hint(
        self, elf: ElfReport, shipped: Mapping[str, Mapping[str, frozenset[str]]], searched: Sequence[str]
    ) -> str:
        """How to reach a library that another requirement ships in a folder off this file's search path."""
        where = sorted(
            {
                (folder, distribution)
                for distribution, by_version in shipped.items()
                if distribution in self.tree.requirements
                for folders in by_version.values()
                for folder in folders
                if folder not in searched
            }
        )
        if not where:
            return ""
        folder, distribution = where[0]
        entry = "$ORIGIN/" + posixpath.relpath(folder, posixpath.dirname(elf.installed_path) or ".")
        return (
            f": add RPATH {entry!r}, or, if importing {distribution} loads it first, count on that "
            f"(--preloaded {distribution})"
        )

    def _preloaded(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        self.findings.append(
            Finding(
                FindingKind.PRELOADED,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: not on its search path; found only because {lookup.distribution}'s "
                f"{lookup.path} is loaded first (import {lookup.distribution} before this file is loaded)",
                soname,
                lookup.versions,
            )
        )

    def _split_install(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        found_by = lookup.found_by
        if found_by is None or lookup.distribution is None or not starts_with_origin(found_by.entry):
            return
        owner = "" if found_by.owner == elf.installed_path else f" of {found_by.owner}"
        if lookup.resolution is Resolution.REQUIREMENT:
            after = "it is not found there"
        else:
            after = "the run-time loader must load it there"
        self.findings.append(
            Finding(
                FindingKind.SPLIT_INSTALL,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: found in {lookup.distribution}'s {found_by.folder} only through "
                f"{found_by.tag.value} {found_by.entry!r}{owner}, which assumes both distributions share "
                "one site-packages; after pip install --target into another folder, or with "
                f"--system-site-packages where {lookup.distribution} sits in the base environment, "
                f"{after}",
                soname,
                lookup.versions,
            )
        )


def _pins_text(pins: Sequence[Pin]) -> str:
    by_distribution: dict[str, list[str]] = {}
    for pin in pins:
        by_distribution.setdefault(pin.distribution, []).append(pin.version)
    return "; ".join(f"{d} {', '.join(versions)}" for d, versions in by_distribution.items())
