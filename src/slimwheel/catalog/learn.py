"""Learn the catalog from a package index: project pages, then METADATA and RECORD of each wheel.

Each wheel is read lazily (its zip directory and two small members), so learning every NVIDIA release
costs a few requests per wheel, not gigabytes. A previous catalog makes an update incremental: a
wheel already known with the same sha256 is not read again.

``read_needed`` also reads the ELF of each library of the newest release of every distribution (per
CUDA major, one Linux wheel, and the newest release of an older line for a file the newer ones no
longer ship): its DT_NEEDED, confirmed soname and build-id. That is what lets repair
list the NVIDIA libraries a provider needs in turn without installing it. It costs the library members
themselves (a deflated member is read whole: ``.dynamic`` sits after the code), about 12 GB for every
distribution, so it is asked for (``catalog update --needed``, the shipped snapshot) and incremental
like the rest: a file whose needs a previous catalog knows is not read again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from slimwheel.catalog.model import Catalog, CudaMajorSource, LibraryFile, Release, WheelFacts
from slimwheel.elf import ElfFacts
from slimwheel.errors import SlimwheelError
from slimwheel.names import is_private_copy_name, parse_library_file_name
from slimwheel.platforms import Platform
from slimwheel.wheel import Wheel

if TYPE_CHECKING:
    from slimwheel.index import DistributionFile, IndexClient, ProjectPage

__all__ = [
    "DEFAULT_SEEDS",
    "TOOLKIT_DISTRIBUTION",
    "ToolkitPins",
    "WheelReading",
    "infer_cuda_major",
    "learn_catalog",
    "learn_from_wheels",
    "learn_on_demand",
    "libraries_from_record",
    "needed_targets",
    "read_library_elves",
    "reading_from_wheel",
    "toolkit_pins",
    "unknown_nvidia_requirements",
]

# The metapackage whose extras name every CUDA toolkit library wheel of each CUDA major.
TOOLKIT_DISTRIBUTION = "cuda-toolkit"
# Libraries outside the toolkit metapackage: only their names are seeded; everything about them
# (versions, files, sonames, folders, dependencies) is learned. Their Requires-Dist adds more names.
DEFAULT_SEEDS: tuple[str, ...] = tuple(
    f"{family}-cu{major}{suffix}"
    for family, suffix, majors in (
        ("nvidia-cudss", "", (12, 13)),
        # CUDA 11 too: cupy-cuda11x and other CUDA 11 wheels link cuDNN, NCCL and cuTENSOR (the CUDA 11
        # toolkit's own wheels come from cuda-toolkit's pins and the -cu11 requirements found on the way).
        ("nvidia-cudnn", "", (11, 12, 13)),
        ("nvidia-nccl", "", (11, 12, 13)),
        ("nvidia-cusparselt", "", (12, 13)),
        ("nvidia-nvshmem", "", (12, 13)),
        ("cutensor", "", (11, 12, 13)),
        # TensorRT's libraries (libnvinfer.so.10, ...). Where the index serves them only as sdists
        # that fetch the wheel at install time, nothing is learned and repair leaves them alone.
        ("tensorrt", "-libs", (12, 13)),
        # TensorRT's lean and dispatch runtimes (libnvinfer_lean.so.11, libnvinfer_dispatch.so.11): wheels
        # on the public index where the full one is an sdist; tensorrt-lean-cu13-bindings links the first
        # and requires no wheel that ships it.
        ("tensorrt-lean", "-libs", (12, 13)),
        ("tensorrt-dispatch", "-libs", (12, 13)),
        # TensorRT for RTX (libtensorrt_rtx.so.1): wheels on the public index, which
        # onnxruntime-ep-nv-tensorrt-rtx-cu13 0.5.0 vendors (223 MiB) instead of requiring.
        ("tensorrt-rtx", "-libs", (12, 13)),
        # cuQuantum's libraries (cuquantum-python requires them; Qiskit Aer, PennyLane Lightning and
        # others link libcustatevec.so.1 and libcutensornet.so.2).
        ("custatevec", "", (12, 13)),
        ("cutensornet", "", (12, 13)),
        ("cudensitymat", "", (12, 13)),
        ("cupauliprop", "", (12, 13)),
        ("cuquantum", "", (12, 13)),  # the metapackage requiring the four (qiskit-aer-gpu requires it)
        # Multi-GPU and imaging libraries outside the toolkit metapackage.
        ("nvidia-cublasmp", "", (12, 13)),
        ("nvidia-cusolvermp", "", (12, 13)),
        ("nvidia-cufftmp", "", (12,)),
        ("nvidia-nvcomp", "", (12, 13)),
        ("nvidia-nvjpeg2k", "", (12, 13)),
        ("nvidia-nvtiff", "", (12, 13)),
        ("nvidia-nvimgcodec", "", (12, 13)),
    )
    for major in majors
)

# Distributions named so are NVIDIA's: a requirement on one is followed when learning.
_NVIDIA_NAME_PREFIXES = (
    "nvidia-",
    "cutensor",
    "tensorrt-cu",
    "tensorrt-rtx-cu",
    "tensorrt-lean-cu",
    "tensorrt-dispatch-cu",
    "custatevec-",
    "cudensitymat-",
    "cupauliprop-",
    "cuquantum-cu",  # not cuquantum-python-cu12: Python bindings, no library of NVIDIA's to provide
)

_SUFFIX = re.compile(r"-cu(\d+)(?:-libs)?$")
_CLASSIFIER = re.compile(r"^Environment :: GPU :: NVIDIA CUDA :: (\d+)")
_CU_FOLDER = re.compile(r"(?:^|/)nvidia/cu(\d+)/")


@dataclass(frozen=True)
class WheelReading:
    """What one lazily read wheel told: its facts plus its release-level metadata."""

    distribution: str
    version: str
    wheel: WheelFacts
    requires_dist: tuple[str, ...]
    classifiers: tuple[str, ...]
    requires_python: str | None = None


# (distribution, version prefix) -> CUDA major, from cuda-toolkit's `nvidia-x==V.*` requirements.
ToolkitPins = Mapping[tuple[str, str], int]


def toolkit_pins(
    toolkit_version: str, requires_dist: Iterable[str]
) -> tuple[dict[tuple[str, str], int], set[str]]:
    """Pins and distribution names a cuda-toolkit release names in its extras."""
    major = Version(toolkit_version).major
    pins: dict[tuple[str, str], int] = {}
    names: set[str] = set()
    for text in requires_dist:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(requirement.name)
        names.add(name)
        for spec in requirement.specifier:
            if spec.operator == "==" and spec.version.endswith(".*"):
                pins[(name, spec.version[:-2])] = major
            elif spec.operator in ("==", "==="):
                pins[(name, spec.version)] = major
    return pins, names


def infer_cuda_major(
    distribution: str,
    *,
    version: str,
    requires_dist: Sequence[str],
    classifiers: Sequence[str],
    library_paths: Sequence[str],
    pins: ToolkitPins,
) -> tuple[int | None, CudaMajorSource]:
    """The CUDA major of one release, from the surest source that speaks."""
    match = _SUFFIX.search(distribution)
    if match:
        return int(match[1]), CudaMajorSource.NAME_SUFFIX
    for text in requires_dist:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != TOOLKIT_DISTRIBUTION:
            continue
        for spec in requirement.specifier:
            head = spec.version.split(".")[0]
            if spec.operator in ("==", "~=", ">=") and head.isdigit():
                return int(head), CudaMajorSource.TOOLKIT_REQUIREMENT
    majors = {int(m[1]) for c in classifiers if (m := _CLASSIFIER.match(c))}
    if len(majors) == 1:
        return majors.pop(), CudaMajorSource.CLASSIFIER
    for (name, prefix), major in pins.items():
        if name == distribution and (version == prefix or version.startswith(prefix + ".")):
            return major, CudaMajorSource.TOOLKIT_PIN
    folders = {int(m[1]) for path in library_paths if (m := _CU_FOLDER.search(path))}
    if len(folders) == 1:
        return folders.pop(), CudaMajorSource.FOLDER
    return None, CudaMajorSource.UNKNOWN


def libraries_from_record(entries: Iterable[tuple[str, int | None, str | None]]) -> tuple[LibraryFile, ...]:
    """Shared libraries among (installed path, size, sha256 hex) rows of a RECORD.

    The soname is inferred from the file name (NVIDIA ships each library under its soname) and marked
    unconfirmed until the ELF itself is read. Private copies (auditwheel's grafts) are no library the
    wheel provides: nothing outside it loads them by a soname.
    """
    found = []
    for path, size, sha256 in entries:
        parsed = parse_library_file_name(path)
        if parsed is None or path.endswith((".a", ".lib")) or is_private_copy_name(path):
            continue
        found.append(LibraryFile(path=path, size=size, sha256=sha256, soname=parsed.filename))
    return tuple(sorted(found, key=lambda lib: lib.path))


def reading_from_wheel(wheel: Wheel, *, size: int | None = None, sha256: str | None = None) -> WheelReading:
    """Facts of one opened wheel: its libraries (from RECORD) and its release metadata."""
    metadata = wheel.metadata()
    rows = [(wheel.installed_path(e.path), e.size, e.sha256_hex) for e in wheel.record()]
    facts = WheelFacts(
        filename=wheel.filename,
        platform_tags=wheel.platform_tags,
        size=size if size is not None else wheel.file_size,
        sha256=sha256,
        libraries=libraries_from_record(rows),
    )
    return WheelReading(
        distribution=canonicalize_name(wheel.distribution),
        version=wheel.version,
        wheel=facts,
        requires_dist=tuple(metadata.get_all("Requires-Dist") or ()),
        classifiers=tuple(metadata.get_all("Classifier") or ()),
        requires_python=metadata.get("Requires-Python"),
    )


def _read_wheel(client: IndexClient, file: DistributionFile) -> WheelReading:
    with client.open_wheel(file) as wheel:
        return reading_from_wheel(wheel, size=file.size, sha256=file.sha256)


def learn_from_wheels(paths: Iterable[Path]) -> Catalog:
    """A catalog from wheel files on disk (tests, air-gapped mirrors); no toolkit pins."""
    readings = []
    for path in paths:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        with Wheel.open(path) as wheel:
            readings.append(reading_from_wheel(wheel, sha256=digest.hexdigest()))
    return _assemble(readings, {}, {})


def _wanted_version(version: str, include_prereleases: bool) -> bool:
    try:
        parsed = Version(version)
    except InvalidVersion:
        return False
    return include_prereleases or not (parsed.is_prerelease or parsed.is_devrelease)


def _version_of(filename: str) -> str | None:
    try:
        return str(parse_wheel_filename(filename)[1])
    except ValueError:
        return None


ProgressCallback = Callable[[str, int, int], None]


def learn_catalog(
    client: IndexClient,
    distributions: Iterable[str] = (),
    *,
    previous: Catalog | None = None,
    follow_toolkit: bool = True,
    follow_requirements: bool = True,
    include_prereleases: bool = False,
    max_workers: int = 16,
    refresh: bool = False,
    read_needed: bool = False,
    progress: ProgressCallback | None = None,
) -> Catalog:
    """Learn releases of ``distributions`` (default: the toolkit's extras and the seeds) from the index.

    ``read_needed``: also read the DT_NEEDED of the newest releases' libraries (see the module's doc)."""
    queue: list[str] = [canonicalize_name(d) for d in distributions] or list(DEFAULT_SEEDS)
    pins: dict[tuple[str, str], int] = {}
    toolkit_releases: list[Release] = []
    seen: set[str] = {TOOLKIT_DISTRIBUTION} if follow_toolkit else set()
    if follow_toolkit:
        toolkit_names = _learn_toolkit(client, pins, toolkit_releases, include_prereleases, refresh)
        queue.extend(sorted(toolkit_names))
    known = {
        (w.filename, w.sha256): (r, w) for r in (previous.releases if previous else ()) for w in r.wheels
    }
    readings: list[WheelReading] = []
    reused: dict[tuple[str, str], list[tuple[Release, WheelFacts]]] = {}
    files: dict[str, DistributionFile] = {}  # every wheel listed, by file name: for read_needed
    while queue:
        batch = sorted({name for name in queue if name not in seen})
        queue = []
        seen.update(batch)
        pages = _pages(client, batch, refresh)
        tasks: list[tuple[str, str, DistributionFile]] = []
        for name in batch:
            page = pages.get(name)
            if page is None:
                continue
            for file in page.files:
                version = _version_of(file.filename) if file.is_wheel else None
                if version is None or not _wanted_version(version, include_prereleases) or file.is_yanked:
                    continue
                files.setdefault(file.filename, file)
                if (file.filename, file.sha256) in known and file.sha256:
                    reused.setdefault((name, version), []).append(known[(file.filename, file.sha256)])
                else:
                    tasks.append((name, version, file))
        batch_readings = _read_all(client, tasks, max_workers, progress)
        readings.extend(batch_readings)
        if follow_requirements:
            requirements = [r for reading in batch_readings for r in reading.requires_dist]
            requirements += [r for pairs in reused.values() for rel, _ in pairs for r in rel.requires_dist]
            queue = sorted(_nvidia_names(requirements) - seen)
    learned = _assemble(readings, reused, pins)
    if read_needed:
        learned = _with_needed(client, learned, files, max_workers, progress)
    releases = (*learned.releases, *toolkit_releases)
    return Catalog(releases, origin=learned.origin, generated=learned.generated)


def unknown_nvidia_requirements(
    catalog: Catalog, distribution: str, requires_dist: Iterable[str]
) -> tuple[str, ...]:
    """NVIDIA distributions the wheel of ``distribution`` requires (under any marker or extra) that
    the catalog does not know: CUDA 11's ``nvidia-cudnn-cu11``, a library no seed names. Never the
    wheel's own name, which an extra may require (nvidia-pytriton's ``nvidia-pytriton[test]; extra ==
    "dev"``): learnt, it would make the wheel one of NVIDIA's providers, its vendored copies originals."""
    own = canonicalize_name(distribution)
    return tuple(sorted(_nvidia_names(requires_dist) - set(catalog.distributions) - {own}))


