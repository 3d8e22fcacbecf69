"""The installed tree, simulated: the wheel's files and every allowed provider release's, searched
the way glibc's loader searches (``slimwheel.ldso``), up each loader chain."""

from __future__ import annotations

import dataclasses
import itertools
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from slimwheel.analysis import (
    ElfReport,
    Resolution,
    WheelReport,
    is_system_library,
    provided_by_driver,
)
from slimwheel.check.model import ProviderRelease
from slimwheel.findings import Pin
from slimwheel.ldso import (
    FolderMemo,
    SearchFolder,
    inherited_folders,
    search_folders,
    soname_carriers,
)
from slimwheel.policy import manylinux_level
from slimwheel.sources import ArchiveSource

__all__ = ["Answer", "SimulatedTree", "Simulation", "WheelFile"]

# -- the simulated tree and glibc's search -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WheelFile:
    member: str
    loadable: bool  # an ELF file that read cleanly
    vendored: bool  # a copy of an NVIDIA library


@dataclass(frozen=True)
class Answer:
    resolution: Resolution
    path: str | None
    distribution: str | None
    found_by: SearchFolder | None


@dataclass
class SimulatedTree:
    """The installed tree: this wheel's files, and per file name which provider versions ship it where."""

    # folder -> file name -> member, for the wheel's ELF files, vendored copies and any file named as
    # an ELF file's DT_NEEDED (what a search can find)
    wheel_files: dict[str, dict[str, WheelFile]]
    # file name -> distribution -> version -> the folders that version installs a file of that name in
    shipped: dict[str, dict[str, dict[str, frozenset[str]]]]
    versions: dict[str, list[str]]  # distribution -> allowed versions, oldest first
    requirements: frozenset[str] = frozenset()  # providers that are other requirements, not NVIDIA's
    preloaded: frozenset[str] = frozenset()  # providers whose files count as loaded before the wheel's
    glibc: tuple[int, int] | None = None  # the wheel's manylinux level: which host libraries it may use
    # DT_SONAME -> the installed path of this wheel's loadable file that carries it (the one named so,
    # where several copies do): what glibc reuses, once loaded, for a DT_NEEDED of that name.
    sonames: dict[str, str] = field(default_factory=dict)
    # soname -> the package file (code or data) that names it: a requirement's file of that soname
    # counts as loaded by the package's own code before this wheel's files (faiss-gpu-cu12's loader
    # opens each library its _preload_library.json names before it imports its extension module).
    named_by_code: dict[str, str] = field(default_factory=dict)
    _memo: dict[tuple[str, tuple[SearchFolder, ...], bool], list[tuple[Answer, tuple[Pin, ...]]]] = field(
        default_factory=dict
    )

    @classmethod
    def build(
        cls,
        source: ArchiveSource,
        report: WheelReport,
        providers: Sequence[ProviderRelease],
        others: Sequence[ProviderRelease] = (),
        preloaded: Iterable[str] = (),
    ) -> SimulatedTree:
        wheel_files: dict[str, dict[str, WheelFile]] = {}
        loadable = {elf.installed_path: elf.error is None for elf in report.elf_files}
        vendored = {copy.path for copy in report.vendored}
        # The tree is asked for files by the names ELF files need, and for ELF files by path: only
        # those are kept, not every file (a wheel of 200,000 files made it 24 MB).
        needed_names = {need.soname for elf in report.elf_files for need in elf.needed}
        for member in source.members:
            if member.name.endswith("/"):
                continue
            installed = source.installed_path(member.name)
            folder, name = posixpath.split(installed)
            if name not in needed_names and installed not in loadable and member.name not in vendored:
                continue
            wheel_files.setdefault(folder, {})[name] = WheelFile(
                member.name, loadable.get(installed, False), member.name in vendored
            )
        shipped: dict[str, dict[str, dict[str, frozenset[str]]]] = {}
        versions: dict[str, list[str]] = {}
        for provider in (*providers, *others):
            versions.setdefault(provider.distribution, []).append(provider.version)
            by_name: dict[str, set[str]] = {}
            for path in provider.files:
                folder, name = posixpath.split(path)
                by_name.setdefault(name, set()).add(folder)
            for name, folders in by_name.items():
                shipped.setdefault(name, {}).setdefault(provider.distribution, {})[provider.version] = (
                    frozenset(folders)
                )
        requirements = frozenset(provider.distribution for provider in others)
        preloaded = frozenset(preloaded) & (requirements | {provider.distribution for provider in providers})
        readable = [elf for elf in report.elf_files if elf.error is None]
        sonames = soname_carriers((elf.installed_path, elf.soname) for elf in readable)
        return cls(
            wheel_files,
            shipped,
            versions,
            requirements,
            preloaded,
            manylinux_level(source.platform_tags),
            sonames,
        )

    def with_named_by_code(self, named: dict[str, str]) -> SimulatedTree:
        """This tree, where requirements' files of the sonames ``named`` count as loaded by the
        package's code (see ``named_by_code``)."""
        return dataclasses.replace(self, named_by_code=dict(named), _memo={})

    def lookup(
        self, soname: str, folders: tuple[SearchFolder, ...], *, loaded_first: bool = True
    ) -> list[tuple[Answer, tuple[Pin, ...]]]:
        """The answers for ``soname`` over every combination of the versions of the providers that ship
        a file of that name: versions with the same folders for it are tried once, as a group.
        ``loaded_first``: a file of this wheel carrying that soname counts when nothing else does
        (found once loaded, as by a plugin's host library); not for an extension module, which
        ``import`` loads before anything of its package."""
        key = (soname, folders, loaded_first)
        if key not in self._memo:
            self._memo[key] = self._lookup(soname, folders, loaded_first)
        return self._memo[key]

    def _lookup(
        self, soname: str, folders: tuple[SearchFolder, ...], loaded_first: bool
    ) -> list[tuple[Answer, tuple[Pin, ...]]]:
        relevant = self.shipped.get(soname, {})
        per_distribution = []
        for distribution in sorted(relevant):
            groups: dict[frozenset[str], list[Pin]] = {}
            for version in self.versions[distribution]:
                where = relevant[distribution].get(version, frozenset())
                groups.setdefault(where, []).append(Pin(distribution, version))
            per_distribution.append([(distribution, where, pins) for where, pins in groups.items()])
        answers: dict[Answer, list[Pin]] = {}
        for combination in itertools.product(*per_distribution):
            answer = self._search(soname, folders, [(d, where) for d, where, _ in combination], loaded_first)
            answers.setdefault(answer, []).extend(pin for _, _, pins in combination for pin in pins)
        return [(answer, tuple(dict.fromkeys(pins))) for answer, pins in answers.items()]

    def _search(
        self,
        soname: str,
        folders: Sequence[SearchFolder],
        installed: Sequence[tuple[str, frozenset[str]]],
        loaded_first: bool,
    ) -> Answer:
        for searched in folders:
            own = self.wheel_files.get(searched.folder, {}).get(soname)
            if own is not None:
                resolution = Resolution.VENDORED if own.vendored else Resolution.WHEEL
                return Answer(resolution, posixpath.join(searched.folder, soname), None, searched)
            for distribution, where in installed:
                if searched.folder in where:
                    return Answer(
                        self._resolution_of(distribution),
                        posixpath.join(searched.folder, soname),
                        distribution,
                        searched,
                    )
        # Not on the search path, but glibc reuses an object already loaded under that soname: counted
        # only for the requirements the caller says are loaded first (``import torch`` loads torch/lib),
        # and the NVIDIA wheels those bring in (``import libraft`` loads cuBLAS with libraft.so).
        for distribution, where in installed:
            if distribution in self.preloaded and where:
                where_first = posixpath.join(min(where), soname)
                return Answer(self._resolution_of(distribution), where_first, distribution, None)
        if soname in self.named_by_code:
            for distribution, where in installed:
                if where:
                    where_first = posixpath.join(min(where), soname)
                    return Answer(self._resolution_of(distribution), where_first, distribution, None)
        if provided_by_driver(soname):
            return Answer(Resolution.DRIVER, None, None, None)
        if is_system_library(soname, self.glibc):
            return Answer(Resolution.SYSTEM, None, None, None)
        # A file of this wheel carries that soname: found when it was loaded first, as by a plugin
        # loader (UCX's libuct loads libucx/lib/ucx/*.so, which need libuct.so.0 and find no path
        # to it), or a package's __init__ that loads its libraries before its extensions.
        carrier = self.sonames.get(soname) if loaded_first else None
        found = None if carrier is None else self.wheel_file(carrier)
        if carrier is not None and found is not None:
            return Answer(Resolution.VENDORED if found.vendored else Resolution.WHEEL, carrier, None, None)
        return Answer(Resolution.UNRESOLVED, None, None, None)

    def _resolution_of(self, distribution: str) -> Resolution:
        return Resolution.REQUIREMENT if distribution in self.requirements else Resolution.NVIDIA_WHEEL

    def wheel_file(self, path: str) -> WheelFile | None:
        folder, name = posixpath.split(path)
        return self.wheel_files.get(folder, {}).get(name)


