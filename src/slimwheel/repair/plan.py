"""Analyse -> plan: what ``slimwheel repair`` will do to a wheel, as plain data (``--dry-run`` prints it).

The plan drops vendored NVIDIA copies, renames DT_NEEDED (and verneed File) entries that point at
renamed copies back to the original soname, sets RPATH per file from that file's own depth to each
provider's folder, adds Requires-Dist with a version range, and writes the manifest run time reads.
With ``--embed-loader`` it also copies the run-time loader into packages, with a call at their import
(``slimwheel.repair.embed``).
"""

from __future__ import annotations

import enum
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from slimwheel._version import __version__
from slimwheel.analysis import (
    ElfReport,
    FindingKind,
    Resolution,
    Severity,
    VendoredCopy,
    WheelReport,
    is_driver_library,
    is_system_library,
)
from slimwheel.catalog.model import Catalog, LibraryProvider, Release
from slimwheel.manifest import MANIFEST_NAME, Manifest, ManifestLibrary
from slimwheel.names import parse_library_file_name
from slimwheel.plan import marker_environment
from slimwheel.platforms import Platform, platform_of_tag
from slimwheel.repair.embed import EmbeddedLoader, EmbedRequest, plan_embedding
from slimwheel.repair.environment import BuildEnvironment
from slimwheel.repair.errors import RepairError

__all__ = [
    "AddedRequirement",
    "ElfEdit",
    "EmbedRequest",
    "EmbeddedLoader",
    "RepairError",
    "RepairOptions",
    "RepairPlan",
    "VersionPolicy",
    "plan_repair",
    "rpath_entry",
]


class VersionPolicy(enum.Enum):
    COMPATIBLE = "compatible"  # >= linked, < first release that moves or renames the library
    MINIMUM = "minimum"  # >= linked
    EXACT = "exact"  # == linked


@dataclass(frozen=True)
class RepairOptions:
    policy: VersionPolicy = VersionPolicy.COMPATIBLE
    cuda_major: int | None = None
    linked_versions: Mapping[str, str] = field(default_factory=dict)  # library name -> dist version
    only: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()
    use_runpath: bool = False
    force: bool = False  # also rewrite what is unsafe: copies loaded by path, a bundled driver

    def wants(self, name: str) -> bool:
        """``--only`` / ``--exclude`` by library name."""
        return (not self.only or name in self.only) and name not in self.exclude


@dataclass(frozen=True)
class ElfEdit:
    """One patchelf call for one member."""

    path: str
    replace_needed: tuple[tuple[str, str], ...] = ()
    search_path: tuple[str, ...] | None = None  # None: leave RPATH/RUNPATH alone
    runpath: bool = False  # write DT_RUNPATH instead of DT_RPATH

    @property
    def changes_anything(self) -> bool:
        return bool(self.replace_needed) or self.search_path is not None


@dataclass(frozen=True)
class AddedRequirement:
    library: str
    distribution: str
    requirement: str  # as written to Requires-Dist, marker included
    linked_version: str
    version_source: str  # "--linked-version", "installed", "vendored copy", "first release"
    range_reason: str


@dataclass(frozen=True)
class RepairPlan:
    wheel: str
    output_name: str
    platform: Platform
    cuda_major: int | None
    drop: tuple[str, ...]
    edits: tuple[ElfEdit, ...]
    requirements: tuple[AddedRequirement, ...]
    kept_requirements: tuple[str, ...]  # existing Requires-Dist lines naming a provider, respected
    manifest: Manifest
    manifest_path: str
    warnings: tuple[str, ...]
    left_alone: tuple[str, ...]  # what could not be rewritten safely, and why
    embedded: tuple[EmbeddedLoader, ...] = ()  # --embed-loader: the run-time loader, per package

    @property
    def changes_anything(self) -> bool:
        return bool(
            self.drop or self.requirements or self.embedded or any(e.changes_anything for e in self.edits)
        )


def rpath_entry(file_path: str, folder: str) -> str:
    """``$ORIGIN``-relative path from an installed file to a folder (both relative to site-packages)."""
    relative = posixpath.relpath(folder, posixpath.dirname(file_path) or ".")
    return "$ORIGIN" if relative == "." else f"$ORIGIN/{relative}"


