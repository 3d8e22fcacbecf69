"""find, load and preload: search every source in the policy's order, check what can be checked
before loading, load by absolute path, check the library's own version, and remember the result.
"""

# os.path, not pathlib: importing pathlib costs the loader a few milliseconds at every start.
# ruff: noqa: PTH112, PTH113, PTH117, PTH118, PTH119, PTH120, PTH121, PTH123

from __future__ import annotations

import ctypes
import os

from ._index import InstalledFile, WheelIndex
from ._model import (
    Candidate,
    Considered,
    Loaded,
    Policy,
    Rejection,
    Search,
    SearchedPlace,
    Source,
)
from ._names import (
    LibraryName,
    at_least,
    major_from_folder,
    major_from_soname,
    normalize_distribution,
    override_variable,
    parse_library,
    soname_version,
    suggested_distribution,
)
from ._process import (
    REGISTRY,
    already_loaded,
    handle_path,
    library_cuda_major,
    library_version,
    mapped_libraries,
    open_library,
    unload,
)
from ._record import Record
from ._system import (
    LD_CACHE,
    conda_folders,
    cuda_home_folders,
    default_folders,
    elf_identity,
    files_in,
    ld_cache_entries,
    ld_library_path,
    read_soname,
    soname_files,
)
from .errors import (
    CudaMajorConflictError,
    LibraryConflictError,
    LibraryLoadError,
    LibraryNotFoundError,
    LibraryVersionError,
    ManifestNotFoundError,
    RuntimeLoadError,
)

# Annotations only: collections.abc would import collections at every start of a process.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from .manifest import ManifestLibrary

__all__ = ["find", "load", "preload"]

_SYSTEM_LOADER = "dlopen by soname"  # Candidate.place of the last-resort bare-soname dlopen


class _Request(Record):
    __slots__ = (
        "allow_mixed_cuda",
        "cuda",
        "distribution",
        "min_distribution_version",
        "min_version",
        "name",
        "policy",
        "process_major",
        "requirement",
    )  # fmt: skip
    name: LibraryName
    cuda: int | None
    min_version: str | None
    min_distribution_version: str | None
    distribution: str | None
    requirement: str | None
    policy: Policy
    allow_mixed_cuda: bool
    process_major: tuple[int | None, str | None]  # what ProcessRegistry.process_major said at the call

    def __init__(
        self,
        *,
        name: LibraryName,
        cuda: int | None,
        min_version: str | None,
        min_distribution_version: str | None,
        distribution: str | None,
        requirement: str | None,
        policy: Policy,
        allow_mixed_cuda: bool,
        process_major: tuple[int | None, str | None],
    ) -> None:
        self._set(
            name=name, cuda=cuda, min_version=min_version, min_distribution_version=min_distribution_version,
            distribution=distribution, requirement=requirement, policy=policy,
            allow_mixed_cuda=allow_mixed_cuda, process_major=process_major,
        )  # fmt: skip

    @property
    def wanted(self) -> str:
        details = []
        if self.cuda is not None:
            details.append(f"CUDA {self.cuda}")
        if self.distribution:
            details.append(f"from {self.distribution}")
        if self.min_version:
            details.append(f">= {self.min_version}")
        if self.min_distribution_version:
            details.append(f"distribution >= {self.min_distribution_version}")
        return f"{self.name}" + (f" ({', '.join(details)})" if details else "")

    def major(self) -> tuple[int | None, str, str | None]:
        """The CUDA major a copy must have, why, and the file that fixed it (when the process did)."""
        if self.cuda is not None:
            return self.cuda, f"CUDA {self.cuda} was asked for", None
        major, path = self.process_major
        if not self.allow_mixed_cuda and major is not None:
            return major, f"this process uses CUDA {major} ({path})", path
        return None, "", None


def _request(
    lib: str,
    *,
    cuda: int | None,
    min_version: str | None,
    min_distribution_version: str | None,
    distribution: str | None,
    requirement: str | None,
    policy: Policy | str,
    allow_mixed_cuda: bool,
) -> _Request:
    return _Request(
        name=parse_library(lib),
        cuda=cuda,
        min_version=min_version,
        min_distribution_version=min_distribution_version,
        distribution=normalize_distribution(distribution) if distribution else None,
        requirement=requirement,
        policy=Policy(policy),
        allow_mixed_cuda=allow_mixed_cuda,
        # Read once per call: it may read /proc/self/maps.
        process_major=(None, None) if allow_mixed_cuda else REGISTRY.process_major(),
    )


