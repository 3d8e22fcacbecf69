"""Wheel + Catalog -> WheelReport: :func:`analyse_wheel` reads the members, finds the vendored copies
and static code, resolves every DT_NEEDED entry and adds up what removing the copies saves.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from packaging.utils import canonicalize_name

from slimwheel.analysis.inspect import PARALLEL_BYTES, InspectionCache, _read_members
from slimwheel.analysis.libraries import (
    is_dynamic_loader,
    is_system_library,
    nvidia_product_of,
    provided_by_driver,
    runtime_majors,
    unbound_nvidia_needs,
)
from slimwheel.analysis.model import (
    ElfReport,
    LazyLoad,
    NeededLibrary,
    Resolution,
    StaticCode,
    VendoredCopy,
    WheelReport,
    _ElfMember,
)
from slimwheel.analysis.static import _lazy_load_message, _static_code
from slimwheel.analysis.vendored import _find_vendored
from slimwheel.catalog.model import Catalog
from slimwheel.elf import ElfFacts
from slimwheel.findings import Finding, FindingKind, Severity
from slimwheel.ldso import rpath_problems, search_folders
from slimwheel.names import is_extension_module_name, parse_library_file_name, soname_stem
from slimwheel.policy import level_allowing, oldest_manylinux_tag, versions_beyond
from slimwheel.sources import ArchiveSource

__all__ = ["analyse_wheel", "zip_member_overhead"]


def analyse_wheel(
    wheel: ArchiveSource,
    catalog: Catalog,
    *,
    scan_strings: bool = True,
    jobs: int | None = None,
    parallel_bytes: int = PARALLEL_BYTES,
    unread: Iterable[str] = (),
    cache: InspectionCache | None = None,
) -> WheelReport:
    """Analyse every ELF member of ``wheel`` against what NVIDIA's wheels provide.

    ``jobs``: worker processes for local wheels whose ELF candidates hold ``parallel_bytes`` or more
    (default: the CPUs, at most 4; 1: none). Members named in ``unread`` are taken as ELF files without
    reading them: repair passes the copies it will drop (see :func:`named_like_copies`), which their
    RECORD hash, their name and their consumers' version needs identify, since inflating a 500 MB copy
    would be most of its time. ``cache``: what earlier analyses sharing it read (see
    :class:`InspectionCache`); members it knows are not read again, those read are added to it.
    """
    if jobs is None:
        jobs = min(os.cpu_count() or 1, 4)
    elf_members, findings, others = _read_members(
        wheel, scan_strings, jobs, parallel_bytes, frozenset(unread), cache=cache
    )
    vendored = _find_vendored(wheel, catalog, elf_members, findings)
    # In one of NVIDIA's own wheels, the API of each library it ships is its own code.
    family = {
        library.name
        for release in catalog.releases_of(canonicalize_name(wheel.distribution))
        for facts in release.wheels
        for library in facts.libraries
    }
    # The host libraries a wheel may use, and the symbol versions, depend on its oldest tag's level.
    glibc, oldest_tag = oldest_manylinux_tag(wheel.platform_tags) or (None, "")
    by_name: dict[str, list[_ElfMember]] = {}
    for item in elf_members:
        by_name.setdefault(posixpath.basename(item.member.name), []).append(item)
    # A library shipped under another name than its soname (TensorRT-RTX's libtensorrt_rtx.so.1.7.1,
    # soname libtensorrt_rtx.so.1): no search finds it by that soname; glibc reuses it once loaded.
    carriers = {
        item.facts.soname: item.member.name
        for item in reversed(elf_members)
        if item.facts is not None
        and item.facts.soname
        and item.facts.soname != posixpath.basename(item.member.name)
    }

    elf_reports = []
    static: list[StaticCode] = []
    lazy_loads: list[LazyLoad] = []
    for item in elf_members:
        facts = item.facts
        if facts is None:
            elf_reports.append(
                ElfReport(
                    item.member.name,
                    item.member.file_size,
                    item.member.compress_size,
                    error=item.error,
                    installed_path=item.installed,
                    extension_module=is_extension_module_name(posixpath.basename(item.member.name)),
                )
            )
            continue
        resolved = tuple(
            _resolve(soname, _inside(soname, item, by_name), vendored, catalog, glibc)
            for soname in facts.needed
        )
        for need in resolved:
            if need.resolution is Resolution.UNRESOLVED:
                findings.append(
                    Finding(
                        FindingKind.UNRESOLVED_NEEDED,
                        Severity.WARNING,
                        item.member.name,
                        _unresolved_message(need.soname, catalog, carriers.get(need.soname)),
                    )
                )
        unused = _unused_needed(facts, resolved, item.foreign_imports)
        if unused:
            findings.append(
                Finding(FindingKind.UNUSED_NEEDED, Severity.INFO, item.member.name, _unused_message(unused))
            )
        unneeded = _bound_not_needed(facts)
        if unneeded:
            findings.append(
                Finding(
                    FindingKind.BOUND_NOT_NEEDED,
                    Severity.WARNING,
                    item.member.name,
                    _unneeded_message(unneeded),
                )
            )
        if glibc is not None and (beyond := _beyond_tag(facts, glibc)):
            findings.append(
                Finding(
                    FindingKind.NEWER_THAN_TAG,
                    Severity.WARNING,
                    item.member.name,
                    _beyond_tag_message(beyond, facts.machine, oldest_tag, glibc),
                )
            )
        findings += rpath_problems(item.member.name, "RPATH", facts.rpath)
        findings += rpath_problems(item.member.name, "RUNPATH", facts.runpath)
        if item.member.name not in vendored:
            own = parse_library_file_name(facts.soname or posixpath.basename(item.member.name))
            linked, loaded = _static_code(
                item, {*family, *([own.stem] if own else [])}, strings_read=scan_strings
            )
            for code in linked:
                static.append(code)
                severity = Severity.INFO if code.is_runtime or code.static_archive else Severity.WARNING
                what = "it cannot be unlinked, only rebuilt"
                if code.static_archive:
                    what = f"NVIDIA ships it only as a static library ({code.static_archive}): it stays"
                findings.append(
                    Finding(
                        FindingKind.STATIC_NVIDIA,
                        severity,
                        item.member.name,
                        f"contains {code.library} code statically ({_sized(code)}); {what}",
                    )
                )
            for load in loaded:
                lazy_loads.append(load)
                findings.append(
                    Finding(
                        FindingKind.DLOPEN_NVIDIA, Severity.INFO, item.member.name, _lazy_load_message(load)
                    )
                )
        elf_reports.append(
            ElfReport(
                path=item.member.name,
                installed_path=item.installed,
                size=item.member.file_size,
                compressed_size=item.member.compress_size,
                soname=facts.soname,
                machine=facts.machine,
                needed=resolved,
                rpath=facts.rpath,
                runpath=facts.runpath,
                fatbin_size=facts.fatbin_size,
                build_id=facts.build_id,
                version_needs=tuple((n.file, n.names) for n in facts.version_needs),
                extension_module=item.extension_module,
                program=facts.is_program,
                unused_needed=unused,
            )
        )

    # As repair plans: where the files link one CUDA major's runtime, a copy goes only where that
    # major's wheels ship its soname (cntk-gpu 2.7, CUDA 10: NCCL 2's copy stays, though NCCL 2.32
    # for CUDA 13 has its soname).
    linked_majors = runtime_majors(
        [
            *(n.soname for elf in elf_reports if elf.path not in vendored for n in elf.needed),
            *(copy.original_soname for copy in vendored.values()),
        ]
    )
    removable = [
        copy
        for copy in vendored.values()
        if copy.identified is not None
        and (
            len(linked_majors) != 1
            or bool(catalog.providers(soname=copy.identified.soname, cuda_major=min(linked_majors)))
        )
    ]
    saved = sum(copy.compressed_size + zip_member_overhead(copy.path) for copy in removable)
    order = {kind: i for i, kind in enumerate(Severity)}
    findings.sort(key=lambda f: (order[f.severity], f.path, f.kind.value))
    return WheelReport(
        filename=wheel.filename,
        distribution=wheel.distribution,
        version=wheel.version,
        platform_tags=wheel.platform_tags,
        size=wheel.file_size,
        elf_files=tuple(elf_reports),
        vendored=tuple(vendored.values()),
        static=tuple(static),
        findings=tuple(findings),
        projected_size=max(0, wheel.file_size - saved),
        catalog_origin=catalog.origin,
        other_members=others,
        lazy_loads=tuple(lazy_loads),
    )


def _unresolved_message(soname: str, catalog: Catalog, carrier: str | None = None) -> str:
    """What an unresolved DT_NEEDED is, in words a user knows: NVIDIA's libraries by their product's
    name (TensorRT's libnvinfer.so.10 has no wheel to learn on the public index), and what to do.
    ``carrier``: the wheel's file of that soname under another name."""
    if carrier is not None:
        return (
            f"needs {soname}: no file of the wheel is named so, but {carrier} has that soname; "
            f"the loader finds it only if the package loads {posixpath.basename(carrier)} first (by "
            f"path), since a search looks for a file named {soname}: ship it under its soname for the "
            "file to load alone"
        )
    product = nvidia_product_of(soname)
    if product is None:
        return f"needs {soname}: not in the wheel, not an NVIDIA wheel's, not a system library"
    known = f"needs {soname}: NVIDIA's {product.name}"
    if catalog.providers(name=soname_stem(soname)):
        return (
            f"{known}, but no wheel the catalog lists ships this soname (only other versions of it): "
            "link against a version NVIDIA's wheels ship, or add the distribution that ships it to "
            "Requires-Dist yourself"
        )
    if product.sdist_only:
        return (
            f"{known}, whose wheels the catalog does not list (on the public index only as sdists): "
            f"add {product.distribution} to Requires-Dist yourself, or learn its wheels from an index "
            "that serves them (slimwheel catalog update --index-url URL)"
        )
    update = "slimwheel catalog update" + ("" if product.seeded else f" {product.distribution}")
    return (
        f"{known}, whose wheels the catalog does not list: add {product.distribution} to Requires-Dist "
        f"yourself, or learn its wheels ({update})"
    )


def zip_member_overhead(name: str) -> int:
    """Local header + central directory entry of one member, without extra fields."""
    return 30 + 46 + 2 * len(name.encode())


def _inside(
    soname: str, needer: _ElfMember, by_name: Mapping[str, Sequence[_ElfMember]]
) -> _ElfMember | None:
    """The wheel's file named ``soname`` that ``needer`` finds: where several share the name (one per
    CUDA major: cuda-cccl's ``cuda/compute/cu12/cccl/`` and ``cu13/cccl/``), the first in a folder the
    needer's own RPATH/RUNPATH names (glibc's search, ``ldso``), else the first by name."""
    same_name = by_name.get(soname, ())
    if len(same_name) > 1 and needer.facts is not None:
        folders = [found.folder for found in search_folders(_Installed(needer.installed, needer.facts), ())]
        for folder in folders:
            for candidate in same_name:
                if posixpath.dirname(candidate.installed) == folder:
                    return candidate
    return same_name[0] if same_name else None


@dataclass(frozen=True)
class _Installed:
    """An ELF member as ``ldso``'s search sees it."""

    installed_path: str
    facts: ElfFacts

    @property
    def rpath(self) -> tuple[str, ...]:
        return self.facts.rpath

    @property
    def runpath(self) -> tuple[str, ...]:
        return self.facts.runpath


def _resolve(
    soname: str,
    inside: _ElfMember | None,
    vendored: Mapping[str, VendoredCopy],
    catalog: Catalog,
    glibc: tuple[int, int] | None,
) -> NeededLibrary:
    if inside is not None:
        if inside.member.name in vendored:
            return NeededLibrary(soname, Resolution.VENDORED, (inside.member.name,))
        return NeededLibrary(soname, Resolution.WHEEL, (inside.member.name,))
    if provided_by_driver(soname):
        return NeededLibrary(soname, Resolution.DRIVER)
    providers = catalog.providers(soname=soname)
    if providers:
        distributions = tuple(dict.fromkeys(p.distribution for p in providers))
        return NeededLibrary(soname, Resolution.NVIDIA_WHEEL, distributions)
    if is_system_library(soname, glibc):
        return NeededLibrary(soname, Resolution.SYSTEM)
    return NeededLibrary(soname, Resolution.UNRESOLVED)


def _unused_needed(
    facts: ElfFacts, resolved: Sequence[NeededLibrary], foreign_imports: bool | None
) -> tuple[str, ...]:
    """The NVIDIA libraries (from a wheel, or a vendored copy) the file needs and imports no symbol
    from: no version of them is bound, and every import bound to no version is the interpreter's
    (``foreign_imports`` False). A link binds the versions a library defines (NVIDIA's toolkit
    libraries define one for each symbol); a library that defines none leaves imports bound to no
    version, which rule the answer out. What is left serves the file nothing: over-linking (no
    ``-Wl,--as-needed``). gbgpu-cuda11x's extension needs cuBLAS and cuSPARSE and calls nothing of
    them; its users install their wheels for nothing."""
    if foreign_imports is not False:
        return ()
    unbound = set(unbound_nvidia_needs(facts.needed, (need.file for need in facts.version_needs)))
    return tuple(
        need.soname
        for need in resolved
        if need.soname in unbound and need.resolution in (Resolution.NVIDIA_WHEEL, Resolution.VENDORED)
    )


def _unused_message(sonames: Sequence[str]) -> str:
    listed = ", ".join(sonames)
    it, entries, made = (
        ("it", "its entry", "the requirement it alone makes")
        if len(sonames) == 1
        else ("them", "their entries", "the requirements they alone make")
    )
    return (
        f"needs {listed} but imports no symbol from {it} (it binds no version of {it}, and imports "
        f"nothing without a version but the Python C API): relinking with -Wl,--as-needed, or "
        f"`slimwheel repair --drop-unused-needed`, removes {entries}, and {made}"
    )


def _bound_not_needed(facts: ElfFacts) -> list[str]:
    """The libraries whose versions ``facts``'s symbols are bound to (its version needs) but which it
    has no DT_NEEDED entry for, the dynamic loader aside (it is in every process). The link records
    both; an entry removed afterwards (``patchelf --remove-needed``) leaves the version need."""
    needed = set(facts.needed)
    bound = {need.file for need in facts.version_needs}
    return sorted(soname for soname in bound - needed if soname and not is_dynamic_loader(soname))


def _sized(code: StaticCode) -> str:
    if not code.symbols:
        return "its symbols are stripped: strings only its code holds are in .rodata"
    exported = ", exported" if code.exported else ""
    return f"{code.symbols} API symbols of {code.symbol_bytes} bytes{exported}; its internals are not sized"


def _beyond_tag(facts: ElfFacts, glibc: tuple[int, int]) -> dict[str, list[str]]:
    """The symbol versions ``facts`` needs from the host's libraries that the manylinux policy of
    ``glibc`` does not allow, each with the libraries it is needed from: a copy the wheel bundles
    under its own name is not the host's."""
    beyond: dict[str, list[str]] = {}
    for need in facts.version_needs:
        if need.file and is_system_library(need.file, glibc):
            for name in versions_beyond(glibc, facts.machine, need.names):
                beyond.setdefault(name, []).append(need.file)
    return beyond


def _newest_per_prefix(names: Iterable[str]) -> list[str]:
    """``GLIBC_2.38`` of ``GLIBC_2.34`` and ``GLIBC_2.38``: the newest version of each prefix,
    which implies the others; names whose version is not a number stay."""
    newest: dict[str, tuple[tuple[int, ...], str]] = {}
    others = []
    for name in names:
        prefix, _, version = name.partition("_")
        parts = version.split(".")
        if not all(part.isdigit() for part in parts):
            others.append(name)
        elif prefix not in newest or newest[prefix][0] < tuple(map(int, parts)):
            newest[prefix] = (tuple(map(int, parts)), name)
    return [name for _, name in newest.values()] + others


def _beyond_tag_message(
    beyond: Mapping[str, Sequence[str]], machine: str, tag: str, glibc: tuple[int, int]
) -> str:
    # polars-fastembed-cuda 0.1.17: tagged manylinux_2_17, its libraries need GLIBC_2.38.
    needs = ", ".join(f"{name} ({', '.join(beyond[name])})" for name in _newest_per_prefix(beyond))
    level = level_allowing(machine, beyond)
    fix = f"tag it manylinux_{level[0]}_{level[1]} (auditwheel repair does)" if level else "tag it for them"
    return (
        f"needs {needs}, newer than its tag {tag} promises (glibc {glibc[0]}.{glibc[1]}): pip installs "
        f"the wheel on hosts whose libraries lack them, where this file does not load; {fix}, or build "
        "it against an older glibc"
    )


def _unneeded_message(sonames: Sequence[str]) -> str:
    # onnxruntime-gpu 1.14's CUDA provider: its build removed the DT_NEEDED entries of cuBLAS, cuDNN,
    # cuFFT and the runtime, which its Python code loads by soname (ctypes, RTLD_GLOBAL) first.
    listed = ", ".join(sonames)
    they, them, were = ("it", "it", "was") if len(sonames) == 1 else ("they", "them", "were")
    return (
        f"binds symbols to {listed} (its version needs) but has no DT_NEEDED entry for {them}: nothing "
        f"loads {them} for this file, which loads only where {they} {were} loaded first with "
        f"RTLD_GLOBAL; code that loads {them} by soname finds {them} on the loader's path, not in "
        "NVIDIA's wheels (check cannot follow that)"
    )
