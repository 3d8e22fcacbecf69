"""Find NVIDIA libraries, their headers and their provider distributions in the build environment.

    python -m slimwheel.build.locate [--cuda N] [--install-dir DIR] [--cmake FILE]
                                     [--record FILE --target NAME] [--json] LIB...
    python -m slimwheel.build.locate --nvcc [--cuda N] [--cmake FILE] [--json]

CMake runs this through the build interpreter (``Python_EXECUTABLE``) at configure time, so whatever
pip installed for the build, in an isolated build environment or not, is what gets linked. Files are
found through installed distributions' RECORD (the run-time loader's ``WheelIndex``), never by
probing folders or unversioned names: NVIDIA's wheels ship only ``libX.so.N``, and their layout
differs per CUDA major (``nvidia/cu13/lib`` against ``nvidia/cudss/lib``).

Headers cross wheels that do not declare each other (``cudss.h`` needs ``cuda_runtime_api.h`` and
``crt/host_defines.h``; ``cuda_fp16.h`` needs CCCL's ``nv/target``), so each library names the
headers its own headers include, and those are found in whichever installed wheel ships them. A
missing wheel is one line naming the ``build-system.requires`` entry to add.
"""

# Paths are the run-time loader's strings (InstalledFile.path, site entries): os.path keeps them so.
# ruff: noqa: PTH113, PTH118, PTH120

from __future__ import annotations

import argparse
import json
import os
import posixpath
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from slimwheel.errors import SlimwheelError
from slimwheel.runtime._index import InstalledFile, WheelIndex
from slimwheel.runtime._names import (
    major_from_distribution,
    major_from_folder,
    soname_version,
    suggested_distribution,
)
from slimwheel.runtime._system import read_soname

__all__ = [
    "COMPANION_HEADERS",
    "LINK_RECORD_NAME",
    "LocateError",
    "LocatedLibrary",
    "Location",
    "NvccLocation",
    "cmake_dir",
    "companion_headers",
    "header_requirement",
    "installed_cuda_major",
    "installed_library_majors",
    "library_requirement",
    "locate",
    "locate_nvcc",
    "main",
    "nvcc_requirements",
    "read_link_record",
    "static_archive_name",
    "update_link_record",
]

LINK_RECORD_NAME = "slimwheel-linked.json"
LINK_RECORD_SCHEMA = "slimwheel.linked/1"

# The headers each library's own headers include from other wheels (read off the CUDA 13 and 12
# wheels' headers): cuDSS's from the runtime and crt; cuBLAS's and the solvers' through cuda_fp16.h
# from CCCL as well. A library not listed needs the runtime's headers.
_RUNTIME_HEADERS = ("cuda_runtime_api.h", "crt/host_defines.h")
_FP16_HEADERS = (*_RUNTIME_HEADERS, "nv/target")
COMPANION_HEADERS: Mapping[str, tuple[str, ...]] = {
    "cudart": ("crt/host_defines.h",),
    "cudss": _RUNTIME_HEADERS,
    "cublas": _FP16_HEADERS,
    "cublasLt": _FP16_HEADERS,
    "cusolver": _FP16_HEADERS,
    "cusparse": _FP16_HEADERS,
    "cufft": _RUNTIME_HEADERS,
    "curand": _RUNTIME_HEADERS,
    "nvrtc": (),
    "nvJitLink": (),
}