# --- search -----------------------------------------------------------------------------------------


def find(
    lib: str,
    *,
    cuda: int | None = None,
    min_version: str | None = None,
    policy: Policy | str = Policy.WHEEL_FIRST,
    distribution: str | None = None,
    min_distribution_version: str | None = None,
    allow_mixed_cuda: bool = False,
    index: WheelIndex | None = None,
) -> Search:
    """Every copy of ``lib`` this process could load, in the order ``load`` would try them, each
    with the reason it would be skipped (checked without loading anything). For doctor and tests."""
    request = _request(
        lib,
        cuda=cuda,
        min_version=min_version,
        min_distribution_version=min_distribution_version,
        distribution=distribution,
        requirement=None,
        policy=policy,
        allow_mixed_cuda=allow_mixed_cuda,
    )
    return _search(request, index if index is not None else WheelIndex())


def _search(request: _Request, index: WheelIndex) -> Search:
    places: list[SearchedPlace] = []
    considered: list[Considered] = []
    for place, items in _stages(request, index):
        places.append(place)
        considered += items
    return Search(
        request.wanted, request.policy, tuple(considered), tuple(places), _override_setting(request)
    )


def _override_setting(request: _Request) -> str | None:
    variable = override_variable(request.name.stem)
    value = os.environ.get(variable)
    return f"{variable}={value}" if value else None


def _stages(request: _Request, index: WheelIndex) -> Iterator[tuple[SearchedPlace, list[Considered]]]:
    """Each place in the order searched, with the candidates it adds (a file already offered by an
    earlier place, such as conda's lib also on LD_LIBRARY_PATH, is not offered again). ``load``
    stops at the first place that serves; ``find`` and error messages walk them all."""
    name = request.name
    variable = override_variable(name.stem)
    value = os.environ.get(variable)
    if value:
        candidates, place = _from_override(variable, value, name, index)
        yield place, [_precheck(request, c) for c in candidates]
        return
    yield SearchedPlace(Source.OVERRIDE, f"{variable} (unset)"), []
    seen: set[str] = set()
    for source in request.policy.order:
        if source is Source.WHEEL:
            candidates, place = _from_wheels(name, index)
        elif source is Source.CONDA:
            candidates, place = _from_folders(
                Source.CONDA, conda_folders(os.environ), name, index, "CONDA_PREFIX"
            )
        elif source is Source.CUDA_HOME:
            candidates, place = _from_folders(
                Source.CUDA_HOME, cuda_home_folders(os.environ), name, index, "CUDA_HOME, CUDA_PATH"
            )
        else:
            candidates, place = _from_system(name, index)
        fresh = []
        for candidate in _ranked(candidates):
            key = os.path.realpath(candidate.path) if os.path.isabs(candidate.path) else candidate.path
            if key not in seen:
                seen.add(key)
                fresh.append(candidate)
        yield place, [_precheck(request, c) for c in fresh]


def _ranked(candidates: list[Candidate]) -> list[Candidate]:
    """Within one source: the highest soname version first (libcudss.so.1 before .so.0), then the
    highest CUDA major, then the order found (sys.path order for wheels, as imports shadow)."""

    def key(item: tuple[int, Candidate]) -> tuple[bool, tuple[int, ...], int, int]:
        order, candidate = item
        version = soname_version(candidate.soname, _stem_of(candidate.soname)) or ()
        padded = tuple(-part for part in (*version, 0, 0, 0, 0)[:4])
        major = candidate.cuda_major if candidate.cuda_major is not None else -1
        return (not version, padded, -major, order)

    return [candidate for _, candidate in sorted(enumerate(candidates), key=key)]


def _stem_of(soname: str) -> str:
    return soname[3:].split(".so", 1)[0] if soname.startswith("lib") else soname


def _wheel_candidate(item: InstalledFile, source: Source, place: str, index: WheelIndex) -> Candidate:
    major, major_from = index.cuda_major(item)
    if major is None and (major := major_from_soname(item.name)) is not None:
        major_from = "soname"
    return Candidate(
        path=item.path,
        soname=item.name,
        source=source,
        distribution=item.distribution,
        version=item.version,
        cuda_major=major,
        cuda_major_from=major_from,
        place=place,
    )