def learn_on_demand(
    catalog: Catalog, names: Sequence[str], client: IndexClient, *, save_to: Path | None = None
) -> Catalog:
    """``catalog`` with the releases of ``names`` (and the NVIDIA wheels they require) learned from the
    index. ``save_to``: a catalog file to merge them into, so the next run asks nothing (the user's)."""
    if not names:
        return catalog
    learned = learn_catalog(client, names, follow_toolkit=False)
    if save_to is not None and learned.releases:
        from slimwheel.catalog.store import read_catalog, write_catalog

        previous = read_catalog(save_to) if save_to.is_file() else Catalog(())
        write_catalog(previous.overlaid_by(learned), save_to)
    return catalog.overlaid_by(learned)


def _pages(client: IndexClient, names: Sequence[str], refresh: bool) -> dict[str, ProjectPage]:
    """Project pages of ``names``; a name no index knows is simply absent (names are guesses too)."""
    from slimwheel.index import ProjectNotFoundError

    def page(name: str) -> ProjectPage | None:
        try:
            return client.project(name, refresh=refresh)
        except ProjectNotFoundError:
            return None

    with ThreadPoolExecutor(max_workers=8) as pool:
        found = dict(zip(names, pool.map(page, names), strict=True))
    return {name: result for name, result in found.items() if result is not None}