def _wheel_platform(report: WheelReport) -> Platform:
    platforms = {p for p in map(platform_of_tag, report.platform_tags) if p is not None}
    linux = sorted(p for p in platforms if p.os == "linux")
    if len(linux) == 1:
        return linux[0]
    if not linux:
        raise RepairError(
            f"{report.filename}: no Linux platform tag ({', '.join(report.platform_tags) or 'none'})",
            hint="repair rewrites ELF files; build a linux_* or manylinux_* wheel",
        )
    raise RepairError(f"{report.filename}: tagged for several architectures ({', '.join(map(str, linux))})")


@dataclass
class _Need:
    """One NVIDIA soname the package's files need once repaired."""

    soname: str
    needed_by: set[str] = field(default_factory=set)  # installed paths
    copies: list[VendoredCopy] = field(default_factory=list)


def _needs(report: WheelReport, dropped: set[str]) -> dict[str, _Need]:
    copies = {copy.path: copy for copy in report.vendored}
    needs: dict[str, _Need] = {}
    for elf in report.elf_files:
        if elf.path in dropped:
            continue
        for needed in elf.needed:
            if needed.resolution is Resolution.VENDORED:
                copy = copies.get(needed.provided_by[0]) if needed.provided_by else None
                if copy is None or copy.path not in dropped:
                    continue
                need = needs.setdefault(copy.original_soname, _Need(copy.original_soname))
                need.copies.append(copy)
            elif needed.resolution is Resolution.NVIDIA_WHEEL:
                need = needs.setdefault(needed.soname, _Need(needed.soname))
            else:
                continue
            need.needed_by.add(elf.installed_path or elf.path)
    return needs


def _choose_major(
    needs: Mapping[str, _Need], catalog: Catalog, platform: Platform, options: RepairOptions
) -> int | None:
    if options.cuda_major is not None:
        return options.cuda_major
    possible: set[int] | None = None
    for soname in needs:
        majors = {
            p.release.cuda_major
            for p in catalog.providers(soname=soname, platform=platform)
            if p.release.cuda_major is not None
        }
        possible = majors if possible is None else possible & majors
    if not possible:
        return None
    if len(possible) == 1:
        return next(iter(possible))
    identified = {
        copy.identified.cuda_major
        for need in needs.values()
        for copy in need.copies
        if copy.identified and copy.identified.cuda_major is not None
    }
    if len(identified) == 1 and identified <= possible:
        return next(iter(identified))
    listed = " and ".join(f"CUDA {m}" for m in sorted(possible))
    raise RepairError(
        f"both {listed} wheels provide {', '.join(sorted(needs))}",
        hint="pass --cuda with the major the wheel was built for",
    )


def _provider(catalog: Catalog, soname: str, major: int | None, platform: Platform) -> LibraryProvider | None:
    found = catalog.providers(soname=soname, cuda_major=major, platform=platform)
    return found[0] if found else None


def _first_release_with(catalog: Catalog, provider: LibraryProvider, platform: Platform) -> str:
    """The oldest release of the provider that ships the same file in the same folder."""
    for release in catalog.releases_of(provider.distribution):
        if release.parsed_version.is_prerelease or release.cuda_major != provider.release.cuda_major:
            continue
        wheel = release.wheel_for(platform)
        if wheel and any(lib.path == provider.library.path for lib in wheel.libraries):
            return release.version
    return provider.version


@dataclass(frozen=True)
class _Context:
    catalog: Catalog
    platform: Platform
    major: int | None
    options: RepairOptions
    environment: BuildEnvironment | None


def _linked_version(
    name: str, need: _Need, provider: LibraryProvider, context: _Context, warnings: list[str]
) -> tuple[str, str]:
    catalog, platform, environment = context.catalog, context.platform, context.environment
    # An explicit flag wins: the user knows what they linked against.
    if name in context.options.linked_versions:
        return context.options.linked_versions[name], "--linked-version"
    installed = environment.installed_version(provider.distribution) if environment else None
    if installed and environment:
        return installed, f"installed ({environment.description})"
    for copy in need.copies:
        found = copy.identified
        if found and canonicalize_name(found.distribution) == provider.distribution:
            return found.version, f"vendored copy ({found.confidence.value})"
    first = _first_release_with(catalog, provider, platform)
    warnings.append(
        f"{name}: the linked version of {provider.distribution} is unknown; assuming {first}, the first "
        f"release that ships {provider.library.path} (pass --linked-version {name}=VERSION to say)"
    )
    return first, "first release"