def _file_candidate(
    path: str, source: Source, place: str, index: WheelIndex, soname: str | None = None
) -> Candidate:
    """A file found outside RECORD; it may still belong to a distribution (an override or
    LD_LIBRARY_PATH pointing into site-packages). ``soname`` is its DT_SONAME when read."""
    owner = index.owner(path)
    if owner is not None:
        return _wheel_candidate(owner, source, place, index).replace(path=path, soname=soname or owner.name)
    major, major_from = major_from_folder(path), "folder"
    if major is None:
        major, major_from = major_from_soname(soname or os.path.basename(path)), "soname"
    return Candidate(
        path=path,
        soname=soname or os.path.basename(path),
        source=source,
        cuda_major=major,
        cuda_major_from=major_from if major is not None else None,
        place=place,
    )


def _from_override(
    variable: str, value: str, name: LibraryName, index: WheelIndex
) -> tuple[list[Candidate], SearchedPlace]:
    setting = f"{variable}={value}"
    if not os.path.isabs(value):
        note = "not an absolute path; the loader never searches the current directory"
        return [], SearchedPlace(Source.OVERRIDE, f"{setting} ({note})")
    if os.path.isdir(value):
        found = soname_files(files_in(value, name))
        candidates = _ranked([_file_candidate(p, Source.OVERRIDE, setting, index, so) for p, so in found])
        return candidates[:1], SearchedPlace(Source.OVERRIDE, f"{setting} (a folder)")
    if os.path.isfile(value):
        ((path, soname),) = soname_files([value])
        return [_file_candidate(path, Source.OVERRIDE, setting, index, soname)], SearchedPlace(
            Source.OVERRIDE, setting
        )
    return [], SearchedPlace(Source.OVERRIDE, f"{setting} (no such file or folder)")


def _from_wheels(name: LibraryName, index: WheelIndex) -> tuple[list[Candidate], SearchedPlace]:
    if name.soname is not None:
        names = [name.soname]
    else:
        names = [n for n in index.by_name if soname_version(n, name.stem) is not None]
    candidates = [_wheel_candidate(item, Source.WHEEL, item.site, index) for item in index.files(names)]
    sites = ", ".join(index.sites) or "none"
    skipped = f"; skipped relative entries: {', '.join(index.skipped)}" if index.skipped else ""
    description = f"installed distributions' RECORD on sys.path ({sites}{skipped})"
    return candidates, SearchedPlace(Source.WHEEL, description)


def _from_folders(
    source: Source, folders: list[str], name: LibraryName, index: WheelIndex, variables: str
) -> tuple[list[Candidate], SearchedPlace]:
    if not folders:
        return [], SearchedPlace(source, f"{variables} (unset)")
    candidates = [
        _file_candidate(path, source, folder, index, soname)
        for folder in folders
        for path, soname in soname_files(files_in(folder, name))
        if _matches(soname, name) or name.soname is not None
    ]
    return candidates, SearchedPlace(source, ", ".join(folders))


def _from_system(name: LibraryName, index: WheelIndex) -> tuple[list[Candidate], SearchedPlace]:
    """What glibc's search would find, per soname: LD_LIBRARY_PATH's absolute entries, then
    ld.so.cache, then the default folders; the first file of each soname is the loader's choice."""
    used, skipped = ld_library_path(os.environ)
    paths = [path for folder in used for path in files_in(folder, name)]
    paths += [
        path
        for filename, path in ld_cache_entries()
        if _matches(filename, name) and os.path.isabs(path) and os.path.isfile(path)
    ]
    paths += [path for folder in default_folders() for path in files_in(folder, name)]
    first: dict[str, str] = {}  # soname -> the file the loader's order reaches first
    for path, soname in soname_files(paths):
        if _matches(soname, name) or name.soname is not None:
            first.setdefault(soname, path)
    candidates = [
        _file_candidate(path, Source.SYSTEM, "system", index, soname) for soname, path in first.items()
    ]
    if not candidates and name.soname is not None and not skipped:
        # Last resort, the loader's own search (glibc-hwcaps folders, the interpreter's RUNPATH):
        # a bare soname, never a path, and only when no LD_LIBRARY_PATH entry means the current directory.
        candidates.append(
            Candidate(path=name.soname, soname=name.soname, source=Source.SYSTEM, place=_SYSTEM_LOADER)
        )
    parts = [f"LD_LIBRARY_PATH {':'.join(used)}" if used else "LD_LIBRARY_PATH (unset)"]
    if skipped:
        parts.append(f"skipped its relative entries {skipped!r}")
    parts += [LD_CACHE, *default_folders()]
    return candidates, SearchedPlace(Source.SYSTEM, "the system loader's search (" + ", ".join(parts) + ")")


