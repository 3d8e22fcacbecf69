"""One vocabulary of findings for every command: what a finding is about, how bad it is, where.

``show`` (analysis) and ``check`` (the simulated install) used to keep two enums joined by their string
values; a finding is now one type, whichever command made it, and a kind has one value everywhere
(``--json`` prints it). A few kinds have a second, shorter name (``UNRESOLVED`` for
``UNRESOLVED_NEEDED``): enum aliases, the same member.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Finding", "FindingKind", "Pin", "Severity"]


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class FindingKind(enum.Enum):
    # What a wheel holds (show, and check where it bears on loading).
    VENDORED_NVIDIA = "vendored-nvidia"  # a vendored copy of an NVIDIA library
    VENDORED = "vendored-nvidia"  # noqa: PIE796 - an alias (check: a copy no NVIDIA wheel provides here, the only way for now)
    # a library under a soname others build too (ocl-icd's libOpenCL.so.1) that no NVIDIA release matches
    NOT_NVIDIA_BUILD = "not-nvidia-build"
    STATIC_NVIDIA = "static-nvidia"
    DLOPEN_NVIDIA = "dlopen-nvidia"  # trampolines that load an NVIDIA library at run time (info)
    # symbols bound to a library (a version need) the file has no DT_NEEDED for: loaded by others only
    BOUND_NOT_NEEDED = "bound-not-needed"
    # an NVIDIA library needed that nothing is imported from (over-linking: no -Wl,--as-needed)
    UNUSED_NEEDED = "unused-needed"
    # symbol versions of host libraries (GLIBC_2.38) newer than the wheel's manylinux tag promises
    NEWER_THAN_TAG = "newer-than-tag"
    BUNDLED_DRIVER = "bundled-driver"
    # an ELF file of another machine than the wheel's platform (a cross-compilation target's runtime,
    # nvidia-cutlass-dsl-libs-qnx-cu12's aarch64 QNX library in an x86_64 wheel): never loaded here
    OTHER_MACHINE = "other-machine"
    NOT_ELF = "not-elf"  # named like a shared object or extension module, but text, empty...: unloadable
    CORRUPT_ELF = "corrupt-elf"
    # RPATH/RUNPATH entries, as glibc reads them (slimwheel.ldso).
    EMPTY_RPATH_ENTRY = "empty-rpath-entry"
    RELATIVE_RPATH_ENTRY = "relative-rpath-entry"
    ABSOLUTE_RPATH_ENTRY = "absolute-rpath-entry"
    OUTSIDE_TREE = "outside-tree-entry"  # an $ORIGIN entry that leaves site-packages
    UNSIMULATED_ENTRY = "unsimulated-entry"  # $LIB, $PLATFORM: depend on the host's glibc build
    # Where the loader finds each DT_NEEDED once installed (check).
    UNRESOLVED_NEEDED = "unresolved-needed"
    UNRESOLVED = "unresolved-needed"  # noqa: PIE796 - an alias
    VENDORED_WHILE_PROVIDED = "vendored-while-provided"
    MISSING_REQUIREMENT = "missing-requirement"
    LOADS_UNREADABLE = "loads-unreadable"  # the file found by name is not a loadable ELF file
    SPLIT_INSTALL = "split-install"  # found through $ORIGIN/.. in another distribution's folder
    PRELOADED = "found-preloaded"  # found only because a preloaded requirement loaded that soname first
    LOADED_FIRST = "found-loaded-first"  # found only if this wheel's file of that soname is loaded first
    # found only if the package's own code loads that soname first, as the file that names it suggests
    LOADED_BY_CODE = "found-loaded-by-code"
    THROUGH_EXTRA = "found-through-extra"  # found only in an NVIDIA wheel one of the wheel's extras installs
    # found in an NVIDIA wheel that only another requirement's own requirements bring (libraft-cu13's)
    THROUGH_REQUIREMENT = "found-through-requirement"
    # found through DT_RUNPATH, but it loads another library by soname, which only DT_RPATH serves (NVRTC)
    LOAD_NEEDS_RPATH = "load-needs-rpath"
    # a provider's file needs an NVIDIA library no requirement brings (cutensor-cu13 needs cuBLASLt)
    PROVIDER_NEEDS_UNREQUIRED = "provider-needs-unrequired"
    # What the requirements allow (check).
    NO_RELEASE = "no-release"  # a requirement admits no release the catalog knows for the platform
    BAD_REQUIREMENT = "bad-requirement"
    REQUIREMENT_FILES_UNREAD = "requirement-files-unread"  # a requirement's files could not be learned


@dataclass(frozen=True, order=True)
class Pin:
    """One version of one provider: an NVIDIA distribution, or another requirement read from the index."""

    distribution: str
    version: str

    def __str__(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    severity: Severity
    path: str  # the wheel member it is about ("" for the wheel's metadata)
    message: str
    soname: str | None = None  # the DT_NEEDED it is about, if any
    versions: tuple[Pin, ...] = ()  # the provider versions it applies to; (): all of them
    # Of a soname not found (unresolved-needed): why, and what to do, in words that hold for every
    # file it is said of (the message adds where this file searched); findings with the same cause
    # have one fix, and check and repair say them on one line.
    cause: str | None = None