def _specifier(
    catalog: Catalog, provider: LibraryProvider, linked: str, platform: Platform, policy: VersionPolicy
) -> tuple[str, str]:
    if policy is VersionPolicy.EXACT:
        return f"=={linked}", "exact policy"
    if policy is VersionPolicy.MINIMUM:
        return f">={linked}", "minimum policy"
    safe = catalog.safe_range(provider.distribution, linked, provider.library.name, platform=platform)
    if safe is None:
        return f">={linked}", "no release at or above the linked version is known"
    return safe.specifier, safe.upper_reason


def _marker(platform: Platform) -> str:
    machine = {"amd64": "AMD64"}.get(platform.arch, platform.arch)
    return f'sys_platform == "linux" and platform_machine == "{machine}"'


def _existing_requirements(requires: Sequence[str]) -> dict[str, list[Requirement]]:
    found: dict[str, list[Requirement]] = {}
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        found.setdefault(canonicalize_name(requirement.name), []).append(requirement)
    return found


def _expanded_constraints(
    catalog: Catalog, roots: Iterable[tuple[str, Requirement]], platform: Platform
) -> dict[str, list[tuple[str, SpecifierSet]]]:
    """Every version constraint on every distribution, extras and transitive provider requirements
    included: (who asked, specifier) per distribution."""
    environment = marker_environment(platform, None)
    constraints: dict[str, list[tuple[str, SpecifierSet]]] = {}
    queue = list(roots)
    seen: set[tuple[str, str]] = set()
    while queue:
        origin, requirement = queue.pop()
        key = (origin, str(requirement))
        if key in seen:
            continue
        seen.add(key)
        name = canonicalize_name(requirement.name)
        constraints.setdefault(name, []).append((origin, requirement.specifier))
        releases = [
            r
            for r in catalog.releases_of(name)
            if not r.parsed_version.is_prerelease and r.parsed_version in requirement.specifier
        ]
        for release in releases[-1:]:  # the newest allowed release speaks for the range
            queue += _release_requirements(release, requirement.extras, environment)
    return constraints


def _release_requirements(
    release: Release, extras: Iterable[str], environment: Mapping[str, str]
) -> list[tuple[str, Requirement]]:
    found = []
    for text in release.requires_dist:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        marker = requirement.marker
        if marker is not None:
            wanted = [*extras] or [""]
            if not any(marker.evaluate({**environment, "extra": extra}) for extra in wanted):
                continue
        requirement.marker = None
        found.append((f"{release.distribution} {release.version}", requirement))
    return found


def _conflicts(catalog: Catalog, constraints: Mapping[str, list[tuple[str, SpecifierSet]]]) -> list[str]:
    problems = []
    for name, asked in sorted(constraints.items()):
        releases = [r for r in catalog.releases_of(name) if not r.parsed_version.is_prerelease]
        if not releases:
            continue
        if not any(all(r.parsed_version in spec for _, spec in asked) for r in releases):
            listed = "; ".join(f"{origin} wants {name}{spec or ' (any)'}" for origin, spec in asked)
            problems.append(f"no release of {name} satisfies every requirement: {listed}")
    return problems


def _loaded_by_path(source_files: Mapping[str, bytes], copies: Iterable[VendoredCopy]) -> dict[str, str]:
    """Vendored copies whose file name appears in the package's Python code: loaded by path, likely."""
    names = {posixpath.basename(copy.path).encode(): copy.path for copy in copies}
    found: dict[str, str] = {}
    for path, text in source_files.items():
        for name, copy_path in names.items():
            if _names_file(text, name):
                found[copy_path] = path
    return found