def _matches(filename: str, name: LibraryName) -> bool:
    if name.soname is not None:
        return filename == name.soname
    return soname_version(filename, name.stem) is not None


_INTERPRETER = "/proc/self/exe"


def _precheck(request: _Request, candidate: Candidate) -> Considered:
    """Reject what can be rejected without loading: another architecture, another distribution,
    another CUDA major, a distribution version below the floor."""
    if os.path.isabs(candidate.path):
        identity = elf_identity(candidate.path)
        if identity is None:
            return Considered(candidate, Rejection.NOT_LOADABLE, "not an ELF shared library")
        if identity != elf_identity(_INTERPRETER):
            return Considered(
                candidate, Rejection.NOT_LOADABLE, "built for another architecture than this Python"
            )
    if (
        request.distribution
        and candidate.source is Source.WHEEL
        and candidate.distribution != request.distribution
    ):
        return Considered(
            candidate, Rejection.DISTRIBUTION, f"from {candidate.distribution}, not {request.distribution}"
        )
    major, why, _path = request.major()
    if major is not None and candidate.cuda_major is not None and candidate.cuda_major != major:
        return Considered(candidate, Rejection.CUDA_MAJOR, f"CUDA {candidate.cuda_major}, but {why}")
    if candidate.version is not None:
        floor = request.min_distribution_version
        if floor and not at_least(candidate.version, floor):
            return Considered(candidate, Rejection.VERSION, f"version {candidate.version} is below {floor}")
        # The library's own version is checked after loading; a distribution version that is
        # already lower in NVIDIA's numbering (1.0.0.35 names cuDSS 1.0.0) rules it out before.
        if request.min_version and not at_least(candidate.version, request.min_version, prefix=True):
            return Considered(
                candidate, Rejection.VERSION, f"version {candidate.version} is below {request.min_version}"
            )
    return Considered(candidate)


# --- load -------------------------------------------------------------------------------------------


def load(
    lib: str,
    *,
    cuda: int | None = None,
    min_version: str | None = None,
    policy: Policy | str = Policy.WHEEL_FIRST,
    distribution: str | None = None,
    min_distribution_version: str | None = None,
    requirement: str | None = None,
    allow_mixed_cuda: bool = False,
    index: WheelIndex | None = None,
) -> Loaded:
    """Load ``lib`` (a soname stem such as ``"cudss"``, or an exact soname) once per process and
    say what was loaded, from where, and how it was found.

    Order: ``SLIMWHEEL_<STEM>_PATH`` (a file, or a folder holding the library) beats everything;
    a copy already in the process is reused, never loaded twice; then the policy's sources
    (``"wheel-first"``: installed wheels, conda, CUDA_HOME/CUDA_PATH, the system loader's folders;
    ``"system-first"``: the same with wheels last; ``"wheel-only"``). Within a source the highest
    soname version wins, then the highest CUDA major, then sys.path order.

    ``cuda`` asks for a CUDA major; otherwise the first load whose major is known fixes the process's
    major and later loads must match it (``allow_mixed_cuda=True`` neither checks nor fixes it).
    ``min_version`` is in the library's own terms when it reports a version (cuDSS "1.0.0"), else
    compared with the wheel's distribution version; ``min_distribution_version`` always with the
    distribution version (``preload`` passes the manifest's). ``distribution`` restricts wheel copies
    to that distribution; ``requirement`` is what the error's pip command installs.

    Raises a ``RuntimeLoadError`` subclass whose message lists every place searched and the pip
    command that fixes it.
    """
    request = _request(
        lib,
        cuda=cuda,
        min_version=min_version,
        min_distribution_version=min_distribution_version,
        distribution=distribution,
        requirement=requirement,
        policy=policy,
        allow_mixed_cuda=allow_mixed_cuda,
    )
    with REGISTRY.lock:
        prior = REGISTRY.lookup(request.name.soname, request.name.stem)
        if prior is not None and _problem(request, prior) is None and _override_agrees(request, prior):
            return prior  # loaded by an earlier call: nothing to search
        wheels = index if index is not None else WheelIndex()
        existing = prior or _existing(request, wheels)
        if existing is not None:
            return _reuse(request, wheels, existing)
        _check_process_major(request, wheels)
        return _load_first(request, wheels)