# cuda-toolkit's extras for CUDA 13 and later (the toolkit's own pinning of its parts), per library.
_TOOLKIT_EXTRA = {
    "cudart": "cudart",
    "cublas": "cublas",
    "cublasLt": "cublas",
    "nvblas": "cublas",
    "nvrtc": "nvrtc",
    "nvrtc-builtins": "nvrtc",
    "cufft": "cufft",
    "cufftw": "cufft",
    "curand": "curand",
    "cusolver": "cusolver",
    "cusolverMg": "cusolver",
    "cusparse": "cusparse",
    "nvJitLink": "nvjitlink",
    "cupti": "cupti",
    "nvvm": "nvvm",
}
# Which wheel ships a companion header: cuda-toolkit's extra for CUDA 13, the distribution for 12
# (CUDA 12's crt/ ships with nvcc; its runtime wheel has only the top-level wrappers).
_HEADER_EXTRA = {"cuda_runtime_api.h": "cudart", "crt/host_defines.h": "crt", "nv/target": "cccl"}
_HEADER_CU12 = {
    "cuda_runtime_api.h": "nvidia-cuda-runtime-cu12",
    "crt/host_defines.h": "nvidia-cuda-nvcc-cu12",
    "nv/target": "nvidia-cuda-cccl-cu12",
}
# The driver comes from the host, never from a wheel (a wheel that ships libcuda.so.1 is wrong).
_HOST_ONLY = frozenset({"cuda", "nvidia-ml"})


class LocateError(SlimwheelError):
    """A library, header or compiler the build asks for is not in the build environment."""


@dataclass(frozen=True)
class LocatedLibrary:
    name: str  # soname stem: "cudss"
    soname: str  # from the file itself: "libcudss.so.1"
    path: str  # the versioned file, absolute
    folder: str  # its folder, absolute
    site_folder: str  # its folder relative to the site-packages holding it: "nvidia/cu13/lib"
    distribution: str  # PEP 503 normalized: "nvidia-cudss-cu13"
    version: str  # installed: "1.0.0.35"
    cuda_major: int | None
    requirement: str  # what build-system.requires needs for it: "nvidia-cudss-cu13"
    include_dirs: tuple[str, ...]  # its own headers', then its companions'
    companions: tuple[tuple[str, str], ...]  # (header, distribution that ships it)
    rpath: str | None  # $ORIGIN-relative entry from the install dir, when one was given
    # Linked from the archive ``path`` (lib<name>_static.a) into the target: nothing to load at run
    # time, so no soname, RPATH entry or Requires-Dist for it (static-fallback).
    static: bool = False


@dataclass(frozen=True)
class Location:
    cuda_major: int | None
    python: str
    libraries: tuple[LocatedLibrary, ...]

    @property
    def include_dirs(self) -> tuple[str, ...]:
        return _unique(d for library in self.libraries for d in library.include_dirs)

    @property
    def rpath(self) -> tuple[str, ...]:
        return _unique(library.rpath for library in self.libraries if library.rpath)


@dataclass(frozen=True)
class NvccLocation:
    nvcc: str
    root: str  # the folder above bin/ (nvcc.profile's TOP): the CUDA toolkit root CMake wants
    distribution: str
    version: str
    cuda_major: int | None
    include_dirs: tuple[str, ...]


def cmake_dir() -> Path:
    """The folder holding ``slimwheel.cmake`` (for ``CMAKE_MODULE_PATH`` and ``CMAKE_PREFIX_PATH``)."""
    return Path(__file__).resolve().parent.parent / "cmake"


def library_requirement(stem: str, major: int | None) -> str:
    """What to add to ``build-system.requires`` for a library: ``cuda-toolkit[cublas]==13.*``,
    ``nvidia-cudss-cu13``, ``nvidia-cuda-runtime-cu12``."""
    if major is None:
        options = [library_requirement(stem, m) for m in (13, 12)]
        return " (CUDA 13) or ".join(options) + " (CUDA 12)"
    if major >= 13 and stem in _TOOLKIT_EXTRA:
        return f"cuda-toolkit[{_TOOLKIT_EXTRA[stem]}]=={major}.*"
    return suggested_distribution(stem, major) or f"the wheel that ships lib{stem}.so"


def header_requirement(header: str, major: int | None) -> str:
    if major is not None and major <= 12:
        # CUDA 11's companion wheels are CUDA 12's under the -cu11 name.
        known = _HEADER_CU12.get(header)
        return (
            known.replace("-cu12", f"-cu{major}") if known else f"the CUDA {major} wheel that ships {header}"
        )
    return f"cuda-toolkit[{_HEADER_EXTRA.get(header, 'all')}]=={major or 13}.*"


def companion_headers(stem: str) -> tuple[str, ...]:
    """The headers from other wheels that ``stem``'s own headers include (the runtime's by default)."""
    return COMPANION_HEADERS.get(stem, _RUNTIME_HEADERS)