def _names_file(text: bytes, name: bytes) -> bool:
    """``name`` stands in ``text`` as a whole file name, not inside a longer one (``libcudss.so.1`` in
    ``libcudss.so.12`` or ``mylibcudss.so.1``). bytes.find, not a pattern: package code can be megabytes."""
    start = text.find(name)
    while start != -1:
        before = text[start - 1 : start]
        after = text[start + len(name) : start + len(name) + 2]
        joined_before = bool(before) and (before.isalnum() or before in b"_.+-")
        joined_after = (
            after[:1].isalnum()
            or after[:1] in (b"_", b"+", b"-")
            or (after[:1] == b"." and after[1:2].isdigit())
        )
        if not joined_before and not joined_after:
            return True
        start = text.find(name, start + 1)
    return False


def _search_path(
    elf: ElfReport, folders: Sequence[str], wheel: _WheelFolders, use_runpath: bool
) -> tuple[str, ...] | None:
    """The file's ``$ORIGIN`` entries that still mean something, then the providers' folders; None if
    unchanged.

    An entry goes when it names an NVIDIA wheel's folder (anything in the ``nvidia`` namespace, or a
    folder the catalog knows: repair sets the providers' folders itself, and a stale one could find
    another CUDA major's copy first),
    or a folder of this wheel's own packages that holds no library once the copies are dropped
    (``solver.libs``, a build tree's leftover). One into another package (``$ORIGIN/../torch/lib``)
    stays: that package is installed beside this one. Absolute, relative and empty entries go:
    nothing outside the install tree is searched.
    """
    installed = elf.installed_path or elf.path
    here = posixpath.dirname(installed)
    current = elf.runpath or elf.rpath
    kept: list[str] = []
    for entry in current:
        if not entry.startswith(("$ORIGIN", "${ORIGIN}")):
            continue
        rest = entry.split("/", 1)[1] if "/" in entry else ""
        target = posixpath.normpath(posixpath.join(here, rest)) if rest else (here or ".")
        top = target.split("/", 1)[0]
        if target.startswith(".."):
            normal = entry  # above site-packages (a conda or system layout): kept as written
        elif (
            top == "nvidia"
            or target in wheel.nvidia_folders
            or (top in wheel.top_levels and target not in wheel.library_dirs)
        ):
            continue
        else:
            normal = "$ORIGIN" if target == (here or ".") else rpath_entry(installed, target)
        if normal not in kept:
            kept.append(normal)
    for folder in folders:
        entry = rpath_entry(installed, folder)
        if entry not in kept:
            kept.append(entry)
    wanted = tuple(kept)
    unchanged = wanted == current and bool(elf.runpath) == use_runpath and (bool(elf.rpath) != use_runpath)
    if not wanted and not current:
        return None
    return None if unchanged else wanted


@dataclass(frozen=True)
class _WheelFolders:
    """What ``_search_path`` judges an entry by."""

    library_dirs: frozenset[str]  # folders of the wheel that still hold an ELF file after the drop
    top_levels: frozenset[str]  # the wheel's own top-level names (packages, <pkg>.libs)
    nvidia_folders: frozenset[str]  # every folder an NVIDIA wheel in the catalog ships libraries in


@dataclass
class _Draft:
    """What planning accumulates before it is frozen into a RepairPlan."""

    drop: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    added: list[AddedRequirement] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    libraries: list[ManifestLibrary] = field(default_factory=list)
    folders_for: dict[str, list[str]] = field(default_factory=dict)  # installed path -> provider folders
    roots: list[tuple[str, Requirement]] = field(default_factory=list)


def _library_name(soname: str) -> str:
    parsed = parse_library_file_name(soname)
    return parsed.stem if parsed else soname


def _decide_drops(
    report: WheelReport, options: RepairOptions, python_sources: Mapping[str, bytes], draft: _Draft
) -> None:
    by_path = _loaded_by_path(python_sources, report.vendored)
    for copy in report.vendored:
        if not options.wants(copy.name):
            continue
        if copy.path in by_path and not options.force:
            draft.left_alone.append(
                f"{copy.path}: {by_path[copy.path]} names it, so Python code may load it by path "
                "(kept; --force drops it)"
            )
            continue
        draft.drop.add(copy.path)
    for finding in report.findings:
        if finding.kind is FindingKind.BUNDLED_DRIVER:
            if options.force:
                draft.drop.add(finding.path)
                draft.warnings.append(
                    f"{finding.path}: bundled driver dropped (--force); the host's driver loads"
                )
            else:
                draft.left_alone.append(f"{finding.path}: {finding.message} (kept; --force drops it)")
        elif finding.kind is FindingKind.STATIC_NVIDIA and finding.severity is Severity.WARNING:
            draft.left_alone.append(f"{finding.path}: {finding.message}")


