"""The target a wheel is checked for: its platform, Python and CUDA major, and which releases pip
could install there."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from slimwheel.catalog.model import Release, WheelFacts
from slimwheel.errors import InputError, UsageError
from slimwheel.platforms import Platform, linux_of_machine, platform_of_tag
from slimwheel.requirements import RequirementScope, python_of_tags, scope_of
from slimwheel.sources import ArchiveSource
from slimwheel.wheel import Wheel

__all__ = ["Target", "always_installed", "installable_wheel", "loads_on", "platform_of", "python_of"]


def platform_of(
    filename: str, platform_tags: Iterable[str], machines: Iterable[str | None], override: Platform | None
) -> Platform:
    """The wheel's Linux platform: from its tags, narrowed by its ELF machines when the tags name several."""
    if override is not None:
        if override.os != "linux":
            raise UsageError(
                f"--platform {override.key}: check simulates glibc's loader",
                hint="use manylinux_x86_64 or manylinux_aarch64",
            )
        return override
    tagged = {p for p in map(platform_of_tag, platform_tags) if p is not None}
    linux = {p for p in tagged if p.os == "linux"}
    if tagged and not linux:
        names = ", ".join(sorted(p.key for p in tagged))
        raise InputError(
            filename,
            f"is for {names}; check simulates glibc's loader",
            hint="pass --platform manylinux_x86_64 to check it as a Linux wheel anyway",
        )
    from_elf = {linux_of_machine(m) for m in machines if m}
    candidates = (linux & from_elf or linux) if linux else from_elf
    if len(candidates) == 1:
        return next(iter(candidates))
    raise InputError(
        filename,
        "cannot tell which platform it is for (its tags and ELF files do not name one)",
        hint="pass --platform manylinux_x86_64 or manylinux_aarch64",
    )


def loads_on(platform: Platform, machine: str | None) -> bool:
    """Whether glibc's loader on ``platform`` can load an ELF file of ``machine`` (None: not read)."""
    return machine is None or platform.os != "linux" or linux_of_machine(machine) == platform


def python_of(source: ArchiveSource) -> str | None:
    """The Python ``check`` evaluates the wheel's markers for (see ``python_of_tags``)."""
    return python_of_tags(source.tags) if isinstance(source, Wheel) else None


def always_installed(marker: Marker | None, environment: Mapping[str, str]) -> bool:
    return scope_of(marker, environment)[0] is RequirementScope.ALWAYS


def installable_wheel(release: Release, platform: Platform) -> WheelFacts | None:
    """The wheel pip would pick for ``platform``: a platform wheel, else a pure one."""
    wheel = release.wheel_for(platform)
    if wheel is not None:
        return wheel
    return next((w for w in release.wheels if not w.platforms), None)


@dataclass(frozen=True)
class Target:
    platform: Platform
    cuda_major: int | None
    python: str | None

    def admits(self, release: Release) -> bool:
        """Whether pip could install ``release`` here (version range aside)."""
        if release.parsed_version.is_prerelease or release.parsed_version.is_devrelease:
            return False
        if self.cuda_major is not None and release.cuda_major not in (None, self.cuda_major):
            return False
        if self.python and release.requires_python:
            try:
                if Version(self.python) not in SpecifierSet(release.requires_python):
                    return False
            except ValueError:
                pass  # an unreadable Requires-Python: pip would not rule the release out for it either
        # The catalog keeps metapackage releases (cuda-toolkit) without wheels: their pins still count.
        return not release.wheels or installable_wheel(release, self.platform) is not None