def _learn_toolkit(
    client: IndexClient,
    pins: dict[tuple[str, str], int],
    releases: list[Release],
    include_prereleases: bool,
    refresh: bool,
) -> set[str]:
    page = _pages(client, [TOOLKIT_DISTRIBUTION], refresh).get(TOOLKIT_DISTRIBUTION)
    names: set[str] = set()
    if page is None:
        return names
    files: dict[str, DistributionFile] = {}
    for file in page.files:
        version = _version_of(file.filename) if file.is_wheel else None
        if version and _wanted_version(version, include_prereleases) and not file.is_yanked:
            files.setdefault(version, file)
    with ThreadPoolExecutor(max_workers=8) as pool:
        metadata = dict(zip(files, pool.map(client.fetch_metadata, files.values()), strict=True))
    from email.parser import BytesParser

    for version, raw in metadata.items():
        message = BytesParser().parsebytes(raw)
        requires = tuple(message.get_all("Requires-Dist") or ())
        found_pins, found_names = toolkit_pins(version, requires)
        pins.update(found_pins)
        names |= found_names
        # Kept as a release without libraries: its extras (cuda-toolkit[cublas]) expand to pins.
        releases.append(
            Release(
                TOOLKIT_DISTRIBUTION,
                version,
                Version(version).major,
                CudaMajorSource.TOOLKIT_VERSION,
                requires,
                (),
                message.get("Requires-Python"),
            )
        )
    return names


