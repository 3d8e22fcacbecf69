"""The NVIDIA releases a wheel's requirements can bring in (a query on the requirement graph,
``slimwheel.requirements``), and the files of the requirements the catalog does not know."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from slimwheel.analysis import (
    Resolution,
    WheelReport,
)
from slimwheel.catalog.model import Catalog, Release
from slimwheel.check.model import ProviderRelease, RequirementCheck
from slimwheel.check.target import Target, always_installed, installable_wheel
from slimwheel.dist_files import DistFileSource, RequirementFiles
from slimwheel.errors import SlimwheelError
from slimwheel.findings import Finding, FindingKind, Severity
from slimwheel.names import soname_stem
from slimwheel.requirements import (
    ReleaseRequirements,
    RequirementScope,
    WheelRequirement,
    expand_requirements,
    installed_with,
    is_development_extra,
    only_with_extras,
    read_requirements,
)

__all__ = ["ProviderResolver", "requirement_files", "transitive_files"]


_THROUGH_LOOKUPS = 8  # lines under extras looked up for the NVIDIA wheels they bring, per check
# Levels followed down from such a line (jax[cuda13] -> jax-cuda13-plugin[with-cuda] -> nvidia-*), and
# how many look-ups below the first level, per check.
_THROUGH_DEPTH = 2
_DEEPER_LOOKUPS = 8


@dataclass
class ProviderResolver:
    """The NVIDIA releases a wheel's Requires-Dist can bring in, transitively and through extras: a
    query on the requirement graph (``slimwheel.requirements``), which is a union over everything
    reachable, not one resolver answer, so the check covers the whole allowed range. Here: the
    findings about the wheel's own lines, and the requirements the catalog cannot answer for."""

    catalog: Catalog
    target: Target
    environment: dict[str, str]
    findings: list[Finding]
    own_name: str = ""  # the checked distribution: a requirement on itself (through an extra) is no provider
    checks: list[RequirementCheck] = field(default_factory=list)
    possible: dict[str, tuple[Release, ...]] = field(default_factory=dict)
    # Releases only an extra of the wheel brings in (``nvidia-cudnn-cu13; extra == "cudnn"``), and
    # which extras: installed with ``pip install pkg[cudnn]``, so a file that loads them loads only then.
    optional: dict[str, tuple[Release, ...]] = field(default_factory=dict)
    extras_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    others: list[Requirement] = field(default_factory=list)  # direct requirements the catalog does not know
    # Distributions the catalog does not know that only an extra of the wheel requires (tensorrt-cu12;
    # extra == "trt-decoder"), and which extras: their files are not read, but a finding names them.
    optional_others: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Of ``optional`` and ``possible``, those brought in only through requirements the catalog does not
    # know, and which (``cupy-cuda13x[ctk]>=14``; ``libraft-cu13==26.10.*``): see ``through_others``.
    through: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _brought: ReleaseRequirements | None = None
    _deeper_left: int = _DEEPER_LOOKUPS  # see _catalog_requirements_of

    def run(self, requires: Sequence[str]) -> None:
        direct: list[Requirement] = []
        seen: set[str] = set()
        for text in requires:
            requirement = self._parse(text)
            if requirement is None or not always_installed(requirement.marker, self.environment):
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
        brought = self._brought = ReleaseRequirements(self.environment)
        graph = expand_requirements(self.catalog, roots, self.environment, self.target.admits, brought)
        for edge in graph.edges:
            self.checks.append(RequirementCheck(edge.text, edge.name, edge.required_by, edge.versions))
            if not edge.admitted:
                self._no_release(edge.requirement, edge.name, edge.required_by)
        self.possible = graph.reachable()
        self._through_extras(requires, brought)

    def _through_extras(self, requires: Sequence[str], brought: ReleaseRequirements) -> None:
        """The NVIDIA releases each extra of the wheel adds to what a plain install brings in: the graph
        of ``pip install pkg[extra]``, one extra at a time (two extras are two installs)."""
        lines = read_requirements(requires, self.environment)
        extras = sorted({e for line in lines if line.scope is RequirementScope.EXTRA for e in line.extras})
        found: dict[str, dict[str, Release]] = {}
        self.optional_others = {
            name: extras_of
            for name, extras_of in only_with_extras(lines, self.own_name).items()
            if name not in self.catalog.distributions
        }
        for extra in extras:
            in_force = installed_with(lines, self.own_name, [extra])
            roots = [("", line.requirement) for line in in_force if line.name in self.catalog.distributions]
            if not roots:
                continue
            graph = expand_requirements(self.catalog, roots, self.environment, self.target.admits, brought)
            for name, releases in graph.reachable().items():
                if name in self.possible:
                    continue  # a plain install has it already
                found.setdefault(name, {}).update((release.version, release) for release in releases)
                if extra not in self.extras_of.get(name, ()):
                    self.extras_of[name] = (*self.extras_of.get(name, ()), extra)
        self.optional = {
            name: tuple(sorted(releases.values(), key=lambda r: r.parsed_version))
            for name, releases in sorted(found.items())
        }

    def through_others(
        self,
        requires: Sequence[str],
        source: DistFileSource,
        needed: Collection[str],
        *,
        preloaded: Collection[str] = (),
    ) -> None:
        """The NVIDIA releases an extra of the wheel brings in through a requirement the catalog does
        not know, added to ``optional``: rapids-singlecell-cu13's ``cupy-cuda13x[ctk]>=14; extra ==
        "rapids"``, whose extra ``ctk`` requires ``cuda-toolkit[cublas,cudart,...]==13.*``. Each such
        line is looked up on the index (``source``: the newest release it allows, whose Requires-Dist
        is read with the extras the line asks of it), two levels down (``_catalog_requirements_of``),
        only while a distribution of
        ``needed`` (those shipping the NVIDIA libraries the wheel's files need) is brought in by
        nothing else, and at most ``_THROUGH_LOOKUPS`` lines in all, of those asking for extras of
        their package or naming one built for a CUDA major or as a library. A plain install's own such
        lines are read first: what they bring (pylibraft-cu13's libraft-cu13 requires
        ``cuda-toolkit[cublas,...]``) every install has, whichever extra brings it too; it joins
        ``possible``, its edges ``checks``, and check says where it lands rather than that nothing
        brings it (repair still requires it: a file that needs a library does not count on another
        package's requirements to bring it, which may change with any release). An extra for
        the package's developers (``test``: cuvs-cu13's cupy-cuda13x[ctk]) is passed over. A plain
        line on a distribution of ``preloaded`` (``--preloaded torch``) is looked up whatever its name:
        what it brings is loaded with it."""
        wanted = set(needed) - set(self.possible) - set(self.optional)
        if not wanted:
            return
        own = canonicalize_name(self.own_name)
        lines = read_requirements(requires, self.environment)
        plain = installed_with(lines, own)
        skip = {*self.catalog.distributions, *(line.name for line in plain)}
        offered = {e for line in lines if line.scope is RequirementScope.EXTRA for e in line.extras}
        extras = sorted(e for e in offered if not is_development_extra(e))
        candidates = [
            *(("", line) for line in plain if self._may_bring(line, self.catalog.distributions, preloaded)),
            *sorted(
                (
                    (extra, line)
                    for extra in extras
                    for line in installed_with(lines, own, [extra])
                    if self._may_bring(line, skip)
                ),
                key=lambda item: not item[1].requirement.extras,  # cupy-cuda13x[ctk] before cudf-cu13
            ),
        ]
        brings: dict[str, dict[str, tuple[Release, ...]]] = {}  # per line looked up: what it brings
        # What a plain install's lines bring: every install has it (it joins ``possible``).
        every_install: dict[str, dict[str, Release]] = {}
        found: dict[str, dict[str, Release]] = {}
        for extra, line in candidates:
            if line.text not in brings:
                if len(brings) >= _THROUGH_LOOKUPS or not wanted - every_install.keys() - found.keys():
                    continue
                roots = [(line.text, r) for r in self._catalog_requirements_of(line.requirement, source)]
                graph = expand_requirements(
                    self.catalog, roots, self.environment, self.target.admits, self._brought
                )
                brings[line.text] = graph.reachable()  # once per line, under however many extras
                if not extra:  # every install has these: the requirements table names them
                    self.checks.extend(
                        RequirementCheck(edge.text, edge.name, edge.required_by, edge.versions)
                        for edge in graph.edges
                        if edge.admitted
                    )
            for name, releases in brings[line.text].items():
                if name in self.possible or name in self.optional:
                    continue
                asked = _without_marker(line.requirement)
                if not extra:
                    every_install.setdefault(name, {}).update(
                        (release.version, release) for release in releases
                    )
                    if asked not in self.through.get(name, ()):
                        self.through[name] = (*self.through.get(name, ()), asked)
                    continue
                if name in every_install:
                    continue
                found.setdefault(name, {}).update((release.version, release) for release in releases)
                if extra not in self.extras_of.get(name, ()):
                    self.extras_of[name] = (*self.extras_of.get(name, ()), extra)
                if asked not in self.through.get(name, ()):
                    self.through[name] = (*self.through.get(name, ()), asked)
        for name, by_version in sorted(found.items()):
            self.optional[name] = tuple(sorted(by_version.values(), key=lambda r: r.parsed_version))
        for name, by_version in sorted(every_install.items()):
            self.possible[name] = tuple(sorted(by_version.values(), key=lambda r: r.parsed_version))

    @staticmethod
    def _may_bring(line: WheelRequirement, skip: Collection[str], preloaded: Collection[str] = ()) -> bool:
        """Whether ``line`` is worth a look-up for the NVIDIA wheels it brings: it asks its package for
        extras (``[ctk]``), names one built for a CUDA major or as a library, or one ``preloaded``
        (torch, whatever its name); an extra's pytest or sphinx brings none, and each look-up costs
        requests."""
        if line.name in skip or line.requirement.url:
            return False
        return line.name in preloaded or bool(line.requirement.extras) or _binary_named(line.name)

    def _catalog_requirements_of(
        self, requirement: Requirement, source: DistFileSource, *, deeper: int = _THROUGH_DEPTH - 1
    ) -> tuple[Requirement, ...]:
        """The requirements on distributions the catalog knows that the newest release ``requirement``
        allows brings in, with the extras it asks of it; () when that cannot be read. Its own lines
        the catalog does not know that may bring some are followed ``deeper`` levels more, while
        ``_deeper_left`` allows: ``jax[cuda13]`` brings NVIDIA's wheels only through
        ``jax-cuda13-plugin[with-cuda]``."""
        try:
            answer = source.requirement_files(
                requirement, platform=self.target.platform, python=self.target.python
            )
        except SlimwheelError:
            return ()
        if not answer.known:
            return ()
        release = source.with_requires(answer.releases[-1])
        lines = installed_with(
            read_requirements(release.requires or (), self.environment),
            answer.distribution,
            requirement.extras,
        )
        found = [line.requirement for line in lines if line.name in self.catalog.distributions]
        for line in lines:
            if deeper > 0 and self._deeper_left > 0 and self._may_bring(line, self.catalog.distributions):
                self._deeper_left -= 1
                found += self._catalog_requirements_of(line.requirement, source, deeper=deeper - 1)
        return tuple(found)

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

    def providers(self, *, optional: bool = False) -> list[ProviderRelease]:
        """The releases a plain install can bring in; ``optional``: those only an extra brings in."""
        found = []
        possible = self.optional if optional else self.possible
        for name in sorted(possible):
            extras = self.extras_of.get(name, ()) if optional else ()
            through = self.through.get(name, ())
            for release in possible[name]:
                wheel = installable_wheel(release, self.target.platform)
                files = tuple(library.path for library in wheel.libraries) if wheel else ()
                filename = wheel.filename if wheel else None
                found.append(ProviderRelease(name, release.version, filename, files, extras, through))
        return found