def _plan_library(
    soname: str,
    need: _Need,
    context: _Context,
    existing: dict[str, list[Requirement]],
    draft: _Draft,
) -> None:
    name = _library_name(soname)
    provider = _provider(context.catalog, soname, context.major, context.platform)
    if provider is None:
        draft.left_alone.append(
            f"{soname}: no NVIDIA wheel provides it for CUDA {context.major} on {context.platform}"
        )
        return
    linked, source = _linked_version(name, need, provider, context, draft.warnings)
    try:
        Version(linked)
    except InvalidVersion as exc:
        raise RepairError(
            f"{name}: {linked!r} is not a version", hint="e.g. --linked-version cudss=1.0.0.35"
        ) from exc
    specifier, reason = _specifier(
        context.catalog, provider, linked, context.platform, context.options.policy
    )
    requirement_text = f"{provider.distribution}{specifier}"
    if provider.distribution in existing:
        for requirement in existing[provider.distribution]:
            if Version(linked) not in requirement.specifier:
                raise RepairError(
                    f"the wheel requires {requirement} "
                    f"but was linked against {provider.distribution} {linked}",
                    hint="fix the requirement or pass --linked-version",
                )
        draft.kept.extend(str(r) for r in existing[provider.distribution])
        requirement_text = str(existing[provider.distribution][0])
    else:
        line = f"{requirement_text}; {_marker(context.platform)}"
        draft.added.append(AddedRequirement(name, provider.distribution, line, linked, source, reason))
        draft.roots.append(("the repaired wheel", Requirement(requirement_text)))
        existing[provider.distribution] = [Requirement(requirement_text)]
    folder = provider.library.folder
    for path in need.needed_by:
        folders = draft.folders_for.setdefault(path, [])
        if folder not in folders:
            folders.append(folder)
    draft.libraries.append(
        ManifestLibrary(
            name=name,
            soname=soname,
            distribution=provider.distribution,
            requirement=requirement_text,
            folder=folder,
            needed_by=tuple(sorted(need.needed_by)),
            min_version=linked,
        )
    )
    environment = context.environment
    if environment is None or environment.installed_file(provider.library.path) is None:
        draft.warnings.append(
            f"{name}: the NVIDIA libraries {provider.distribution} itself needs are not listed in the "
            "manifest (it is not installed here to read them); its own RPATH finds them"
        )


def _with_transitive(libraries: Sequence[ManifestLibrary], context: _Context) -> tuple[ManifestLibrary, ...]:
    """The libraries and the NVIDIA libraries they need in turn (read from the providers installed
    here), each listed after those it requires."""
    by_soname = {lib.soname: lib for lib in libraries}
    requires: dict[str, list[str]] = {lib.soname: [] for lib in libraries}
    queue = list(libraries)
    environment = context.environment
    while queue and environment is not None:
        library = queue.pop(0)
        needed = environment.needed_by_file(f"{library.folder}/{library.soname}")
        for soname in needed or ():
            if is_driver_library(soname) or is_system_library(soname):
                continue
            provider = _provider(context.catalog, soname, context.major, context.platform)
            if provider is None:
                continue
            if soname not in by_soname:
                found = ManifestLibrary(
                    name=_library_name(soname),
                    soname=soname,
                    distribution=provider.distribution,
                    requirement=provider.distribution,  # required by the provider, not by this wheel
                    folder=provider.library.folder,
                )
                by_soname[soname] = found
                requires[soname] = []
                queue.append(found)
            if soname not in requires[library.soname]:
                requires[library.soname].append(soname)
    ordered: list[ManifestLibrary] = []
    placed: set[str] = set()

    def place(soname: str, path: tuple[str, ...]) -> None:
        if soname in placed or soname in path:  # a cycle cannot be ordered; its first member goes first
            return
        for dependency in sorted(requires[soname]):
            place(dependency, (*path, soname))
        placed.add(soname)
        names = tuple(_library_name(dependency) for dependency in requires[soname])
        ordered.append(by_soname[soname].replace(requires=names))

    for soname in sorted(by_soname):
        place(soname, ())
    return tuple(ordered)


