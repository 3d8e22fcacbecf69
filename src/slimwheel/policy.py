"""What a manylinux wheel may take from the host: auditwheel's policy, read as data.

auditwheel (already a dependency on Linux) ships the PEP 599/600 whitelists as JSON; a hand copy goes
stale (it had ``libcrypt.so.1``, dropped from the policy, and lacked ``libatomic.so.1``, ``libanl.so.1``
and ``libmvec.so.1``). The file is read without importing auditwheel, whose import is slow.
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path

__all__ = ["PolicyUnavailableError", "host_sonames"]


class PolicyUnavailableError(RuntimeError):
    """auditwheel's policy file is not installed here."""


def _policy_file() -> Path:
    spec = importlib.util.find_spec("auditwheel")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "policy" / "manylinux-policy.json"
        if candidate.is_file():
            return candidate
    raise PolicyUnavailableError(
        "auditwheel's manylinux-policy.json is not installed (pip install auditwheel)"
    )


@lru_cache(maxsize=1)
def host_sonames() -> frozenset[str]:
    """Every soname some manylinux policy lets a wheel take from the host (the union over policies:
    whether one is allowed at a given level is auditwheel's question, not ours)."""
    policies = json.loads(_policy_file().read_text(encoding="utf-8"))
    return frozenset(name for policy in policies for name in policy.get("lib_whitelist", ()))
