"""Wheel + Catalog -> WheelReport: what a wheel bundles, links statically, needs, and what it costs.

Reading happens once per ELF member (through a seekable window or a spooled temp file, so memory does
not grow with the wheel); everything after that is plain data.
"""

from __future__ import annotations

import enum
import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import BinaryIO, cast

from packaging.utils import canonicalize_name

from slimwheel.catalog.model import Catalog, LibraryProvider
from slimwheel.elf import ELF_MAGIC, ElfFacts, Symbol, ranges_to_keep, read_elf, read_section, scan_symbols
from slimwheel.errors import ElfError, InputError
from slimwheel.findings import Finding, FindingKind, Severity
from slimwheel.ldso import rpath_problems
from slimwheel.names import LibraryFileName, NameStyle, parse_library_file_name
from slimwheel.policy import host_sonames
from slimwheel.sources import ArchiveSource
from slimwheel.wheel import MissingRangeError, Wheel, WheelMember

__all__ = [
    "DRIVER_LIBRARY_NAMES",
    "PARALLEL_BYTES",
    "Confidence",
    "ElfReport",
    "Finding",
    "FindingKind",
    "IdentifiedRelease",
    "LazyLoad",
    "NeededLibrary",
    "Resolution",
    "Severity",
    "StaticCode",
    "VendoredCopy",
    "WheelReport",
    "analyse_wheel",
    "api_library_of",
    "is_driver_library",
    "is_system_library",
    "named_like_copies",
    "rpath_problems",
]


class Resolution(enum.Enum):
    """Where a DT_NEEDED entry would come from once the wheel is installed."""

    WHEEL = "wheel"  # another file of this wheel
    VENDORED = "vendored"  # a copy of an NVIDIA library bundled in this wheel
    NVIDIA_WHEEL = "nvidia-wheel"  # one of NVIDIA's pip wheels ships it
    REQUIREMENT = "requirement"  # another distribution the wheel requires ships it (check, from the index)
    DRIVER = "driver"  # the host's NVIDIA driver; never from a wheel
    SYSTEM = "system"  # allowed by the manylinux policy
    UNRESOLVED = "unresolved"


class Confidence(enum.Enum):
    EXACT = "exact"  # same sha256 as the official file (or same GNU build-id, once confirmed)
    BY_NAME = "by-name"  # the file's own version (auditwheel's suffix) matches a release
    BY_SONAME = "by-soname"  # only the soname matches: any release shipping it could be the source
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class NeededLibrary:
    soname: str
    resolution: Resolution
    provided_by: tuple[str, ...] = ()  # member paths, or NVIDIA distributions


@dataclass(frozen=True)
class IdentifiedRelease:
    distribution: str
    version: str
    cuda_major: int | None
    confidence: Confidence
    official_path: str  # where the NVIDIA wheel installs the file
    candidates: int = 1  # releases that fit equally well
    evidence: str = ""  # "sha256", "build-id", "file version" or "soname"
    soname: str = ""  # the soname of the release's own file


@dataclass(frozen=True)
class VendoredCopy:
    path: str
    name: str  # soname stem
    original_soname: str
    style: NameStyle
    size: int
    compressed_size: int
    identified: IdentifiedRelease | None
    needed_by: tuple[str, ...]


@dataclass(frozen=True)
class StaticCode:
    path: str
    library: str
    symbols: int
    symbol_bytes: int
    exported: bool  # the symbols are in .dynsym (not only .symtab)
    version_strings: tuple[str, ...] = ()

    @property
    def is_runtime(self) -> bool:
        """nvcc links the CUDA runtime statically by default; that is expected and small."""
        return self.library == "cudart"


@dataclass(frozen=True)
class LazyLoad:
    """An NVIDIA library that a file loads at run time (dlopen) through trampolines instead of linking
    its code in: Implib.so's shims, as XLA/TSL's CUDA stubs (``cublasCreate_v2`` of size 0 doing
    ``jmp *_cublas_tramp_table(%rip)``; the table is filled from the library, dlopen'ed by soname at
    the first call). The library must then be found at run time, like a DT_NEEDED one."""

    path: str
    library: str
    # Trampolines found: API-named symbols of size 0 in code sections; 0 when only the table tells
    # (the driver's cu* entry points are not API-named, so ``cuda`` has no count).
    symbols: int
    exported: bool  # some trampolines are in .dynsym (not only .symtab)
    tramp_table: str | None = None  # the ``_<lib>_tramp_table`` symbol, when the file has one