def nvcc_requirements(major: int) -> tuple[str, ...]:
    """What compiling ``.cu`` sources with the wheels' nvcc needs: nvcc (with nvvm), crt, CCCL."""
    headers = tuple(header_requirement(h, major) for h in ("crt/host_defines.h", "nv/target"))
    if major >= 13:
        return (f"cuda-toolkit[nvcc]=={major}.*", *headers)
    return (f"nvidia-cuda-nvcc-cu{major}", *headers)


def installed_library_majors(stem: str, paths: Sequence[str] | None = None) -> set[int | None]:
    """The CUDA majors of the installed wheels that ship ``lib<stem>.so.N`` (None: a wheel of no major)."""
    environment = _Environment(WheelIndex(paths))
    return {environment.major_of(item) for item in environment.library_candidates(stem)}


def static_archive_name(stem: str) -> str:
    """The static archive NVIDIA names beside ``lib<stem>.so``: ``libcudart_static.a``."""
    return f"lib{stem}_static.a"


def installed_cuda_major(paths: Sequence[str] | None = None) -> int | None:
    """The one CUDA major the installed NVIDIA wheels agree on (None: none installed, or two)."""
    return _Environment(WheelIndex(paths)).major()


def locate(
    names: Sequence[str],
    *,
    cuda: int | None = None,
    install_dir: str | None = None,
    optional: bool = False,
    paths: Sequence[str] | None = None,
    static: Sequence[str] = (),
) -> Location:
    """Each library's versioned file, headers and provider in the environment of ``paths``
    (default: this interpreter's ``sys.path``); raises :class:`LocateError` with one line.
    ``optional``: libraries no installed wheel ships are left out (FindCUDAToolkit's set).
    ``static``: those of ``names`` to link from their ``lib<name>_static.a`` instead."""
    index = WheelIndex(paths)
    environment = _Environment(index)
    static_names = [name for name in _unique(names) if name in static]
    found = {name: environment.library_candidates(name) for name in _unique(names) if name not in static}
    if optional:
        found = {name: items for name, items in found.items() if items}
    major = cuda if cuda is not None else _single_major(found)
    if major is None:  # nothing asked for is installed: the environment's major words the message
        major = environment.major()
    libraries = tuple(environment.library(name, found[name], major, install_dir) for name in found)
    libraries += tuple(environment.static_library(name, major) for name in static_names)
    return Location(
        cuda_major=major if major is not None else _first_major(libraries),
        python=sys.executable,
        libraries=libraries,
    )


def locate_nvcc(*, cuda: int | None = None, paths: Sequence[str] | None = None) -> NvccLocation:
    """nvcc from the ``nvidia-cuda-nvcc`` wheel, with the headers it compiles against beside it."""
    environment = _Environment(WheelIndex(paths))
    candidates = [
        hit for hit in environment.record_files("bin/nvcc") if cuda is None or hit.major in (None, cuda)
    ]
    if not candidates:
        raise LocateError(
            f"no nvcc in the build environment ({sys.executable}): add "
            f"{library_requirement('nvvm', cuda or 13).replace('[nvvm]', '[nvcc]')} to build-system.requires"
        )
    majors = sorted({hit.major for hit in candidates if hit.major is not None})
    if cuda is None and len(majors) > 1:
        raise LocateError(
            _two_majors("nvcc", {m: [h.distribution for h in candidates if h.major == m] for m in majors})
        )
    hit = candidates[0]
    root = hit.root  # .../nvidia/cu13: nvcc.profile's TOP
    include = os.path.join(root, "include")
    for header in ("crt/host_defines.h", "cuda_runtime.h"):
        if not os.path.isfile(os.path.join(include, header)):
            raise LocateError(
                f"nvcc from {hit.distribution} compiles against {include}, which has no {header}: "
                f"add {header_requirement(header, hit.major)} to build-system.requires"
            )
    if not os.path.isfile(os.path.join(root, "nvvm", "bin", "cicc")):
        raise LocateError(
            f"nvcc from {hit.distribution} needs nvvm/bin/cicc beside it: add "
            f"{library_requirement('nvvm', hit.major)} to build-system.requires"
        )
    return NvccLocation(
        nvcc=os.path.join(root, "bin", "nvcc"),
        root=root,
        distribution=hit.distribution,
        version=hit.version,
        cuda_major=hit.major,
        include_dirs=(include,),
    )


