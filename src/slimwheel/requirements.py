"""How pip reads a wheel's Requires-Dist for one target: what is always installed, what only with an extra.

One rule, shared by every command that asks "does this requirement bring the library in": an
extra-gated requirement (``nvidia-cudnn-cu12; extra == "cudnn"``) is installed only when the user asks
for the extra, so it never satisfies a DT_NEEDED the package always has.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from slimwheel.platforms import Platform

__all__ = ["RequirementScope", "WheelRequirement", "marker_environment", "read_requirements", "scope_of"]


class RequirementScope(enum.Enum):
    ALWAYS = "always"  # installed with the package on this target
    EXTRA = "extra"  # installed only when one of ``extras`` is asked for
    NEVER = "never"  # its marker excludes this target


@dataclass(frozen=True)
class WheelRequirement:
    """One Requires-Dist line as pip reads it for one target."""

    text: str  # as written
    name: str  # canonical distribution name
    requirement: Requirement
    scope: RequirementScope
    extras: tuple[str, ...] = ()  # the extras that bring it in (scope EXTRA)


# Marker text names extras as ``extra == "cudnn"`` (either quote, either side).
_EXTRA_NAME = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]|['"]([^'"]+)['"]\s*==\s*extra""")


def scope_of(
    marker: Marker | None, environment: Mapping[str, str], offered: Iterable[str] = ()
) -> tuple[RequirementScope, tuple[str, ...]]:
    """Whether a requirement with ``marker`` is installed on the target ``environment`` always, only
    with some extras (which), or never. ``offered``: the package's Provides-Extra names."""
    if marker is None or _true(marker, {**environment, "extra": ""}):
        return RequirementScope.ALWAYS, ()
    named = {a or b for a, b in _EXTRA_NAME.findall(str(marker))}
    candidates = sorted(named | set(offered))
    extras = tuple(e for e in candidates if _true(marker, {**environment, "extra": e}))
    return (RequirementScope.EXTRA, extras) if extras else (RequirementScope.NEVER, ())


def _true(marker: Marker, environment: Mapping[str, str]) -> bool:
    try:
        return marker.evaluate(dict(environment))
    except Exception:  # noqa: BLE001 - an unknown variable: pip would fail loudly, so count it in
        return True


def read_requirements(
    lines: Iterable[str], environment: Mapping[str, str], offered: Iterable[str] = ()
) -> tuple[WheelRequirement, ...]:
    """Each parseable Requires-Dist line with its scope on the target (unparseable lines are skipped:
    pip refuses them, and ``check`` reports them)."""
    offered = tuple(offered)
    found = []
    for text in lines:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        scope, extras = scope_of(requirement.marker, environment, offered)
        found.append(WheelRequirement(text, canonicalize_name(requirement.name), requirement, scope, extras))
    return tuple(found)


def marker_environment(platform: Platform, python: str | None) -> dict[str, str]:
    """Just enough of PEP 508's environment to evaluate NVIDIA's markers for a target."""
    machine = {"amd64": "AMD64", "arm64": "ARM64"}.get(platform.arch, platform.arch)
    version = python or "3.12"
    return {
        "sys_platform": "win32"
        if platform.is_windows
        else "linux"
        if platform.os == "linux"
        else platform.os,
        "platform_system": "Windows"
        if platform.is_windows
        else "Linux"
        if platform.os == "linux"
        else platform.os,
        "platform_machine": machine,
        "os_name": "nt" if platform.is_windows else "posix",
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