@dataclass(frozen=True)
class ElfReport:
    path: str
    size: int
    compressed_size: int
    soname: str | None = None
    machine: str | None = None
    needed: tuple[NeededLibrary, ...] = ()
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    fatbin_size: int = 0
    build_id: str | None = None
    version_needs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    error: str | None = None
    installed_path: str = ""  # where the file lands, relative to site-packages (.data/purelib resolved)


@dataclass(frozen=True)
class WheelReport:
    filename: str
    distribution: str
    version: str
    platform_tags: tuple[str, ...]
    size: int
    elf_files: tuple[ElfReport, ...]
    vendored: tuple[VendoredCopy, ...]
    static: tuple[StaticCode, ...]
    findings: tuple[Finding, ...]
    projected_size: int
    catalog_origin: str
    other_members: int = 0
    extras: Mapping[str, object] = field(default_factory=dict)
    lazy_loads: tuple[LazyLoad, ...] = ()  # NVIDIA libraries loaded at run time (dlopen), not linked in

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


# The driver's user-space libraries: they come with the host's driver and never from a wheel.
DRIVER_LIBRARY_NAMES = frozenset(
    {
        "cuda",
        "nvidia-ml",
        "nvcuvid",
        "nvidia-encode",
        "nvidia-ptxjitcompiler",
        "nvidia-nvvm",
        "nvidia-opticalflow",
    }
)
_LOADER = re.compile(r"^ld-linux.*\.so\.\d+$|^ld64\.so\.\d+$")
_NOT_BINARY = re.compile(
    r"\.(py|pyi|pyc|txt|md|rst|json|toml|cfg|ini|h|hh|hpp|cuh|c|cc|cpp|cu|pxd|pyx|typed|html|csv|yaml|yml)$"
    r"|/(METADATA|RECORD|WHEEL|LICENSE[^/]*|top_level\.txt|entry_points\.txt)$",
    re.IGNORECASE,
)
_SHARED_OBJECT = re.compile(r"\.so(\.\d+)*$")
# API symbol prefixes of NVIDIA's libraries: a defined symbol with one of these means the library's
# code is linked in. The longest prefix wins (cublasLt before cublas).
# The APIs are camelCase (cudssCreate, ncclCommInitRank) but NVSHMEM's (nvshmem_malloc): a user's own
# cudss_helper is not cuDSS code.
_API_PREFIX_BODY = (
    r"(cublasLt|cublasXt|cublas|cudss|cudnn|cufftXt|cufft|curand|cusparseLt|cusparse|cusolverMg|"
    r"cusolverDn|cusolverSp|cusolverRf|cusolver|cutensor|nccl|nvrtc|nvJitLink|cupti|npp|nvjpeg|cuda)(?=[A-Z])"
    r"|(nvshmemx|nvshmem)(?=_)"
)
_API_PREFIX = re.compile(rf"^(?:{_API_PREFIX_BODY})")
# Implib.so's table of resolved addresses, which its trampolines jump through: ``_<suffix>_tramp_table``
# where the suffix is XLA's library name (``_cublas_tramp_table``) or Implib.so's default, the file
# name (``_libcublasLt_so_12_tramp_table``). Only NVIDIA's libraries are picked up; ``cuda`` is the
# driver (XLA's stub for libcuda.so.1), ``cudart`` the runtime.
_TRAMP_TABLE_TEXT = (
    r"_(?:lib)?(cublasLt|cublas|cudart|cuda|cudss|cudnn|cufft|curand|cusparseLt|cusparse|cusolverMg|"
    r"cusolver|cutensor|nccl|nvrtc|nvJitLink|cupti|npp[a-z]*|nvjpeg|nvshmem|nvml)"
    r"(?:_so(?:_[0-9]+)*)?_tramp_table$"
)
_TRAMP_TABLE = re.compile(_TRAMP_TABLE_TEXT)
# What analysis scans the symbol tables for: API names and trampoline tables.
_SCAN_PATTERN_BYTES = re.compile(rf"^(?:{_API_PREFIX_BODY}|{_TRAMP_TABLE_TEXT})".encode())
# Sections that are executable but hold the linker's stubs for DT_NEEDED calls, never a library's code.
_PLT_SECTIONS = frozenset({".plt", ".plt.sec", ".plt.got", ".plt.bnd", ".iplt"})
_PREFIX_LIBRARY = {
    "cublasXt": "cublas", "cufftXt": "cufft", "cusolverMg": "cusolverMg", "cusolverDn": "cusolver",
    "cusolverSp": "cusolver", "cusolverRf": "cusolver", "nvshmemx": "nvshmem", "cuda": "cudart",
}  # fmt: skip
# NVTX is left out on purpose: NVTX 3 is header-only, so its symbols in a binary are expected.
_VERSION_STRING = re.compile(
    rb"(cuBLAS(?:Lt)?|cuDSS|cuDNN|NCCL|cuSPARSE(?:Lt)?|cuFFT|cuRAND|cuSOLVER|cuTENSOR|nvJitLink|NVRTC)"
    rb"[ A-Za-z]{0,16}?(?:version|Version|VERSION)?[ :v]{1,3}(\d+\.\d+(?:\.\d+){0,2})"
)
_RODATA_SCAN_LIMIT = 64 * 1024 * 1024
PARALLEL_BYTES = 64 * 1024 * 1024  # below this, starting worker processes costs more than it saves
# What a view of a compressed member keeps: ELF and program headers, .dynsym/.dynstr and the version
# tables sit at the start; section headers, and in NVIDIA's patched files .dynamic and the build-id,
# at the end. Anything else is read by inflating the member again.
_VIEW_HEAD = 16 * 1024 * 1024
_VIEW_TAIL = 16 * 1024 * 1024
_PEEK_ABOVE = 4 * 1024 * 1024  # bigger members are first checked for the ELF magic with one chunk


