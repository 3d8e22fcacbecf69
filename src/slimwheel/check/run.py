"""``check_wheel``: analyse, resolve the providers, simulate the install, diagnose."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from slimwheel.analysis import WheelReport, analyse_wheel, is_driver_library
from slimwheel.catalog.model import Catalog
from slimwheel.check.diagnose import CARRIED, Diagnosis
from slimwheel.check.model import CheckReport, ProviderRelease, RequirementReach
from slimwheel.check.providers import ProviderResolver, requirement_files, transitive_files
from slimwheel.check.target import Target, loads_on, platform_of, python_of
from slimwheel.check.tree import SimulatedTree, Simulation
from slimwheel.dist_files import DistFileSource
from slimwheel.errors import UsageError
from slimwheel.findings import Finding, Severity
from slimwheel.manifest import read_manifest
from slimwheel.platforms import Platform
from slimwheel.requirements import marker_environment
from slimwheel.sources import ArchiveSource, named_by_code
from slimwheel.wheel import Wheel

__all__ = ["check_wheel"]


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
    report: WheelReport | None = None,
    host_provided: Iterable[str] = (),
    recorded: bool = True,
) -> CheckReport:
    """Simulate installing ``source`` with the NVIDIA wheels it requires, and look up every DT_NEEDED.

    ``platform``: the target (default: from the wheel's platform tags, else its ELF files' machine).
    ``cuda_major``: only NVIDIA releases for this CUDA major count. ``requires_dist``: the requirements
    to simulate (default: the wheel's METADATA; none for loose files). ``dist_files``: where the library
    files of requirements the catalog does not know come from (``IndexDistFiles`` reads them from the
    index); None: they are not simulated. It is asked only when some DT_NEEDED is left that neither
    this wheel, an NVIDIA wheel nor the system provides. ``preloaded``: distributions whose library
    files count as already loaded when this wheel's are (``torch``, whose import loads ``torch/lib``): a
    soname they ship is found even off the search path, with a warning. Each is a name or a
    requirement (``librmm-cu12==26.10.*``); one that no Requires-Dist names (installed by a
    requirement's own requirements) is looked up too: in the range given, else its newest release.
    ``kept_copies``: vendored copies (member paths) kept on purpose (``repair --exclude``, or named by
    the package's Python code): still reported, as warnings rather than errors. ``report``: an
    ``analyse_wheel`` of these same bytes against this catalog that the caller already made (repair
    passes the one it planned from), so that the members are not read again; None: made here.
    ``host_provided``: libraries (soname stems) left to the host (``repair --exclude``): a soname of
    theirs found nowhere is a warning, not an error. ``recorded``: also count on what the wheel's
    slimwheel manifest says the repair that wrote it counted on (its kept copies, the libraries it
    left to the host, the distributions it counted as loaded first), so that a repaired wheel checked
    again is judged as repair judged it, without its flags given again.
    """
    manifest = read_manifest(source) if recorded and isinstance(source, Wheel) else None
    counted_on: tuple[str, ...] = ()
    if manifest is not None:
        kept_copies = (*kept_copies, *manifest.kept_copies)
        host_provided = (*host_provided, *manifest.left_to_host)
        preloaded = (*preloaded, *manifest.preloaded)
        counted_on = (
            *(f"--preloaded {name}" for name in manifest.preloaded),
            *(f"--exclude {name}" for name in manifest.left_to_host),
            *(f"a copy kept on purpose: {path}" for path in manifest.kept_copies),
        )
    if report is None:
        report = analyse_wheel(source, catalog, scan_strings=False)
    elif report.filename != source.filename or report.size != source.file_size:
        raise ValueError(f"the report given is of {report.filename}, not of {source.filename}")
    target = Target(
        platform_of(source.filename, source.platform_tags, (e.machine for e in report.elf_files), platform),
        cuda_major,
        python_of(source),
    )
    if requires_dist is None:
        requires_dist = source.requires_dist() if isinstance(source, Wheel) else ()
    findings: list[Finding] = []
    environment = {**marker_environment(target.platform, target.python), "extra": ""}
    resolver = ProviderResolver(
        catalog,
        target,
        environment,
        findings,
        source.distribution,
    )
    resolver.run(requires_dist)
    asked = _preloaded_requirements(preloaded)
    preloaded = tuple(sorted({canonicalize_name(requirement.name) for requirement in asked}))
    if dist_files is not None:
        needed = _nvidia_needed(report, catalog, target)
        resolver.through_others(requires_dist, dist_files, needed, preloaded=preloaded)
    providers = resolver.providers()
    optional = resolver.providers(optional=True)
    # A preloaded distribution may come in through a requirement's own requirements (ucxx-cu12
    # requires libucxx-cu12, which requires libucx-cu12 and loads it): looked up with the range the
    # caller gives (``librmm-cu12==26.10.*``), else its newest release only (its oldest may predate
    # the library: librmm-cu12 24.12 shipped no librmm.so).
    direct = {canonicalize_name(requirement.name) for requirement in resolver.others}
    known = set(catalog.distributions)
    indirect = [r for r in asked if canonicalize_name(r.name) not in direct | known]
    unranged = {canonicalize_name(r.name) for r in indirect if not r.specifier}
    looked_up = [
        dataclasses.replace(answer, releases=answer.releases[-1:])
        if answer.distribution in unranged
        else answer
        for answer in requirement_files(report, [*resolver.others, *indirect], target, dist_files, findings)
    ]
    # What those require in turn is installed too: read while a DT_NEEDED nothing read ships is left.
    looked_up += [
        dataclasses.replace(answer, releases=answer.releases[-1:])
        for answer in transitive_files(
            report,
            looked_up,
            target,
            dist_files,
            environment=environment,
            skip=direct | known,
            findings=findings,
        )
    ]
    others = [
        ProviderRelease(release.distribution, release.version, release.wheel, release.files)
        for answer in looked_up
        if answer.known
        for release in answer.releases
    ]
    # The NVIDIA wheels a preloaded distribution's own requirements bring are loaded with it, as its
    # libraries need them (importing libraft-cu13 loads libraft.so, and with it cuBLAS).
    loaded_with = [provider.distribution for provider in providers if _through_any(provider, preloaded)]
    tree = SimulatedTree.build(source, report, [*providers, *optional], others, (*preloaded, *loaded_with))
    elfs = {
        elf.installed_path: elf
        for elf in report.elf_files
        if elf.error is None and loads_on(target.platform, elf.machine)
    }
    simulation = Simulation(tree, elfs)
    simulation.run()
    # A soname no search path reaches, though a requirement installs it, may still load: the package's
    # own code may load it first. Its code and data are read only then (most wheels never get here).
    unreached = simulation.unreached_but_installed()
    named = named_by_code(source, unreached) if unreached else {}
    if named:
        tree = tree.with_named_by_code(named)
        simulation = Simulation(tree, elfs)
        simulation.run()

    reachable = _reachable(report, catalog, simulation, source.distribution)
    # Of show's findings, those about loading are check's too: the same findings, one vocabulary.
    findings += [finding for finding in report.findings if finding.kind in CARRIED]
    context = Diagnosis(
        report,
        catalog,
        target,
        tree,
        providers,
        findings,
        looked_up,
        frozenset(kept_copies),
        optional,
        frozenset(host_provided),
        optional_others=resolver.optional_others,
        preloaded=frozenset(preloaded),
    )
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
        optional_providers=tuple(optional),
        recorded=counted_on,
        reachable=reachable,
    )


def _reachable(
    report: WheelReport, catalog: Catalog, simulation: Simulation, own: str
) -> tuple[RequirementReach, ...]:
    """The DT_NEEDED entries of files inside site-packages that only another requirement installs, or
    that only a library of this wheel (``own``) carries where nothing loads it first, off their search
    path: NVIDIA's sonames (repair's providers) and the driver's are left out."""
    members = {elf.installed_path: elf.path for elf in report.elf_files}
    found = [
        *(
            (path, soname, distribution, folders)
            for (path, soname), by in simulation.off_path_in_requirements().items()
            for distribution, folders in sorted(by.items())
        ),
        *(
            (path, soname, own, (folder,))
            for (path, soname), folder in simulation.off_path_in_wheel().items()
        ),
    ]
    return tuple(
        RequirementReach(members[path], path, soname, distribution, folders)
        for path, soname, distribution, folders in found
        if path in members
        and not path.startswith("../")
        and not is_driver_library(soname)
        and not catalog.providers(soname=soname)
    )


def _nvidia_needed(report: WheelReport, catalog: Catalog, target: Target) -> set[str]:
    """The NVIDIA distributions that ship, for the target, a library the wheel's files need."""
    return {
        provider.distribution
        for soname in {need.soname for elf in report.elf_files for need in elf.needed}
        for provider in catalog.providers(
            soname=soname, cuda_major=target.cuda_major, platform=target.platform
        )
    }


def _through_any(provider: ProviderRelease, distributions: Iterable[str]) -> bool:
    """Whether ``provider`` comes in through a requirement on one of ``distributions``."""
    return not set(provider.through_names).isdisjoint(distributions)


def _preloaded_requirements(preloaded: Iterable[str]) -> list[Requirement]:
    """``--preloaded`` values: a distribution's name, or a requirement (``librmm-cu12==26.10.*``)."""
    asked = []
    for text in preloaded:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            raise UsageError(
                f"--preloaded {text!r} is neither a distribution name nor a requirement ({error})",
                hint="e.g. --preloaded torch, or --preloaded 'librmm-cu12==26.10.*'",
            ) from error
        asked.append(requirement)
    return asked
