"""What ``check`` reports: per requirement, per ELF file and DT_NEEDED, and the findings."""

from __future__ import annotations

from dataclasses import dataclass

from slimwheel.analysis import Resolution
from slimwheel.dist_files import RequirementFiles
from slimwheel.findings import Finding, FindingKind, Pin, Severity
from slimwheel.ldso import SearchFolder
from slimwheel.platforms import Platform
from slimwheel.requirements import requirement_name

__all__ = [
    "CheckFinding",
    "CheckKind",
    "CheckReport",
    "FileCheck",
    "Lookup",
    "NeededCheck",
    "ProviderRelease",
    "RequirementCheck",
    "RequirementReach",
]

# One vocabulary with show's (slimwheel.findings); the old names stay for callers.
CheckKind = FindingKind
CheckFinding = Finding


@dataclass(frozen=True)
class RequirementCheck:
    """What one Requires-Dist line (the wheel's, or an NVIDIA release's) allows on the platform."""

    requirement: str  # as written
    distribution: str  # canonical name
    required_by: (
        # "" for the wheel itself; else "nvidia-cudss-cu13 1.0.0.35" or "cuda-toolkit[cublas] 13.0.2",
        # or the wheel's requirement the catalog does not know that brings it ("libraft-cu13==26.10.*")
        str
    )
    versions: tuple[str, ...]  # releases the catalog knows that it admits here, oldest first


@dataclass(frozen=True)
class ProviderRelease:
    """An allowed release of a provider and the library files it installs (an NVIDIA distribution from
    the catalog in ``CheckReport.providers``; another requirement in ``CheckReport.requirement_files``)."""

    distribution: str
    version: str
    wheel: str | None  # the wheel for the platform; None for a metapackage release kept without one
    files: tuple[str, ...]  # installed paths, relative to site-packages
    extras: tuple[str, ...] = ()  # the wheel's extras that bring it in; (): a plain install does
    # The requirements under those extras (with no extras: of every install) that bring it in, where
    # the catalog knows none of them (``cupy-cuda13x[ctk]>=14``, whose own extra requires
    # cuda-toolkit[cublas]; libraft-cu13==26.10.*, which requires it); (): one it knows does.
    through: tuple[str, ...] = ()

    @property
    def through_names(self) -> tuple[str, ...]:
        """The canonical names of the distributions ``through`` asks for (``libraft-cu13``)."""
        return tuple(name for name in map(requirement_name, self.through) if name)


@dataclass(frozen=True)
class Lookup:
    """Where one DT_NEEDED is found under some of the allowed provider versions."""

    resolution: Resolution
    path: str | None = None  # installed path of the file found
    distribution: str | None = None  # the NVIDIA distribution that installs it; None: this wheel, or no file
    found_by: SearchFolder | None = None
    versions: tuple[Pin, ...] = ()  # the provider versions that give this answer; (): no version matters
    loaded_by: tuple[str, ...] = ()  # the loader chain (nearest first) it was seen under; (): loaded directly


@dataclass(frozen=True)
class NeededCheck:
    soname: str
    lookups: tuple[Lookup, ...]
    searched: tuple[str, ...] = ()  # folders searched, in order (under the first loader chain seen)

    @property
    def resolved(self) -> bool:
        return all(lookup.resolution is not Resolution.UNRESOLVED for lookup in self.lookups)


@dataclass(frozen=True)
class FileCheck:
    path: str  # archive member
    installed_path: str
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    needed: tuple[NeededCheck, ...] = ()
    loaded_by: tuple[str, ...] = ()  # installed paths of this wheel's files that load it
    error: str | None = None


@dataclass(frozen=True)
class RequirementReach:
    """A DT_NEEDED no search path of its file reaches, which another requirement of the wheel (not an
    NVIDIA wheel's) installs: an RPATH entry to ``folders`` finds it in any install where both share
    site-packages (librmm-cu12's ``librmm/lib64``, torch's ``torch/lib``). Or which a library of the
    wheel itself carries, where nothing loads that first (``distribution`` is the wheel's: libucx-cu13's
    programs need ``libucx/lib``'s libraries and have no RPATH to them). What repair adds for it."""

    path: str  # archive member of the file that needs it
    installed_path: str
    soname: str
    distribution: str
    folders: tuple[str, ...]  # installed folders, relative to site-packages, of the releases read


@dataclass(frozen=True)
class CheckReport:
    filename: str
    distribution: str
    version: str
    platform: Platform
    cuda_major: int | None
    python: str | None  # from the wheel's cpXY tags; markers and Requires-Python use it
    requirements: tuple[RequirementCheck, ...]
    providers: tuple[ProviderRelease, ...]
    files: tuple[FileCheck, ...]
    findings: tuple[Finding, ...]
    catalog_origin: str
    # Requirements the catalog does not know, looked up through a DistFileSource (when one was given
    # and something was left to find): the releases read and their library files, or why not.
    requirement_files: tuple[RequirementFiles, ...] = ()
    preloaded: tuple[str, ...] = ()  # distributions whose libraries count as loaded before this wheel's
    # What the wheel's slimwheel manifest made this check count on, as the flags that say the same
    # (``--preloaded torch``, ``--exclude nvinfer``), and the copies it keeps on purpose.
    recorded: tuple[str, ...] = ()
    # NVIDIA releases only an extra of the wheel brings in (``ProviderRelease.extras`` says which).
    optional_providers: tuple[ProviderRelease, ...] = ()
    # DT_NEEDED entries a requirement installs off their file's search path (see RequirementReach).
    reachable: tuple[RequirementReach, ...] = ()

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)