def api_library_of(symbol: str) -> str | None:
    """The NVIDIA library whose API a symbol name belongs to (``cublasLtMatmul`` -> ``cublasLt``)."""
    match = _API_PREFIX.match(symbol)
    if match is None:
        return None
    prefix = match[1] or match[2]
    return _PREFIX_LIBRARY.get(prefix, prefix)


def is_driver_library(soname: str) -> bool:
    parsed = parse_library_file_name(soname)
    return (
        parsed is not None and parsed.stem in DRIVER_LIBRARY_NAMES and parsed.style is not NameStyle.WINDOWS
    )


def is_system_library(soname: str) -> bool:
    """The manylinux whitelist (auditwheel's policy) or a dynamic loader: what the host provides."""
    return soname in host_sonames() or bool(_LOADER.match(soname))


@dataclass
class _ElfMember:
    member: WheelMember
    installed: str
    facts: ElfFacts | None
    error: str | None
    exported_api: tuple[Symbol, ...] = ()  # .dynsym symbols with an NVIDIA API prefix (or trampoline tables)
    internal_api: tuple[Symbol, ...] = ()  # .symtab ones
    version_strings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Inspection:
    facts: ElfFacts
    exported_api: tuple[Symbol, ...]
    internal_api: tuple[Symbol, ...]
    version_strings: tuple[str, ...]


def _candidate_members(wheel: ArchiveSource) -> list[WheelMember]:
    return [m for m in wheel.members if not m.name.endswith("/") and not _NOT_BINARY.search(m.name)]


def _inspect(stream: BinaryIO, name: str, scan_strings: bool) -> _Inspection:
    """Everything analysis needs from one ELF file, reading only the tables it needs."""
    facts = read_elf(stream, path=name, symbols=False)
    exported = scan_symbols(stream, facts, pattern=_SCAN_PATTERN_BYTES, table=".dynsym", path=name)
    internal = (
        # Tail-merged names are left out here: big C++ .strtabs are full of near misses.
        scan_symbols(
            stream, facts, pattern=_SCAN_PATTERN_BYTES, table=".symtab", path=name, include_tails=False
        )
        if facts.has_symtab
        else ()
    )
    strings: tuple[str, ...] = ()
    # .rodata sits in the middle of big files, which a head/tail view does not keep: read it where
    # NVIDIA API symbols suggest static code, or where it costs nothing (device code, .rodata kept).
    rodata = facts.section(".rodata")
    has_range = getattr(stream, "has_range", None)
    cheap = rodata is not None and (has_range is None or has_range(rodata.offset, rodata.size))
    own = parse_library_file_name(facts.soname or posixpath.basename(name))
    suspicious = any(
        library not in (None, "cudart") and not (own and own.stem.startswith(library))
        for library in (api_library_of(s.name) for s in (*exported, *internal) if _is_code(facts, s))
    )
    if scan_strings and (suspicious or (facts.fatbin_size > 0 and cheap)):
        strings = _scan_version_strings(stream, facts, name)
    return _Inspection(facts, exported, internal, strings)


