"""The build environment repair runs in: which NVIDIA wheels are installed there, at which version.

A fresh build linked against the pip-installed provider, so the installed version is the linked one.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata

from packaging.utils import canonicalize_name

__all__ = ["BuildEnvironment"]


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
