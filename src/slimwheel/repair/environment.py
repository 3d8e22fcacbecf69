"""The build environment repair runs in: which NVIDIA wheels are installed there, at which version.

A fresh build linked against the pip-installed provider, so the installed version is the linked one.
:class:`BuildEnvironment` reads the file system; :meth:`BuildEnvironment.snapshot` gathers what
planning asks of it into :class:`EnvironmentFacts`, plain data, so that ``plan_repair`` reads nothing
but its arguments.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import Protocol

from packaging.utils import canonicalize_name

__all__ = ["BuildEnvironment", "EnvironmentFacts", "InstalledProviders"]


class InstalledProviders(Protocol):
    """What planning asks of the environment a wheel was built in."""

    @property
    def description(self) -> str: ...

    def installed_version(self, distribution: str) -> str | None: ...

    def has_file(self, relative: str) -> bool: ...

    def needed_by_file(self, relative: str) -> tuple[str, ...] | None: ...


@dataclass(frozen=True)
class EnvironmentFacts:
    """A snapshot of a build environment: installed versions, and the DT_NEEDED of the provider files
    installed there (by path relative to site-packages)."""

    description: str
    versions: Mapping[str, str] = field(default_factory=dict)  # canonical name -> version
    needed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # installed file -> DT_NEEDED

    def installed_version(self, distribution: str) -> str | None:
        return self.versions.get(canonicalize_name(distribution))

    def has_file(self, relative: str) -> bool:
        return relative in self.needed

    def needed_by_file(self, relative: str) -> tuple[str, ...] | None:
        return self.needed.get(relative)


@dataclass(frozen=True)
class BuildEnvironment:
    """Installed distributions found on ``paths`` (default: this interpreter's ``sys.path``)."""

    paths: tuple[str, ...] = field(default_factory=lambda: tuple(sys.path))
    description: str = "this environment"

    @classmethod
    def of(cls, paths: Sequence[str], description: str) -> BuildEnvironment:
        return cls(tuple(paths), description)

    @cached_property
    def _versions(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for distribution in metadata.distributions(path=list(self.paths)):
            name = distribution.metadata["Name"]
            if name:
                # The first one on the path wins, as at import time.
                found.setdefault(canonicalize_name(name), distribution.version)
        return found

    def installed_version(self, distribution: str) -> str | None:
        return self._versions.get(canonicalize_name(distribution))

    def installed_file(self, relative: str) -> Path | None:
        """A provider's file by its path relative to site-packages (``nvidia/cu13/lib/libcudss.so.1``)."""
        for entry in self.paths:
            candidate = Path(entry or ".") / relative
            if entry and candidate.is_file():
                return candidate
        return None

    def has_file(self, relative: str) -> bool:
        return self.installed_file(relative) is not None

    def snapshot(self, provider_files: Iterable[str]) -> EnvironmentFacts:
        """What planning needs, read once: every installed version, and the DT_NEEDED of each of
        ``provider_files`` (paths relative to site-packages, e.g. the catalog's) installed here."""
        needed = {}
        for relative in dict.fromkeys(provider_files):
            found = self.needed_by_file(relative)
            if found is not None:
                needed[relative] = found
        return EnvironmentFacts(self.description, dict(self._versions), needed)

    def needed_by_file(self, relative: str) -> tuple[str, ...] | None:
        """DT_NEEDED of an installed provider file; None when it is not installed here or unreadable."""
        from slimwheel.elf import read_elf_file
        from slimwheel.errors import ElfError

        path = self.installed_file(relative)
        if path is None:
            return None
        try:
            return read_elf_file(path, symbols=False).needed
        except (ElfError, OSError):
            return None

    @classmethod
    def of_interpreter(cls, python: str) -> BuildEnvironment:
        """The environment of another interpreter (the one the wheel was built with)."""
        from slimwheel.errors import UsageError

        try:
            output = subprocess.run(
                [python, "-c", "import json, sys; print(json.dumps(sys.path))"],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            raise UsageError(f"--build-python {python}: cannot run it ({exc})") from exc
        return cls(tuple(json.loads(output)), f"the environment of {python}")