def _inspect_member(wheel: ArchiveSource, member: WheelMember, scan_strings: bool) -> _Inspection | None:
    """Inspect a member from its head, tail and ELF segments kept in memory; re-read it whole only when
    that misses.

    Returns None when the member is not ELF.
    """
    name = member.name
    if member.file_size > _PEEK_ABOVE:
        # A big member that is not ELF (data files): one chunk tells, no need to inflate it all.
        with wheel.open_member(name) as start:
            if start.read(4) != ELF_MAGIC:
                return None
    with wheel.member_view(name, head=_VIEW_HEAD, tail=_VIEW_TAIL, keep=ranges_to_keep) as raw_view:
        view = cast(BinaryIO, raw_view)
        if view.read(4) != ELF_MAGIC:
            return None
        view.seek(0)
        try:
            return _inspect(view, name, scan_strings)
        except MissingRangeError:
            pass
    with wheel.seekable_member(name) as stream:
        return _inspect(stream, name, scan_strings)


# An inspection's outcome: the facts, None for a file that is not ELF, or an ElfError's reason.
_Outcome = _Inspection | str | None


def named_like_copies(wheel: ArchiveSource, catalog: Catalog) -> dict[str, str]:
    """Members whose file name is an NVIDIA library's (any of the three styles): member -> stem."""
    names = catalog.library_names
    if canonicalize_name(wheel.distribution) in catalog.distributions:
        return {}  # NVIDIA's own wheel: its libraries are not copies
    found = {}
    for member in _candidate_members(wheel):
        parsed = parse_library_file_name(posixpath.basename(member.name))
        if parsed is not None and parsed.stem in names and parsed.style is not NameStyle.WINDOWS:
            found[member.name] = parsed.stem
    return found


def _inspect_each(wheel: ArchiveSource, members: Sequence[WheelMember], scan_strings: bool) -> list[_Outcome]:
    outcomes: list[_Outcome] = []
    for member in members:
        try:
            outcomes.append(_inspect_member(wheel, member, scan_strings))
        except ElfError as exc:
            outcomes.append(exc.reason)
    return outcomes


def _inspect_in_worker(path: str, names: Sequence[str], scan_strings: bool) -> list[_Outcome]:
    with Wheel.open(path) as wheel:
        return _inspect_each(wheel, [wheel.member(name) for name in names], scan_strings)


def _inspect_members(
    wheel: ArchiveSource, members: Sequence[WheelMember], scan_strings: bool, jobs: int, parallel_bytes: int
) -> list[_Outcome]:
    """Inspect members, in worker processes when the wheel is a local file big enough to pay for them.

    Inflating is most of the cost and is CPU-bound, so processes (not threads) share it: members are
    dealt out largest first to the least loaded worker.
    """
    path = getattr(wheel, "local_path", None)
    total = sum(m.file_size for m in members)
    if jobs <= 1 or path is None or total < parallel_bytes or len(members) < 2:
        return _inspect_each(wheel, members, scan_strings)
    bins: list[list[int]] = [[] for _ in range(min(jobs, len(members)))]
    loads = [0] * len(bins)
    for index in sorted(range(len(members)), key=lambda i: -members[i].file_size):
        lightest = loads.index(min(loads))
        bins[lightest].append(index)
        loads[lightest] += members[index].file_size
    outcomes: list[_Outcome] = [None] * len(members)
    with ProcessPoolExecutor(max_workers=len(bins)) as pool:
        futures = [
            (
                indices,
                pool.submit(_inspect_in_worker, str(path), [members[i].name for i in indices], scan_strings),
            )
            for indices in bins
        ]
        for indices, future in futures:
            for index, outcome in zip(indices, future.result(), strict=True):
                outcomes[index] = outcome
    return outcomes


def _read_members(
    wheel: ArchiveSource, scan_strings: bool, jobs: int, parallel_bytes: int, unread: frozenset[str]
) -> tuple[list[_ElfMember], list[Finding], int]:
    elf_members: list[_ElfMember] = []
    findings: list[Finding] = []
    others = 0
    candidates = [m for m in _candidate_members(wheel) if m.file_size >= 4 and m.name not in unread]
    outcomes = dict(
        zip(
            (m.name for m in candidates),
            _inspect_members(wheel, candidates, scan_strings, jobs, parallel_bytes),
            strict=True,
        )
    )
    for member in _candidate_members(wheel):
        looks_shared = bool(_SHARED_OBJECT.search(member.name))
        installed = wheel.installed_path(member.name)
        if member.name in unread and _starts_like_elf(wheel, member):
            elf_members.append(_ElfMember(member, installed, None, None))
            continue
        inspection = outcomes.get(member.name)
        if isinstance(inspection, str):
            findings.append(Finding(FindingKind.CORRUPT_ELF, Severity.ERROR, member.name, inspection))
            elf_members.append(_ElfMember(member, installed, None, inspection))
            continue
        if inspection is None:
            if looks_shared:
                reason = _not_elf_reason(wheel, member)
                findings.append(Finding(FindingKind.NOT_ELF, Severity.ERROR, member.name, reason))
            others += 1
            continue
        elf_members.append(
            _ElfMember(
                member,
                installed,
                inspection.facts,
                None,
                inspection.exported_api,
                inspection.internal_api,
                inspection.version_strings,
            )
        )
    return elf_members, findings, others