def _override_agrees(request: _Request, loaded: Loaded) -> bool:
    value = os.environ.get(override_variable(request.name.stem))
    return (
        not value
        or _same_file(value, loaded.path)
        or (
            os.path.isdir(value) and os.path.dirname(os.path.realpath(loaded.path)) == os.path.realpath(value)
        )
    )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _existing(request: _Request, index: WheelIndex) -> Loaded | None:
    """A copy this process already has mapped (loaded by the package itself, another package, or
    LD_PRELOAD), found by soname as glibc would reuse it: the soname asked for, or for a stem the
    sonames of the copies ``/proc/self/maps`` shows (read from each file: a mapped
    ``libz.so.1.2.13`` is ``libz.so.1``)."""
    name = request.name
    if name.soname is not None:
        sonames = [name.soname]
    else:
        mapped = {read_soname(m.path) or m.path.rsplit("/", 1)[-1] for m in mapped_libraries(name.stem)}
        sonames = sorted(
            (s for s in mapped if soname_version(s, name.stem) is not None),
            key=lambda s: soname_version(s, name.stem) or (),
            reverse=True,
        )
    for soname in sonames:
        hit = already_loaded(soname)
        if hit is None:
            continue
        handle, path = hit
        candidate = _file_candidate(path, Source.ALREADY_LOADED, "this process", index, soname)
        return _loaded(candidate, handle, Source.ALREADY_LOADED, name.stem)
    return None


def _loaded(candidate: Candidate, handle: ctypes.CDLL, how: Source, stem: str) -> Loaded:
    version = library_version(stem, handle)
    major, major_from = candidate.cuda_major, candidate.cuda_major_from
    if major is None:
        major = library_cuda_major(stem, version)
        major_from = "library version" if major is not None else None
    path = candidate.path if os.path.isabs(candidate.path) else (handle_path(handle) or candidate.path)
    return Loaded(
        path=path,
        soname=candidate.soname,
        how=how,
        distribution=candidate.distribution,
        version=candidate.version,
        library_version=version,
        cuda_major=major,
        cuda_major_from=major_from,
    )


def _problem(request: _Request, loaded: Loaded) -> tuple[Rejection, str] | None:
    """Why a loaded copy does not serve the request, or None."""
    major, why, _path = request.major()
    if major is not None and loaded.cuda_major is not None and loaded.cuda_major != major:
        return Rejection.CUDA_MAJOR, f"CUDA {loaded.cuda_major}, but {why}"
    if request.min_version:
        if loaded.library_version is not None:
            if not at_least(loaded.library_version, request.min_version):
                return (
                    Rejection.VERSION,
                    f"reports version {loaded.library_version}, below {request.min_version}",
                )
        elif loaded.version is not None and not at_least(loaded.version, request.min_version):
            return Rejection.VERSION, f"version {loaded.version} is below {request.min_version}"
    floor = request.min_distribution_version
    if floor:
        if loaded.version is not None:
            if not at_least(loaded.version, floor):
                return Rejection.VERSION, f"version {loaded.version} is below {floor}"
        elif loaded.library_version is not None and not at_least(loaded.library_version, floor, prefix=True):
            return Rejection.VERSION, f"reports version {loaded.library_version}, below {floor}"
    return None


_ERRORS: dict[Rejection, type[RuntimeLoadError]] = {
    Rejection.CUDA_MAJOR: CudaMajorConflictError,
    Rejection.VERSION: LibraryVersionError,
}