def _nvidia_names(requirements: Iterable[str]) -> set[str]:
    names: set[str] = set()
    for text in requirements:
        try:
            name = canonicalize_name(Requirement(text).name)
        except InvalidRequirement:
            continue
        if name.startswith(_NVIDIA_NAME_PREFIXES):
            names.add(name)
    return names


def _read_all(
    client: IndexClient,
    tasks: Sequence[tuple[str, str, DistributionFile]],
    max_workers: int,
    progress: ProgressCallback | None,
) -> list[WheelReading]:
    readings: list[WheelReading] = []
    if not tasks:
        return readings
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        futures = {pool.submit(_read_wheel, client, task[2]): task for task in tasks}
        for done, future in enumerate(as_completed(futures), start=1):
            name, version, file = futures[future]
            try:
                readings.append(future.result())
            except SlimwheelError as exc:
                # One unreadable wheel must not sink the whole update; it is simply not learned.
                if progress:
                    progress(f"skipped {file.filename}: {exc}", done, len(tasks))
                continue
            if progress:
                progress(f"{name} {version}", done, len(tasks))
    return readings


# The Linux wheel whose libraries are read for their needs: a library needs the same on every arch.
_NEEDED_PLATFORMS = (Platform("linux", "x86_64"), Platform("linux", "aarch64"))
# What of a library member is kept in memory while it streams past (as analysis does).
_VIEW_HEAD = 16 * 1024 * 1024
_VIEW_TAIL = 16 * 1024 * 1024