def _starts_like_elf(wheel: ArchiveSource, member: WheelMember) -> bool:
    """Whether a member left unread starts as an ELF file does: its first bytes only, so a copy that
    is empty or text is what a full read would call it (not ELF), without inflating the rest."""
    if member.file_size < len(ELF_MAGIC):
        return False
    with wheel.open_member(member.name) as stream:
        return stream.read(len(ELF_MAGIC)) == ELF_MAGIC


_NOT_ELF_HEAD = 4096  # what telling text and linker scripts apart reads of a .so that is not ELF
# GNU ld script commands that name libraries or the output: what a linker script "libX.so" holds.
_LINKER_SCRIPT = re.compile(rb"\b(INPUT|GROUP|OUTPUT_FORMAT|OUTPUT_ARCH|SEARCH_DIR)\s*\(")


def _not_elf_reason(wheel: ArchiveSource, member: WheelMember) -> str:
    """Why a member named like a shared object (``libX.so.1``, an extension module) cannot be loaded:
    the dynamic loader maps only ELF files, so text, a linker script or an empty file fails the import
    or the load that needs it."""
    what = "not an ELF file"
    if member.file_size == 0:
        return f"{what} (empty): the dynamic loader cannot load it"
    try:
        with wheel.open_member(member.name) as stream:
            head = stream.read(_NOT_ELF_HEAD)
    except InputError:
        head = b""  # the member's own read error is reported where it is read for its content
    cannot = "the dynamic loader cannot load it"
    if _is_text(head) and _LINKER_SCRIPT.search(head):
        return f"{what} (a linker script, which only the link editor reads): {cannot}"
    if _is_text(head):
        return f"{what} (text): {cannot}"
    return f"{what}: {cannot}"


def _is_text(head: bytes) -> bool:
    """UTF-8 without control characters but white space (a multi-byte character cut at the end of
    ``head`` allowed)."""
    text = head.decode("utf-8", errors="replace").rstrip("\ufffd")
    return bool(text) and "\ufffd" not in text and all(c.isprintable() or c in "\t\n\r\f" for c in text)


def _scan_version_strings(stream: BinaryIO, facts: ElfFacts, name: str) -> tuple[str, ...]:
    section = facts.section(".rodata")
    if section is None or section.size == 0:
        return ()
    data = read_section(stream, section, limit=_RODATA_SCAN_LIMIT, path=name)
    found = {f"{m[1].decode()} {m[2].decode()}" for m in _VERSION_STRING.finditer(data)}
    return tuple(sorted(found))


def _original_soname(
    item: _ElfMember, parsed: LibraryFileName | None, consumers: Iterable[_ElfMember]
) -> tuple[str, bool]:
    """The soname a vendored copy had before it was renamed, and whether the file itself says so.

    auditwheel rewrites the SONAME, but the consumers' version needs (File -> Name) and the copy's own
    version definitions keep the original (``libnvrtc.so.11.2`` for ``libnvrtc-672ee683.so.11.8.89``).
    Where neither does (``libnvrtc-builtins`` has no versioned symbols), the answer is only a guess
    from the file name (False): the identified NVIDIA release's own file must replace it.
    """
    basename = posixpath.basename(item.member.name)
    stem = parsed.stem if parsed else None
    if parsed is not None and parsed.style is NameStyle.AUDITWHEEL:
        for consumer in consumers:
            for need in consumer.facts.version_needs if consumer.facts else ():
                if need.file == basename:
                    for name in need.names:
                        candidate = parse_library_file_name(name)
                        if candidate and candidate.stem == stem and candidate.style is NameStyle.PLAIN:
                            return name, True
        for name in item.facts.version_definitions if item.facts else ():
            candidate = parse_library_file_name(name)
            if candidate and candidate.stem == stem and candidate.style is NameStyle.PLAIN:
                return name, True
        major = (parsed.version or "").split(".")[0]
        return (f"lib{parsed.stem}.so.{major}" if major else f"lib{parsed.stem}.so"), False
    if item.facts and item.facts.soname and parsed and parsed.style is not NameStyle.AUDITWHEEL:
        return item.facts.soname, True
    if parsed and parsed.plain_soname:
        return parsed.plain_soname, False
    return basename, False