def _reuse(request: _Request, index: WheelIndex, existing: Loaded) -> Loaded:
    """The process already has a copy: use it if it serves, else say why, naming both files."""
    agrees = _override_agrees(request, existing)
    problem = _problem(request, existing)
    if agrees and problem is None:
        REGISTRY.record(existing, fixes_major=not request.allow_mixed_cuda)
        return existing
    search = _search(request, index)  # for the message: every place, and the copy that would load
    other = search.viable[0].path if search.viable else None
    if not agrees:
        raise LibraryConflictError(
            f"cannot load {request.wanted}: {search.override} names another copy than the one this "
            f"process already has ({existing.path}); set the variable before anything loads the library.",
            wanted=request.wanted,
            paths=(existing.path, *(p for p in [other] if p)),
        )
    rejection, reason = problem if problem is not None else (None, "")
    kind = _ERRORS.get(rejection, RuntimeLoadError) if rejection is not None else RuntimeLoadError
    _major, _why, fixed_by = request.major()
    paths = tuple(dict.fromkeys(p for p in (existing.path, other, fixed_by) if p))
    instead = f"; the copy that would load instead is {other}" if other else ""
    raise kind(
        f"cannot load {request.wanted}: this process already has {existing.path} loaded, which is "
        f"{reason}{instead}. A second copy of the same soname cannot be loaded beside it.",
        wanted=request.wanted,
        searched=_searched(search, {i.candidate.path: i.rejected or "" for i in search.considered}),
        paths=paths,
        pip_command=_pip_command(request, search) if kind is LibraryVersionError else None,
    )


def _check_process_major(request: _Request, index: WheelIndex) -> None:
    major, fixed_by = request.process_major
    if request.cuda is None or request.allow_mixed_cuda or major in (None, request.cuda):
        return
    search = _search(request, index)
    other = search.viable[0].path if search.viable else None
    paths = tuple(p for p in (fixed_by, other) if p)
    raise CudaMajorConflictError(
        f"cannot load {request.wanted}: this process already uses CUDA {major} "
        f"({fixed_by})" + (f", and the copy found is {other}" if other else "") + ". "
        "One process uses one CUDA major (pass allow_mixed_cuda=True to load it anyway).",
        wanted=request.wanted,
        paths=paths,
    )


def _load_first(request: _Request, index: WheelIndex) -> Loaded:
    stem = request.name.stem
    places: list[SearchedPlace] = []
    considered: list[Considered] = []
    after: dict[str, tuple[Rejection, str]] = {}  # path -> why it failed once loading was tried
    unfound: set[str] = set()  # bare sonames the system loader's own search did not find
    for place, items in _stages(request, index):
        places.append(place)
        considered += items
        for candidate in (item.candidate for item in items if item.rejection is None):
            try:
                if os.path.isabs(candidate.path):
                    handle = open_library(candidate.path)
                else:  # the system loader's own search by bare soname (see _from_system)
                    handle = ctypes.CDLL(candidate.soname, mode=os.RTLD_GLOBAL)
            except OSError as exc:
                if _not_found_by_loader(candidate, exc):
                    unfound.add(candidate.path)
                    after[candidate.path] = (Rejection.DLOPEN, "the system loader found no such file")
                else:
                    after[candidate.path] = (Rejection.DLOPEN, f"dlopen failed: {exc}")
                continue
            loaded = _loaded(candidate, handle, candidate.source, stem)
            problem = _problem(request, loaded)
            if problem is not None:
                unload(handle)
                after[candidate.path] = problem
                continue
            REGISTRY.record(loaded, fixes_major=not request.allow_mixed_cuda)
            return loaded
    search = Search(
        request.wanted, request.policy, tuple(considered), tuple(places), _override_setting(request)
    )
    raise _failure(request, search, after, unfound)


def _not_found_by_loader(candidate: Candidate, exc: OSError) -> bool:
    """Whether a bare soname's dlopen failed because the loader's own search found no such file
    (glibc: "<soname>: cannot open shared object file"), not because the copy it found failed (a
    missing dependency names the dependency instead)."""
    if os.path.isabs(candidate.path):
        return False
    return str(exc).startswith(f"{candidate.soname}: cannot open shared object file")