@dataclass(frozen=True)
class _RecordHit:
    root: str  # the path with the wanted suffix cut off
    distribution: str
    version: str
    major: int | None


class _Environment:
    """The build environment's installed distributions: libraries through ``WheelIndex``, other files
    (headers, nvcc) through the same RECORD files."""

    def __init__(self, index: WheelIndex) -> None:
        self.index = index
        self._records: list[tuple[str, str, str, str, list[str]]] | None = None

    def static_library(self, name: str, major: int | None) -> LocatedLibrary:
        """``lib<name>_static.a`` from an installed wheel of ``major``, with its wheel's headers and
        the companions its headers need."""
        archive = static_archive_name(name)
        hits = [h for h in self.record_files(archive) if major is None or h.major in (None, major)]
        if not hits:
            raise LocateError(
                f"{name}: no installed wheel ships {archive}"
                + (f" for CUDA {major}" if major is not None else "")
                + f" (looked in the RECORD of every distribution on {sys.executable}'s sys.path): "
                "nothing to link it statically from"
            )
        hit = hits[0]
        item_major = hit.major if major is None else major
        own = [
            os.path.normpath(os.path.join(site, head, "include"))
            for site, _dist_info, dist, _version, paths in self._iter_records()
            if dist == hit.distribution
            for head, marker, _tail in (p.partition("/include/") for p in paths)
            if marker
        ]
        extra = []
        companions = []
        for header in companion_headers(name):
            found = self._header(header, item_major)
            if found is not None:  # a static link may need fewer headers: only what is there is added
                companions.append((header, found.distribution))
                extra.append(found.root)
        path = os.path.join(hit.root, archive)
        return LocatedLibrary(
            name=name,
            soname="",
            path=path,
            folder=hit.root,
            site_folder="",
            distribution=hit.distribution,
            version=hit.version,
            cuda_major=item_major,
            requirement="",
            include_dirs=_unique([*sorted(set(own)), *extra]),
            companions=tuple(companions),
            rpath=None,
            static=True,
        )

    def library_candidates(self, name: str) -> list[InstalledFile]:
        files = [n for n in self.index.by_name if soname_version(n, name) not in (None, ())]
        return [item for item in self.index.files(files) if "/stubs/" not in item.path]

    def major_of(self, item: InstalledFile) -> int | None:
        return self.index.cuda_major(item)[0]

    def library(
        self, name: str, candidates: list[InstalledFile], major: int | None, install_dir: str | None
    ) -> LocatedLibrary:
        if name in _HOST_ONLY:
            raise LocateError(
                f"lib{name} comes from the NVIDIA driver on the machine that runs the code, not from a "
                "wheel: link nothing for it (the driver API is loaded at run time)"
            )
        fitting = [c for c in candidates if major is None or self.major_of(c) in (None, major)]
        if not fitting:
            if candidates:
                have = ", ".join(
                    sorted({f"{c.distribution} {c.version} (CUDA {self.major_of(c)})" for c in candidates})
                )
                raise LocateError(
                    f"{name}: no installed wheel provides it for CUDA {major} (installed: {have}): add "
                    f"{library_requirement(name, major)} to build-system.requires, or build for the "
                    "installed major"
                )
            if suggested_distribution(name, 13) is None and name not in _TOOLKIT_EXTRA:
                raise LocateError(
                    f"{name}: no installed wheel provides a library named lib{name}.so.N (looked in the "
                    f"RECORD of every distribution on {sys.executable}'s sys.path); check the name "
                    "(a soname stem such as cudss, cublas, cudart)"
                )
            raise LocateError(
                f"{name}: lib{name}.so.N is not in the build environment ({sys.executable}): add "
                f"{library_requirement(name, major)} to build-system.requires"
            )
        # The newest soname first (libcudss.so.1 over .so.0), then sys.path order.
        chosen = sorted(
            enumerate(fitting), key=lambda pair: (soname_version(pair[1].name, name) or (), -pair[0])
        )[-1][1]
        item_major = self.major_of(chosen) if major is None else major
        folder = os.path.dirname(chosen.path)
        site_folder = os.path.relpath(folder, chosen.site).replace(os.sep, "/")
        own = self._include_roots(chosen)
        companions: list[tuple[str, str]] = []
        extra_dirs: list[str] = []
        for header in companion_headers(name):
            hit = self._header(header, item_major)
            if hit is None:
                raise LocateError(
                    f"{name}'s headers need {header}, which no installed wheel provides: add "
                    f"{header_requirement(header, item_major)} to build-system.requires"
                )
            companions.append((header, hit.distribution))
            extra_dirs.append(hit.root)
        return LocatedLibrary(
            name=name,
            soname=read_soname(chosen.path) or chosen.name,
            path=chosen.path,
            folder=folder,
            site_folder=site_folder,
            distribution=chosen.distribution,
            version=chosen.version,
            cuda_major=item_major,
            requirement=library_requirement(name, item_major),
            include_dirs=_unique([*own, *extra_dirs]),
            companions=tuple(companions),
            rpath=_rpath(install_dir, site_folder) if install_dir is not None else None,
        )

    def major(self) -> int | None:
        """The one CUDA major the installed NVIDIA wheels agree on, else None."""
        majors = set()
        for _site, _dist_info, name, _version, paths in self._iter_records():
            if name.startswith(("nvidia-", "cuda-")):
                major = major_from_distribution(name)
                if major is None:
                    major = next((major_from_folder(p) for p in paths if p.startswith("nvidia/cu")), None)
                if major is not None:
                    majors.add(major)
        return majors.pop() if len(majors) == 1 else None

    def _include_roots(self, item: InstalledFile) -> list[str]:
        roots = []
        for site, dist_info, _name, _version, paths in self._iter_records():
            if dist_info != item.dist_info:
                continue
            for relative in paths:
                head, marker, _tail = relative.partition("/include/")
                if marker:
                    roots.append(os.path.normpath(os.path.join(site, head, "include")))
        return list(_unique(sorted(roots)))

    def _header(self, header: str, major: int | None) -> _RecordHit | None:
        hits = [h for h in self.record_files(header) if major is None or h.major in (None, major)]
        return hits[0] if hits else None

    def record_files(self, suffix: str) -> list[_RecordHit]:
        """Installed files whose RECORD path ends with ``/<suffix>``, in sys.path order."""
        hits = []
        for site, _dist_info, name, version, paths in self._iter_records():
            for relative in paths:
                if relative.endswith("/" + suffix):
                    root = os.path.normpath(os.path.join(site, relative[: -len(suffix) - 1]))
                    major = major_from_distribution(name) or major_from_folder(relative)
                    hits.append(_RecordHit(root, name, version, major))
        return hits

    def _iter_records(self) -> Iterator[tuple[str, str, str, str, list[str]]]:
        if self._records is None:
            self._records = []
            for site in self.index.sites:
                for dist_info, name, version in _dist_infos(site):
                    try:
                        text = Path(dist_info, "RECORD").read_text(encoding="utf-8", errors="replace")
                    except OSError:
                        continue
                    paths = [line.split(",", 1)[0] for line in text.splitlines() if line]
                    self._records.append((site, dist_info, name, version, paths))
        yield from ((s, d, n, v, p) for s, d, n, v, p in self._records)