def _identify(
    catalog: Catalog, record_sha256: str | None, original_soname: str, parsed: LibraryFileName | None
) -> IdentifiedRelease | None:
    if record_sha256:
        exact = catalog.by_sha256(record_sha256)
        if exact:
            # The same bytes can ship under several sonames: the one the copy's name says comes first.
            best = sorted(exact, key=lambda p: not _refines(p.library.soname, original_soname))
            return _identified(best[0], Confidence.EXACT, len({p.release.key for p in exact}), "sha256")
    providers = catalog.providers(soname=original_soname, include_prereleases=True)
    if not providers and parsed is not None:
        providers = catalog.providers(name=parsed.stem, include_prereleases=True)
    if not providers:
        return None
    file_version = parsed.version if parsed and parsed.style is NameStyle.AUDITWHEEL else None
    if file_version and file_version.count(".") >= 1:
        by_name = [
            p for p in providers if p.version == file_version or p.version.startswith(file_version + ".")
        ]
        if by_name:
            return _identified(
                by_name[0], Confidence.BY_NAME, len({p.release.key for p in by_name}), "file version"
            )
    return _identified(providers[0], Confidence.BY_SONAME, len({p.release.key for p in providers}), "soname")


_FILE_LEVEL = frozenset({Confidence.EXACT, Confidence.BY_NAME})


def _refines(soname: str, guess: str) -> bool:
    return soname == guess or soname.startswith(guess + ".")


def _identified(
    provider: LibraryProvider, confidence: Confidence, candidates: int, evidence: str
) -> IdentifiedRelease:
    return IdentifiedRelease(
        soname=provider.library.soname,
        distribution=provider.distribution,
        version=provider.version,
        cuda_major=provider.release.cuda_major,
        confidence=confidence,
        official_path=provider.library.path,
        candidates=candidates,
        evidence=evidence,
    )


def _in_code_section(facts: ElfFacts, symbol: Symbol) -> bool | None:
    """Whether ``symbol`` is in a section of machine code other than the linker's PLT stubs (None
    when the file cannot tell: no section headers)."""
    executable = facts.in_executable_section(symbol)
    if not executable:
        return executable
    section = facts.section_of(symbol)
    return section is not None and section.name not in _PLT_SECTIONS


def _is_code(facts: ElfFacts, symbol: Symbol) -> bool:
    """Whether ``symbol`` is code linked into the file: bytes (a nonzero size) in a section of code.
    Without section headers, its type decides."""
    if symbol.size == 0:
        return False
    in_code = _in_code_section(facts, symbol)
    return symbol.kind == "func" if in_code is None else in_code


def _is_trampoline(facts: ElfFacts, symbol: Symbol) -> bool:
    """Whether ``symbol`` is a shim that jumps into a library loaded at run time: a label of size 0
    in a section of code (Implib.so's trampolines have no ``.size``; hand-written ones no type)."""
    if symbol.size != 0 or symbol.kind not in ("func", "other"):
        return False
    in_code = _in_code_section(facts, symbol)
    return symbol.kind == "func" if in_code is None else in_code


def _tramp_table_library(name: str) -> str | None:
    """The library an Implib.so table is for: ``_cublas_tramp_table`` and
    ``_libcublasLt_so_12_tramp_table`` give ``cublas`` and ``cublasLt``."""
    match = _TRAMP_TABLE.match(name)
    return match[1] if match else None