def _failure(
    request: _Request,
    search: Search,
    after: dict[str, tuple[Rejection, str]],
    unfound: Collection[str] = (),
) -> RuntimeLoadError:
    """The error for a load that found nothing it could use. ``unfound``: candidates that turned out
    not to exist (a bare soname the system loader did not find), which are no copy found."""
    rejections = {item.candidate.path: (item.rejection, item.rejected or "") for item in search.considered}
    rejections.update(after)
    kinds = {rejection for path, (rejection, _reason) in rejections.items() if path not in unfound}
    major, _why, fixed_by = request.major()
    kind: type[RuntimeLoadError]
    if all(item.candidate.path in unfound for item in search.considered):
        kind, summary = LibraryNotFoundError, "no copy found"
    elif Rejection.VERSION in kinds:
        kind, summary = LibraryVersionError, "the copies found are older than asked"
    elif Rejection.CUDA_MAJOR in kinds and fixed_by is not None:
        kind, summary = CudaMajorConflictError, f"the copies found are not for CUDA {major}"
    elif Rejection.DLOPEN in kinds:
        kind, summary = LibraryLoadError, "dlopen refused the copies found"
    else:
        kind, summary = LibraryNotFoundError, "no copy found fits"
    reasons = {path: reason for path, (_rejection, reason) in rejections.items() if path not in unfound}
    paths = tuple(dict.fromkeys([*reasons, *(p for p in [fixed_by] if p)]))
    # An exact soname of another major (libcudart.so.13 in a CUDA 12 process) has no package that
    # fixes it; a stem does (the other major's distribution).
    conflict = kind is CudaMajorConflictError and request.name.soname is not None
    return kind(
        f"cannot load {request.wanted}: {summary}.",
        wanted=request.wanted,
        searched=_searched(search, reasons, unfound),
        paths=paths,
        pip_command=None if conflict else _pip_command(request, search),
    )


def _searched(search: Search, reasons: dict[str, str], unfound: Collection[str] = ()) -> tuple[str, ...]:
    """Each place searched, with what was found there and why it was not used (a bare soname the
    system loader did not find is nothing found)."""
    lines = []
    for place in search.places:
        here = [item.candidate for item in search.considered if item.candidate.source is place.source]
        found = [
            _describe(candidate) + (f" ({reasons[candidate.path]})" if reasons.get(candidate.path) else "")
            for candidate in here
            if candidate.path not in unfound
        ]
        text = "; ".join(found) if found else "nothing"
        missed = [candidate.soname for candidate in here if candidate.path in unfound]
        if missed:
            text += f" (dlopen by soname found no {', '.join(missed)} either)"
        lines.append(f"{place.description}: {text}")
    return tuple(lines)


def _describe(candidate: Candidate) -> str:
    owner = f"{candidate.distribution} {candidate.version} " if candidate.distribution else ""
    major = f", CUDA {candidate.cuda_major}" if candidate.cuda_major is not None else ""
    return f"{owner}{candidate.path}{major}".replace("; ", ", ")


def _pip_command(request: _Request, search: Search) -> str | None:
    if request.requirement:
        return f"pip install '{request.requirement.split(';', 1)[0].strip()}'"
    floor = request.min_distribution_version or request.min_version
    suffix = f">={floor}" if floor else ""
    if request.distribution:
        return f"pip install '{request.distribution}{suffix}'"
    major, _why, _path = request.major()
    stem = request.name.stem
    if major is not None:
        distribution = suggested_distribution(stem, major)
        return f"pip install '{distribution}{suffix}'" if distribution else None
    # No major asked or fixed: the newest first, then the others a copy found here or CUDA 12 implies.
    majors = {c.candidate.cuda_major for c in search.considered if c.candidate.cuda_major} | {12, 13}
    offers = [(m, suggested_distribution(stem, m)) for m in sorted(majors, reverse=True)]
    named = [(m, d) for m, d in offers if d]
    if not named:
        return None
    command = f"pip install '{named[0][1]}{suffix}'"
    others = ", ".join(f"CUDA {m}: pip install '{d}{suffix}'" for m, d in named[1:])
    return f"{command} ({others})" if others else command


# --- preload ----------------------------------------------------------------------------------------


