"""The loader's facts: where a copy of a library was found, what was loaded, what a search saw."""

from __future__ import annotations

import ctypes
import enum
import os
from dataclasses import dataclass

__all__ = [
    "Candidate",
    "Considered",
    "Loaded",
    "MappedLibrary",
    "Policy",
    "Rejection",
    "Search",
    "SearchedPlace",
    "Source",
]


class Source(enum.Enum):
    """How a copy was found (``Loaded.how``)."""

    OVERRIDE = "override variable"  # SLIMWHEEL_<STEM>_PATH
    ALREADY_LOADED = "already loaded"  # mapped in this process before load() was asked
    WHEEL = "wheel"  # a file an installed distribution's RECORD lists, on sys.path
    CONDA = "conda"  # $CONDA_PREFIX/lib
    CUDA_HOME = "CUDA_HOME"  # $CUDA_HOME or $CUDA_PATH, lib64 and lib
    SYSTEM = "system"  # LD_LIBRARY_PATH, /etc/ld.so.cache, the default folders


class Policy(str, enum.Enum):
    """Which sources are tried, in which order (the override variable always comes first)."""

    WHEEL_FIRST = "wheel-first"
    SYSTEM_FIRST = "system-first"
    WHEEL_ONLY = "wheel-only"

    @property
    def order(self) -> tuple[Source, ...]:
        if self is Policy.WHEEL_FIRST:
            return (Source.WHEEL, Source.CONDA, Source.CUDA_HOME, Source.SYSTEM)
        if self is Policy.SYSTEM_FIRST:
            return (Source.CONDA, Source.CUDA_HOME, Source.SYSTEM, Source.WHEEL)
        return (Source.WHEEL,)


@dataclass(frozen=True)
class Candidate:
    """One copy of a library on this machine, before it is loaded.

    ``distribution``/``version`` name the installed distribution whose RECORD
    lists the file (None outside wheels). ``cuda_major_from`` says how the major was learned:
    "distribution name", "folder", "METADATA" (cuda-toolkit requirement or classifier), or None.
    """

    path: str  # absolute; a bare soname only for the system loader's own search (see _loader)
    soname: str
    source: Source
    distribution: str | None = None
    version: str | None = None
    cuda_major: int | None = None
    cuda_major_from: str | None = None
    place: str = ""  # the sys.path entry, folder or variable it was found through


class Rejection(enum.Enum):
    """Why a copy found was not used."""

    NOT_LOADABLE = "not loadable here"  # not ELF, or another architecture than this Python
    DISTRIBUTION = "another distribution"  # preload asked for the manifest's provider
    CUDA_MAJOR = "another CUDA major"
    VERSION = "too old"
    DLOPEN = "dlopen failed"  # a missing dependency, say (after loading was tried)


@dataclass(frozen=True)
class Considered:
    """A candidate and, when it cannot serve this request, why (``rejected`` says it in words)."""

    candidate: Candidate
    rejection: Rejection | None = None
    rejected: str | None = None


@dataclass(frozen=True)
class SearchedPlace:
    """One place a search looked, in words: "SLIMWHEEL_CUDSS_PATH (unset)", "installed
    distributions' RECORD on sys.path (/venv/lib/python3.12/site-packages, /opt/target)"."""

    source: Source
    description: str


@dataclass(frozen=True)
class Search:
    """What a search for one library saw: every candidate in the order they would be tried
    (``considered``), and every place searched (``places``), for messages and doctor."""

    wanted: str  # "cudss (CUDA 13, >= 1.0.0)"
    policy: Policy
    considered: tuple[Considered, ...]
    places: tuple[SearchedPlace, ...]
    override: str | None = None  # "SLIMWHEEL_CUDSS_PATH=/x/libcudss.so.1" when set

    @property
    def viable(self) -> tuple[Candidate, ...]:
        return tuple(item.candidate for item in self.considered if item.rejection is None)


@dataclass(frozen=True)
class Loaded:
    """What ``load`` loaded (or found already loaded).

    ``version`` is the distribution's version when the file came from a wheel; ``library_version``
    is what the library itself reports after loading (``cudssGetProperty`` -> "1.0.0"), None when it
    offers no such call. ``cuda_major_from`` adds "library version" (cudart, NVRTC, cuBLAS report it).
    """

    path: str
    soname: str
    how: Source
    distribution: str | None = None
    version: str | None = None
    library_version: str | None = None
    cuda_major: int | None = None
    cuda_major_from: str | None = None

    def cdll(self) -> ctypes.CDLL:
        """A ctypes handle on the loaded library: dlopen of the same absolute path returns the
        object already in the process (glibc matches the path), it never maps a second copy."""
        return ctypes.CDLL(self.path, mode=os.RTLD_GLOBAL)


@dataclass(frozen=True)
class MappedLibrary:
    """A shared library file mapped in this process (``/proc/self/maps``)."""

    path: str
    stem: str | None  # its soname stem, whatever copy style its name has
