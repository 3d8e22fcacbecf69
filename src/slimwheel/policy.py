"""What a manylinux wheel may take from the host: auditwheel's policy, read as data.

auditwheel (already a dependency on Linux) ships the PEP 599/600 whitelists as JSON; a hand copy goes
stale (it had ``libcrypt.so.1``, dropped from the policy, and lacked ``libatomic.so.1``, ``libanl.so.1``
and ``libmvec.so.1``). The file is read without importing auditwheel, whose import is slow.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

from slimwheel.errors import SlimwheelError
from slimwheel.platforms import glibc_of_tag

__all__ = [
    "PolicyUnavailableError",
    "host_sonames",
    "level_allowing",
    "manylinux_level",
    "oldest_manylinux_tag",
    "versions_beyond",
]


class PolicyUnavailableError(SlimwheelError):
    """auditwheel's policy file is not installed here: slimwheel's install lacks a dependency."""


def _policy_file() -> Path:
    spec = importlib.util.find_spec("auditwheel")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "policy" / "manylinux-policy.json"
        if candidate.is_file():
            return candidate
    raise PolicyUnavailableError(
        "auditwheel's manylinux-policy.json is not installed, which slimwheel reads for the libraries "
        "each manylinux tag lets a wheel count on",
        hint="pip install auditwheel: slimwheel depends on it, and this environment lacks it",
    )


@lru_cache(maxsize=1)
def _whitelists() -> tuple[tuple[tuple[int, int], frozenset[str]], ...]:
    """(glibc version, whitelist) per manylinux policy, oldest first."""
    policies = json.loads(_policy_file().read_text(encoding="utf-8"))
    found = []
    for policy in policies:
        name = str(policy.get("name", ""))
        if not name.startswith("manylinux_"):
            continue  # "linux": the policy of a wheel auditwheel has not tagged, which allows nothing
        major, minor = name.removeprefix("manylinux_").split("_")[:2]
        found.append(((int(major), int(minor)), frozenset(policy.get("lib_whitelist", ()))))
    return tuple(sorted(found))


@lru_cache(maxsize=1)
def _symbol_versions() -> tuple[tuple[tuple[int, int], Mapping[str, Mapping[str, frozenset[str]]]], ...]:
    """(glibc version, {architecture: {prefix: versions}}) per manylinux policy, oldest first: the
    symbol versions a wheel of that level may need from the host (``GLIBC``: ``2.17``...)."""
    policies = json.loads(_policy_file().read_text(encoding="utf-8"))
    found = []
    for policy in policies:
        name = str(policy.get("name", ""))
        if not name.startswith("manylinux_"):
            continue
        major, minor = name.removeprefix("manylinux_").split("_")[:2]
        versions = {
            arch: {prefix: frozenset(names) for prefix, names in prefixes.items()}
            for arch, prefixes in policy.get("symbol_versions", {}).items()
        }
        found.append(((int(major), int(minor)), versions))
    return tuple(sorted(found, key=lambda item: item[0]))


# The names ELF readers give machines, where auditwheel's policy names them otherwise.
_POLICY_ARCHITECTURES = {"i386": "i686", "arm": "armv7l"}


def versions_beyond(glibc: tuple[int, int], machine: str, needed: Iterable[str]) -> tuple[str, ...]:
    """Of the symbol versions a file needs from the host's libraries (``GLIBC_2.38``,
    ``GLIBCXX_3.4.32``), those the manylinux policy of level ``glibc`` does not allow on ``machine``:
    pip installs its wheel on hosts whose libraries may lack them, and there it does not load.
    A version no policy names (``GLIBC_PRIVATE``, a prefix the policy does not police) is not judged."""
    policies = _symbol_versions()
    arch = _POLICY_ARCHITECTURES.get(machine, machine)
    fitting = [versions for level, versions in policies if level <= glibc] or [policies[0][1]]
    allowed = fitting[-1].get(arch, {})
    known: dict[str, set[str]] = {}
    for _, versions in policies:
        for prefix, names in versions.get(arch, {}).items():
            known.setdefault(prefix, set()).update(names)
    beyond = []
    for name in dict.fromkeys(needed):
        prefix, _, version = name.partition("_")
        if version in known.get(prefix, ()) and version not in allowed.get(prefix, ()):
            beyond.append(name)
    return tuple(beyond)


def level_allowing(machine: str, needed: Iterable[str]) -> tuple[int, int] | None:
    """The oldest manylinux level whose policy allows every symbol version in ``needed`` (those no
    policy names aside) on ``machine``; None when no policy does."""
    arch = _POLICY_ARCHITECTURES.get(machine, machine)
    names = list(needed)
    for level, _ in _symbol_versions():
        if not versions_beyond(level, arch, names):
            return level
    return None


def host_sonames(glibc: tuple[int, int] | None = None) -> frozenset[str]:
    """The sonames a manylinux wheel for ``glibc`` (the level of its tag: (2, 17) for
    manylinux2014) may take from the host: the whitelist of the newest policy not newer than that
    level (``libmvec.so.1`` only from 2.24). None, for a wheel with no manylinux tag: the union over
    every policy (auditwheel's question which level it can have, not ours)."""
    whitelists = _whitelists()
    if glibc is None:
        return frozenset().union(*(names for _, names in whitelists))
    fitting = [names for level, names in whitelists if level <= glibc]
    return fitting[-1] if fitting else whitelists[0][1]


def manylinux_level(platform_tags: Iterable[str]) -> tuple[int, int] | None:
    """The glibc a wheel promises to run on: the oldest its manylinux tags name (a wheel tagged
    ``manylinux_2_17`` and ``manylinux_2_28`` installs on 2.17), None when it has none."""
    oldest = oldest_manylinux_tag(platform_tags)
    return oldest[0] if oldest else None


def oldest_manylinux_tag(platform_tags: Iterable[str]) -> tuple[tuple[int, int], str] | None:
    """The manylinux tag that promises the oldest glibc, with that glibc; None when there is none."""
    levels = [(level, tag) for tag in platform_tags if (level := glibc_of_tag(tag)) is not None]
    return min(levels) if levels else None
