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
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from slimwheel._version import __version__
from slimwheel.analysis import (
    LOADED_BY_ITS_LIBRARY,
    LOADS_BY_SONAME,
    SAME_IN_EVERY_MAJOR,
    Confidence,
    ElfReport,
    FindingKind,
    NeededLibrary,
    Resolution,
    Severity,
    VendoredCopy,
    WheelReport,
    driver_soname,
    is_driver_library,
    is_system_library,
    runtime_majors,
)
from slimwheel.analysis.libraries import nvidia_product_of
from slimwheel.catalog.exports import SymbolFloor
from slimwheel.catalog.model import Catalog, LibraryProvider, Release, left_out_reason, range_clauses
from slimwheel.check.model import ProviderRelease, RequirementReach
from slimwheel.ldso import EntryKind, expand_entry, rpath_entry
from slimwheel.manifest import MANIFEST_NAME, Manifest, ManifestLibrary
from slimwheel.names import cuda_major_named, cuda_major_of_folder, name_of_library, soname_stem
from slimwheel.platforms import Platform, linux_of_machine, platform_of_tag
from slimwheel.repair.embed import EmbeddedLoader, EmbedRequest, plan_embedding
from slimwheel.repair.environment import InstalledProviders
from slimwheel.repair.errors import RepairError
from slimwheel.requirements import (
    ReleaseRequirements,
    RequirementScope,
    WheelRequirement,
    expand_requirements,
    installed_with,
    marker_environment,
    merge_specifiers,
    plainest_extra,
    python_of_tags,
    read_requirements,
)
from slimwheel.wording import and_list, some_of