def _dist_infos(site: str) -> list[tuple[str, str, str]]:
    from slimwheel.runtime._names import normalize_distribution

    found = []
    try:
        entries = sorted(e.name for e in os.scandir(site) if e.name.endswith(".dist-info"))
    except OSError:
        return []
    for folder in entries:
        name, _, version = folder[: -len(".dist-info")].rpartition("-")
        if name:
            found.append((os.path.join(site, folder), normalize_distribution(name), version))
    return found


def _rpath(install_dir: str, site_folder: str) -> str:
    # The rule repair uses, written once there: from a file in install_dir to the provider's folder.
    from slimwheel.ldso import rpath_entry

    directory = posixpath.normpath(install_dir.replace(os.sep, "/").strip("/") or ".")
    return rpath_entry(posixpath.join(directory, "_"), site_folder)


def _single_major(found: Mapping[str, list[InstalledFile]]) -> int | None:
    """The one CUDA major the installed candidates agree on; two majors is an error."""
    index_majors: dict[int, set[str]] = {}
    for items in found.values():
        for item in items:
            major = major_from_distribution(item.distribution) or major_from_folder(item.path)
            if major is not None:
                index_majors.setdefault(major, set()).add(f"{item.distribution} {item.version}")
    if len(index_majors) > 1:
        raise LocateError(_two_majors(", ".join(found), {m: sorted(d) for m, d in index_majors.items()}))
    return next(iter(index_majors), None)


