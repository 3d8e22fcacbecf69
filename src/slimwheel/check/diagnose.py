"""The simulation's answers turned into findings: not found, vendored copies a wheel provides,
libraries no requirement brings in, entries that climb out of the tree."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from slimwheel.analysis import (
    LOADS_BY_SONAME,
    ElfReport,
    Resolution,
    VendoredCopy,
    WheelReport,
    is_driver_library,
    rpath_problems,
)
from slimwheel.analysis.libraries import nvidia_product_of
from slimwheel.catalog.model import Catalog
from slimwheel.check.model import FileCheck, Lookup, NeededCheck, ProviderRelease
from slimwheel.check.target import Target, loads_on
from slimwheel.check.tree import SimulatedTree, Simulation
from slimwheel.dist_files import RequirementFiles
from slimwheel.findings import Finding, FindingKind, Pin, Severity
from slimwheel.frameworks import framework_of
from slimwheel.ldso import (
    EntryKind,
    EntryTag,
    expand_entry,
    rpath_entry,
    starts_with_origin,
)
from slimwheel.names import cuda_major_named, is_libpython, name_of_library, soname_stem
from slimwheel.requirements import plainest_extra
from slimwheel.wording import and_list

__all__ = ["CARRIED", "Diagnosis", "pins_text", "plural"]

# The words of a not-found message that stand for its one soname, and those for several: repair says
# once what several sonames share (cuequivariance's extension misses six of torch's libraries).
_PLURAL_WORDS = (
    (" installs it in ", " installs them in "),
    (" loads it first", " loads them first"),
    ("; it is not one of the host libraries ", "; they are not among the host libraries "),
    (" must install it, ", " must install them, "),
    (" bundle it into ", " bundle them into "),
    ("; it is part of ", "; they are part of "),
    (" ships that soname: ", " ships those sonames: "),
    (" provides it (", " provides them ("),
    (" installed on the host provides it, ", " installed on the host provides them, "),
    (" where its release ships that soname ", " where its release ships those sonames "),
    (" to leave it to the host)", " to leave them to the host)"),
    (" leaves it to the host)", " leave them to the host)"),
    ("; it is ", "; they are "),
    (" which may ship it", " which may ship them"),
)


def plural(message: str) -> str:
    """``message``, written of one soname, with the words that stand for it made plural: for a line
    that names several sonames missed for the same reason."""
    for one, several in _PLURAL_WORDS:
        message = message.replace(one, several)
    return message


CARRIED = frozenset(
    {
        FindingKind.BUNDLED_DRIVER,
        FindingKind.CORRUPT_ELF,
        FindingKind.NOT_ELF,
        FindingKind.BOUND_NOT_NEEDED,
        FindingKind.NEWER_THAN_TAG,
        FindingKind.UNUSED_NEEDED,
    }
)


@dataclass
class Diagnosis:
    """What turning the simulation's answers into findings needs."""

    report: WheelReport
    catalog: Catalog
    target: Target
    tree: SimulatedTree
    providers: Sequence[ProviderRelease]
    findings: list[Finding]
    looked_up: Sequence[RequirementFiles] = ()
    kept_copies: frozenset[str] = frozenset()  # vendored copies kept on purpose: warnings, not errors
    optional: Sequence[ProviderRelease] = ()  # NVIDIA releases only an extra of the wheel installs
    # Libraries (soname stems) the caller leaves to the host (repair --exclude): not finding one of
    # theirs is a warning, as auditwheel's --exclude leaves ORT's TensorRT libraries to the host.
    host_provided: frozenset[str] = frozenset()
    # Distributions the catalog does not know that only an extra requires, with the extras naming them.
    optional_others: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The distributions the caller counts as loaded first (--preloaded), as named, whether or not
    # their own files were read: an NVIDIA wheel their requirements bring is loaded with them.
    preloaded: frozenset[str] = frozenset()
    # (file, soname) whose provider's own needs were looked at: once, however many versions answer.
    _provider_gaps: set[tuple[str, str]] = field(default_factory=set)

    def _severity(self, soname: str) -> Severity:
        return Severity.WARNING if self._host_name(soname) else Severity.ERROR

    def _host_name(self, soname: str) -> str | None:
        """How ``host_provided`` names ``soname`` (its stem, or itself), if it does."""
        return name_of_library(self.host_provided, soname)

    def _left_to_host(self, soname: str) -> str:
        name = self._host_name(soname)
        return f"; left to the host (--exclude {name})" if name else ""

    @cached_property
    def _extras_of(self) -> dict[str, tuple[str, ...]]:
        return {provider.distribution: provider.extras for provider in self.optional}

    @cached_property
    def _through(self) -> dict[str, tuple[str, ...]]:
        return {provider.distribution: provider.through for provider in self.optional if provider.through}

    @cached_property
    def _unread(self) -> tuple[str, ...]:
        """The requirements looked up whose files could not be read, in the order they were."""
        return tuple(answer.distribution for answer in self.looked_up if not answer.known)

    @cached_property
    def _brought_through(self) -> dict[str, ProviderRelease]:
        """The NVIDIA providers every install has only through another requirement's own, by name."""
        return {provider.distribution: provider for provider in self.providers if provider.through}

    def file_check(self, elf: ElfReport, simulation: Simulation) -> FileCheck:
        if elf.error is not None:
            return FileCheck(elf.path, elf.installed_path, error=elf.error)
        if not loads_on(self.target.platform, elf.machine):
            self.findings.append(
                Finding(
                    FindingKind.OTHER_MACHINE,
                    Severity.INFO,
                    elf.path,
                    f"built for {elf.machine}, and the wheel installs on {self.target.platform.arch}: no "
                    "loader there loads it (a cross-compilation target's library, data to this install), so "
                    "what it needs is not checked",
                )
            )
            return FileCheck(elf.path, elf.installed_path)
        for label, entries in ((EntryTag.RPATH, elf.rpath), (EntryTag.RUNPATH, elf.runpath)):
            self.findings += rpath_problems(elf.path, label.value, entries)
            self._entry_findings(elf, label, entries)
        needed = []
        for soname in dict.fromkeys(n.soname for n in elf.needed):
            answers = simulation.answers.get((elf.installed_path, soname), {})
            lookups = tuple(
                Lookup(
                    answer.resolution,
                    answer.path,
                    answer.distribution,
                    answer.found_by,
                    tuple(sorted(pins, key=lambda p: (p.distribution, Version(p.version)))),
                    chain,
                )
                for answer, (pins, chain) in answers.items()
            )
            check = NeededCheck(soname, lookups, simulation.searched.get((elf.installed_path, soname), ()))
            needed.append(check)
            self._needed_findings(elf, check)
        loaders = tuple(sorted(simulation.loaders.get(elf.installed_path, ())))
        return FileCheck(elf.path, elf.installed_path, elf.rpath, elf.runpath, tuple(needed), loaders)

    def _entry_findings(self, elf: ElfReport, label: EntryTag, entries: Sequence[str]) -> None:
        """Entries the simulation cannot follow ($ORIGIN climbing out, $LIB); rpath_problems has the rest."""
        origin = posixpath.dirname(elf.installed_path)
        for entry in dict.fromkeys(entries):  # one finding per entry, however often it is listed
            kind, _ = expand_entry(entry, origin)
            if kind is EntryKind.OUTSIDE:
                self.findings.append(
                    Finding(
                        FindingKind.OUTSIDE_TREE,
                        Severity.WARNING,
                        elf.path,
                        f"{label.value} entry {entry!r} climbs out of site-packages from {origin or '.'}: "
                        "what it reaches depends on where the environment lives, so it is not searched",
                    )
                )
            elif kind is EntryKind.UNSIMULATED:
                self.findings.append(
                    Finding(
                        FindingKind.UNSIMULATED_ENTRY,
                        Severity.WARNING,
                        elf.path,
                        f"{label.value} entry {entry!r} depends on the host's glibc build: not searched",
                    )
                )

    def _needed_findings(self, elf: ElfReport, check: NeededCheck) -> None:
        soname = check.soname
        if not check.resolved and self._missing_requirement(elf, check):
            return
        for lookup in check.lookups:
            if lookup.resolution is Resolution.UNRESOLVED:
                self._unresolved(elf, check, lookup)
            elif lookup.resolution in (Resolution.WHEEL, Resolution.VENDORED) and lookup.path is not None:
                if lookup.found_by is None:
                    self._loaded_first(elf, check, lookup.path)
                self._found_in_wheel(elf, soname, lookup.path)
            elif lookup.resolution is Resolution.NVIDIA_WHEEL and lookup.found_by is not None:
                self._through_extra(elf, soname, lookup)
                self._through_requirement(elf, soname, lookup)
                self._split_install(elf, soname, lookup)
                self._load_needs_rpath(elf, soname, lookup)
                self._provider_needs_unrequired(elf, soname, lookup)
            elif lookup.resolution is Resolution.NVIDIA_WHEEL and lookup.distribution in self.tree.preloaded:
                self._preloaded(elf, soname, lookup)
                self._provider_needs_unrequired(elf, soname, lookup)
            elif lookup.resolution is Resolution.NVIDIA_WHEEL:
                self._loaded_by_code(elf, soname, lookup)
                self._through_extra(elf, soname, lookup)
                self._through_requirement(elf, soname, lookup)
                self._provider_needs_unrequired(elf, soname, lookup)
            elif lookup.resolution is Resolution.REQUIREMENT:
                if lookup.found_by is None and lookup.distribution in self.tree.preloaded:
                    self._preloaded(elf, soname, lookup)
                elif lookup.found_by is None:
                    self._loaded_by_code(elf, soname, lookup)
                else:
                    self._split_install(elf, soname, lookup)
                    self._load_needs_rpath(elf, soname, lookup)

    def _nvidia_distributions(self, soname: str) -> list[str]:
        providers = self.catalog.providers(
            soname=soname, cuda_major=self.target.cuda_major, platform=self.target.platform
        )
        return list(dict.fromkeys(p.distribution for p in providers))

    @cached_property
    def _wheel_major(self) -> int | None:
        """The CUDA major the wheel is built for, where its requirements or its NVIDIA sonames say:
        only for advice, never to decide what resolves."""
        if self.target.cuda_major is not None:
            return self.target.cuda_major
        required = {
            release.cuda_major
            for provider in self.providers
            if (release := self.catalog.release(provider.distribution, provider.version)) is not None
            and release.cuda_major is not None
        }
        if len(required) == 1:
            return next(iter(required))
        possible = self.catalog.majors_serving(self._needed_sonames, self.target.platform)
        if possible and len(possible) == 1:
            return next(iter(possible))
        return cuda_major_named(self.report.distribution)  # tensorrt-cu13-bindings: 13

    @cached_property
    def _needed_sonames(self) -> tuple[str, ...]:
        return tuple(sorted({n.soname for elf in self.report.elf_files for n in elf.needed}))

    @cached_property
    def _built_for_majors(self) -> tuple[int, ...]:
        """The CUDA majors of a wheel built for several (see ``Catalog.built_for_majors``)."""
        return self.catalog.built_for_majors(self._needed_sonames, self.target.platform)

    def _missing_requirement(self, elf: ElfReport, check: NeededCheck) -> bool:
        """An NVIDIA soname that no required release ships: the cause to report, rather than "not found"."""
        soname = check.soname
        if is_driver_library(soname) or soname in self.tree.shipped:
            return False
        known = self.catalog.providers(soname=soname)
        if not known:
            return False
        candidates = self.catalog.providers(
            soname=soname, cuda_major=self.target.cuda_major, platform=self.target.platform
        )
        fitting = [p for p in candidates if p.release.cuda_major == self._wheel_major]
        candidates = tuple(fitting) or candidates  # advise the wheel's own CUDA major, not the newest
        here = list(dict.fromkeys(p.distribution for p in candidates))
        if candidates:
            newest = candidates[0]
            safe = self.catalog.safe_range(
                newest.distribution, newest.version, newest.library.name, platform=self.target.platform
            )
            advice = f"add Requires-Dist: {safe.requirement if safe else newest.distribution}"
            several = self._built_for_majors if self.target.cuda_major is None else ()
            if several and newest.release.cuda_major in several:
                # Every major's requirements in one install would bring them all: one major per wheel.
                advice = (
                    f"the wheel is built for CUDA {and_list([str(m) for m in several])}, whose wheels one "
                    f"install should not all bring: require CUDA {newest.release.cuda_major}'s behind an "
                    f"extra, or build a wheel per major (`slimwheel repair --cuda "
                    f"{','.join(map(str, several))}` does the former where each file is one major's build; "
                    f"`--cuda {newest.release.cuda_major}` leaves the other majors' libraries to the host)"
                )
            elif safe is not None:
                # check reads no symbols: its floor is the newest release, which surely has them all.
                advice += (
                    " (its newest release as the floor; `slimwheel repair` sets the oldest that exports "
                    "what the files import)"
                )
            also = f" (also: {', '.join(here[1:])})" if len(here) > 1 else ""
            text = f"{', '.join(here[:1])} provides it{also}; {advice}"
        else:
            major = f"CUDA {self.target.cuda_major} on " if self.target.cuda_major else ""
            text = f"no NVIDIA wheel provides it for {major}{self.target.platform.key}"
            if not self._host_name(soname):
                text += f" (--exclude {soname_stem(soname)} leaves it to the host)"
        self.findings.append(
            Finding(
                FindingKind.MISSING_REQUIREMENT,
                self._severity(soname),
                elf.path,
                f"needs {soname}, an NVIDIA library, but no Requires-Dist brings it in: {text}"
                f"{self._left_to_host(soname)}",
                soname,
            )
        )
        return True

    def _unresolved(self, elf: ElfReport, check: NeededCheck, lookup: Lookup) -> None:
        soname = check.soname
        shipped = self.tree.shipped.get(soname, {})
        # The versions are named only where they change the answer.
        partial = bool(lookup.versions) and len(check.lookups) > 1
        versions = f" with {pins_text(lookup.versions)}" if partial else ""
        loader = f" when loaded by {lookup.loaded_by[0]}" if lookup.loaded_by else ""
        general: int | None = None  # where the words that hold for every file begin, if they are the rest
        severity = self._severity(soname)
        if partial and not any(shipped.get(p.distribution, {}).get(p.version) for p in lookup.versions):
            why = "no file of that name in those versions"
        else:
            searched = ", ".join(folder or "." for folder in check.searched)
            why = f"searched {searched}" if searched else "no RPATH/RUNPATH folder inside site-packages"
            # What follows, from "; ", is the same for every file that misses it at this depth.
            general = len(why)
            installs = sorted(
                {
                    f"{distribution} installs it in {folder}{self._only_with(distribution)}"
                    for distribution, by_version in shipped.items()
                    for folders in by_version.values()
                    for folder in folders
                }
            )
            why += f"; {', '.join(installs)}" if installs else ""
            why += self._requirement_hint(elf, shipped, check.searched)
            carrier = self.tree.sonames.get(soname)
            if carrier is not None and carrier != elf.installed_path:
                first = (
                    "a program runs with none of its package's libraries loaded"
                    if elf.program and not elf.extension_module
                    else "import loads an extension module before its package's libraries"
                )
                alone = _found_alone(elf, soname, carrier)
                why += f"; this wheel's {carrier} has that soname, but {first}: {alone}"
            elif not shipped and not self.catalog.providers(soname=soname):
                optional = self._optional_product(soname)
                why += optional or self._unread_product(soname) or self._host_hint(soname)
                severity = Severity.WARNING if optional else severity
        if self._unread:
            why += f"; could not read the files of {', '.join(self._unread)}, which may ship it"
        why += self._left_to_host(soname)
        self.findings.append(
            Finding(
                FindingKind.UNRESOLVED,
                severity,
                elf.path,
                f"needs {soname}: not found{versions}{loader} ({why})",
                soname,
                lookup.versions,
                cause=(why[general:].removeprefix("; ") or None) if general is not None else None,
            )
        )

    def _only_with(self, distribution: str) -> str:
        """Words for a provider only an extra of the wheel installs ("" for one every install has)."""
        extras = self._extras_of.get(distribution)
        if not extras:
            return ""
        through = self._through.get(distribution)
        how = f", through {' or '.join(through)}" if through else ""
        return f" (only with the extra {' or '.join(repr(extra) for extra in extras)}{how})"

    def _optional_product(self, soname: str) -> str:
        """An NVIDIA library no wheel the catalog knows ships, of a product whose distribution only an
        extra of the wheel requires: cudaq-qec-cu12's TensorRT decoder plugin needs libnvinfer.so.10,
        and its extra 'trt-decoder' requires tensorrt-cu12, which the index serves as an sdist only.
        The author made the file optional, as with an NVIDIA wheel only an extra installs, and where
        that install puts the library is unknown here: a warning that says so, not an error."""
        product = nvidia_product_of(soname)
        distribution = product.distributed_as(sorted(self.optional_others)) if product else None
        if product is None or distribution is None:
            return ""
        listed = " or ".join(repr(extra) for extra in self.optional_others[distribution])
        return (
            f"; it is part of {product.name}, which only the extra {listed} installs "
            f"({distribution}): no wheel the catalog knows ships that soname, so whether that "
            "install puts it on this file's search path is not judged; without the extra this "
            "file does not load"
        )

    def _unread_product(self, soname: str) -> str:
        """An NVIDIA library no wheel the catalog knows ships, of a product whose distribution is a
        requirement whose files could not be read: fast-gpu-asr 0.2.0 requires tensorrt-cu13, which
        requires tensorrt-cu13-libs, a wheel-stub whose index a machine may not reach. That install
        provides it, not only the host's."""
        product = nvidia_product_of(soname)
        distribution = product.distributed_as(sorted(self._unread)) if product else None
        if product is None or distribution is None:
            return ""
        return f"; it is part of {product.name}, which {distribution} installs"

    def _host_hint(self, soname: str) -> str:
        """Why a library nothing in the install ships is not taken from the host: the wheel's manylinux
        policy does not count on it being there. GCC's ``libgomp.so.1`` is on most hosts, but not in
        slim containers; sgl-kernel 0.1.0's ``libtorch.so`` comes from torch, which it does not require.
        An NVIDIA soname no wheel ships (CUDA 10.2's ``libnvrtc.so.10.2``) comes from a CUDA install."""
        product = nvidia_product_of(soname)
        if product is not None and product.sdist_only:
            # tensorrt-cu13-bindings 11.4 links libnvinfer.so.11 and requires nothing that ships it.
            major = str(self._wheel_major) if self._wheel_major is not None else "<major>"
            distribution = product.distribution.replace("<major>", major)
            return (
                f"; it is part of {product.name}, and no NVIDIA wheel the catalog knows ships that soname: "
                f"{product.name} installed on the host provides it, or {distribution}, which the public "
                "index serves as an sdist only, where its release ships that soname (require it, or "
                f"--exclude {soname_stem(soname)} to leave it to the host)"
            )
        if product is not None:
            return (
                f"; it is part of {product.name}, and no NVIDIA wheel the catalog knows ships that soname: "
                f"only {product.name} installed on the host provides it (--exclude {soname_stem(soname)} "
                "leaves it to the host)"
            )
        if is_libpython(soname):
            return (
                "; it is the Python interpreter's own library, loaded only by a Python built with "
                "--enable-shared (manylinux's are not): an extension module should not link it (PEP 513: "
                "the interpreter provides its symbols; link without -lpython), and a program that embeds "
                "Python finds it only where the host's Python has it"
            )
        framework = framework_of(soname)
        if framework is not None:
            name = framework.distribution
            return (
                f"; it is {name}'s ({framework.folder}), which this wheel does not require: if "
                f"`import {name}` runs before this wheel's libraries load, count on that (--preloaded "
                f"{name}), else require {name}"
            )
        glibc = self.tree.glibc
        policy = f"manylinux_{glibc[0]}_{glibc[1]}" if glibc is not None else "manylinux"
        return (
            f"; it is not one of the host libraries {policy} lets a wheel count on: a requirement must "
            "install it, or `auditwheel repair` bundle it into the wheel"
        )

    def _found_in_wheel(self, elf: ElfReport, soname: str, path: str) -> None:
        found = self.tree.wheel_file(path)
        if found is None:
            return
        if not found.loadable:
            self.findings.append(
                Finding(
                    FindingKind.LOADS_UNREADABLE,
                    Severity.ERROR,
                    elf.path,
                    f"needs {soname}: the loader finds {found.member}, which is not a loadable ELF file",
                    soname,
                )
            )
            return
        copy = next((c for c in self.report.vendored if c.path == found.member), None)
        if copy is not None:
            self._vendored(elf, soname, copy)

    def _vendored(self, elf: ElfReport, soname: str, copy: VendoredCopy) -> None:
        here = self._nvidia_distributions(copy.original_soname)
        required = {p.distribution for p in self.providers}
        identified = copy.identified.distribution if copy.identified else None
        preferred = [d for d in here if d in required] or [d for d in here if d == identified] or here
        if not preferred:
            self.findings.append(
                Finding(
                    FindingKind.VENDORED,
                    Severity.INFO,
                    elf.path,
                    f"needs {soname}: a vendored copy of {copy.original_soname} ({copy.path}); "
                    f"no NVIDIA wheel provides it for {self.target.platform.key}",
                    soname,
                )
            )
            return
        distribution = preferred[0]
        kept = copy.path in self.kept_copies
        self.findings.append(
            Finding(
                FindingKind.VENDORED_WHILE_PROVIDED,
                Severity.WARNING if kept else Severity.ERROR,
                elf.path,
                f"needs {soname}: resolves to {copy.path}, a vendored copy of {copy.original_soname}, "
                f"which {distribution} provides; "
                + ("kept on purpose" if kept else f"require {distribution} and load it from there"),
                soname,
            )
        )

    def _requirement_hint(
        self, elf: ElfReport, shipped: Mapping[str, Mapping[str, frozenset[str]]], searched: Sequence[str]
    ) -> str:
        """How to reach a library that a requirement ships in a folder off this file's search path: an
        RPATH entry, or, for a requirement that is not NVIDIA's, counting on its import loading it."""
        where = sorted(
            {
                (distribution not in self.tree.requirements, folder, distribution)
                for distribution, by_version in shipped.items()
                for folders in by_version.values()
                for folder in folders
                if folder not in searched
            }
        )
        if not where:
            return ""
        nvidia, folder, distribution = where[0]
        entry = rpath_entry(elf.installed_path, folder or ".")
        if nvidia:
            # An NVIDIA wheel another requirement brings (libraft-cu13's cuBLAS) is loaded with it.
            brought = self._brought_through.get(distribution)
            distribution = brought.through_names[0] if brought and brought.through_names else ""
            if not distribution:
                return f": add RPATH {entry!r} (slimwheel repair does)"
        return (
            f": add RPATH {entry!r} (slimwheel repair does), or, if importing {distribution} loads it "
            f"first, count on that (--preloaded {distribution})"
        )

    def _loaded_first(self, elf: ElfReport, check: NeededCheck, provider: str) -> None:
        """Not on the file's search path, but this wheel has a library of that soname, which glibc
        reuses once loaded: a plugin loaded by its host library works so. (An extension module is
        loaded by ``import`` before anything of its package: the simulation calls that not found.)"""
        searched = ", ".join(folder or "." for folder in check.searched)
        path_words = f"searched {searched}" if searched else "no RPATH"
        self.findings.append(
            Finding(
                FindingKind.LOADED_FIRST,
                Severity.WARNING,
                elf.path,
                f"needs {check.soname}: not on its search path ({path_words}); "
                f"found only if {provider} (this wheel's, that soname) is loaded first, as a plugin's host "
                f"library does; {_found_alone(elf, check.soname, provider)}",
                check.soname,
            )
        )

    def _preloaded(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        # An NVIDIA wheel counts as loaded with the --preloaded distribution whose requirements bring it.
        brought = self._brought_through.get(lookup.distribution or "")
        names = [name for name in brought.through_names if name in self.preloaded] if brought else []
        importing = names[0] if names else lookup.distribution
        loaded = f", which {importing} brings in and loads," if names else ""
        self.findings.append(
            Finding(
                FindingKind.PRELOADED,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: not on its search path; found only because {lookup.distribution}'s "
                f"{lookup.path}{loaded} is loaded first (import {importing} before this file is loaded)",
                soname,
                lookup.versions,
            )
        )

    def _loaded_by_code(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        """Off the search path, in a requirement's files, and named by the package's code or data: the
        package may load it before this file (faiss-gpu-cu12 does), which glibc then reuses. Whether it
        does, only an import tells (``slimwheel verify``), so a warning, not an error."""
        named_in = self.tree.named_by_code.get(soname)
        if named_in is None or lookup.path is None:
            return
        self.findings.append(
            Finding(
                FindingKind.LOADED_BY_CODE,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: no RPATH/RUNPATH reaches {lookup.distribution}'s "
                f"{posixpath.dirname(lookup.path)}; found only if the package's code loads it before this "
                f"file, as {named_in}, which names it, suggests (slimwheel verify tells; slimwheel repair "
                "sets an RPATH so that nothing depends on it)",
                soname,
                lookup.versions,
            )
        )

    def _through_extra(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        """Found in an NVIDIA wheel that only an extra installs: the author made it optional (ONNX
        Runtime's CUDA provider, which it loads only when asked for), so it is a warning, not an error."""
        extras = self._extras_of.get(lookup.distribution or "")
        if not extras or lookup.path is None:
            return
        listed = " or ".join(repr(extra) for extra in extras)
        install = f"pip install '{self.report.distribution}[{plainest_extra(extras)}]'"
        through = self._through.get(lookup.distribution or "")
        how = f", through {' or '.join(through)}," if through else ""
        self.findings.append(
            Finding(
                FindingKind.THROUGH_EXTRA,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: found in {lookup.distribution}'s {posixpath.dirname(lookup.path)}, which "
                f"only the extra {listed}{how} installs ({install}); without it this file does not load",
                soname,
                lookup.versions,
            )
        )

    def _through_requirement(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        """Found in an NVIDIA wheel that every install has, but only through the own requirements of
        a requirement the catalog does not know (pylibraft-cu13's libraft-cu13 requires
        cuda-toolkit[cublas,...]): it loads today; a release of that package may stop bringing it."""
        brought = self._brought_through.get(lookup.distribution or "")
        if brought is None or lookup.path is None:
            return
        through = brought.through
        self.findings.append(
            Finding(
                FindingKind.THROUGH_REQUIREMENT,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: found in {lookup.distribution}'s {posixpath.dirname(lookup.path)}, which "
                f"only {' and '.join(through)} brings in, through its own requirements, which any of its "
                f"releases may change; require {lookup.distribution} too (`slimwheel repair` does)",
                soname,
                lookup.versions,
            )
        )

    def _split_install(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        found_by = lookup.found_by
        if found_by is None or lookup.distribution is None or not starts_with_origin(found_by.entry):
            return
        owner = "" if found_by.owner == elf.installed_path else f" of {found_by.owner}"
        if lookup.resolution is Resolution.REQUIREMENT:
            after = "it is not found there"
        else:
            after = "the run-time loader must load it there"
        self.findings.append(
            Finding(
                FindingKind.SPLIT_INSTALL,
                Severity.WARNING,
                elf.path,
                f"needs {soname}: found in {lookup.distribution}'s {found_by.folder} only through "
                f"{found_by.tag.value} {found_by.entry!r}{owner}, which assumes both distributions share "
                "one site-packages; after pip install --target into another folder, or with "
                f"--system-site-packages where {lookup.distribution} sits in the base environment, "
                f"{after}",
                soname,
                lookup.versions,
            )
        )

    def _provider_needs_unrequired(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        """An NVIDIA library the found provider's file needs in turn that no NVIDIA wheel of the install
        ships: cutensor-cu13's libcutensor.so.2 needs libcublasLt.so.13 and requires no nvidia-cublas."""
        if lookup.path is None or lookup.distribution is None or (elf.path, soname) in self._provider_gaps:
            return
        self._provider_gaps.add((elf.path, soname))
        # The found provider's own major: custatevec-cu12 and -cu13 share cuquantum/lib.
        majors = {
            release.cuda_major
            for pin in lookup.versions
            if pin.distribution == lookup.distribution
            and (release := self.catalog.release(pin.distribution, pin.version)) is not None
        }
        needs = self.catalog.needed_by(
            soname,
            folder=posixpath.dirname(lookup.path),
            cuda_major=next(iter(majors)) if len(majors) == 1 else self.target.cuda_major,
            platform=self.target.platform,
        )
        for needed in needs or ():
            if needed in self.tree.shipped or is_driver_library(needed):
                continue
            providers = self._nvidia_distributions(needed)
            if not providers:
                continue
            self.findings.append(
                Finding(
                    FindingKind.PROVIDER_NEEDS_UNREQUIRED,
                    Severity.WARNING,
                    elf.path,
                    f"needs {soname} from {lookup.distribution}, whose file needs {needed}, which no "
                    f"requirement brings in ({lookup.distribution} does not require "
                    f"{' or '.join(providers)}): without it or a CUDA toolkit on the loader's path, "
                    f"{soname} does not load; require {providers[0]} too (`slimwheel repair` does)",
                    soname,
                )
            )

    def _load_needs_rpath(self, elf: ElfReport, soname: str, lookup: Lookup) -> None:
        found_by = lookup.found_by
        load = LOADS_BY_SONAME.get(soname)
        if found_by is None or found_by.tag is not EntryTag.RUNPATH or load is None:
            return
        releases = SpecifierSet(load.releases)
        affected = [
            pin
            for pin in lookup.versions
            if pin.distribution == load.distribution and pin.version in releases
        ]
        if not affected:
            return
        self.findings.append(
            Finding(
                FindingKind.LOAD_NEEDS_RPATH,
                Severity.WARNING,
                elf.path,
                f"needs {soname}, found through RUNPATH {found_by.entry!r}; {pins_text(affected)} ship it "
                f"with no search path of its own, and it loads {load.loads} by soname at run time, which "
                "glibc looks up through the DT_RPATH of the objects that loaded it, never a DT_RUNPATH: "
                "with those releases and no CUDA toolkit on the loader's path that load fails; make it a "
                "DT_RPATH (`slimwheel repair` does)",
                soname,
                tuple(affected),
            )
        )


def pins_text(pins: Sequence[Pin]) -> str:
    by_distribution: dict[str, list[str]] = {}
    for pin in pins:
        by_distribution.setdefault(pin.distribution, []).append(pin.version)
    return "; ".join(f"{d} {', '.join(versions)}" for d, versions in by_distribution.items())


def _found_alone(elf: ElfReport, soname: str, carrier: str) -> str:
    """What makes ``elf`` find the wheel's ``carrier`` of ``soname`` by a search: an RPATH to its
    folder, unless it is named otherwise (TensorRT-RTX's ``libtensorrt_rtx.so.1.7.1``): a search
    looks for a file of that name, and no RPATH finds it."""
    if posixpath.basename(carrier) == soname:
        entry = rpath_entry(elf.installed_path, posixpath.dirname(carrier) or ".")
        return f"add RPATH {entry!r} for it to load alone"
    return (
        f"ship {posixpath.basename(carrier)} as {soname} for it to load alone: a search looks for a "
        "file of that name, and no RPATH finds one named otherwise"
    )