def _preload_major(
    distribution: str,
    majors: list[int],
    libraries: tuple[ManifestLibrary, ...],
    cuda: int | None,
    wheels: WheelIndex,
) -> int:
    """The CUDA major whose libraries ``preload`` loads from a manifest of several (``majors``)."""
    listed = " and ".join(str(m) for m in majors)
    if cuda is not None:
        if cuda not in majors:
            raise CudaMajorConflictError(
                f"cannot preload {distribution}'s libraries for CUDA {cuda}: its manifest lists those of "
                f"CUDA {listed}.",
                wanted=distribution,
            )
        return cuda
    process = REGISTRY.process_major()[0]
    if process in majors:
        return process
    installed = [
        m
        for m in majors
        if any(lib.cuda_major == m and wheels.dist_info(lib.distribution) is not None for lib in libraries)
    ]
    if len(installed) == 1:
        return installed[0]
    which = "none of their wheels is" if not installed else f"the wheels of CUDA {listed} are all"
    extras = [_extra_of(lib.requirement) for lib in libraries if lib.cuda_major == majors[-1]]
    extra = next((e for e in extras if e), "")
    raise CudaMajorConflictError(
        f"cannot preload {distribution}'s libraries: its manifest lists those of CUDA {listed}, one "
        f"major's behind each extra, and {which} installed, nor does the process use one yet; pass "
        "cuda=N, or install one major's.",
        wanted=distribution,
        pip_command=f"pip install '{normalize_distribution(distribution)}[{extra}]'" if extra else None,
    )


def _extra_of(requirement: str) -> str:
    """The extra a Requires-Dist line is behind (``...; extra == "cu13"``), "" for none."""
    _, found, rest = requirement.partition('extra == "')
    return rest.partition('"')[0] if found else ""


def preload(
    distribution: str,
    *,
    optional: Collection[str] = (),
    policy: Policy | str = Policy.WHEEL_FIRST,
    allow_mixed_cuda: bool = False,
    index: WheelIndex | None = None,
    cuda: int | None = None,
) -> tuple[Loaded, ...]:
    """Load every library ``distribution``'s ``slimwheel.json`` lists, in its order (each after
    those it requires), with the recorded constraints: the exact soname, the providing distribution,
    the manifest's CUDA major, and its ``min_version`` as a floor of the distribution version.
    Optional libraries (cuDSS's comm and threading layers) load only when named in ``optional``
    (by stem or soname).

    A manifest of several CUDA majors (``repair --cuda 12,13``, each major's libraries behind its
    extra) loads those of one: ``cuda``, else the process's (``process_cuda_major``), else the one
    whose distributions are installed; its libraries behind that extra load where installed."""
    # Imported here: only preload reads JSON, and load() alone should not pay for the json module.
    from .manifest import MANIFEST_NAME, Manifest, ManifestError

    with REGISTRY.lock:
        wheels = index if index is not None else WheelIndex()
        dist_info = wheels.dist_info(distribution)
        where = ", ".join(wheels.sites) or "no absolute sys.path entries"
        if dist_info is None:
            raise ManifestNotFoundError(
                f"cannot preload {distribution}'s libraries: {distribution} is not installed on "
                f"sys.path ({where}).",
                wanted=distribution,
                pip_command=f"pip install '{normalize_distribution(distribution)}'",
            )
        manifest_path = os.path.join(dist_info, MANIFEST_NAME)
        try:
            with open(manifest_path, "rb") as stream:
                manifest = Manifest.from_json(stream.read())
        except (OSError, ManifestError) as exc:
            raise ManifestNotFoundError(
                f"cannot preload {distribution}'s libraries: {manifest_path} cannot be read ({exc}); "
                "it is written by slimwheel repair.",
                wanted=distribution,
                paths=(manifest_path,),
            ) from exc
        names = {lib.name for lib in manifest.libraries} | {lib.soname for lib in manifest.libraries}
        unknown = sorted(set(optional) - names)
        if unknown:
            raise ValueError(f"{distribution}'s manifest lists no library {', '.join(unknown)}")
        libraries, major = manifest.libraries, manifest.cuda_major
        majors = sorted({lib.cuda_major for lib in libraries if lib.cuda_major is not None})
        several = major is None and len(majors) > 1
        if several:
            major = _preload_major(distribution, majors, libraries, cuda, wheels)
            libraries = tuple(lib for lib in libraries if lib.cuda_major in (None, major))
        loaded = []
        for library in libraries:
            asked = library.name in optional or library.soname in optional
            behind_its_extra = several and wheels.dist_info(library.distribution) is not None
            if library.optional and not asked and not behind_its_extra:
                continue
            loaded.append(
                load(
                    library.soname,
                    cuda=major,
                    distribution=library.distribution,
                    min_distribution_version=library.min_version,
                    requirement=library.requirement,
                    policy=policy,
                    allow_mixed_cuda=allow_mixed_cuda,
                    index=wheels,
                )
            )
        return tuple(loaded)