def _two_majors(what: str, by_major: Mapping[int, Iterable[str]]) -> str:
    listed = "; ".join(f"CUDA {m}: {', '.join(d)}" for m, d in sorted(by_major.items()))
    return (
        f"{what}: wheels for two CUDA majors are installed ({listed}): keep one major in "
        "build-system.requires, or pick one with -DSLIMWHEEL_CUDA_MAJOR=N"
    )


def _first_major(libraries: Iterable[LocatedLibrary]) -> int | None:
    return next((library.cuda_major for library in libraries if library.cuda_major is not None), None)


def _unique(items: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


# -- the link record --------------------------------------------------------------------------------


def read_link_record(path: Path) -> dict[str, Any]:
    """The build tree's record of what was linked (``slimwheel-linked.json``), or an empty one."""
    if not path.is_file():
        return {
            "schema": LINK_RECORD_SCHEMA,
            "cuda_major": None,
            "libraries": [],
            "static": [],
            "targets": {},
        }
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def update_link_record(path: Path, target: str, location: Location, install_dir: str | None) -> None:
    """Add what ``target`` links to the record: library, soname, distribution, installed version (what
    repair and the backend turn into Requires-Dist and the manifest)."""
    record = read_link_record(path)
    libraries = {entry["name"]: entry for entry in record.get("libraries", [])}
    static = {entry["name"]: entry for entry in record.get("static", [])}
    for library in location.libraries:
        if library.static:
            # Not in "libraries": nothing of it is loaded at run time, so no Requires-Dist, no manifest.
            static[library.name] = {
                "name": library.name,
                "linkage": "static",
                "archive": library.path,
                "distribution": library.distribution,
                "version": library.version,
            }
            continue
        libraries[library.name] = {
            "name": library.name,
            "soname": library.soname,
            "distribution": library.distribution,
            "version": library.version,
            "folder": library.site_folder,
            "requirement": library.requirement,
        }
    targets = dict(record.get("targets", {}))
    previous = targets.get(target, {})
    targets[target] = {
        "install_dir": install_dir if install_dir is not None else previous.get("install_dir"),
        "libraries": list(
            _unique(
                [*previous.get("libraries", []), *(lib.name for lib in location.libraries if not lib.static)]
            )
        ),
        "static": list(
            _unique([*previous.get("static", []), *(lib.name for lib in location.libraries if lib.static)])
        ),
    }
    document = {
        "schema": LINK_RECORD_SCHEMA,
        "cuda_major": location.cuda_major if location.cuda_major is not None else record.get("cuda_major"),
        "libraries": [libraries[name] for name in sorted(libraries)],
        "static": [static[name] for name in sorted(static)],
        "targets": {name: targets[name] for name in sorted(targets)},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


# -- what CMake reads --------------------------------------------------------------------------------


def _cmake_quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace(";", "\\;")
    return f'"{escaped}"'


def _cmake_list(values: Iterable[str]) -> str:
    return " ".join(_cmake_quote(v) for v in values)


def cmake_script(location: Location) -> str:
    lines = [
        "# Written by python -m slimwheel.build.locate; read by slimwheel.cmake.",
        f"set(_SLIMWHEEL_LOCATED_MAJOR {_cmake_quote(str(location.cuda_major or ''))})",
        f"set(_SLIMWHEEL_LOCATED {_cmake_list(lib.name for lib in location.libraries)})",
    ]
    for lib in location.libraries:
        prefix = f"_SLIMWHEEL_{lib.name}"
        lines += [
            f"set({prefix}_SONAME {_cmake_quote(lib.soname)})",
            f"set({prefix}_PATH {_cmake_quote(lib.path)})",
            f"set({prefix}_FOLDER {_cmake_quote(lib.folder)})",
            f"set({prefix}_DISTRIBUTION {_cmake_quote(lib.distribution)})",
            f"set({prefix}_VERSION {_cmake_quote(lib.version)})",
            f"set({prefix}_INCLUDE_DIRS {_cmake_list(lib.include_dirs)})",
            f"set({prefix}_RPATH {_cmake_quote(lib.rpath or '')})",
            f"set({prefix}_STATIC {'TRUE' if lib.static else 'FALSE'})",
        ]
    return "\n".join(lines) + "\n"


def nvcc_cmake_script(location: NvccLocation) -> str:
    return "\n".join(
        [
            "# Written by python -m slimwheel.build.locate --nvcc; read by slimwheel.cmake.",
            f"set(_SLIMWHEEL_NVCC {_cmake_quote(location.nvcc)})",
            f"set(_SLIMWHEEL_NVCC_ROOT {_cmake_quote(location.root)})",
            f"set(_SLIMWHEEL_NVCC_MAJOR {_cmake_quote(str(location.cuda_major or ''))})",
            f"set(_SLIMWHEEL_NVCC_DISTRIBUTION {_cmake_quote(location.distribution)})",
            f"set(_SLIMWHEEL_NVCC_VERSION {_cmake_quote(location.version)})",
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slimwheel.build.locate", description=__doc__)
    parser.add_argument("libraries", nargs="*", metavar="LIB", help="soname stems: cudss cudart cublas")
    parser.add_argument("--cuda", type=int, default=None, metavar="N", help="only wheels for CUDA major N")
    parser.add_argument("--install-dir", help="where the linking target is installed, relative to the wheel")
    parser.add_argument("--nvcc", action="store_true", help="locate nvcc instead of libraries")
    parser.add_argument("--optional", action="store_true", help="leave out libraries no wheel ships")
    parser.add_argument(
        "--static", action="append", default=[], metavar="LIB", help="link LIB from lib<LIB>_static.a"
    )
    parser.add_argument("--cmake", type=Path, metavar="FILE", help="write CMake set() lines to FILE")
    parser.add_argument("--record", type=Path, metavar="FILE", help=f"update a {LINK_RECORD_NAME} file")
    parser.add_argument("--target", default="", help="the CMake target, for --record")
    parser.add_argument("--json", action="store_true", help="print a slimwheel.locate/1 JSON document")
    args = parser.parse_args(argv)
    try:
        if args.nvcc:
            nvcc = locate_nvcc(cuda=args.cuda)
            payload: dict[str, Any] = asdict(nvcc)
            script = nvcc_cmake_script(nvcc)
        else:
            if not args.libraries:
                raise LocateError("name at least one library (a soname stem such as cudss)")
            location = locate(
                args.libraries,
                cuda=args.cuda,
                install_dir=args.install_dir,
                optional=args.optional,
                static=[n for item in args.static for n in item.replace(";", ",").split(",") if n],
            )
            payload = {**asdict(location), "include_dirs": list(location.include_dirs)}
            script = cmake_script(location)
            if args.record is not None:
                update_link_record(args.record, args.target, location, args.install_dir)
    except LocateError as error:
        # One line: CMake shows it as the configure error.
        sys.stderr.write(f"slimwheel: {error}\n")
        return 2
    if args.cmake is not None:
        args.cmake.parent.mkdir(parents=True, exist_ok=True)
        args.cmake.write_text(script, encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps({"schema": "slimwheel.locate/1", **payload}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