def _static_code(item: _ElfMember, own_name: str | None) -> tuple[list[StaticCode], list[LazyLoad]]:
    """NVIDIA code linked into ``item``, and NVIDIA libraries it loads at run time, by library.

    An API-named symbol counts as the library's code only when it has bytes in a section of code
    (:func:`_is_code`); one of size 0 there is a trampoline (:func:`_is_trampoline`), which, like a
    ``_<lib>_tramp_table`` symbol, means the library is dlopen'ed at run time. Other API-named
    symbols (data, absolute ones) tell neither.
    """
    facts = item.facts
    if facts is None:
        return [], []
    code: dict[str, dict[str, Symbol]] = {}
    shims: dict[str, dict[str, Symbol]] = {}
    tables: dict[str, str] = {}
    exported_code: set[str] = set()
    exported_shims: set[str] = set()
    for symbols, exported in ((item.exported_api, True), (item.internal_api, False)):
        for symbol in symbols:
            table_library = _tramp_table_library(symbol.name)
            if table_library is not None:
                tables.setdefault(table_library, symbol.name)
                continue
            library = api_library_of(symbol.name)
            if library is None:
                continue
            if _is_code(facts, symbol):
                code.setdefault(library, {}).setdefault(symbol.name, symbol)
                if exported:
                    exported_code.add(library)
            elif _is_trampoline(facts, symbol):
                shims.setdefault(library, {}).setdefault(symbol.name, symbol)
                if exported:
                    exported_shims.add(library)

    def own(library: str) -> bool:  # a library's own API is neither static code nor a run-time load
        return bool(own_name and (library == own_name or own_name.startswith(library)))

    static = []
    for library in sorted(code):
        if own(library):
            continue
        matched = code[library]
        strings = tuple(s for s in item.version_strings if s.lower().startswith(library.lower()[:4]))
        static.append(
            StaticCode(
                path=item.member.name,
                library=library,
                symbols=len(matched),
                symbol_bytes=sum(s.size for s in matched.values()),
                exported=library in exported_code,
                version_strings=strings,
            )
        )
    loaded = [
        LazyLoad(
            path=item.member.name,
            library=library,
            symbols=len(shims.get(library, ())),
            exported=library in exported_shims,
            tramp_table=tables.get(library),
        )
        for library in sorted(set(shims) | set(tables))
        if not own(library)
    ]
    return static, loaded


def _lazy_load_message(load: LazyLoad) -> str:
    count = f"{load.symbols} trampoline{'' if load.symbols == 1 else 's'}" if load.symbols else "trampolines"
    table = f" through {load.tramp_table}" if load.tramp_table else ""
    exported = ", exported" if load.exported else ""
    return f"loads {load.library} at run time (dlopen): {count}{table}{exported}, not {load.library} code"


def _find_vendored(
    wheel: ArchiveSource, catalog: Catalog, elf_members: Sequence[_ElfMember], findings: list[Finding]
) -> dict[str, VendoredCopy]:
    """Vendored NVIDIA copies by member path; bundled drivers and copies are added to ``findings``."""
    record_sha = {entry.path: entry.sha256_hex for entry in wheel.record()}
    nvidia_names = catalog.library_names
    # Showing one of NVIDIA's own wheels: its libraries are the originals, not vendored copies.
    own_distribution = canonicalize_name(wheel.distribution)
    is_provider_wheel = own_distribution in catalog.distributions

    # The loader searches for a DT_NEEDED entry by file name; a SONAME only matters once loaded.
    by_name: dict[str, _ElfMember] = {}
    for item in elf_members:
        by_name.setdefault(posixpath.basename(item.member.name), item)

    consumers_of: dict[str, list[_ElfMember]] = {}
    for item in elf_members:
        for soname in item.facts.needed if item.facts else ():
            provider = by_name.get(soname)
            if provider is not None:
                consumers_of.setdefault(provider.member.name, []).append(item)

    vendored: dict[str, VendoredCopy] = {}
    for item in elf_members:
        basename = posixpath.basename(item.member.name)
        parsed = parse_library_file_name(basename)
        if is_driver_library(basename) or (
            item.facts and item.facts.soname and is_driver_library(item.facts.soname)
        ):
            findings.append(
                Finding(
                    FindingKind.BUNDLED_DRIVER,
                    Severity.ERROR,
                    item.member.name,
                    "bundles the NVIDIA driver library: it must come from the host, never from a wheel",
                )
            )
            continue
        consumers = consumers_of.get(item.member.name, [])
        original, said = _original_soname(item, parsed, consumers)
        identified = _identify(catalog, record_sha.get(item.member.name), original, parsed)
        if (
            not said
            and identified is not None
            and identified.confidence in _FILE_LEVEL
            and identified.soname.startswith(original + ".")
        ):
            # The release's own file refines the guess from the name: libnvrtc-builtins.so.12.6,
            # not .so.12. A soname that contradicts the name is not taken.
            original = identified.soname
        stem = parse_library_file_name(original)
        if is_provider_wheel or (identified is None and (stem is None or stem.stem not in nvidia_names)):
            continue
        copy = VendoredCopy(
            path=item.member.name,
            name=stem.stem if stem else basename,
            original_soname=original,
            style=parsed.style if parsed else NameStyle.PLAIN,
            size=item.member.file_size,
            compressed_size=item.member.compress_size,
            identified=identified,
            needed_by=tuple(sorted(c.member.name for c in consumers)),
        )
        vendored[item.member.name] = copy
        where = (
            f"{identified.distribution} {identified.version} ({identified.confidence.value})"
            if identified
            else "no NVIDIA wheel matched"
        )
        findings.append(
            Finding(
                FindingKind.VENDORED_NVIDIA,
                Severity.WARNING,
                item.member.name,
                f"vendored copy of {original} ({copy.size} bytes): {where}",
            )
        )

    return vendored


