"""The loader's facts: where a copy of a library was found, what was loaded, what a search saw."""

from __future__ import annotations

import ctypes
import os

from ._record import Choice, Record

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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


class Source(Choice):
    """How a copy was found (``Loaded.how``)."""

    __slots__ = ()
    OVERRIDE: ClassVar[Source]  # SLIMWHEEL_<STEM>_PATH
    ALREADY_LOADED: ClassVar[Source]  # mapped in this process before load() was asked
    WHEEL: ClassVar[Source]  # a file an installed distribution's RECORD lists, on sys.path
    CONDA: ClassVar[Source]  # $CONDA_PREFIX/lib
    CUDA_HOME: ClassVar[Source]  # $CUDA_HOME or $CUDA_PATH, lib64 and lib
    SYSTEM: ClassVar[Source]  # LD_LIBRARY_PATH, /etc/ld.so.cache, the default folders


Source._define("OVERRIDE", "override variable")
Source._define("ALREADY_LOADED", "already loaded")
Source._define("WHEEL", "wheel")
Source._define("CONDA", "conda")
Source._define("CUDA_HOME", "CUDA_HOME")
Source._define("SYSTEM", "system")


class Policy(Choice):
    """Which sources are tried, in which order (the override variable always comes first)."""

    __slots__ = ()
    WHEEL_FIRST: ClassVar[Policy]
    SYSTEM_FIRST: ClassVar[Policy]
    WHEEL_ONLY: ClassVar[Policy]

    @property
    def order(self) -> tuple[Source, ...]:
        if self is Policy.WHEEL_FIRST:
            return (Source.WHEEL, Source.CONDA, Source.CUDA_HOME, Source.SYSTEM)
        if self is Policy.SYSTEM_FIRST:
            return (Source.CONDA, Source.CUDA_HOME, Source.SYSTEM, Source.WHEEL)
        return (Source.WHEEL,)


Policy._define("WHEEL_FIRST", "wheel-first")
Policy._define("SYSTEM_FIRST", "system-first")
Policy._define("WHEEL_ONLY", "wheel-only")


class Candidate(Record):
    """One copy of a library on this machine, before it is loaded.

    ``distribution``/``version`` name the installed distribution whose RECORD
    lists the file (None outside wheels). ``cuda_major_from`` says how the major was learned:
    "distribution name", "folder", "METADATA" (cuda-toolkit requirement or classifier), or None.
    """

    __slots__ = (
        "cuda_major",
        "cuda_major_from",
        "distribution",
        "path",
        "place",
        "soname",
        "source",
        "version",
    )
    path: str  # absolute; a bare soname only for the system loader's own search (see _loader)
    soname: str
    source: Source
    distribution: str | None
    version: str | None
    cuda_major: int | None
    cuda_major_from: str | None
    place: str  # the sys.path entry, folder or variable it was found through

    def __init__(
        self,
        path: str,
        soname: str,
        source: Source,
        *,
        distribution: str | None = None,
        version: str | None = None,
        cuda_major: int | None = None,
        cuda_major_from: str | None = None,
        place: str = "",
    ) -> None:
        self._set(
            path=path,
            soname=soname,
            source=source,
            distribution=distribution,
            version=version,
            cuda_major=cuda_major,
            cuda_major_from=cuda_major_from,
            place=place,
        )


class Rejection(Choice):
    """Why a copy found was not used."""

    __slots__ = ()
    NOT_LOADABLE: ClassVar[Rejection]  # not ELF, or another architecture than this Python
    DISTRIBUTION: ClassVar[Rejection]  # preload asked for the manifest's provider
    CUDA_MAJOR: ClassVar[Rejection]
    VERSION: ClassVar[Rejection]
    DLOPEN: ClassVar[Rejection]  # a missing dependency, say (after loading was tried)


Rejection._define("NOT_LOADABLE", "not loadable here")
Rejection._define("DISTRIBUTION", "another distribution")
Rejection._define("CUDA_MAJOR", "another CUDA major")
Rejection._define("VERSION", "too old")
Rejection._define("DLOPEN", "dlopen failed")


class Considered(Record):
    """A candidate and, when it cannot serve this request, why (``rejected`` says it in words)."""

    __slots__ = ("candidate", "rejected", "rejection")
    candidate: Candidate
    rejection: Rejection | None
    rejected: str | None

    def __init__(
        self, candidate: Candidate, rejection: Rejection | None = None, rejected: str | None = None
    ) -> None:
        self._set(candidate=candidate, rejection=rejection, rejected=rejected)


class SearchedPlace(Record):
    """One place a search looked, in words: "SLIMWHEEL_CUDSS_PATH (unset)", "installed
    distributions' RECORD on sys.path (/venv/lib/python3.12/site-packages, /opt/target)"."""

    __slots__ = ("description", "source")
    source: Source
    description: str

    def __init__(self, source: Source, description: str) -> None:
        self._set(source=source, description=description)


class Search(Record):
    """What a search for one library saw: every candidate in the order they would be tried
    (``considered``), and every place searched (``places``), for messages and doctor."""

    __slots__ = ("considered", "override", "places", "policy", "wanted")
    wanted: str  # "cudss (CUDA 13, >= 1.0.0)"
    policy: Policy
    considered: tuple[Considered, ...]
    places: tuple[SearchedPlace, ...]
    override: str | None  # "SLIMWHEEL_CUDSS_PATH=/x/libcudss.so.1" when set

    def __init__(
        self,
        wanted: str,
        policy: Policy,
        considered: tuple[Considered, ...],
        places: tuple[SearchedPlace, ...],
        override: str | None = None,
    ) -> None:
        self._set(wanted=wanted, policy=policy, considered=considered, places=places, override=override)

    @property
    def viable(self) -> tuple[Candidate, ...]:
        return tuple(item.candidate for item in self.considered if item.rejection is None)


class Loaded(Record):
    """What ``load`` loaded (or found already loaded).

    ``version`` is the distribution's version when the file came from a wheel; ``library_version``
    is what the library itself reports after loading (``cudssGetProperty`` -> "1.0.0"), None when it
    offers no such call. ``cuda_major_from`` adds "library version" (cudart, NVRTC, cuBLAS report it).
    """

    __slots__ = (
        "cuda_major",
        "cuda_major_from",
        "distribution",
        "how",
        "library_version",
        "path",
        "soname",
        "version"
    )  # fmt: skip
    path: str
    soname: str
    how: Source
    distribution: str | None
    version: str | None
    library_version: str | None
    cuda_major: int | None
    cuda_major_from: str | None

    def __init__(
        self,
        path: str,
        soname: str,
        how: Source,
        *,
        distribution: str | None = None,
        version: str | None = None,
        library_version: str | None = None,
        cuda_major: int | None = None,
        cuda_major_from: str | None = None,
    ) -> None:
        self._set(
            path=path,
            soname=soname,
            how=how,
            distribution=distribution,
            version=version,
            library_version=library_version,
            cuda_major=cuda_major,
            cuda_major_from=cuda_major_from,
        )

    def cdll(self) -> ctypes.CDLL:
        """A ctypes handle on the loaded library: dlopen of the same absolute path returns the
        object already in the process (glibc matches the path), it never maps a second copy."""
        return ctypes.CDLL(self.path, mode=os.RTLD_GLOBAL)


class MappedLibrary(Record):
    """A shared library file mapped in this process (``/proc/self/maps``)."""

    __slots__ = ("path", "stem")
    path: str
    stem: str | None  # its soname stem, whatever copy style its name has

    def __init__(self, path: str, stem: str | None) -> None:
        self._set(path=path, stem=stem)
