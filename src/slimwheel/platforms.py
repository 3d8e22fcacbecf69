"""Platform tags as targets: which OS and architecture a wheel serves, and which glibc it needs."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_TARGET_PLATFORMS",
    "Platform",
    "glibc_of_tag",
    "linux_of_machine",
    "manylinux_tag",
    "parse_platform",
    "platform_of_tag",
]

_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_(.+)$")
_LEGACY = re.compile(r"^(manylinux1|manylinux2010|manylinux2014)_(.+)$")


@dataclass(frozen=True, order=True)
class Platform:
    """A target platform: an OS (``linux``, ``win``, ``macos``) and an architecture (``x86_64``)."""

    os: str
    arch: str

    @property
    def key(self) -> str:
        """The name users write: ``manylinux_x86_64``, ``win_amd64``."""
        return f"manylinux_{self.arch}" if self.os == "linux" else f"{self.os}_{self.arch}"

    @property
    def is_windows(self) -> bool:
        return self.os == "win"

    def __str__(self) -> str:
        return self.key


# The platforms NVIDIA publishes CUDA library wheels for; the default targets of `plan`.
DEFAULT_TARGET_PLATFORMS = (
    Platform("linux", "x86_64"),
    Platform("linux", "aarch64"),
    Platform("win", "amd64"),
)


# ELF's names of machines that wheel tags spell otherwise.
_TAG_ARCH = {"i386": "i686", "arm": "armv7l"}


def linux_of_machine(machine: str) -> Platform:
    """The Linux platform of an ELF machine name (``i386``: ``linux_i686``), as wheel tags spell it."""
    return Platform("linux", _TAG_ARCH.get(machine, machine))


def platform_of_tag(tag: str) -> Platform | None:
    """``manylinux2014_x86_64`` -> linux/x86_64; ``win_amd64`` -> win/amd64; ``any`` -> None."""
    if tag == "any":
        return None
    match = _MANYLINUX.match(tag)
    if match:
        return Platform("linux", match[3])
    match = _LEGACY.match(tag)
    if match:
        return Platform("linux", match[2])
    if tag.startswith("linux_"):
        return Platform("linux", tag[len("linux_") :])
    if tag.startswith("musllinux_"):
        return Platform("musllinux", tag.split("_", 3)[-1])
    if tag.startswith("win_"):
        return Platform("win", tag[len("win_") :])
    if tag == "win32":
        return Platform("win", "x86")
    if tag.startswith("macosx_"):
        return Platform("macos", tag.split("_", 3)[-1])
    return None


def glibc_of_tag(tag: str) -> tuple[int, int] | None:
    """The glibc version a manylinux tag requires (``manylinux2014_x86_64`` -> (2, 17)); None otherwise."""
    match = _MANYLINUX.match(tag)
    if match:
        return int(match[1]), int(match[2])
    match = _LEGACY.match(tag)
    if match:
        return _LEGACY_MANYLINUX[match[1]]
    return None


def manylinux_tag(glibc: tuple[int, int], arch: str) -> str:
    return f"manylinux_{glibc[0]}_{glibc[1]}_{arch}"


def parse_platform(text: str) -> Platform:
    """Parse a target as users write it: ``manylinux_x86_64``, ``win_amd64``, or a full platform tag."""
    from slimwheel.errors import UsageError

    cleaned = text.strip()
    for prefix in ("manylinux_", "linux_"):
        rest = cleaned[len(prefix) :] if cleaned.startswith(prefix) else None
        if rest and not rest[0].isdigit():
            return Platform("linux", rest)
    platform = platform_of_tag(cleaned)
    if platform is None:
        raise UsageError(
            f"{text!r} is not a platform",
            hint="use manylinux_x86_64, manylinux_aarch64, win_amd64 or a wheel platform tag",
        )
    return platform