@dataclass
class Simulation:
    tree: SimulatedTree
    elfs: dict[str, ElfReport]  # installed path -> readable ELF file
    answers: dict[tuple[str, str], dict[Answer, tuple[list[Pin], tuple[str, ...]]]] = field(
        default_factory=dict
    )
    searched: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    loaders: dict[str, set[str]] = field(default_factory=dict)
    _visited: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)
    _visited_paths: set[str] = field(default_factory=set)
    _folders: FolderMemo = field(default_factory=dict)

    def run(self) -> None:
        needed_names = {
            need.soname
            for elf in self.elfs.values()
            for need in elf.needed
            if need.soname != posixpath.basename(elf.installed_path)
        }
        # Files no other file needs are loaded directly (extension modules, ctypes); their
        # dependencies are visited under the chain that loads them.
        for path in sorted(p for p in self.elfs if posixpath.basename(p) not in needed_names):
            self._visit(path, ())
        # Files that are needed but never found that way are still checked, as if loaded directly.
        for path in sorted(self.elfs):
            if path not in self._visited_paths:
                self._visit(path, ())

    def _visit(self, path: str, chain: tuple[str, ...]) -> None:
        obj = self.elfs[path]
        loaders = [self.elfs[p] for p in chain]
        # What a chain changes is the RPATH folders it passes down (to this file, and to the files it
        # loads), in their order: chains that pass down the same ones are visited once, whichever
        # loaders' entries name them. (Keyed by the entries, the ~100 abseil libraries of nixl-cu12
        # 1.5.1, each with RPATH $ORIGIN and needing dozens of the others, made a walk of every path
        # through them: minutes and gigabytes.)
        inherited = _first_of_each(inherited_folders(loaders, self._folders))
        visit = (path, tuple(f.folder for f in inherited))
        if visit in self._visited:
            return
        self._visited.add(visit)
        self._visited_paths.add(path)
        # A folder named again later in the order is never searched again: the first names it.
        folders = _first_of_each(search_folders(obj, loaders, self._folders))
        # Nothing of the wheel is loaded before an extension module (import loads it) or a program.
        extension = obj.extension_module or obj.program
        for need in obj.needed:
            soname = need.soname
            self.searched.setdefault((path, soname), tuple(dict.fromkeys(f.folder for f in folders)))
            seen = self.answers.setdefault((path, soname), {})
            for answer, pins in self.tree.lookup(soname, folders, loaded_first=not extension):
                if answer in seen:
                    seen[answer][0].extend(p for p in pins if p not in seen[answer][0])
                else:
                    seen[answer] = (list(pins), chain)
                found = answer.path
                if (
                    answer.resolution in (Resolution.WHEEL, Resolution.VENDORED)
                    and answer.found_by is not None  # not one already loaded: this file loads it
                    and found in self.elfs
                    and found != path
                    and found not in chain
                ):
                    self.loaders.setdefault(found, set()).add(path)
                    self._visit(found, (path, *chain))

    def unreached_but_installed(self) -> set[str]:
        """Sonames some file needs and no search path reaches, though a requirement installs them."""
        return {
            soname
            for (_, soname), answers in self.answers.items()
            if soname in self.tree.shipped and any(a.resolution is Resolution.UNRESOLVED for a in answers)
        }

    def off_path_in_requirements(self) -> dict[tuple[str, str], dict[str, tuple[str, ...]]]:
        """Per (file, soname) that some search of that file's misses, or finds only as loaded first:
        the requirements (not NVIDIA's, not counted as loaded first) that install a file of that name,
        each with the folders inside site-packages it does so in, in any release read."""
        reach: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {}
        for (path, soname), answers in sorted(self.answers.items()):
            if not any(a.found_by is None and a.resolution in _OFF_PATH for a in answers):
                continue
            by_distribution = {
                distribution: tuple(
                    sorted({f for folders in by_version.values() for f in folders if not f.startswith("../")})
                )
                for distribution, by_version in self.tree.shipped.get(soname, {}).items()
                if distribution in self.tree.requirements and distribution not in self.tree.preloaded
            }
            if found := {d: folders for d, folders in by_distribution.items() if folders}:
                reach[(path, soname)] = found
        return reach

    def off_path_in_wheel(self) -> dict[tuple[str, str], str]:
        """Per (file, soname) not found, where a file of this wheel is named so and carries that soname
        (an extension module or a program that needs its package's library and has no RPATH to it):
        that file's folder, which an RPATH entry would reach."""
        reach: dict[tuple[str, str], str] = {}
        for (path, soname), answers in sorted(self.answers.items()):
            carrier = self.tree.sonames.get(soname)
            if (
                carrier is not None
                and carrier != path
                and posixpath.basename(carrier) == soname
                and not carrier.startswith("../")
                and any(a.resolution is Resolution.UNRESOLVED for a in answers)
            ):
                reach[(path, soname)] = posixpath.dirname(carrier) or "."
        return reach


# Answers no search path gave: not found at all, or found in a requirement only if loaded first.
_OFF_PATH = frozenset({Resolution.UNRESOLVED, Resolution.REQUIREMENT})


def _first_of_each(folders: Sequence[SearchFolder]) -> tuple[SearchFolder, ...]:
    """``folders`` with each folder kept at its first place only (the entry that names it first)."""
    found: dict[str, SearchFolder] = {}
    for folder in folders:
        found.setdefault(folder.folder, folder)
    return tuple(found.values())