def needed_targets(catalog: Catalog) -> list[tuple[Release, WheelFacts]]:
    """The wheels whose libraries ``read_needed`` reads: for each distribution and CUDA major, the
    newest final release's Linux wheel, and the newest of each older release line that ships a library
    file the newer ones do not (cuDNN 8's ``libcudnn.so.8`` beside cuDNN 9's ``.so.9``); only where
    some library's needs are not known yet."""
    lines: dict[tuple[str, int | None], list[Release]] = {}
    for release in catalog.releases:
        parsed = _version_or_none(release.version)
        if parsed is not None and not parsed.is_prerelease and not parsed.is_devrelease:
            lines.setdefault((release.distribution, release.cuda_major), []).append(release)
    targets = []
    for key in sorted(lines, key=str):
        covered: set[str] = set()
        for release in sorted(lines[key], key=lambda r: r.parsed_version, reverse=True):
            wheel = next((w for p in _NEEDED_PLATFORMS if (w := release.wheel_for(p)) is not None), None)
            if wheel is None:
                continue
            new = [lib for lib in wheel.libraries if lib.path not in covered]
            covered.update(lib.path for lib in wheel.libraries)
            if any(lib.needed is None for lib in new):
                targets.append((release, wheel))
    return targets


def _version_or_none(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def read_library_elves(wheel: Wheel, facts: WheelFacts) -> WheelFacts:
    """``facts`` with each library's DT_NEEDED, soname and build-id read from ``wheel``'s members. A
    member that is not ELF or does not parse keeps what RECORD said (its needs stay unknown)."""
    by_path = {wheel.installed_path(member.name): member.name for member in wheel.members}
    libraries = []
    for listed in facts.libraries:
        name = by_path.get(listed.path)
        elf = _read_member_elf(wheel, name) if name is not None and listed.needed is None else None
        libraries.append(
            listed
            if elf is None
            else replace(
                listed,
                needed=elf.needed,
                soname=elf.soname or listed.soname,
                soname_confirmed=listed.soname_confirmed or bool(elf.soname),
                build_id=elf.build_id or listed.build_id,
            )
        )
    return replace(facts, libraries=tuple(libraries))


def _read_member_elf(wheel: Wheel, name: str) -> ElfFacts | None:
    from slimwheel.catalog.exports import read_member_elf
    from slimwheel.errors import ElfError

    try:
        where = f"{wheel.filename}:{name}"
        return read_member_elf(wheel, name, where=where, symbols=False, head=_VIEW_HEAD, tail=_VIEW_TAIL)
    except ElfError:
        return None


def _with_needed(
    client: IndexClient,
    catalog: Catalog,
    files: Mapping[str, DistributionFile],
    max_workers: int,
    progress: ProgressCallback | None,
) -> Catalog:
    """``catalog`` with the needs of :func:`needed_targets` read from the index."""
    targets = [(release, wheel) for release, wheel in needed_targets(catalog) if wheel.filename in files]
    if not targets:
        return catalog

    def read(wheel: WheelFacts) -> WheelFacts:
        with client.open_wheel(files[wheel.filename]) as opened:
            return read_library_elves(opened, wheel)

    done_wheels: dict[str, WheelFacts] = {}
    # Each task reads hundreds of MB: fewer at a time than the small reads of RECORD.
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, 8))) as pool:
        futures = {pool.submit(read, wheel): (release, wheel) for release, wheel in targets}
        for done, future in enumerate(as_completed(futures), start=1):
            release, wheel = futures[future]
            try:
                done_wheels[wheel.filename] = future.result()
            except SlimwheelError as exc:
                if progress:
                    progress(f"skipped {wheel.filename} (its libraries' needs): {exc}", done, len(futures))
                continue
            if progress:
                progress(f"needs of {release.distribution} {release.version}", done, len(futures))
    releases = tuple(
        replace(release, wheels=tuple(done_wheels.get(w.filename, w) for w in release.wheels))
        if any(w.filename in done_wheels for w in release.wheels)
        else release
        for release in catalog.releases
    )
    return Catalog(releases, origin=catalog.origin, generated=catalog.generated)