def requirement_files(
    report: WheelReport,
    requirements: Sequence[Requirement],
    target: Target,
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
            findings.append(_unread(name, answer.problem, f"Requires-Dist {requirement}"))
    return answers


def _unread(name: str, problem: str, requirement: str) -> Finding:
    """The warning that ``name``'s files could not be read, for ``problem``."""
    return Finding(
        FindingKind.REQUIREMENT_FILES_UNREAD,
        Severity.WARNING,
        "",
        f"could not read {name}'s files ({problem}): what only {requirement} would install is not "
        "simulated, so a library it ships stays unresolved",
    )


def _without_marker(requirement: Requirement) -> str:
    """``requirement`` as written but for its marker: ``cupy-cuda13x[ctk]>=14``."""
    bare = Requirement(str(requirement))
    bare.marker = None
    return str(bare)


_TRANSITIVE_DEPTH = 3  # cudf-cu12 -> libcudf-cu12 -> librmm-cu12 -> rapids-logger
_TRANSITIVE_LOOKUPS = 8  # requirements looked up this way at most, per check


def transitive_files(
    report: WheelReport,
    answers: Sequence[RequirementFiles],
    target: Target,
    source: DistFileSource | None,
    *,
    environment: Mapping[str, str],
    skip: Collection[str],
    findings: list[Finding],
) -> list[RequirementFiles]:
    """The files of what the wheel's requirements require in turn, which pip installs too (RAPIDS:
    cudf-cu12 requires libcudf-cu12, which requires librmm-cu12, which requires rapids-logger):
    looked up only while some DT_NEEDED that nothing read so far ships is left, from the newest
    release read of each requirement, at most ``_TRANSITIVE_DEPTH`` levels down and
    ``_TRANSITIVE_LOOKUPS`` in all; only those whose releases ship one of them are kept.

    The look-ups are few, so the most likely go first, whatever their level: those named like a
    missing soname (cuopt-cu12's 12 requirements bring 40 more, and libcuopt-client, which ships
    libcuopt_client.so, came after the 8th), then those named for a CUDA major or as a library, then
    the nearer. raft-dask-cu12's libucp.so.0 comes from libucx-cu12, under ucxx-cu12 and
    libucxx-cu12, which a level-by-level walk never reached: dask-cuda's click, numpy and pandas took
    the look-ups first. ``skip``: names already looked up or known to the catalog. One whose files
    cannot be read is kept, and warned of in ``findings``, where it may ship a missing soname (named
    like one, or for a CUDA major or as a library)."""
    if source is None:
        return []
    missing = {
        need.soname
        for elf in report.elf_files
        for need in elf.needed
        if need.resolution is Resolution.UNRESOLVED
    }
    missing -= _shipped(answers)
    seen = {canonicalize_name(name) for name in skip} | {answer.distribution for answer in answers}
    found: list[RequirementFiles] = []
    waiting: list[tuple[int, str, Requirement]] = []  # (level, required by, requirement)

    def add_requirements_of(answer: RequirementFiles, level: int) -> None:
        if level > _TRANSITIVE_DEPTH:
            return
        release = source.with_requires(answer.releases[-1])
        for wheel_requirement in read_requirements(release.requires or (), environment):
            name = wheel_requirement.name
            if wheel_requirement.scope is RequirementScope.ALWAYS and name not in seen:
                seen.add(name)
                waiting.append((level, answer.distribution, wheel_requirement.requirement))

    for answer in answers:
        if answer.known and missing:
            add_requirements_of(answer, 1)
    for _ in range(_TRANSITIVE_LOOKUPS):
        if not missing or not waiting:
            break
        # Likeness changes as sonames are found, so the order is taken afresh for each look-up.
        best = min(
            waiting,
            key=lambda item: (
                -_likeness(item[2].name, missing),
                not _binary_named(item[2].name),
                item[0],
            ),
        )
        waiting.remove(best)
        level, required_by, requirement = best
        try:
            looked = source.requirement_files(requirement, platform=target.platform, python=target.python)
        except SlimwheelError:
            continue
        if not looked.known:
            if looked.problem and (_likeness(requirement.name, missing) or _binary_named(requirement.name)):
                # Said where it may ship what is missing (tensorrt-cu13 -> tensorrt-cu13-libs, whose
                # wheel-stub's index this machine cannot reach), as a requirement's own would be.
                text = f"{looked.requirement} (required by {required_by})"
                found.append(dataclasses.replace(looked, requirement=text))
                findings.append(_unread(looked.distribution, looked.problem, text))
            continue
        ships = _shipped([looked]) & missing
        if ships:
            found.append(
                dataclasses.replace(looked, requirement=f"{looked.requirement} (required by {required_by})")
            )
            missing -= ships
        if missing:
            add_requirements_of(looked, level + 1)
    return found


def _binary_named(distribution: str) -> bool:
    """Whether ``distribution``'s name says it is built for a CUDA major (``ucxx-cu12``) or is a
    library (``libucx-cu12``, ``tensorrt-libs``): such wheels ship shared libraries far more often
    than ``numba`` or ``pandas`` do."""
    words = canonicalize_name(distribution).split("-")
    return (
        words[0].startswith("lib")
        or words[-1] == "libs"
        or any(_CUDA_SUFFIX.fullmatch(word) for word in words[1:])
    )


def _likeness(distribution: str, sonames: Collection[str]) -> int:
    """How much ``distribution``'s name looks like the one that ships one of ``sonames``: 2 when it
    holds every word of a soname's stem (libcuopt-client, libcuopt_client.so), 1 when it holds one,
    else 0. ``lib`` prefixes and CUDA suffixes (``-cu12``, ``-cuda12x``) are not words here."""
    words = {_LIB_PREFIX.sub("", word) for word in canonicalize_name(distribution).split("-")}
    words -= {word for word in words if _CUDA_SUFFIX.fullmatch(word)}
    best = 0
    for soname in sonames:
        stem = {
            _LIB_PREFIX.sub("", word) for word in re.split(r"[-_.]+", soname_stem(soname).lower()) if word
        }
        if stem and stem <= words:
            return 2
        if stem & words:
            best = 1
    return best


_LIB_PREFIX = re.compile(r"^lib(?=.)")
_CUDA_SUFFIX = re.compile(r"cu(da)?\d+x?")


def _shipped(answers: Sequence[RequirementFiles]) -> set[str]:
    """The file names (taken as sonames) of the library files the answers' releases install."""
    return {
        posixpath.basename(path)
        for answer in answers
        if answer.known
        for release in answer.releases
        for path in release.files
    }