__all__ = [
    "AddedRequirement",
    "AssumedFloor",
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


def versions_by_name(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """``RepairOptions.linked_versions`` of (library name, version) pairs: each name's versions, each
    once, in the order given (a several-major repair takes one a major)."""
    found: dict[str, tuple[str, ...]] = {}
    for name, version in pairs:
        if version not in found.get(name, ()):
            found[name] = (*found.get(name, ()), version)
    return found


@dataclass(frozen=True)
class RepairOptions:
    policy: VersionPolicy = VersionPolicy.COMPATIBLE
    cuda_major: int | None = None
    # library name -> the provider versions it was linked against: one, or one per CUDA major of a
    # several-major repair (cudart: 12.9.79 and 13.0.96), each applied to the major it is a release of
    linked_versions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    only: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()
    use_runpath: bool = False
    force: bool = False  # also rewrite what is unsafe: copies loaded by path, a bundled driver
    keep_extras_optional: bool = False  # a provider required only under an extra stays optional
    # --optional LIB[=EXTRA]: library name -> the extra its NVIDIA wheel goes behind, for libraries the
    # package loads only on request (CuPy's cuTENSOR and NCCL), rather than a requirement of every install
    optional: Mapping[str, str] = field(default_factory=dict)
    # --drop-unused-needed: DT_NEEDED entries of NVIDIA libraries a file imports nothing from go, and
    # with them the requirements they alone made (see analysis.wheel._unused_needed)
    drop_unused: bool = False
    # --cuda 12,13, for a wheel built for several CUDA majors (bitsandbytes, cuda-cccl): each file is
    # linked to its own major's wheels, and each major's requirements go behind an extra of its own
    # (see _plan_several_majors); () for one major, which ``cuda_major`` names
    cuda_majors: tuple[int, ...] = ()
    # The extra every requirement the plan adds goes behind: one major's, in a several-major repair.
    major_extra: str = ""

    def wants(self, soname: str) -> bool:
        """``--only`` / ``--exclude``: whether repair rewrites ``soname`` (or a whole library, by its
        stem: a soname alone excluded, ``libcublas.so.11``, leaves the rest of cuBLAS to repair)."""
        if self.only and name_of_library(self.only, soname) is None:
            return False
        return name_of_library(self.exclude, soname) is None


@dataclass(frozen=True)
class ElfEdit:
    """The edits of one member's dynamic section."""

    path: str
    replace_needed: tuple[tuple[str, str], ...] = ()
    search_path: tuple[str, ...] | None = None  # None: leave RPATH/RUNPATH alone
    runpath: bool = False  # write DT_RUNPATH instead of DT_RPATH
    reason: str = ""  # why the search path changes where it is not plain (a DT_RUNPATH made a DT_RPATH)
    # DT_NEEDED entries that go (see _overlinked): libraries another of their release loads itself,
    # and with --drop-unused-needed those the file imports nothing from, which ``unused`` names
    remove_needed: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()

    @property
    def changes_anything(self) -> bool:
        return bool(self.replace_needed) or self.search_path is not None or bool(self.remove_needed)


@dataclass(frozen=True)
class AddedRequirement:
    library: str
    distribution: str
    requirement: str  # as written to Requires-Dist, marker included
    linked_version: str
    version_source: str  # "--linked-version", "installed", "vendored copy", "symbols ...", "first release"
    range_reason: str
    extra: str = ""  # the (first) extra it is required under, "" for every install


@dataclass(frozen=True)
class AssumedFloor:
    """A library whose linked version nothing told, so the plan assumed the first release that ships
    it (or, for a vendored copy that matched only by soname, the newest): which files import from
    it, for :func:`~slimwheel.catalog.exports.oldest_exporting` to find the release they need instead
    (``plan_repair``'s ``floors``)."""

    library: str
    distribution: str
    soname: str
    path: str  # where the provider installs it, relative to site-packages
    needed_by: tuple[str, ...]  # installed paths of the wheel's files that need it
    # The names those files need it by: its soname, and a vendored copy's own
    # (libnvToolsExt-847d78f2.so.1), which their symbols' version needs name until repair renames them.
    needed_as: tuple[str, ...] = ()
    cuda_major: int | None = None  # the major of the releases to search (the plan's, of one of several)


@dataclass(frozen=True)
class RepairPlan:
    wheel: str
    output_name: str
    platform: Platform
    cuda_major: int | None  # None also where several majors are planned (``cuda_majors``)
    drop: tuple[str, ...]
    edits: tuple[ElfEdit, ...]
    requirements: tuple[AddedRequirement, ...]
    kept_requirements: tuple[str, ...]  # existing Requires-Dist lines naming a provider, respected
    made_hard: tuple[str, ...]  # providers the wheel required only under an extra, now always (why)
    manifest: Manifest
    manifest_path: str
    warnings: tuple[str, ...]
    left_alone: tuple[str, ...]  # what could not be rewritten safely, and why
    embedded: tuple[EmbeddedLoader, ...] = ()  # --embed-loader: the run-time loader, per package
    kept_copies: tuple[str, ...] = ()  # vendored copies kept on purpose (--only/--exclude, named by code)
    # Providers not installed where repair ran and whose files the catalog has not read, so the NVIDIA
    # libraries they need in turn could not be listed in the manifest. Nothing to do about it: their own
    # RPATHs find those at run time.
    unread_providers: tuple[str, ...] = ()
    assumed_floors: tuple[AssumedFloor, ...] = ()  # see AssumedFloor
    # Providers an extra of the wheel brings in, left behind it: nothing of theirs was vendored and
    # dropped, so a plain install loads what it loaded before; the RPATH reaches them once the extra is
    # installed (why, per provider).
    kept_optional: tuple[str, ...] = ()
    # Libraries --exclude leaves to the host (soname stems): check reports one of theirs it cannot find
    # as a warning (onnxruntime-gpu 1.20.2's TensorRT provider needs libnvinfer.so.10, which only a
    # TensorRT install provides: --exclude nvinfer, as with auditwheel's --exclude).
    left_to_host: tuple[str, ...] = ()
    # Libraries of the wheel's other requirements (librmm-cu12's librmm.so, torch's libc10.so), or its
    # own that nothing loads first (a program's), that a file needs and its search path missed: its
    # RPATH now reaches them (see RequirementReach).
    reached: tuple[RequirementReach, ...] = ()
    # Providers the wheel requires in a range that admits a release shipping none of the libraries its
    # files need: a requirement within that range is added beside it (why, per provider).
    narrowed: tuple[str, ...] = ()
    # The CUDA majors of a wheel built for several, each file linked to its own (--cuda 12,13); ().
    cuda_majors: tuple[int, ...] = ()

    @property
    def changes_anything(self) -> bool:
        return bool(
            self.drop or self.requirements or self.embedded or any(e.changes_anything for e in self.edits)
        )

    @property
    def new_extras(self) -> tuple[str, ...]:
        """The extras the added requirements are gated by (--optional), which METADATA must offer."""
        return tuple(dict.fromkeys(r.extra for r in self.requirements if r.extra))


_T = TypeVar("_T")


def _wheel_platform(report: WheelReport) -> Platform:
    platforms = {p for p in map(platform_of_tag, report.platform_tags) if p is not None}
    linux = sorted(p for p in platforms if p.os == "linux")
    anywhere = set(report.platform_tags) == {"any"}
    if not report.elf_files and (linux or anywhere):
        # cuxfilter-cu13 26.6.0 (tagged for aarch64 and x86_64 so that pip installs it only where its
        # CUDA requirements exist), nvidia-tensorrt 99.0.0 (a manylinux_2_17 stub of one __init__.py):
        # auditwheel refuses such a wheel too ("does not look like a platform wheel").
        raise RepairError(
            f"{report.filename}: holds no ELF file: nothing to repair",
            hint="a wheel without ELF files needs no repair; repair rewrites a platform wheel's ELF files",
        )
    if len(linux) == 1:
        return linux[0]
    machines = {elf.machine for elf in report.elf_files if elf.machine}
    if not linux and anywhere and len(machines) == 1:
        # Tagged for any platform, with Linux ELF files (tsnecuda 3.0.1): auditwheel reads the
        # architecture from them and tags its output for it, as for a linux_* wheel.
        (machine,) = machines
        return linux_of_machine(machine)
    if not linux:
        raise RepairError(
            f"{report.filename}: no Linux platform tag ({', '.join(report.platform_tags) or 'none'})",
            hint="repair rewrites ELF files; build a linux_* or manylinux_* wheel",
        )
    raise RepairError(
        f"{report.filename}: tagged for several architectures ({', '.join(map(str, linux))})",
        hint="an ELF file is built for one machine: build and repair one wheel per architecture",
    )


def _wheel_python(report: WheelReport) -> str | None:
    """The Python the wheel's markers are evaluated for, as ``check`` does (``python_of_tags``)."""
    try:
        tags = parse_wheel_filename(report.filename)[3]
    except InvalidWheelFilename:
        return None
    return python_of_tags(tags)


@dataclass
class _Need:
    """One NVIDIA soname the package's files need once repaired."""

    soname: str
    needed_by: set[str] = field(default_factory=set)  # installed paths
    copies: list[VendoredCopy] = field(default_factory=list)
    needed_as: set[str] = field(default_factory=set)  # the names files need it by (a copy's own)

    @property
    def on_request(self) -> bool:
        """Only a dropped copy nothing links asks for it: the package loads it at run time."""
        return not self.needed_by


def _overlinked(elf: ElfReport, dropped: Collection[str], options: RepairOptions) -> tuple[str, ...]:
    """The DT_NEEDED entries of ``elf`` that repair removes, where served by an NVIDIA wheel or a copy
    that is dropped, and nothing is imported from them (no version of them bound):
    - a library another of its release loads itself (``LOADED_BY_ITS_LIBRARY``: NVRTC its builtins),
      needed beside that library. Kept, the need would hold the requirement to the one minor release
      that ships that soname;
    - with ``--drop-unused-needed``, one the analysis found the file imports no symbol from
      (``ElfReport.unused_needed``) and that ``--only``/``--exclude`` leave to repair."""
    stems = {soname_stem(needed.soname) for needed in elf.needed}
    bound = {file for file, _names in elf.version_needs}
    unused = {soname for soname in elf.unused_needed if options.drop_unused and options.wants(soname)}
    removed = []
    for needed in elf.needed:
        loader = LOADED_BY_ITS_LIBRARY.get(soname_stem(needed.soname))
        loaded_by_another = loader is not None and loader in stems
        if needed.soname in bound or not (loaded_by_another or needed.soname in unused):
            continue
        if _from_a_wheel(needed, dropped):
            removed.append(needed.soname)
    return tuple(removed)


def _needs(
    report: WheelReport, dropped: set[str], options: RepairOptions, on_request: Collection[str] = ()
) -> dict[str, _Need]:
    """The NVIDIA sonames the files that stay need, with the dropped copies that served them; and
    the copies in ``on_request`` (dropped, though nothing links them: ``--force``), whose NVIDIA wheel
    must come in their place."""
    copies = {copy.path: copy for copy in report.vendored}
    needs: dict[str, _Need] = {}
    for elf in report.elf_files:
        if elf.path in dropped:
            continue
        overlinked = _overlinked(elf, dropped, options)
        for needed in elf.needed:
            if needed.soname in overlinked:
                continue  # the edit removes it
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
            need.needed_as.add(needed.soname)
    # A dropped copy shipped under another name than its soname (onnxruntime-ep-nv-tensorrt-rtx-cu13's
    # libtensorrt_rtx.so.1.7.1) serves its consumers only once loaded, so no DT_NEEDED resolves to it:
    # it still says which release they were built against.
    for copy in copies.values():
        served = needs.get(copy.original_soname)
        if served is not None and copy.path in dropped and copy not in served.copies:
            served.copies.append(copy)
    for path in sorted(on_request):
        copy = copies[path]
        needs.setdefault(copy.original_soname, _Need(copy.original_soname)).copies.append(copy)
    return needs


def _choose_major(
    needs: Mapping[str, _Need],
    catalog: Catalog,
    platform: Platform,
    options: RepairOptions,
    *,
    required: set[int],
    claimed: set[int],
    linked: set[int],
    warnings: list[str],
    named: int | None = None,
    other_majors: list[str] | None = None,
) -> int | None:
    """The CUDA major of the NVIDIA wheels that replace the copies and serve the needs. Where several
    fit: the one the wheel's requirements admit, else the one its identified copies were made for,
    else the one its classifiers claim (``claimed``), each only when it is one, else the one its
    distribution's name names (``named``: bagua-cuda117, which links only NCCL, ``libnccl.so.2``).

    ``linked``: the majors the wheel's runtime sonames name (``_majors_linked``). One of them decides,
    whatever wheels ship its other sonames: cupy-cuda102 12.3.0 links ``libcudart.so.10.2`` and
    ``libcufft.so.10``, a soname CUDA 11's cuFFT wheels ship too, and was planned onto CUDA 11 wheels.
    For CUDA 10, which NVIDIA publishes no wheels of, nothing is then linked to a wheel and every copy
    stays. A ``--cuda`` the wheel's own libraries contradict is refused, never obeyed by dropping them,
    except in a wheel built for several majors (bitsandbytes), where the sonames only other majors'
    wheels ship are added to ``other_majors``, for the plan to leave to the host as --exclude does.
    """
    by_soname = {s: catalog.majors_shipping(s, platform) for s in needs if not is_driver_library(s)}
    by_soname = {s: majors for s, majors in by_soname.items() if majors}
    if len(linked) == 1 and options.cuda_major is None:
        return next(iter(linked))
    possible = catalog.majors_serving(by_soname, platform)
    if options.cuda_major is not None:
        major = options.cuda_major
        contradicted = sorted(s for s, majors in by_soname.items() if major not in majors)
        # A wheel built for several majors (bitsandbytes) is repaired for the one --cuda names, the
        # others' files left alone: what --cuda asks for there, not a mistake to refuse.
        several = catalog.built_for_majors(by_soname, platform)
        if major in several and other_majors is not None:
            other_majors.extend(contradicted)
        elif contradicted and not options.force:
            built_for = sorted(frozenset[int]().union(*(by_soname[s] for s in contradicted)))
            listed = " or ".join(f"CUDA {m}" for m in built_for)
            copied = any(needs[s].copies for s in contradicted)
            instead = "keeps those copies" if copied else "leaves the files that need them alone"
            other = (
                " or ".join(f"--cuda {m}" for m in several)
                if several
                else f"--cuda {built_for[-1]} or leave --cuda out"
            )
            raise RepairError(
                f"--cuda {major} does not fit the wheel: no CUDA {major} wheel ships "
                f"{', '.join(contradicted)} (only {listed} wheels do)",
                hint=f"pass {other}; --force {instead} instead",
            )
        if len(linked) == 1 and major not in linked and not options.force:
            (built,) = linked
            raise RepairError(
                f"--cuda {major} does not fit the wheel: its files link CUDA {built}'s runtime libraries",
                hint=f"pass --cuda {built} or leave --cuda out; --force repairs for CUDA {major} anyway",
            )
        return major
    if possible is None:
        return None
    if not possible:
        # bitsandbytes ships one library per CUDA major and loads the one that fits at run time:
        # requiring every major's wheels would install them all.
        raise _several_majors_needed(by_soname, needs)
    if len(possible) == 1:
        return next(iter(possible))
    if len(required & possible) == 1:  # the wheel's own requirements name the major
        return next(iter(required & possible))
    identified = {
        copy.identified.cuda_major
        for need in needs.values()
        for copy in need.copies
        if copy.identified and copy.identified.cuda_major is not None and copy.identified.by_the_file
    }
    if len(identified) == 1 and identified <= possible:
        return next(iter(identified))
    if len(claimed) == 1 and claimed <= possible:  # ctranslate2 3.24: "NVIDIA CUDA :: 11.0" ... "11.8"
        return next(iter(claimed))
    if named is not None and (named in possible or named not in catalog.cuda_majors()):
        # A major no NVIDIA wheel is built for (bagua-cuda102: CUDA 10) decides as a linked one
        # does: nothing is linked to another major's wheels.
        return named
    listed = f"CUDA {and_list([str(m) for m in sorted(possible)])}"
    if all(soname_stem(s) in SAME_IN_EVERY_MAJOR for s in by_soname):
        # Any major's copy serves (OpenMM's OpenCL plugins): the newest, as check's advice names.
        newest = max(possible)
        warnings.append(
            f"{', '.join(sorted(by_soname))}: {listed} wheels ship the same library and nothing in the "
            f"wheel names a CUDA major: linked to CUDA {newest}'s (--cuda N picks another)"
        )
        return newest
    raise _undecided(needs, sorted(by_soname), listed, named=named)


def _several_majors_needed(
    by_soname: Mapping[str, frozenset[int]], needs: Mapping[str, _Need]
) -> RepairError:
    """Why no one major serves the wheel's files, and the way out: ``--cuda 12,13`` where each file is
    one major's build, else one major at a time."""
    by_major: dict[int, list[str]] = {}
    for soname, majors in sorted(by_soname.items()):
        if len(majors) == 1:
            by_major.setdefault(next(iter(majors)), []).append(soname)
    listed = "; ".join(f"CUDA {m}: {', '.join(names)}" for m, names in sorted(by_major.items()))
    # Each file is one major's build (bitsandbytes), or one file needs several majors' at once.
    per_file: dict[str, set[int]] = {}
    for majors_of_name, names in by_major.items():
        for name in names:
            for path in needs[name].needed_by:
                per_file.setdefault(path, set()).add(majors_of_name)
    one = "--cuda N repairs one major, the files of the others left alone"
    separable = all(len(majors) == 1 for majors in per_file.values())
    return RepairError(
        f"the wheel's files need the libraries of several CUDA majors ({listed}), so no one set of "
        "NVIDIA wheels serves them all",
        hint=f"--cuda {','.join(map(str, sorted(by_major)))} links each file to its own major's "
        f"wheels, each major's requirements behind an extra; {one}"
        if separable
        else f"{one}; or build one wheel per CUDA major",
    )


def _leave_other_majors(
    sonames: Sequence[str],
    needs: Mapping[str, _Need],
    major: int | None,
    options: RepairOptions,
    draft: _Draft,
) -> RepairOptions:
    """``options`` leaving ``sonames`` to the host, as --exclude does, with a word: the libraries only
    other majors' wheels ship, of a wheel built for several majors that is repaired for one. bitsandbytes
    loads the library of the CUDA major torch was built for: the others' are never loaded beside this
    major's wheels."""
    if not sonames:
        return options
    files = sorted({path for soname in sonames for path in needs[soname].needed_by})
    draft.warnings.append(
        f"{', '.join(sonames)}: no CUDA {major} wheel ships them, and the wheel is built for several CUDA "
        f"majors: left to the host (as --exclude does), so {some_of(files, _FILES_NAMED, noun='files')} "
        f"load{'s' if len(files) == 1 else ''} only where another major's libraries are installed"
    )
    return replace(options, exclude=options.exclude | frozenset(sonames))


def _undecided(
    needs: Mapping[str, _Need], sonames: Sequence[str], listed: str, *, named: int | None = None
) -> RepairError:
    """Why no major was chosen for ``sonames``, which ``listed`` majors' wheels all ship. Where the files
    that need them lie in folders named for different majors (nccl-extensions 0.1.0 ships
    nccl/ep/lib/cu12/libnccl_ep.so and .../cu13/, each needing NCCL's libnccl.so.2, and loads the one
    that fits), one major's wheels serve neither build alone: the way out is to leave them out. Where
    the wheel's name names a major none of those is (``named``: tensorrt-dispatch-cu11-bindings 10.13
    needs libnvinfer_dispatch.so.10, which the catalog knows only in CUDA 12 and 13 wheels), it says so."""
    folders = _folders_naming_majors(needs)
    if len(set(folders.values())) > 1:
        named_by = ", ".join(f"{folder} (CUDA {major})" for folder, major in sorted(folders.items()))
        stems = " ".join(f"--exclude {soname_stem(s)}" for s in sonames)
        return RepairError(
            f"the wheel's files are built for several CUDA majors, as their folders say ({named_by}), and "
            f"{listed} wheels all provide {', '.join(sonames)}: no one major's wheels serve them all",
            hint=f"--cuda {','.join(map(str, sorted(set(folders.values()))))} links each file to its "
            f"folder's major's wheels, each major's requirements behind an extra; {stems} leaves them to "
            "what the user installs; --cuda N links every file to one major's",
        )
    if named is not None:
        return RepairError(
            f"{listed} wheels all provide {', '.join(sonames)}, and the wheel's name says CUDA {named}, "
            f"of which no wheel the catalog knows ships {'it' if len(sonames) == 1 else 'them'}",
            hint=f"--exclude {' --exclude '.join(soname_stem(s) for s in sonames)} leaves "
            f"{'it' if len(sonames) == 1 else 'them'} to what the user installs; --cuda N links the "
            "files to that major's wheels",
        )
    return RepairError(
        f"{listed} wheels all provide {', '.join(sonames)}",
        hint="pass --cuda with the major the wheel was built for",
    )


def _folders_naming_majors(needs: Mapping[str, _Need]) -> dict[str, int]:
    """The folders of the files that need ``needs`` whose name names one CUDA major (``lib/cu12``,
    ``cuda13``), each with that major, as projects that ship one build per major lay them out."""
    found: dict[str, int] = {}
    for need in needs.values():
        for path in need.needed_by:
            if (major := cuda_major_of_folder(path)) is not None:
                found[posixpath.dirname(path)] = major
    return found


def _majors_linked(report: WheelReport, dropped: set[str]) -> set[int]:
    """The CUDA majors the runtime sonames the wheel's files (those it keeps) need or carry name."""
    names = [n.soname for elf in report.elf_files if elf.path not in dropped for n in elf.needed]
    return runtime_majors([*names, *(copy.original_soname for copy in report.vendored)])


_CUDA_CLASSIFIER = re.compile(r"Environment :: GPU :: NVIDIA CUDA :: (\d+)(?:\.\d+)*")


def _majors_claimed(classifiers: Sequence[str]) -> set[int]:
    """The CUDA majors the wheel's trove classifiers name (``Environment :: GPU :: NVIDIA CUDA :: 12``)."""
    return {int(match[1]) for text in classifiers if (match := _CUDA_CLASSIFIER.fullmatch(text.strip()))}


def _optional_only(existing: Sequence[WheelRequirement]) -> frozenset[str]:
    """Distributions the wheel requires only under an extra."""
    always = {w.name for w in existing if w.scope is RequirementScope.ALWAYS}
    return frozenset(w.name for w in existing if w.scope is RequirementScope.EXTRA and w.name not in always)


def _majors_required(catalog: Catalog, existing: Sequence[WheelRequirement]) -> set[int]:
    """The CUDA majors of the NVIDIA releases the wheel's own requirements admit: the wheel's word."""
    majors: set[int] = set()
    for wheel_requirement in existing:
        if wheel_requirement.scope is RequirementScope.NEVER:
            continue
        for release in catalog.releases_of(wheel_requirement.name):
            if release.cuda_major is not None and wheel_requirement.requirement.specifier.contains(
                release.version, prereleases=True
            ):
                majors.add(release.cuda_major)
    return majors


def _keep_copies(
    report: WheelReport,
    catalog: Catalog,
    *,
    platform: Platform,
    major: int | None,
    optional: frozenset[str],
    draft: _Draft,
) -> None:
    """A copy goes only when an NVIDIA wheel for ``major`` ships its exact soname: no wheel ever
    shipped CUDA 10's ``libcudart.so.10.2``, and dropping it would leave the extension nothing to load.
    Nor does a copy that is another major's file, by sha256 or file version: with ``--cuda 13 --force``
    triton's CUPTI 12 folder kept ``libcupti.so.12`` but lost ``libnvperf_host.so``, a soname CUDA 13's
    CUPTI wheel ships too, though not the build CUPTI 12 loads beside it.
    Copies whose provider the wheel requires only under an extra stay with ``--keep-extras-optional``.
    A copy no wheel ships that the library replacing another copy loads itself goes all the same
    (``_loaded_by_its_replaced_library``)."""
    unreplaced: list[VendoredCopy] = []
    for copy in report.vendored:
        if copy.path not in draft.drop:
            continue
        built_for = _another_majors_file(copy, catalog, major)
        if built_for is not None and copy.identified is not None:
            draft.drop.discard(copy.path)
            draft.left_alone.append(
                f"{copy.path}: kept: it is CUDA {built_for}'s ({copy.identified.distribution} "
                f"{copy.identified.version}, {copy.identified.confidence.value}), and this repair is for "
                f"CUDA {major}"
            )
            continue
        providers = catalog.providers(soname=copy.original_soname, cuda_major=major, platform=platform)
        if not providers:
            unreplaced.append(copy)
        elif providers[0].distribution in optional:
            draft.drop.discard(copy.path)
            draft.kept_copies.add(copy.path)
            draft.left_alone.append(
                f"{copy.path}: kept: the wheel requires {providers[0].distribution} only under an extra "
                "(--keep-extras-optional)"
            )
    for copy in unreplaced:
        if _loaded_by_its_replaced_library(copy, report, draft.drop):
            continue  # _overlinked removes the needs
        draft.drop.discard(copy.path)
        cuda = f"CUDA {major}" if major is not None else "any CUDA major"
        draft.left_alone.append(
            f"{copy.path}: kept: no NVIDIA wheel ships {copy.original_soname} for {cuda} on {platform}"
        )


def _loaded_by_its_replaced_library(
    copy: VendoredCopy, report: WheelReport, dropped: Collection[str]
) -> bool:
    """Whether ``copy`` is of a library another of its release loads itself (NVRTC's builtins), and
    each file that needs it binds nothing of it and needs that library from an NVIDIA wheel: the
    wheel's library then loads its own release's copy, and this one is dead weight. cumm-cu116
    0.5.3 vendors CUDA 11.6's builtins, which no wheel ships (CUDA 11's NVRTC wheels start at 11.7),
    beside the NVRTC copy repair replaces."""
    loader = LOADED_BY_ITS_LIBRARY.get(soname_stem(copy.original_soname))
    if loader is None or not copy.needed_by:
        return False
    consumers = {elf.path: elf for elf in report.elf_files}
    for path in copy.needed_by:
        elf = consumers.get(path)
        if elf is None or path in dropped:
            return False
        needs_copy = [n for n in elf.needed if n.provided_by and n.provided_by[0] == copy.path]
        bound = {file for file, _names in elf.version_needs}
        if not needs_copy or any(n.soname in bound for n in needs_copy):
            return False
        if not any(soname_stem(n.soname) == loader and _from_a_wheel(n, dropped) for n in elf.needed):
            return False
    return True


def _from_a_wheel(needed: NeededLibrary, dropped: Collection[str]) -> bool:
    """Whether an NVIDIA wheel serves ``needed`` once repaired: it did, or a copy that is dropped did."""
    return needed.resolution is Resolution.NVIDIA_WHEEL or (
        needed.resolution is Resolution.VENDORED
        and bool(needed.provided_by)
        and needed.provided_by[0] in dropped
    )


def _another_majors_file(copy: VendoredCopy, catalog: Catalog, major: int | None) -> int | None:
    """The CUDA major of the release ``copy`` is a file of (by sha256 or file version), where that is
    not ``major`` and no release of ``major`` ships the same bytes (the same file can be in the wheels
    of several majors); None otherwise."""
    identified = copy.identified
    if (
        major is None
        or identified is None
        or identified.cuda_major in (None, major)
        or not identified.by_the_file
    ):
        return None
    if identified.confidence is Confidence.EXACT:
        files = [
            p.library
            for p in catalog.providers(soname=identified.soname, include_prereleases=True)
            if (p.distribution, p.version, p.library.path)
            == (identified.distribution, identified.version, identified.official_path)
        ]
        digests = {file.sha256 for file in files if file.sha256}
        if any(p.release.cuda_major == major for digest in digests for p in catalog.by_sha256(digest)):
            return None
    return identified.cuda_major


def _keep_unlinked_copies(
    report: WheelReport,
    catalog: Catalog,
    *,
    platform: Platform,
    major: int | None,
    options: RepairOptions,
    draft: _Draft,
) -> None:
    """A copy that nothing in the wheel links (no DT_NEEDED of a file that stays reaches it, directly
    or through other copies, and no trampolines load it) is loaded at run time by ``dlopen``, often
    from a folder the package's code builds: triton's profiler joins ``backends/nvidia/lib/cupti``
    from path parts and loads ``libcupti.so`` there, so a dropped copy breaks it and check cannot
    see it. Such a copy goes only where the provider's own libraries load it: when the wheel links
    another library of the same NVIDIA distribution (cuDNN's front library loads its engines).
    ``--force`` drops it anyway, and its NVIDIA wheel is then required (``draft.on_request``)."""
    copies = {copy.path: copy for copy in report.vendored if copy.path in draft.drop}
    if not copies:
        return
    elfs = {elf.path: elf for elf in report.elf_files}
    lazy = {load.library for load in report.lazy_loads}
    reached = {path for path, copy in copies.items() if copy.name in lazy}
    linked: set[str] = set()
    frontier = [elf for elf in report.elf_files if elf.path not in copies]
    while frontier:
        for needed in frontier.pop().needed:
            linked.add(needed.soname)
            for path in needed.provided_by:
                if path in copies and path not in reached:
                    reached.add(path)
                    frontier.extend([elfs[path]] if path in elfs else [])
    linked |= {copies[path].original_soname for path in reached}

    def distributions(soname: str) -> set[str]:
        return {p.distribution for p in catalog.providers(soname=soname, cuda_major=major, platform=platform)}

    required = {name for soname in linked for name in distributions(soname)}
    unlinked: dict[str, list[str]] = {}
    for path, copy in sorted(copies.items()):
        if path in reached or distributions(copy.original_soname) & required:
            continue
        if options.force:
            draft.on_request.add(path)
        else:
            draft.drop.discard(path)
            draft.kept_copies.add(path)
        folder, name = posixpath.split(path)
        unlinked.setdefault(folder, []).append(name)
    for folder, names in unlinked.items():  # one line a folder: a package vendors a toolkit's set at once
        one = len(names) == 1
        which = f"{folder}/{names[0]}" if one else f"{folder}/: {', '.join(names)}"
        it, is_ = ("it", "it is") if one else ("them", "they are")
        if options.force:
            draft.warnings.append(
                f"{which}: dropped (--force), though nothing in the wheel links {it}: {is_} loaded at run "
                f"time (dlopen), maybe from a path the package's code builds; the NVIDIA wheel that ships "
                f"{it} is required in {'its' if one else 'their'} place, and the manifest lists {it} as "
                "loaded on request"
            )
        else:
            draft.left_alone.append(
                f"{which}: kept: nothing in the wheel links {it}, so {is_} loaded at run time (dlopen), "
                f"maybe from a path the package's code builds, which repair cannot redirect (--force drops "
                f"{it})"
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
    environment: InstalledProviders | None
    floors: Mapping[str, SymbolFloor]  # distribution -> the oldest release exporting what the wheel imports
    # What NVIDIA's releases bring in, read once, under the environment the wheel's markers are
    # evaluated in (``brought.environment``).
    brought: ReleaseRequirements
    # NVIDIA distributions only an extra brings in, through requirements the catalog does not know
    # (``plan_repair``'s ``brought_by_extras``), by name.
    brought_by_extras: Mapping[str, ProviderRelease] = field(default_factory=dict)
    wheel_version: str = ""  # the repaired wheel's own version


def _wheel_pin(distribution: str, existing: Sequence[WheelRequirement]) -> tuple[str, bool] | None:
    """The version the wheel's own requirement on ``distribution`` names: an ``==`` pin (True), else
    the lower bound of its range (False). Requirements always installed speak before extra-gated ones."""
    mine = sorted(
        (w for w in existing if w.name == distribution and w.scope is not RequirementScope.NEVER),
        key=lambda w: w.scope is not RequirementScope.ALWAYS,
    )
    for wanted in (("==", "==="), (">=", "~=")):
        for requirement in mine:
            for spec in requirement.requirement.specifier:
                if spec.operator in wanted and "*" not in spec.version and _is_version(spec.version):
                    return spec.version, spec.operator in ("==", "===")
    return None


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


# The linked version's source when nothing told it: a floor ``plan_repair``'s ``floors`` may replace.
_FIRST_RELEASE = "first release"
# A copy that matched only by soname names no release: its version is the newest that ships the
# soname, which would pin the range to the last few releases (cukks-cu124's libnvToolsExt.so.1 to
# nvidia-nvtx-cu12 12.8.90, past torch cu124's pin), so the symbols the wheel imports speak first.
_GUESSED_COPY = f"vendored copy ({Confidence.BY_SONAME.value})"
_SYMBOLS = "symbols: "  # begins the source of a floor found from the symbols the wheel imports


def _linked_version(
    name: str,
    need: _Need,
    provider: LibraryProvider,
    context: _Context,
    *,
    existing: Sequence[WheelRequirement],
    warnings: list[str],
) -> tuple[str, str]:
    catalog, platform, environment = context.catalog, context.platform, context.environment
    # An explicit flag wins: the user knows what they linked against.
    flagged = context.options.linked_versions.get(name, ())
    if len(flagged) > 1:
        raise RepairError(
            f"--linked-version gives {name} {len(flagged)} versions ({', '.join(flagged)}), and this "
            "repair links one CUDA major's",
            hint="give one, or repair each major they are releases of at once (--cuda 12,13)",
        )
    if flagged:
        return flagged[0], "--linked-version"
    pinned = _wheel_pin(provider.distribution, existing)
    if pinned and pinned[1]:
        return pinned[0], "the wheel's Requires-Dist"
    installed = environment.installed_version(provider.distribution) if environment else None
    if installed and environment:
        return installed, f"installed ({environment.description})"
    if pinned:
        return pinned[0], "the lower bound of the wheel's Requires-Dist"
    guessed = None
    for copy in need.copies:
        found = copy.identified
        if found and canonicalize_name(found.distribution) == provider.distribution:
            if found.confidence is not Confidence.BY_SONAME:
                return found.version, f"vendored copy ({found.confidence.value})"
            guessed = guessed or found.version
    product = nvidia_product_of(provider.library.soname)
    if product is not None and product.classes_behind_factories:
        own = _released_with(provider, context)
        if own is not None:
            return own, (
                f"the wheel's own version, which {provider.distribution} is released at too "
                f"({product.name}'s API is C++ classes, which the symbols a file imports do not date)"
            )
    floor = context.floors.get(provider.distribution)
    if floor is not None:
        return floor.version, f"{_SYMBOLS}{floor.reason}"
    if guessed is not None:
        warnings.append(
            f"{name}: the vendored copy matches {provider.distribution}'s releases by soname alone; "
            f"assuming the newest that ships it, {guessed}, which may allow fewer releases than the wheel "
            f"loads with: pass --linked-version {name}=VERSION, or repair where the index can be read "
            "(the oldest release exporting what the wheel imports is then the floor)"
        )
        return guessed, _GUESSED_COPY
    first = _first_release_with(catalog, provider, platform)
    warnings.append(
        f"{name}: the linked version of {provider.distribution} is unknown; assuming {first}, the first "
        f"release that ships {provider.library.path}, which may lack symbols the wheel was built "
        f"against: pass --linked-version {name}=VERSION, or repair where the build's NVIDIA wheels are "
        "installed; `slimwheel verify --lowest` proves whether the floor loads"
    )
    return first, _FIRST_RELEASE


def _undated_floor(choices: Sequence[_Choice], linked: str) -> list[str]:
    """A word where the floor of a library whose API is C++ classes behind factory functions was read
    from the symbols the wheel imports, which cannot date the release it was built against."""
    undated = [
        choice
        for choice in choices
        if choice.source.startswith(_SYMBOLS)
        and (product := nvidia_product_of(choice.provider.library.soname)) is not None
        and product.classes_behind_factories
    ]
    product = nvidia_product_of(undated[0].provider.library.soname) if undated else None
    if product is None:
        return []
    sonames = ", ".join(choice.soname for choice in undated)
    return [
        f"{choices[0].provider.distribution}>={linked}: {product.name}'s API is C++ classes a file reaches "
        f"through a few factory functions, so what the wheel imports from {sonames} cannot tell the "
        "release it was built against: this floor, read from those symbols, may be older and lack methods "
        f"of the classes it calls; pass --linked-version {undated[0].name}=VERSION, the {product.name} "
        "release the package was built against"
    ]


def _released_with(provider: LibraryProvider, context: _Context) -> str | None:
    """The wheel's own version where ``provider``'s distribution has a release of that version shipping
    the library on the target: NVIDIA releases its bindings with their libraries, one version for both
    (tensorrt-rtx-cu13-bindings 1.7.1.116 with tensorrt-rtx-cu13-libs 1.7.1.116)."""
    if not _is_version(context.wheel_version):
        return None
    wanted = Version(context.wheel_version)
    for release in context.catalog.releases_of(provider.distribution):
        wheel = release.wheel_for(context.platform) if release.parsed_version == wanted else None
        if wheel and any(library.path == provider.library.path for library in wheel.libraries):
            return release.version
    return None


def _specifier(
    choices: Sequence[_Choice], linked: str, context: _Context, *, warnings: list[str] | None = None
) -> tuple[list[str], str]:
    """The range for one distribution: from the linked version up to the first release that moves,
    renames or drops *any* of the libraries it stands for, so the range holds for each of them; a
    release that dropped one for a while is left out with ``!=`` (cutensor-cu12 2.8.0 dropped
    ``libcutensorMg.so.2``, 2.8.1 restored it). ``warnings``: where to say that the floor, read from
    symbols, cannot date a library whose API is C++ classes."""
    if warnings is not None:
        warnings.extend(_undated_floor(choices, linked))
    policy = context.options.policy
    if policy is VersionPolicy.EXACT:
        return [f"=={linked}"], "exact policy"
    if policy is VersionPolicy.MINIMUM:
        return [f">={linked}"], "minimum policy"
    upper: tuple[Version, str, str] | None = None
    skipped: dict[str, str] = {}
    for choice in choices:
        provider = choice.provider
        safe = context.catalog.safe_range(
            provider.distribution, linked, provider.library.name, platform=context.platform
        )
        if safe is None or safe.upper is None:
            continue
        for version, what in safe.skipped:
            skipped.setdefault(version, what)
        reason = safe.upper_reason
        if len(choices) > 1:
            reason = f"{reason} ({provider.library.filename})" if "ships" not in reason else reason
        if upper is None or Version(safe.upper) < upper[0]:
            upper = (Version(safe.upper), safe.upper, reason)
    if upper is None:
        return [f">={linked}"], "no release at or above the linked version is known"
    gaps = sorted((v for v in skipped if Version(v) < upper[0]), key=Version)
    left_out = left_out_reason((version, skipped[version]) for version in gaps)
    reason = f"{upper[2]}; {left_out}" if left_out else upper[2]
    return list(range_clauses(linked, upper[1], gaps)), reason


def _marker(platform: Platform) -> str:
    machine = {"amd64": "AMD64"}.get(platform.arch, platform.arch)
    return f'sys_platform == "linux" and platform_machine == "{machine}"'


def _conflicts(
    catalog: Catalog, roots: Sequence[tuple[str, Requirement]], brought: ReleaseRequirements
) -> tuple[list[str], dict[str, tuple[Release, ...]]]:
    """The distributions no release of which satisfies every requirement in force once the newest
    consistent set is picked: the wheel's own, the ones repair adds, and NVIDIA's transitive ones,
    on the target ``brought`` reads for; and the releases of each that can be installed."""
    graph = expand_requirements(catalog, roots, brought.environment, brought=brought)
    selection = graph.select("newest")
    problems = []
    for name in selection.conflicts:
        listed = "; ".join(
            f"{edge.required_by} wants {name}{edge.requirement.specifier or ' (any)'}"
            for edge in selection.constraints[name]
        )
        problems.append(f"no release of {name} satisfies every requirement: {listed}")
    return problems, graph.reachable()


def _conflicts_per_install(
    catalog: Catalog,
    existing: Sequence[WheelRequirement],
    own: str,
    added: Sequence[tuple[str, Requirement]],
    brought: ReleaseRequirements,
) -> tuple[list[str], dict[str, set[str]]]:
    """``_conflicts`` for each install the wheel allows: without extras, and with each one of its
    extras (two extras at once, such as nvmath-python's ``cu12`` and ``cu13``, may exclude each other
    by design). ``added``: the requirements repair adds, in force in every install. Also, per NVIDIA
    distribution the wheel's requirements bring in, the versions any of those installs may hold."""
    extras = sorted({extra for w in existing if w.scope is RequirementScope.EXTRA for extra in w.extras})
    problems: list[str] = []
    installable: dict[str, set[str]] = {}
    for extra in [None, *extras]:
        lines = installed_with(existing, own, () if extra is None else (extra,))
        roots = [*(("the wheel", w.requirement) for w in lines), *added]
        found, reachable = _conflicts(catalog, roots, brought)
        for problem in found:
            if not any(problem in known for known in problems):  # the same, or with another extra
                problems.append(problem if extra is None else f"with the extra {extra!r}: {problem}")
        for name, releases in reachable.items():
            installable.setdefault(name, set()).update(release.version for release in releases)
    return problems, installable


def _search_path(
    elf: ElfReport, folders: Sequence[str], wheel: _WheelFolders, *, use_runpath: bool
) -> tuple[tuple[str, ...] | None, str]:
    """The file's new RPATH/RUNPATH, or None to leave its dynamic section as it is; and why, where the
    entries alone do not say (a DT_RUNPATH made a DT_RPATH).

    Only files that need an NVIDIA library from a wheel get one (``folders``); every other file keeps
    its entries byte for byte, DT_RUNPATH included. Entries are read with glibc's rules
    (``slimwheel.ldso``), in this order:
    - the file's own ``$ORIGIN`` entries into this wheel, except folders the drops emptied
      (``solver.libs``), and those into other packages (``$ORIGIN/../torch/lib``) or above
      site-packages, as written;
    - the providers' folders, so the chosen provider's copy is found first;
    - the entries it had into folders NVIDIA's wheels install into: a file may ``dlopen``
      libraries by soname through them (jax's plugins), which searches its DT_RPATH. Entries into
      the ``nvidia`` namespace that neither a known NVIDIA wheel nor this wheel installs into go.
    Empty, relative and absolute entries go: nothing outside the install tree is searched.
    """
    if not folders:
        return None, ""
    installed = elf.installed_path or elf.path
    here = posixpath.dirname(installed)
    current = elf.runpath or elf.rpath
    own: list[str] = []
    nvidia: list[str] = []
    # The entries kept, in their order: what glibc searches now, less what can only ever miss.
    searched: list[str] = []
    host_dropped = False  # an empty, relative or absolute entry goes: what the host holds stops counting
    for entry in current:
        kind, target = expand_entry(entry, here)
        if kind in (EntryKind.OUTSIDE, EntryKind.UNSIMULATED):
            own.append(entry)  # above site-packages (a conda or system layout), $LIB: kept as written
            searched.append(entry)
            continue
        if kind is not EntryKind.FOLDER:
            host_dropped = True
            continue
        top = target.split("/", 1)[0]
        normal = "$ORIGIN" if target == here else rpath_entry(installed, target)
        if target in wheel.nvidia_folders:
            nvidia.append(normal)
        elif top == "nvidia" and target not in wheel.library_dirs:
            # No NVIDIA wheel installs there (a stale guess): it could only ever miss. The wheel's own
            # folders in that namespace stay (nvidia-dali's nvidia/dali, through $ORIGIN).
            continue
        elif not (top in wheel.top_levels and target not in wheel.library_dirs):
            own.append(normal)
        else:
            continue  # a folder of the wheel's that holds no library once repaired: it can only miss
        searched.append(normal)
    wanted = tuple(dict.fromkeys([*own, *(rpath_entry(installed, f) for f in folders), *nvidia]))
    # The tag alone is no reason to edit: a DT_RUNPATH that names the right folders serves the file's
    # own DT_NEEDED as DT_RPATH would (lmdeploy 0.18's 347 MB _turbomind lists its NVIDIA folders in a
    # RUNPATH; rewriting it as an RPATH would change what LD_LIBRARY_PATH may override, not what is
    # found). Unless the file needs a library that loads another by soname (NVRTC its builtins), which
    # only DT_RPATH serves. ``use_runpath`` picks the tag of the search paths repair writes.
    loads = sorted({need.soname for need in elf.needed if need.soname in LOADS_BY_SONAME})
    retag = bool(elf.runpath) and bool(loads) and not use_runpath
    # Entries that can only miss (a folder searched twice, a stale guess into the nvidia namespace, a
    # folder the drop emptied) are no reason to edit either: libcuopt_routing_cu12 26.10's 311 MiB
    # library lists its own folder three ways and nvidia/cudss/lib, where no cuDSS wheel installs.
    kept = list(dict.fromkeys(searched))
    unchanged = not retag and (
        wanted == current or (not host_dropped and _only_reordered(kept, wanted, here, wheel))
    )
    if unchanged:
        return None, ""
    why = (
        f"was a RUNPATH: {', '.join(loads)} loads another library by soname, which only a DT_RPATH serves"
        if retag
        else ""
    )
    return wanted, why


def _without_cwd_entries(elf: ElfReport) -> tuple[str, ...] | None:
    """The search path of a file that needs nothing from NVIDIA's wheels, less the entries glibc
    resolves against the current directory (empty or relative: what check calls errors, and what no
    install can count on), the rest as written and in order; None when it has none of them, or has
    both a DT_RPATH and a DT_RUNPATH (glibc reads only the RUNPATH then; left as it is). cucim-cu13
    26.10's ``libcucim.so.26`` has RUNPATH ``:::::::``, which goes; its extension module's
    ``$ORIGIN:/__w/cucim/cucim/install/lib:`` keeps ``$ORIGIN`` and the build folder (a warning)."""
    if elf.rpath and elf.runpath:
        return None
    current = elf.runpath or elf.rpath
    kept = tuple(
        entry for entry in current if expand_entry(entry, "")[0] not in (EntryKind.EMPTY, EntryKind.RELATIVE)
    )
    return None if kept == tuple(current) else kept


def _only_reordered(current: Sequence[str], wanted: Sequence[str], here: str, wheel: _WheelFolders) -> bool:
    """Whether ``wanted`` names the same folders as ``current`` in an order that repair has no
    reason to impose: two folders swap only where neither can hold a file the other holds (PyTorch
    2.0 lists its NVIDIA folders before ``$ORIGIN``; rewriting that order would edit 600 MB for
    nothing), or where ``current`` already searches an NVIDIA wheel's folder first, which is what
    repair's order is for (libcuopt_routing_cu12 lists its NVIDIA folders before libcuopt_client's).
    The swap is judged for every name the folders hold, not only the file's DT_NEEDED: libraries it
    loads search its DT_RPATH too."""
    before = [expand_entry(entry, here) for entry in current]
    after = [expand_entry(entry, here) for entry in wanted]
    if len(set(before)) != len(before) or set(before) != set(after):
        return False
    position = {target: index for index, target in enumerate(after)}
    for first, earlier in enumerate(before):
        for later in before[first + 1 :]:
            if position[later] < position[earlier] and not wheel.may_swap(earlier, later):
                return False
    return True


@dataclass(frozen=True)
class _WheelFolders:
    """What ``_search_path`` judges an entry by."""

    # Folders of the wheel that still hold an ELF file after the drop, and the folders above them: an
    # entry into another folder of the wheel's own goes (``solver.libs``, emptied by the drop, or a
    # build's stale guess), but one above its files may hold another distribution's (openmm-cuda-13's
    # plugins have ``$ORIGIN/..``, ``OpenMM.libs/lib``, where openmm installs libOpenMM.so).
    library_dirs: frozenset[str]
    top_levels: frozenset[str]  # the wheel's own top-level names (packages, <pkg>.libs)
    nvidia_folders: frozenset[str]  # every folder an NVIDIA wheel in the catalog ships libraries in
    # The file names each of those folders holds: the wheel's own after the drop, the catalog's.
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def may_share(self, one: tuple[EntryKind, str], other: tuple[EntryKind, str]) -> bool:
        """Whether the folders of two expanded entries may hold a file of the same name: a folder
        that is neither the wheel's nor an NVIDIA wheel's (another package's, outside site-packages)
        may hold anything."""
        first, second = (self._held(kind, target) for kind, target in (one, other))
        return first is None or second is None or not first.isdisjoint(second)

    def may_swap(self, earlier: tuple[EntryKind, str], later: tuple[EntryKind, str]) -> bool:
        """Whether repair may leave ``earlier`` searched before ``later`` where it would write the
        other order: no name the two may share, or ``earlier`` is an NVIDIA wheel's folder and
        ``later`` is not, so what both might hold still comes from NVIDIA's wheel."""
        nvidia_first = self._nvidia(earlier) and not self._nvidia(later)
        return nvidia_first or not self.may_share(earlier, later)

    def _nvidia(self, entry: tuple[EntryKind, str]) -> bool:
        kind, target = entry
        return kind is EntryKind.FOLDER and target in self.nvidia_folders

    def _held(self, kind: EntryKind, target: str) -> frozenset[str] | None:
        return self.names.get(target) if kind is EntryKind.FOLDER else None


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
    roots: list[tuple[str, Requirement]] = field(
        default_factory=list
    )  # the ones repair adds, checked per install
    made_hard: list[str] = field(default_factory=list)
    narrowed: list[str] = field(default_factory=list)
    kept_optional: list[str] = field(default_factory=list)
    kept_copies: set[str] = field(default_factory=set)  # vendored copies kept on purpose
    on_request: set[str] = field(default_factory=set)  # copies dropped that nothing links (--force)
    unread_providers: list[str] = field(default_factory=list)  # see RepairPlan.unread_providers
    assumed: list[AssumedFloor] = field(default_factory=list)  # see RepairPlan.assumed_floors
    reached: list[RequirementReach] = field(default_factory=list)  # see RepairPlan.reached


def _decide_drops(
    report: WheelReport, options: RepairOptions, named_by_code: Mapping[str, str], draft: _Draft
) -> None:
    # A copy whose file name the package's code names is likely loaded by path.
    by_path = {
        copy.path: named_by_code[name]
        for copy in report.vendored
        if (name := posixpath.basename(copy.path)) in named_by_code
    }
    for copy in report.vendored:
        if not options.wants(copy.original_soname or copy.name):
            draft.kept_copies.add(copy.path)
            continue
        if copy.path in by_path and not options.force:
            draft.kept_copies.add(copy.path)
            draft.left_alone.append(
                f"{copy.path}: {by_path[copy.path]} names it, so Python code may load it by path "
                "(kept; --force drops it)"
            )
            continue
        draft.drop.add(copy.path)
    for finding in report.findings:
        if finding.kind is FindingKind.BUNDLED_DRIVER:
            # A driver library works only with the kernel module of its own version: a copy serves no
            # host but its builder's (auditwheel grafts libcuda.so.1 where not told --exclude).
            name = posixpath.basename(finding.path)
            host = driver_soname(name) or name
            if not options.wants(host):
                draft.left_alone.append(f"{finding.path}: {finding.message} (kept: --only/--exclude)")
                continue
            if name in named_by_code and not options.force:
                draft.left_alone.append(
                    f"{finding.path}: {finding.message}; {named_by_code[name]} names it, so Python code "
                    "may load it by path (kept; --force drops it)"
                )
                continue
            draft.drop.add(finding.path)
            draft.warnings.append(
                f"{finding.path}: a copy of the NVIDIA driver's library, dropped: the host's driver "
                f"provides {host}, of the version its kernel module needs (build with `auditwheel repair "
                f"--exclude {host}` to leave it out)"
            )
        elif finding.kind is FindingKind.STATIC_NVIDIA and finding.severity is Severity.WARNING:
            draft.left_alone.append(f"{finding.path}: {finding.message}")


@dataclass(frozen=True)
class _Choice:
    """The NVIDIA wheel chosen to serve one soname, and the version the wheel was linked against."""

    soname: str
    name: str
    need: _Need
    provider: LibraryProvider
    linked: str
    source: str


def _choose(
    soname: str, need: _Need, context: _Context, existing: Sequence[WheelRequirement], draft: _Draft
) -> _Choice | None:
    name = soname_stem(soname)
    provider = _provider(context.catalog, soname, context.major, context.platform)
    if provider is None:
        major = "" if context.major is None else f"CUDA {context.major} on "
        draft.left_alone.append(f"{soname}: no NVIDIA wheel provides it for {major}{context.platform}")
        return None
    linked, source = _linked_version(
        name, need, provider, context, existing=existing, warnings=draft.warnings
    )
    if not _is_version(linked):
        raise RepairError(f"{name}: {linked!r} is not a version", hint="e.g. --linked-version cudss=1.0.0.35")
    if source in (_FIRST_RELEASE, _GUESSED_COPY):
        draft.assumed.append(
            AssumedFloor(
                name,
                provider.distribution,
                soname,
                provider.library.path,
                tuple(sorted(need.needed_by)),
                tuple(sorted(need.needed_as | {soname})),
                provider.release.cuda_major,
            )
        )
    return _Choice(soname, name, need, provider, linked, source)


def _plan_distribution(
    distribution: str,
    choices: Sequence[_Choice],
    context: _Context,
    existing: Sequence[WheelRequirement],
    draft: _Draft,
    *,
    wants: Mapping[str, set[str]],
) -> None:
    """One Requires-Dist per distribution, however many of its libraries the wheel needs. ``wants``:
    per installed file, the distributions of the NVIDIA libraries it needs."""
    linked = max((c.linked for c in choices), key=Version)
    names = ", ".join(c.name for c in choices)
    mine = [w for w in existing if w.name == distribution]
    always = [w for w in mine if w.scope is RequirementScope.ALWAYS]
    gated = [w for w in mine if w.scope is RequirementScope.EXTRA]
    through = [] if always else _bringing(distribution, existing, context)
    # An extra brings it in (ONNX Runtime's ``nvidia-cudnn-cu13~=9.0; extra == "cudnn"``, and cuBLAS
    # through it) and no copy of it is dropped: a plain install loads what it did before, so the
    # author's choice stands; made hard only where a dropped copy served a plain install.
    dropped = any(choice.need.copies for choice in choices)
    behind_extra = (
        [] if always or through or dropped else gated or _optional_through(choices, existing, context, wants)
    )
    optional = bool(behind_extra)
    narrowing = [] if through else _narrowing(always, choices, context, draft)
    if narrowing:
        always = []
    if through:  # a metapackage the wheel requires brings it (cuquantum-cu12 -> custatevec-cu12)
        draft.kept.extend(w.text for w in through if w.text not in draft.kept)
        requirement_text = through[0].text
    elif always:
        for wheel_requirement in always:
            if not _admits(wheel_requirement.requirement.specifier, choices, linked, context):
                raise RepairError(
                    f"the wheel requires {wheel_requirement.text} but was linked against {distribution} "
                    f"{linked}",
                    hint="fix the requirement or pass --linked-version",
                )
        draft.kept.extend(w.text for w in always if w.text not in draft.kept)
        requirement_text = always[0].text
    elif optional:
        requirement_text = behind_extra[0].text
        extras = sorted({extra for w in behind_extra for extra in w.extras})
        listed = " or ".join(repr(extra) for extra in extras)
        how = "" if gated else f" (through {', '.join(w.text for w in behind_extra)})"
        draft.kept_optional.append(
            f"{distribution}: stays behind the extra {listed}{how}, as no copy of it is dropped; the files "
            f"that need {', '.join(c.soname for c in choices)} find it once the extra is installed"
        )
    else:
        parts, reason = _specifier(choices, linked, context, warnings=draft.warnings)
        # The author's range still holds once the requirement is hard, or narrowed.
        for wheel_requirement in (*gated, *narrowing):
            parts = merge_specifiers(parts, wheel_requirement.requirement.specifier)
        requirement_text = f"{distribution}{','.join(parts)}"
        if not _admits(SpecifierSet(",".join(parts)), choices, linked, context):
            raise RepairError(
                f"the wheel asks for {', '.join(w.text for w in (*gated, *narrowing))} but was linked "
                f"against {distribution} {linked}",
                hint="fix the requirement or pass --linked-version",
            )
        line = f"{requirement_text}; {_marker(context.platform)}"
        behind = _extras_for(distribution, choices, context, draft, dropped=dropped)
        extra = behind[0] if behind else ""  # the one verify installs it with
        if behind:
            either = " or ".join(f'extra == "{name}"' for name in behind)
            # The platform marker is a chain of "and" too; "or" binds looser than "and".
            line = f"{line} and ({either})" if len(behind) > 1 else f"{line} and {either}"
            optional = True
        sources = ", ".join(dict.fromkeys(c.source for c in choices))
        draft.added.append(AddedRequirement(names, distribution, line, linked, sources, reason, extra))
        draft.roots.append(("the repaired wheel", Requirement(requirement_text)))
        if extra:  # the manifest says which extra installs it (verify installs the wheel with it)
            requirement_text = f'{requirement_text}; extra == "{extra}"'
        elif gated and not narrowing:
            extras = sorted({extra for w in gated for extra in w.extras})
            listed = ", ".join(repr(extra) for extra in extras)
            draft.made_hard.append(
                f"{distribution}: the wheel asked for it only with the extra {listed}, but its files "
                f"always load {', '.join(c.soname for c in choices)}: now always required "
                "(--keep-extras-optional keeps it optional and the vendored copies in)"
            )
    _record_choices(choices, requirement_text, linked, context, draft, optional=optional)


def _narrowing(
    always: Sequence[WheelRequirement], choices: Sequence[_Choice], context: _Context, draft: _Draft
) -> list[WheelRequirement]:
    """``always`` where its range admits a release shipping none of a library the files need
    (:func:`_admitted_without`), said in ``draft.narrowed``; [] otherwise. Such a range is narrowed to
    what repair would require, kept within it: the line added beside it is one pip intersects."""
    lacking = _admitted_without(always, choices, context) if always else None
    if lacking is None:
        return []
    distribution = choices[0].provider.distribution
    version, sonames = lacking
    draft.narrowed.append(
        f"{distribution}: the wheel requires {', '.join(w.text for w in always)}, which admits "
        f"{distribution} {version}, whose wheel ships no {', '.join(sonames)}: narrowed by the "
        "requirement added beside it"
    )
    return list(always)


def _admitted_without(
    always: Sequence[WheelRequirement], choices: Sequence[_Choice], context: _Context
) -> tuple[str, tuple[str, ...]] | None:
    """The oldest release the catalog knows that every one of ``always`` admits and whose wheel for
    the platform ships not every soname of ``choices``, with those it lacks: nvfuser-cu118-torch24
    requires ``nvidia-cuda-cupti-cu11``, which admits 11.7.101, and its files need
    ``libcupti.so.11.8``, which 11.8.87 ships first. None where each admitted release ships them all."""
    sonames = {choice.soname for choice in choices}
    for release in context.catalog.releases_of(choices[0].provider.distribution):
        wheel = release.wheel_for(context.platform)
        if wheel is None or not all(
            w.requirement.specifier.contains(release.version, prereleases=True) for w in always
        ):
            continue
        if lacking := sonames - {library.soname for library in wheel.libraries}:
            return release.version, tuple(sorted(lacking))
    return None


def _is_floor(source: str) -> bool:
    """Whether a linked version's source names only the oldest release that could serve (what the
    wheel imports, or the first release shipping the library), not the release built against."""
    return source == _FIRST_RELEASE or source.startswith(_SYMBOLS)


def _admits(specifier: SpecifierSet, choices: Sequence[_Choice], linked: str, context: _Context) -> bool:
    """Whether a range the wheel asks for allows what it was linked against: the version itself, or,
    where that is a floor (:func:`_is_floor`), a release at or above it that ships each library.
    jammi-ai-native-cu12 0.54 requires ``nvidia-cublas-cu12==12.6.*``; the oldest release exporting
    what it imports is 12.0.1.189, which that range leaves out, and repair refused it."""
    if specifier.contains(linked, prereleases=True):
        return True
    if not all(_is_floor(choice.source) for choice in choices):
        return False
    floor = Version(linked)
    paths = {choice.provider.library.path for choice in choices}
    for release in context.catalog.releases_of(choices[0].provider.distribution):
        if release.parsed_version < floor or not specifier.contains(release.version, prereleases=True):
            continue
        wheel = release.wheel_for(context.platform)
        if wheel is not None and paths <= {library.path for library in wheel.libraries}:
            return True
    return False


def _record_choices(
    choices: Sequence[_Choice],
    requirement_text: str,
    linked: str,
    context: _Context,
    draft: _Draft,
    *,
    optional: bool,
) -> None:
    """Each chosen library's folder on its consumers' search paths, and its line in the manifest."""
    distribution = choices[0].provider.distribution
    for choice in choices:
        folder = choice.provider.library.folder
        for path in choice.need.needed_by:
            folders = draft.folders_for.setdefault(path, [])
            if folder not in folders:
                folders.append(folder)
        draft.libraries.append(
            ManifestLibrary(
                name=choice.name,
                soname=choice.soname,
                distribution=distribution,
                requirement=requirement_text,
                folder=folder,
                needed_by=tuple(sorted(choice.need.needed_by)),
                min_version=linked,
                # A library nothing links is loaded when the package asks (preload leaves it out).
                optional=optional or choice.need.on_request,
            )
        )
        environment = context.environment
        installed = environment is not None and environment.has_file(choice.provider.library.path)
        known = _catalog_needs(context, folder, choice.soname) is not None
        if not installed and not known and distribution not in draft.unread_providers:
            draft.unread_providers.append(distribution)


def _require_what_providers_need(
    draft: _Draft, context: _Context, existing: Sequence[WheelRequirement], own: str
) -> None:
    """A requirement for each NVIDIA library that a provider repair requires needs in turn and that no
    install of the wheel brings in (plain, or with any extra): cutensor-cu13 2.8.1's
    ``libcutensor.so.2`` needs ``libcublasLt.so.13`` and looks for it in ``nvidia/cu13/lib``, but
    cutensor-cu13 requires no nvidia-cublas, so a wheel that required cuTENSOR alone did not import.
    Under the same extra as what needs it (``--optional``); the range starts at the major's first
    release that ships it, as nothing in this wheel links it."""
    # Every install loads the always-required providers; --optional's load with their extra. Those an
    # extra of the author's brings are left as the author gated them.
    extra_of = {r.distribution: r.extra for r in draft.added}
    mine = [
        library for library in draft.libraries if not library.optional or extra_of.get(library.distribution)
    ]
    if not mine:
        return
    _, installable = _conflicts_per_install(context.catalog, existing, own, draft.roots, context.brought)
    listed = _with_transitive(mine, context)
    needed_by = {dependency: library for library in listed for dependency in library.requires}
    direct = {library.soname for library in mine}
    for library in listed:
        parent = needed_by.get(library.name)
        if library.soname in direct or library.distribution in installable or parent is None:
            continue
        provider = _provider(context.catalog, library.soname, context.major, context.platform)
        if provider is None:
            continue
        linked = _first_release_with(context.catalog, provider, context.platform)
        choice = _Choice(
            library.soname, library.name, _Need(library.soname), provider, linked, _FIRST_RELEASE
        )
        parts, reason = _specifier([choice], linked, context)
        extra = extra_of.get(parent.distribution, "")
        text = f"{provider.distribution}{','.join(parts)}"
        line = f"{text}; {_marker(context.platform)}" + (f' and extra == "{extra}"' if extra else "")
        why = f"{parent.distribution} needs {library.soname} and does not require {provider.distribution}"
        draft.added.append(
            AddedRequirement(
                library.name, provider.distribution, line, linked, f"{_FIRST_RELEASE} ({why})", reason, extra
            )
        )
        draft.roots.append(("the repaired wheel", Requirement(text)))
        extra_of[provider.distribution] = extra
        installable[provider.distribution] = set()  # one requirement per distribution


def _note_requested_extra(
    distribution: str,
    choices: Sequence[_Choice],
    extra: str,
    options: RepairOptions,
    draft: _Draft,
    *,
    dropped: bool,
) -> None:
    asked = ", ".join(c.name for c in choices if c.name in options.optional)
    why = f"--optional {asked}" if asked else f"CUDA {options.cuda_major}'s libraries"
    sonames = ", ".join(c.soname for c in choices)
    draft.kept_optional.append(
        f"{distribution}: behind the extra {extra!r} ({why}); the files that need "
        f"{sonames} find it once the extra is installed"
    )
    if dropped:
        how = "with --optional" if asked else "as each CUDA major's libraries go behind an extra"
        draft.warnings.append(
            f"{distribution}: a plain install loaded the vendored copies repair drops; {how}, "
            f"only an install with the extra {extra!r} has {sonames}"
        )


def _extras_for(
    distribution: str, choices: Sequence[_Choice], context: _Context, draft: _Draft, *, dropped: bool
) -> tuple[str, ...]:
    """The extras a requirement repair adds goes behind: ``--optional``'s; else those that bring it
    in already through requirements the catalog does not know, unless a dropped copy served a plain
    install; () for every install."""
    extra = _requested_extra(choices, context.options)
    if extra:
        _note_requested_extra(distribution, choices, extra, context.options, draft, dropped=dropped)
        return (extra,)
    brought = context.brought_by_extras.get(distribution)
    if dropped or brought is None:
        return ()
    _note_brought_by_extra(distribution, choices, brought, draft)
    return brought.extras


def _note_brought_by_extra(
    distribution: str, choices: Sequence[_Choice], brought: ProviderRelease, draft: _Draft
) -> None:
    sonames = ", ".join(c.soname for c in choices)
    listed = " or ".join(repr(extra) for extra in brought.extras)
    draft.kept_optional.append(
        f"{distribution}: required with the extra {listed} only, which brings it in already "
        f"(through {' or '.join(brought.through)}), as no copy of it is dropped; the files that need "
        f"{sonames} find it once the extra is installed"
    )


def _requested_extra(choices: Sequence[_Choice], options: RepairOptions) -> str:
    """The extra ``--optional`` puts a distribution behind: the one named for any of its libraries
    (one Requires-Dist per distribution), "" for none."""
    return next(
        (options.optional[c.name] for c in choices if c.name in options.optional), options.major_extra
    )


def _optional_through(
    choices: Sequence[_Choice],
    existing: Sequence[WheelRequirement],
    context: _Context,
    wants: Mapping[str, set[str]],
) -> list[WheelRequirement]:
    """The wheel's requirements under an extra that bring ``choices``' distribution in through a
    metapackage: by name, as a component the requirement asks for (CuPy 14's
    ``cuda-toolkit[cublas,...]==12.*; extra == "ctk"``: the author's way to install the CUDA libraries
    it otherwise finds on the host); or as a dependency of one (ONNX Runtime's ``nvidia-cudnn-cu13;
    extra == "cudnn"`` brings cuBLAS) where every file that needs it also needs a provider the author
    gates directly: files the author loads only on request. vLLM's extensions need cudart, which its
    extra 'deepstream' happens to bring as a dependency of nvidia-deepstream-videodecode-cu13: they need
    no gated provider, so that extra says nothing about them."""
    distribution = choices[0].provider.distribution
    named = _bringing(distribution, existing, context, extras=True, named_only=True)
    if named:
        return named
    gated = _optional_only(existing)
    files = {path for choice in choices for path in choice.need.needed_by}
    if not all(wants.get(path, set()) & gated for path in files):
        return []
    return _bringing(distribution, existing, context, extras=True)


def _bringing(
    distribution: str,
    existing: Sequence[WheelRequirement],
    context: _Context,
    *,
    extras: bool = False,
    named_only: bool = False,
) -> list[WheelRequirement]:
    """The wheel's unconditional requirements on NVIDIA metapackages that bring ``distribution`` in
    (``cuquantum-cu12``; ``cuda-toolkit[cublas]==12.*`` through the extras it asks for): every
    release of theirs that the requirement allows and the catalog knows requires it. ``extras``: its
    requirements under an extra instead (``nvidia-cudnn-cu13; extra == "cudnn"`` brings cuBLAS).
    ``named_only``: only through the extras a requirement asks of the metapackage (``[cublas]``)."""
    scope = RequirementScope.EXTRA if extras else RequirementScope.ALWAYS
    found = []
    for wheel_requirement in existing:
        requirement = wheel_requirement.requirement
        if wheel_requirement.scope is not scope or wheel_requirement.name == distribution:
            continue
        allowed = _known_releases(context.catalog, requirement)
        asked = (() if named_only else ("",)) + tuple(sorted(requirement.extras))
        if allowed and all(_always_brings(release, asked, distribution, context, {}) for release in allowed):
            found.append(wheel_requirement)
    return found


def _known_releases(catalog: Catalog, requirement: Requirement) -> list[Release]:
    """The releases the catalog knows that ``requirement`` allows, oldest first."""
    return [
        release
        for release in catalog.releases_of(canonicalize_name(requirement.name))
        if requirement.specifier.contains(release.version, prereleases=True)
    ]


def _always_brings(
    release: Release,
    extras: tuple[str, ...],
    distribution: str,
    context: _Context,
    memo: dict[tuple[str, str, tuple[str, ...]], bool],
) -> bool:
    """Whether installing ``release`` with ``extras`` ("": plainly) brings ``distribution`` in, through
    its own requirements or, whichever release of each the catalog knows is chosen, theirs in turn:
    ``cuda-toolkit[cusolver]==12.*`` brings nvidia-nvjitlink-cu12 through nvidia-cusolver-cu12, which
    libcugraph-cu12 26.10's libraries need (repair added a requirement its own already made)."""
    key = (release.distribution, release.version, extras)
    if key in memo:
        return memo[key]
    memo[key] = False  # a cycle brings nothing it did not already
    children = [child for extra in extras for child in context.brought.of(release, extra)]
    answer = any(canonicalize_name(child.name) == distribution for child in children)
    for child in children if not answer else ():
        allowed = _known_releases(context.catalog, child)
        child_extras = ("", *sorted(child.extras))
        if allowed and all(_always_brings(r, child_extras, distribution, context, memo) for r in allowed):
            answer = True
            break
    memo[key] = answer
    return answer


def _catalog_needs(context: _Context, folder: str, soname: str) -> tuple[str, ...] | None:
    """The DT_NEEDED of the official ``folder/soname`` as the catalog learned it (the shipped snapshot
    reads the newest releases' libraries); None when the catalog has not read that file."""
    return context.catalog.needed_by(
        soname, folder=folder, cuda_major=context.major, platform=context.platform
    )


def _provider_needs(context: _Context, folder: str, soname: str) -> tuple[str, ...] | None:
    """What a provider's library needs in turn: read from the copy installed here when there is one
    (the version the wheel is built against), else as the catalog knows it."""
    environment = context.environment
    found = environment.needed_by_file(f"{folder}/{soname}") if environment is not None else None
    return found if found is not None else _catalog_needs(context, folder, soname)


def _with_transitive(libraries: Sequence[ManifestLibrary], context: _Context) -> tuple[ManifestLibrary, ...]:
    """The libraries and the NVIDIA libraries they need in turn (read from the providers installed
    here, else from the catalog), each listed after those it requires."""
    by_soname = {lib.soname: lib for lib in libraries}
    direct = frozenset(by_soname)
    requires: dict[str, list[str]] = {lib.soname: [] for lib in libraries}
    queue = list(libraries)
    while queue:
        library = queue.pop(0)
        needed = _provider_needs(context, library.folder, library.soname)
        for soname in needed or ():
            if is_driver_library(soname) or is_system_library(soname):
                continue
            provider = _provider(context.catalog, soname, context.major, context.platform)
            if provider is None:
                continue
            if soname not in by_soname:
                found = ManifestLibrary(
                    name=soname_stem(soname),
                    soname=soname,
                    distribution=provider.distribution,
                    requirement=provider.distribution,  # required by the provider, not by this wheel
                    folder=provider.library.folder,
                    optional=library.optional,  # as optional as what needs it first
                )
                by_soname[soname] = found
                requires[soname] = []
                queue.append(found)
            elif by_soname[soname].optional and not library.optional and soname not in direct:
                by_soname[soname] = by_soname[soname].replace(optional=False)  # a plain install needs it too
                queue.append(by_soname[soname])  # and what it needs in turn
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
        names = tuple(soname_stem(dependency) for dependency in requires[soname])
        ordered.append(by_soname[soname].replace(requires=names))

    for soname in sorted(by_soname):
        place(soname, ())
    return tuple(ordered)


def _edits(
    report: WheelReport,
    draft: _Draft,
    catalog: Catalog,
    options: RepairOptions,
    installable: Mapping[str, set[str]],
) -> list[ElfEdit]:
    """``installable``: per NVIDIA distribution the wheel's requirements bring in, the versions an
    install may hold. What an NVIDIA folder may hold is judged by those only (torch 2.11 pins
    nvidia-cusparselt-cu13==0.8.0, which installs into nvidia/cu13/lib: other releases put
    libcusparseLt.so.0 in nvidia/cusparselt/lib, and counting them made its RPATH's order look
    meaningful, so 8 of its libraries, 500 MB, were rewritten to reorder it)."""
    installed = {elf.path: elf.installed_path or elf.path for elf in report.elf_files}
    names: dict[str, set[str]] = {}
    for provider in catalog.iter_libraries():
        held = names.setdefault(provider.library.folder, set())
        versions = installable.get(provider.release.distribution)
        if versions is None or provider.release.version in versions:
            held.add(provider.library.soname)
    nvidia_folders = frozenset(names)
    for member, path in installed.items():
        if member not in draft.drop:
            names.setdefault(posixpath.dirname(path), set()).add(posixpath.basename(path))
    for folder in {posixpath.dirname(path) for path in installed.values()}:
        names.setdefault(folder, set())  # emptied by the drop: known to hold nothing
    kept = [path for member, path in installed.items() if member not in draft.drop]
    wheel = _WheelFolders(
        library_dirs=frozenset(folder for path in kept for folder in _folders_above(path)),
        top_levels=frozenset(path.split("/", 1)[0] for path in installed.values() if "/" in path),
        nvidia_folders=nvidia_folders,
        names={folder: frozenset(held) for folder, held in names.items()},
    )
    copies = {copy.path: copy for copy in report.vendored}
    reaching = _reached_words(draft.reached, report.distribution)
    edits = []
    for elf in report.elf_files:
        if elf.path in draft.drop or elf.error:
            continue
        renames = []
        removed = _overlinked(elf, draft.drop, options)
        for needed in elf.needed:
            copy = copies.get(needed.provided_by[0]) if needed.provided_by else None
            if (
                needed.soname not in removed
                and needed.resolution is Resolution.VENDORED
                and copy is not None
                and copy.path in draft.drop
                and needed.soname != copy.original_soname
            ):
                renames.append((needed.soname, copy.original_soname))
            elif (
                needed.provided_by
                and needed.provided_by[0] in draft.drop
                and (host := driver_soname(needed.soname)) is not None
                and needed.soname != host
            ):
                # A dropped copy of the driver: the host's driver answers its soname.
                renames.append((needed.soname, host))
        folders = draft.folders_for.get(elf.installed_path or elf.path, [])
        outside = (elf.installed_path or "").startswith("../")
        if folders and outside:
            draft.left_alone.append(
                f"{elf.path}: installs outside site-packages, in the environment's "
                f"{posixpath.dirname(elf.installed_path).replace('../../..', '<prefix>', 1)}, where no "
                "$ORIGIN path reaches NVIDIA's wheels for every Python; its search path is left as it is"
            )
            folders = []
        search, why = _search_path(elf, folders, wheel, use_runpath=options.use_runpath)
        if search is not None and (reached := reaching.get(elf.path)):
            why = "; ".join(filter(None, [why, f"also reaches {reached}"]))
        runpath = options.use_runpath
        if search is None and not (folders or outside) and (cleaned := _without_cwd_entries(elf)) is not None:
            search, runpath = cleaned, bool(elf.runpath)
            why = "empty or relative entries dropped: glibc resolves them against the current directory"
        unused = tuple(soname for soname in removed if options.drop_unused and soname in elf.unused_needed)
        edit = ElfEdit(elf.path, tuple(renames), search, runpath, why, removed, unused)
        if edit.changes_anything:
            edits.append(edit)
    return edits


def _reached_words(reached: Sequence[RequirementReach], own: str) -> dict[str, str]:
    """Per file, the requirements' libraries its new RPATH reaches: "librmm.so in librmm-cu12's
    librmm/lib64, libc10.so, libtorch.so in torch's torch/lib"; those of the wheel ``own`` (its
    distribution's name) "in this wheel's libucx/lib"."""
    grouped: dict[str, dict[tuple[str, tuple[str, ...]], list[str]]] = {}
    for found in reached:
        where = grouped.setdefault(found.path, {})
        where.setdefault((found.distribution, found.folders), []).append(found.soname)
    return {
        path: ", ".join(
            f"{', '.join(sorted(sonames))} in {'this wheel' if distribution == own else distribution}'s "
            f"{' or '.join(folders)}"
            for (distribution, folders), sonames in where.items()
        )
        for path, where in grouped.items()
    }


def _folders_above(path: str) -> Iterator[str]:
    """``a/b/c.so`` -> ``a/b``, ``a``; ``c.so`` -> ``.``."""
    folder = posixpath.dirname(path)
    if not folder:
        yield "."
    while folder:
        yield folder
        folder = posixpath.dirname(folder)


def _binding_hints(draft: _Draft, report: WheelReport) -> list[str]:
    """A word on each requirement added for every install whose library only extension modules named
    for it need (CuPy's ``cupy_backends/cuda/libs/nccl`` and ``cutensor``): bindings that a package
    often imports only on request, where ``--optional`` keeps the wheel out of a plain install.
    Repair cannot tell from the files whether it does, so it says so and changes nothing."""
    modules = {elf.installed_path for elf in report.elf_files if elf.extension_module}
    libraries = {library.name: library for library in draft.libraries}
    hints = []
    for added in draft.added:
        if added.extra:
            continue
        for name in added.library.split(", "):
            library = libraries.get(name)
            if library is None or not library.needed_by:
                continue
            if all(path in modules and _module_name(path) == name for path in library.needed_by):
                files = ", ".join(library.needed_by)
                hints.append(
                    f"{added.distribution} is now required by every install, though only {files} "
                    f"(named for it) need{'s' if len(library.needed_by) == 1 else ''} {library.soname}: "
                    f"if the package imports that only on request, as CuPy does its NCCL and cuTENSOR "
                    f"bindings, --optional {name} puts {added.distribution} behind an extra"
                )
    return hints


def _unused_hints(
    draft: _Draft, report: WheelReport, options: RepairOptions, floors: Mapping[str, SymbolFloor]
) -> list[str]:
    """A word on each requirement added only because files need an NVIDIA library they import no
    symbol from, where ``--drop-unused-needed`` was not given: that flag, or relinking with
    ``-Wl,--as-needed``, leaves the requirement out. Told per file by the analysis
    (``ElfReport.unused_needed``), or for the whole wheel by a symbol floor read from nothing (none of
    what the files import is what the library's releases export)."""
    if options.drop_unused:
        return []
    copies = {copy.path: copy for copy in report.vendored}
    unused: set[tuple[str, str]] = set()  # (installed path, the NVIDIA soname it needs for nothing)
    for elf in report.elf_files:
        for needed in elf.needed:
            if needed.soname not in elf.unused_needed:
                continue
            copy = copies.get(needed.provided_by[0]) if needed.provided_by else None
            soname = (
                copy.original_soname if needed.resolution is Resolution.VENDORED and copy else needed.soname
            )
            unused.add((elf.installed_path or elf.path, soname))
    libraries = {library.name: library for library in draft.libraries}
    hints = []
    for added in draft.added:
        served = [libraries.get(name) for name in added.library.split(", ")]
        known = [library for library in served if library is not None and library.needed_by]
        if added.extra or not known or len(known) != len(served):
            continue
        floor = floors.get(added.distribution)
        read_from_nothing = floor is not None and floor.symbols == 0
        if read_from_nothing or all((path, lib.soname) in unused for lib in known for path in lib.needed_by):
            files = sorted({path for library in known for path in library.needed_by})
            sonames = [library.soname for library in known]
            one_file = len(files) == 1
            hints.append(
                f"{added.distribution} is required only because {some_of(files, _FILES_NAMED, noun='files')} "
                f"need{'s' if one_file else ''} {', '.join(sonames)} and import{'s' if one_file else ''} "
                f"no symbol from {'it' if len(sonames) == 1 else 'them'}: --drop-unused-needed leaves it "
                "out (as relinking with -Wl,--as-needed would)"
            )
    return hints


# How many files a warning names before it counts the rest: cuvs-cu12 26.10's 28 Cython modules each
# link five NVIDIA libraries they import nothing from, which made lines of 1,500 characters.
_FILES_NAMED = 3


def _module_name(path: str) -> str:
    """The module an extension module's file is (``nccl`` for ``libs/nccl.cpython-312-x86_64-linux-
    gnu.so``, and for ``_nccl.abi3.so``)."""
    return posixpath.basename(path).split(".", 1)[0].lstrip("_")


def plan_repair(
    report: WheelReport,
    catalog: Catalog,
    *,
    requires_dist: Sequence[str],
    dist_info: str,
    named_by_code: Mapping[str, str] | None = None,
    options: RepairOptions | None = None,
    environment: InstalledProviders | None = None,
    embed: EmbedRequest | None = None,
    floors: Mapping[str, SymbolFloor] | None = None,
    classifiers: Sequence[str] = (),
    reach: Sequence[RequirementReach] = (),
    brought_by_extras: Sequence[ProviderRelease] = (),
) -> RepairPlan:
    """The repair of the wheel ``report`` describes. Pure when ``environment`` is plain data
    (:class:`~slimwheel.repair.environment.EnvironmentFacts`, from ``BuildEnvironment.snapshot``).
    ``named_by_code``: the file names of vendored copies that the package's code names, each with a
    file that does (``slimwheel.repair.pipeline.copies_named_by_code``).
    ``embed`` (``--embed-loader``) also copies the run-time loader into packages, with a call.
    ``floors``: per distribution, the oldest release exporting what the wheel imports from it, the
    floor for a library whose linked version nothing else tells (see ``RepairPlan.assumed_floors``).
    ``classifiers``: the wheel's trove classifiers, whose ``Environment :: GPU :: NVIDIA CUDA :: 11.2``
    tell the CUDA major where the libraries it needs do not (cuDNN 8 has CUDA 11 and 12 wheels).
    ``reach``: libraries of the wheel's other requirements, or its own, that files need off their
    search path (``CheckReport.reachable``, of the wheel as it is): their folders join those files'
    RPATH. ``brought_by_extras``: NVIDIA releases that only an extra of the wheel brings in
    (``CheckReport.optional_providers``); a requirement repair adds on one that the extra brings through
    requirements the catalog does not know (``ProviderRelease.through``: rapids-singlecell-cu13's
    ``cupy-cuda13x[ctk]; extra == "rapids"``) goes behind that extra, where no dropped copy served a
    plain install: the author installs those libraries with the extra only."""
    options = options or RepairOptions()
    if len(options.cuda_majors) > 1:  # planned here again per major, with cuda_majors ()
        planning = partial(
            plan_repair,
            catalog=catalog,
            requires_dist=requires_dist,
            dist_info=dist_info,
            named_by_code=named_by_code,
            environment=environment,
            floors=floors,
            classifiers=classifiers,
            reach=reach,
            brought_by_extras=brought_by_extras,
        )
        return _plan_several_majors(
            report, catalog, options, planning, requires_dist=requires_dist, embed=embed
        )
    platform = _wheel_platform(report)
    draft = _Draft()
    _decide_drops(report, options, named_by_code or {}, draft)
    markers = marker_environment(platform, _wheel_python(report))
    existing = read_requirements(requires_dist, markers)
    needs = {s: n for s, n in _needs(report, draft.drop, options).items() if options.wants(s)}
    required = _majors_required(catalog, existing)
    claimed = _majors_claimed(classifiers)
    linked = _majors_linked(report, draft.drop)
    other_majors: list[str] = []
    major = _choose_major(
        needs,
        catalog,
        platform,
        options,
        required=required,
        claimed=claimed,
        linked=linked,
        warnings=draft.warnings,
        named=cuda_major_named(report.distribution),
        other_majors=other_majors,
    )
    options = _leave_other_majors(other_majors, needs, major, options, draft)
    optional = _optional_only(existing) if options.keep_extras_optional else frozenset()
    _keep_copies(report, catalog, platform=platform, major=major, optional=optional, draft=draft)
    _keep_unlinked_copies(report, catalog, platform=platform, major=major, options=options, draft=draft)
    needs = _needs(report, draft.drop, options, draft.on_request)
    needs = {s: n for s, n in needs.items() if options.wants(s)}
    brought = ReleaseRequirements(markers)
    context = _Context(
        catalog,
        platform,
        major,
        options,
        environment,
        floors or {},
        brought,
        {provider.distribution: provider for provider in brought_by_extras if provider.through},
        report.version,
    )
    by_distribution: dict[str, list[_Choice]] = {}
    for soname, need in sorted(needs.items()):
        if is_driver_library(soname):
            continue
        choice = _choose(soname, need, context, existing, draft)
        if choice is None:
            continue
        by_distribution.setdefault(choice.provider.distribution, []).append(choice)
    wants: dict[str, set[str]] = {}
    for distribution, choices in by_distribution.items():
        for choice in choices:
            for path in choice.need.needed_by:
                wants.setdefault(path, set()).add(distribution)
    for distribution, choices in by_distribution.items():
        _plan_distribution(distribution, choices, context, existing, draft, wants=wants)
    _require_what_providers_need(draft, context, existing, report.distribution)
    draft.warnings += _optional_unused(options, draft)
    draft.warnings += _binding_hints(draft, report)
    draft.warnings += _unused_hints(draft, report, options, context.floors)
    problems, installable = _conflicts_per_install(
        catalog, existing, report.distribution, draft.roots, brought
    )
    if problems and not options.force:
        raise RepairError(
            problems[0], hint="change the conflicting requirement, or --force to write it anyway"
        )
    draft.warnings += problems
    staying = {copy.path for copy in report.vendored} - draft.drop
    manifest = Manifest(
        cuda_major=major,
        libraries=_with_transitive(draft.libraries, context),
        generator=f"slimwheel {__version__}",
        kept_copies=tuple(sorted(draft.kept_copies)),
        unreplaced_copies=tuple(sorted(staying - draft.kept_copies)),
        left_to_host=tuple(sorted(options.exclude)),
    )
    _reach_requirements(reach, report, options, draft)
    edits = tuple(_edits(report, draft, catalog, options, installable))  # adds to left_alone
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
        edits=edits,
        requirements=tuple(draft.added),
        kept_requirements=tuple(draft.kept),
        made_hard=tuple(draft.made_hard),
        narrowed=tuple(draft.narrowed),
        kept_optional=tuple(draft.kept_optional),
        manifest=manifest,
        manifest_path=f"{dist_info}/{MANIFEST_NAME}",
        warnings=tuple(draft.warnings),
        unread_providers=tuple(draft.unread_providers),
        assumed_floors=tuple(draft.assumed),
        left_alone=tuple(draft.left_alone),
        embedded=embedded,
        kept_copies=tuple(sorted(draft.kept_copies)),
        left_to_host=tuple(sorted(options.exclude)),
        reached=tuple(draft.reached),
    )


def _optional_unused(options: RepairOptions, draft: _Draft) -> list[str]:
    """A word for each ``--optional`` library no requirement the plan adds went behind an extra for."""
    gated = {name for r in draft.added if r.extra for name in r.library.split(", ")}
    return [
        f"--optional {name}: repair adds no requirement for it (the wheel needs no such library, "
        "or already requires its NVIDIA wheel, or an extra of its own brings it)"
        for name in sorted(set(options.optional) - gated)
    ]


def _reach_requirements(
    reach: Sequence[RequirementReach], report: WheelReport, options: RepairOptions, draft: _Draft
) -> None:
    """Each file's RPATH also reaches the folders where the wheel's other requirements, or the wheel
    itself, install the libraries it needs and misses (after the NVIDIA wheels' folders): what check's
    advice says to add. Not for a file repair drops, nor for libraries --exclude leaves to the host."""
    kept = {elf.path for elf in report.elf_files if elf.path not in draft.drop and elf.error is None}
    for found in reach:
        if found.path not in kept or not options.wants(found.soname):
            continue
        folders = draft.folders_for.setdefault(found.installed_path, [])
        folders += [folder for folder in found.folders if folder not in folders]
        draft.reached.append(found)


# A wheel built for several CUDA majors, repaired for them all at once (--cuda 12,13).


def _plan_several_majors(
    report: WheelReport,
    catalog: Catalog,
    options: RepairOptions,
    planning: Callable[..., RepairPlan],
    *,
    requires_dist: Sequence[str],
    embed: EmbedRequest | None,
) -> RepairPlan:
    """The repair of a wheel that ships one build per CUDA major (cuda-cccl 1.2.1:
    ``cuda/compute/cu12/`` and ``cu13/``; bitsandbytes: ``libbitsandbytes_cuda121.so`` ...
    ``_cuda130.so``) for each major of ``options.cuda_majors``: each file is planned with the files of
    its own major (``_reports_by_major``) and linked to that major's wheels, and every requirement added
    for a major goes behind that major's extra, so that one install brings one major's libraries
    (``pip install pkg[cu13]``). Requirements the wheel's own extras bring already stay as they are."""
    if embed is not None:
        raise RepairError(
            "--embed-loader with several CUDA majors: the call it adds at import cannot know which major "
            "the package will use (bitsandbytes asks torch), and fails where no major's extra is installed",
            hint="repair without --embed-loader and call preload(DIST, cuda=N) of slimwheel.runtime once the "
            "package knows its major; or repair one major (--cuda N)",
        )
    platform = _wheel_platform(report)
    majors = tuple(sorted(set(options.cuda_majors)))
    of_file = _majors_of_files(report, catalog, platform)
    built_for = sorted({major for major in of_file.values() if major is not None and major != _SEVERAL})
    asked = ",".join(map(str, majors))
    if len(built_for) < 2:
        raise RepairError(
            f"--cuda {asked}: the wheel's files are not built for several CUDA majors (none needs a "
            "library only one major's wheels ship, nor lies in a folder named for one, beside another's)",
            hint="pass one major, --cuda N, or leave --cuda out",
        )
    unbuilt = [m for m in majors if m not in built_for]
    if unbuilt:
        raise RepairError(
            f"--cuda {asked}: the wheel's files are built for CUDA {and_list([str(m) for m in built_for])}, "
            f"not for {' or '.join(f'CUDA {m}' for m in unbuilt)}",
            hint=f"pass some of those, as --cuda {','.join(map(str, built_for))}",
        )
    conflicted = sorted(path for path, major in of_file.items() if major == _SEVERAL)
    if conflicted:
        raise RepairError(
            f"{some_of(conflicted, _FILES_NAMED, noun='files')} need{'s' if len(conflicted) == 1 else ''} "
            "the libraries of several CUDA majors at once, and --cuda "
            f"{asked} links each file to one major's wheels",
            hint="rebuild those files against one major's libraries, or repair one major (--cuda N)",
        )
    parts = _reports_by_major(report, of_file, majors)
    markers = marker_environment(platform, _wheel_python(report))
    extras = _extras_of_majors(read_requirements(requires_dist, markers), majors)
    linked = _linked_in_major(options.linked_versions, catalog, majors)
    plans = {
        major: planning(
            parts[major],
            options=replace(
                options,
                cuda_major=major,
                cuda_majors=(),
                major_extra=extras[major],
                linked_versions=linked[major],
            ),
            embed=None,
        )
        for major in majors
    }
    merged = _merged(report, plans, parts, platform)
    words = [*_clashing_extras(merged, extras), *_left_out_words(report, of_file, majors)]
    return replace(merged, warnings=(*merged.warnings, *words)) if words else merged


def _left_out_words(
    report: WheelReport, of_file: Mapping[str, int | None], majors: Sequence[int]
) -> list[str]:
    """The warning of the folder builds of majors --cuda leaves out (``_folder_builds_left_out``)."""
    strays = _folder_builds_left_out(report, of_file, majors)
    if not strays:
        return []
    left_out = sorted(set(strays.values()))
    says = "its folder says" if len(strays) == 1 else "their folders say"
    return [
        f"{some_of(sorted(strays), _FILES_NAMED, noun='files')}: built for "
        f"{' and '.join(f'CUDA {m}' for m in left_out)} (as {says}), "
        f"which --cuda {','.join(map(str, majors))} leaves out, so planned with CUDA {majors[0]}'s files: "
        f"what CUDA {majors[0]}'s wheels ship of what they need is linked to those; "
        f"--cuda {','.join(map(str, sorted({*majors, *left_out})))} links each to its own major's"
    ]


def _clashing_extras(plan: RepairPlan, extras: Mapping[int, str]) -> list[str]:
    """A warning where two majors' extras install the same files: nvidia-nccl-cu12 and -cu13 both
    install ``nvidia/nccl/lib/libnccl.so.2``, so ``pkg[cu12,cu13]`` keeps one major's NCCL, which the
    other major's build then loads (or fails to)."""
    by_file: dict[str, dict[int, str]] = {}
    for library in plan.manifest.libraries:
        if library.cuda_major is not None:
            where = posixpath.join(library.folder, library.soname)
            by_file.setdefault(where, {})[library.cuda_major] = library.distribution
    shared = {where: owners for where, owners in by_file.items() if len(owners) > 1}
    if not shared:
        return []
    majors = sorted({major for owners in shared.values() for major in owners})
    owners = sorted({distribution for found in shared.values() for distribution in found.values()})
    named = " and ".join(repr(extras[m]) for m in majors if m in extras)
    return [
        f"the extras {named} are one or the other: {and_list(owners)} install the same "
        f"{'file' if len(shared) == 1 else 'files'} ({', '.join(sorted(shared))}), so an install of both "
        "keeps one major's, which the other major's build then loads or fails to; install one major's extra"
    ]


def _folder_builds_left_out(
    report: WheelReport, of_file: Mapping[str, int | None], majors: Sequence[int]
) -> dict[str, int]:
    """The files of a major not in ``majors`` that their folder names (nccl-extensions'
    ``lib/cu11/``), each with that major: planned with the first major's files, they are linked to its
    wheels, not left to the host as a file needing only another major's sonames is."""
    found = {}
    for elf in report.elf_files:
        major = of_file.get(elf.path)
        if major is None or major == _SEVERAL or major in majors:
            continue
        path = elf.installed_path or elf.path
        if cuda_major_of_folder(path) == major:
            found[elf.path] = major
    return found


# A file that needs several majors' libraries at once (a broken build, or one of a major no wheel is
# for beside another's): no major's wheels alone serve it.
_SEVERAL = -1


def _majors_of_files(report: WheelReport, catalog: Catalog, platform: Platform) -> dict[str, int | None]:
    """Per ELF file of ``report``, the CUDA major it is built for: the one major whose wheels serve the
    NVIDIA sonames it needs (and, for a vendored copy, its own), else the one its folder names
    (nccl-extensions' ``lib/cu12/libnccl_ep.so`` needs NCCL's ``libnccl.so.2``, which every major
    ships); None for a file of no major, ``_SEVERAL`` for one that needs several majors' at once."""
    copies = {copy.path: copy for copy in report.vendored}
    found: dict[str, int | None] = {}
    for elf in report.elf_files:
        sonames = [
            copy.original_soname if (copy := _copy_serving(needed, copies)) is not None else needed.soname
            for needed in elf.needed
            if needed.resolution in (Resolution.NVIDIA_WHEEL, Resolution.VENDORED)
            and not is_driver_library(needed.soname)
        ]
        if elf.path in copies:
            sonames.append(copies[elf.path].original_soname)
        serving = catalog.majors_serving(sonames, platform)
        if serving == set():
            found[elf.path] = _SEVERAL
            continue
        major = next(iter(serving)) if serving and len(serving) == 1 else None
        folder = cuda_major_of_folder(elf.installed_path or elf.path)
        if major is None and folder is not None and (not serving or folder in serving):
            major = folder
        found[elf.path] = major
    return found


def _linked_in_major(
    linked: Mapping[str, tuple[str, ...]], catalog: Catalog, majors: Sequence[int]
) -> dict[int, dict[str, tuple[str, ...]]]:
    """The ``--linked-version`` flags of each major of ``majors``: a version goes to the majors whose
    releases of that library it is one of (``cudart=13.0.96`` to CUDA 13's build), and a library the
    catalog does not know to every major; a version of no major asked is refused, not dropped."""
    kept: dict[int, dict[str, tuple[str, ...]]] = {major: {} for major in majors}
    for name, versions in linked.items():
        known = bool(catalog.providers(name=name))
        for version in versions:
            mine = [
                major
                for major in majors
                if not known
                or version in {p.release.version for p in catalog.providers(name=name, cuda_major=major)}
            ]
            if not mine:
                raise RepairError(
                    f"--linked-version {name}={version} is no release of the wheels shipping {name} for "
                    f"{' or '.join(f'CUDA {m}' for m in majors)}",
                    hint=f"give the version of each major's {name} the wheel was linked against "
                    f"(slimwheel catalog query {name} --cuda N gives the range of its releases)",
                )
            for major in mine:
                kept[major][name] = (*kept[major].get(name, ()), version)
    return kept


def _reports_by_major(
    report: WheelReport, of_file: Mapping[str, int | None], majors: Sequence[int]
) -> dict[int, WheelReport]:
    """``report`` cut into one report per major of ``majors`` (``of_file``: each file's, from
    ``_majors_of_files``): the files of that major, those of no major (in every part) and, in the first
    part, those of majors not asked for (which its plan leaves to the host, as a repair for one major
    does)."""
    parts: dict[int, list[ElfReport]] = {major: [] for major in majors}
    for elf in report.elf_files:
        major = of_file.get(elf.path)
        if major is None:
            for files in parts.values():
                files.append(elf)
        else:
            parts[major if major in parts else majors[0]].append(elf)
    return {major: _part_of(report, files) for major, files in parts.items()}


def _copy_serving(needed: NeededLibrary, copies: Mapping[str, VendoredCopy]) -> VendoredCopy | None:
    """The vendored copy a DT_NEEDED resolves to, if any."""
    if needed.resolution is Resolution.VENDORED and needed.provided_by:
        return copies.get(needed.provided_by[0])
    return None


def _part_of(report: WheelReport, files: Sequence[ElfReport]) -> WheelReport:
    """``report`` narrowed to ``files``: their copies, findings and run-time loads."""
    paths = {elf.path for elf in files}
    return replace(
        report,
        elf_files=tuple(files),
        vendored=tuple(copy for copy in report.vendored if copy.path in paths),
        static=tuple(code for code in report.static if code.path in paths),
        findings=tuple(f for f in report.findings if f.path in paths or not f.path),
        lazy_loads=tuple(load for load in report.lazy_loads if load.path in paths),
    )


def _extras_of_majors(existing: Sequence[WheelRequirement], majors: Sequence[int]) -> dict[int, str]:
    """Per major, the extra its requirements go behind: the plainest of the wheel's extras that names
    that major alone (cuda-cccl's ``cu12``, not ``minimal-cu12``), else ``cuN``."""
    named: dict[int, set[str]] = {}
    for wheel_requirement in existing:
        for extra in wheel_requirement.extras:
            if (major := cuda_major_named(extra)) is not None:
                named.setdefault(major, set()).add(extra)
    return {m: plainest_extra(named[m]) if m in named else f"cu{m}" for m in majors}


def _merged(
    report: WheelReport, plans: Mapping[int, RepairPlan], parts: Mapping[int, WheelReport], platform: Platform
) -> RepairPlan:
    """One plan of the plans of each major (``plans``, each of the files of ``parts``): the files each
    planned, their requirements (each behind its major's extra), one manifest of every major's
    libraries; a file of no major, planned in each, gets the search path of every plan (one install
    brings one major's folders)."""
    every = list(plans.values())
    files = {major: {elf.path for elf in part.elf_files} for major, part in parts.items()}
    edits: dict[str, ElfEdit] = {}
    for plan in every:
        for edit in plan.edits:
            edits[edit.path] = _merged_edit(edits[edit.path], edit) if edit.path in edits else edit
    manifest = Manifest(
        cuda_major=None,
        libraries=tuple(
            _unique(
                library.replace(cuda_major=major)
                for major, plan in plans.items()
                for library in plan.manifest.libraries
            )
        ),
        generator=every[0].manifest.generator,
        kept_copies=tuple(sorted({c for plan in every for c in plan.manifest.kept_copies})),
        unreplaced_copies=tuple(sorted({c for plan in every for c in plan.manifest.unreplaced_copies})),
        left_to_host=tuple(sorted({n for plan in every for n in plan.manifest.left_to_host})),
    )
    # A copy of no major is in every part: it goes only where every plan that saw it drops it.
    drop = {
        path
        for plan in every
        for path in plan.drop
        if all(path in other.drop for major, other in plans.items() if path in files[major])
    }
    return RepairPlan(
        wheel=report.filename,
        output_name=report.filename,
        platform=platform,
        cuda_major=None,
        cuda_majors=tuple(plans),
        drop=tuple(sorted(drop)),
        edits=tuple(edits[path] for path in sorted(edits)),
        requirements=tuple(_unique(r for plan in every for r in plan.requirements)),
        kept_requirements=tuple(_unique(r for plan in every for r in plan.kept_requirements)),
        made_hard=tuple(_unique(r for plan in every for r in plan.made_hard)),
        narrowed=tuple(_unique(r for plan in every for r in plan.narrowed)),
        kept_optional=tuple(_unique(r for plan in every for r in plan.kept_optional)),
        manifest=manifest,
        manifest_path=every[0].manifest_path,
        warnings=_merged_words({m: plan.warnings for m, plan in plans.items()}),
        unread_providers=tuple(_unique(r for plan in every for r in plan.unread_providers)),
        assumed_floors=tuple(_unique(r for plan in every for r in plan.assumed_floors)),
        left_alone=_merged_words({m: plan.left_alone for m, plan in plans.items()}),
        kept_copies=tuple(sorted({c for plan in every for c in plan.kept_copies})),
        left_to_host=tuple(sorted({n for plan in every for n in plan.left_to_host})),
        reached=tuple(_unique(r for plan in every for r in plan.reached)),
    )


def _merged_edit(first: ElfEdit, second: ElfEdit) -> ElfEdit:
    """The edit of a file of no CUDA major, planned once per major: the renames and removals of both,
    and a search path with the folders of both (each install brings one major's wheels, so the other
    major's folders are not there to be searched)."""
    renames = dict(first.replace_needed)
    for old, new in second.replace_needed:
        if renames.setdefault(old, new) != new:
            raise RepairError(
                f"{first.path}: the plans for two CUDA majors rename {old} to {renames[old]} and to {new}",
                hint="repair one major per wheel (--cuda N)",
            )
    if first.search_path is None or second.search_path is None:
        search_path = first.search_path if second.search_path is None else second.search_path
    else:
        search_path = tuple(dict.fromkeys((*first.search_path, *second.search_path)))
    return replace(
        first,
        replace_needed=tuple(renames.items()),
        search_path=search_path,
        runpath=first.runpath or second.runpath,
        reason="; ".join(dict.fromkeys(r for r in (first.reason, second.reason) if r)),
        remove_needed=tuple(dict.fromkeys((*first.remove_needed, *second.remove_needed))),
        unused=tuple(dict.fromkeys((*first.unused, *second.unused))),
    )


def _unique(items: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(items))


def _merged_words(by_major: Mapping[int, Sequence[str]]) -> tuple[str, ...]:
    """The lines of each major's plan once each, those not every plan says prefixed with the majors
    that do."""
    saying: dict[str, list[int]] = {}
    for major, lines in by_major.items():
        for line in lines:
            saying.setdefault(line, []).append(major)
    return tuple(
        line if len(majors) == len(by_major) else f"CUDA {and_list([str(m) for m in majors])}: {line}"
        for line, majors in saying.items()
    )