def _speaks_first(reading: WheelReading) -> tuple[bool, str]:
    return (not reading.wheel.supports(_NEEDED_PLATFORMS[0]), reading.wheel.filename)


def _assemble(
    readings: Sequence[WheelReading],
    reused: Mapping[tuple[str, str], Sequence[tuple[Release, WheelFacts]]],
    pins: ToolkitPins,
) -> Catalog:
    grouped: dict[tuple[str, str], list[WheelReading]] = {}
    for reading in readings:
        grouped.setdefault((reading.distribution, reading.version), []).append(reading)
    releases = []
    for key in sorted(set(grouped) | set(reused)):
        distribution, version = key
        # The wheels of one release may say different things (a Requires-Dist only on Linux): the same
        # wheel speaks for the release on every run, the Linux x86_64 one where there is one, not the
        # first read to finish.
        fresh = sorted(grouped.get(key, []), key=_speaks_first)
        old = reused.get(key, [])
        wheels = sorted([r.wheel for r in fresh] + [w for _, w in old], key=lambda w: w.filename)
        if fresh:
            requires, classifiers = fresh[0].requires_dist, fresh[0].classifiers
            requires_python = fresh[0].requires_python
        else:
            requires, classifiers = old[0][0].requires_dist, ()
            requires_python = old[0][0].requires_python
        paths = [lib.path for wheel in wheels for lib in wheel.libraries]
        if fresh or not old:
            major, source = infer_cuda_major(
                distribution,
                version=version,
                requires_dist=requires,
                classifiers=classifiers,
                library_paths=paths,
                pins=pins,
            )
        else:
            major, source = old[0][0].cuda_major, old[0][0].cuda_major_source
        releases.append(
            Release(distribution, version, major, source, requires, tuple(wheels), requires_python)
        )
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Catalog(tuple(releases), origin="index", generated=generated)
