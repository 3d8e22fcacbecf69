"""The report's data: what a wheel bundles, links statically, needs, and what it costs (plain frozen
dataclasses, made by :func:`slimwheel.analysis.analyse_wheel`), and the record of one ELF member as read,
which the later steps share.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from slimwheel.analysis.libraries import STATIC_ONLY
from slimwheel.elf import ElfFacts, Symbol
from slimwheel.findings import Finding, Severity
from slimwheel.names import NameStyle
from slimwheel.wheel import WheelMember

__all__ = [
    "Confidence",
    "ElfReport",
    "IdentifiedRelease",
    "LazyLoad",
    "NeededLibrary",
    "Resolution",
    "StaticCode",
    "VendoredCopy",
    "WheelReport",
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

    @property
    def by_the_file(self) -> bool:
        """The file itself names the release (its sha256 or its file version), so its CUDA major is
        known; a soname alone is shared by the releases of several majors."""
        return self.confidence in (Confidence.EXACT, Confidence.BY_NAME)


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

    @property
    def static_archive(self) -> str | None:
        """The archive NVIDIA ships the library as, when it ships no shared library of it at all
        (nvidia-nvptxcompiler holds ``libnvptxcompiler_static.a`` alone): its code has to stay."""
        return STATIC_ONLY.get(self.library)


@dataclass(frozen=True)
class LazyLoad:
    """An NVIDIA library that a file loads at run time (dlopen) through trampolines instead of linking
    its code in: Implib.so's shims, as XLA/TSL's CUDA stubs (``cublasCreate_v2`` of size 0 doing
    ``jmp *_cublas_tramp_table(%rip)``; the table is filled from the library, dlopen'ed by soname at
    the first call); or functions of the library's API names that forward to what dlsym found in it
    (``file_name``, ``pointer``). The library must then be found at run time, like a DT_NEEDED one."""

    path: str
    library: str
    # Trampolines found: API-named symbols of size 0 in code sections; 0 when only the table tells
    # (the driver's cu* entry points are not API-named, so ``cuda`` has no count).
    symbols: int
    exported: bool  # some trampolines are in .dynsym (not only .symtab)
    tramp_table: str | None = None  # the ``_<lib>_tramp_table`` symbol, when the file has one
    # The library's file name a dlopen shim holds (``libnvrtc.so``): its API-named functions forward to
    # what dlsym finds there (TVM's and tilelang's ``libstub_nvrtc.so``), and ``symbols`` counts them.
    file_name: str | None = None
    # The function-local static in which each forwarding function keeps the address dlsym gave
    # (TensorFlow's ``func_ptr``): its API-named functions forward to a library dlopen'ed by a name
    # built at run time, and ``symbols`` counts them.
    pointer: str | None = None


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
    # import loads it as an extension module (an ABI-tagged name, or an untagged one exporting PyInit_)
    extension_module: bool = False
    # A program (ET_EXEC, or an interpreter and no SONAME): run directly, so nothing of the wheel is
    # loaded before it, as for an extension module.
    program: bool = False
    # NVIDIA libraries it needs and imports no symbol from (see analysis.wheel._unused_needed)
    unused_needed: tuple[str, ...] = ()


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


@dataclass
class _ElfMember:
    member: WheelMember
    installed: str
    facts: ElfFacts | None
    error: str | None
    exported_api: tuple[Symbol, ...] = ()  # .dynsym symbols with an NVIDIA API prefix (or trampoline tables)
    internal_api: tuple[Symbol, ...] = ()  # .symtab ones
    rodata_strings: tuple[str, ...] = ()  # see analysis.inspect._Inspection
    extension_module: bool = False  # see analysis.inspect._is_extension_module
    foreign_imports: bool | None = None  # see analysis.inspect._imports_from_unknown_libraries