def analyse_wheel(
    wheel: ArchiveSource,
    catalog: Catalog,
    *,
    scan_strings: bool = True,
    jobs: int | None = None,
    parallel_bytes: int = PARALLEL_BYTES,
    unread: Iterable[str] = (),
) -> WheelReport:
    """Analyse every ELF member of ``wheel`` against what NVIDIA's wheels provide.

    ``jobs``: worker processes for local wheels whose ELF candidates hold ``parallel_bytes`` or more
    (default: the CPUs, at most 4; 1: none). Members named in ``unread`` are taken as ELF files without
    reading them: repair passes the copies it will drop (see :func:`named_like_copies`), which their
    RECORD hash, their name and their consumers' version needs identify, since inflating a 500 MB copy
    would be most of its time.
    """
    if jobs is None:
        jobs = min(os.cpu_count() or 1, 4)
    elf_members, findings, others = _read_members(
        wheel, scan_strings, jobs, parallel_bytes, frozenset(unread)
    )
    vendored = _find_vendored(wheel, catalog, elf_members, findings)
    by_name: dict[str, _ElfMember] = {}
    for item in elf_members:
        by_name.setdefault(posixpath.basename(item.member.name), item)

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
                )
            )
            continue
        resolved = tuple(_resolve(soname, by_name, vendored, catalog) for soname in facts.needed)
        for need in resolved:
            if need.resolution is Resolution.UNRESOLVED:
                findings.append(
                    Finding(
                        FindingKind.UNRESOLVED_NEEDED,
                        Severity.WARNING,
                        item.member.name,
                        f"needs {need.soname}: not in the wheel, not an NVIDIA wheel's, not a system library",
                    )
                )
        findings += rpath_problems(item.member.name, "RPATH", facts.rpath)
        findings += rpath_problems(item.member.name, "RUNPATH", facts.runpath)
        if item.member.name not in vendored:
            own = parse_library_file_name(facts.soname or posixpath.basename(item.member.name))
            linked, loaded = _static_code(item, own.stem if own else None)
            for code in linked:
                static.append(code)
                severity = Severity.INFO if code.is_runtime else Severity.WARNING
                findings.append(
                    Finding(
                        FindingKind.STATIC_NVIDIA,
                        severity,
                        item.member.name,
                        f"contains {code.library} code statically "
                        f"({code.symbols} symbols, ~{code.symbol_bytes} bytes"
                        f"{', exported' if code.exported else ''}); it cannot be unlinked, only rebuilt",
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
            )
        )

    removable = [copy for copy in vendored.values() if copy.identified is not None]
    saved = sum(copy.compressed_size + _zip_overhead(copy.path) for copy in removable)
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


def _zip_overhead(name: str) -> int:
    """Local header + central directory entry of one member, without extra fields."""
    return 30 + 46 + 2 * len(name.encode())


def _resolve(
    soname: str, by_name: Mapping[str, _ElfMember], vendored: Mapping[str, VendoredCopy], catalog: Catalog
) -> NeededLibrary:
    inside = by_name.get(soname)
    if inside is not None:
        if inside.member.name in vendored:
            return NeededLibrary(soname, Resolution.VENDORED, (inside.member.name,))
        return NeededLibrary(soname, Resolution.WHEEL, (inside.member.name,))
    if is_driver_library(soname):
        return NeededLibrary(soname, Resolution.DRIVER)
    providers = catalog.providers(soname=soname)
    if providers:
        distributions = tuple(dict.fromkeys(p.distribution for p in providers))
        return NeededLibrary(soname, Resolution.NVIDIA_WHEEL, distributions)
    if is_system_library(soname):
        return NeededLibrary(soname, Resolution.SYSTEM)
    return NeededLibrary(soname, Resolution.UNRESOLVED)