def _edits(report: WheelReport, draft: _Draft, catalog: Catalog, use_runpath: bool) -> list[ElfEdit]:
    installed = {elf.path: elf.installed_path or elf.path for elf in report.elf_files}
    wheel = _WheelFolders(
        library_dirs=frozenset(
            posixpath.dirname(path) or "." for member, path in installed.items() if member not in draft.drop
        ),
        top_levels=frozenset(path.split("/", 1)[0] for path in installed.values() if "/" in path),
        nvidia_folders=frozenset(provider.library.folder for provider in catalog.iter_libraries()),
    )
    copies = {copy.path: copy for copy in report.vendored}
    edits = []
    for elf in report.elf_files:
        if elf.path in draft.drop or elf.error:
            continue
        renames = []
        for needed in elf.needed:
            copy = copies.get(needed.provided_by[0]) if needed.provided_by else None
            if (
                needed.resolution is Resolution.VENDORED
                and copy is not None
                and copy.path in draft.drop
                and needed.soname != copy.original_soname
            ):
                renames.append((needed.soname, copy.original_soname))
        folders = draft.folders_for.get(elf.installed_path or elf.path, [])
        search = _search_path(elf, folders, wheel, use_runpath)
        edit = ElfEdit(elf.path, tuple(renames), search, use_runpath)
        if edit.changes_anything:
            edits.append(edit)
    return edits


def plan_repair(
    report: WheelReport,
    catalog: Catalog,
    *,
    requires_dist: Sequence[str],
    dist_info: str,
    python_sources: Mapping[str, bytes] | None = None,
    options: RepairOptions | None = None,
    environment: BuildEnvironment | None = None,
    embed: EmbedRequest | None = None,
) -> RepairPlan:
    """The repair of the wheel ``report`` describes. Pure: reads nothing but its arguments.
    ``embed`` (``--embed-loader``) also copies the run-time loader into packages, with a call."""
    options = options or RepairOptions()
    platform = _wheel_platform(report)
    draft = _Draft()
    _decide_drops(report, options, python_sources or {}, draft)
    needs = {s: n for s, n in _needs(report, draft.drop).items() if options.wants(_library_name(s))}
    major = _choose_major(needs, catalog, platform, options)
    context = _Context(catalog, platform, major, options, environment)
    existing = _existing_requirements(requires_dist)
    draft.roots += [("the wheel", requirement) for reqs in existing.values() for requirement in reqs]
    for soname, need in sorted(needs.items()):
        if not is_driver_library(soname):
            _plan_library(soname, need, context, existing, draft)
    problems = _conflicts(catalog, _expanded_constraints(catalog, draft.roots, platform))
    if problems and not options.force:
        raise RepairError(
            problems[0], hint="change the conflicting requirement, or --force to write it anyway"
        )
    draft.warnings += problems
    manifest = Manifest(
        cuda_major=major,
        libraries=_with_transitive(draft.libraries, context),
        generator=f"slimwheel {__version__}",
    )
    embedded: tuple[EmbeddedLoader, ...] = ()
    if embed is not None:
        embedded, note = plan_embedding(embed, manifest, report.filename)
        if note:
            draft.warnings.append(note)
    return RepairPlan(
        wheel=report.filename,
        output_name=report.filename,
        platform=platform,
        cuda_major=major,
        drop=tuple(sorted(draft.drop)),
        edits=tuple(_edits(report, draft, catalog, options.use_runpath)),
        requirements=tuple(draft.added),
        kept_requirements=tuple(draft.kept),
        manifest=manifest,
        manifest_path=f"{dist_info}/{MANIFEST_NAME}",
        warnings=tuple(draft.warnings),
        left_alone=tuple(draft.left_alone),
        embedded=embedded,
    )
