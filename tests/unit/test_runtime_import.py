"""``slimwheel.runtime`` is imported by packages at their own import time: standard library only, and
cheap. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, sys, time
before = set(sys.modules)
start = time.perf_counter()
import slimwheel.runtime
elapsed = time.perf_counter() - start
print(json.dumps({"new": sorted(set(sys.modules) - before), "ms": elapsed * 1000}))
"""


def _probe(code: str, pycache: Path) -> dict[str, object]:
    # With bytecode caching on (into a temporary folder): an installed package has its .pyc files,
    # and this machine's environment turns bytecode writing off.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-X", f"pycache_prefix={pycache}", "-c", code]
    output = subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout
    result: dict[str, object] = json.loads(output)
    return result


def test_runtime_imports_nothing_outside_the_standard_library(tmp_path: Path) -> None:
    new = _probe(_PROBE, tmp_path)["new"]
    assert isinstance(new, list)
    outside = [
        m for m in new if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "slimwheel"
    ]
    assert outside == []
    ours = {m for m in new if m.split(".")[0] == "slimwheel"}
    # Of slimwheel only the runtime package (and the version module the package __init__ reads);
    # not even slimwheel.manifest until preload() runs.
    assert all(m in {"slimwheel", "slimwheel._version"} or m.startswith("slimwheel.runtime") for m in ours), (
        ours
    )
    assert "importlib.metadata" not in new
    # What would put the loader's start over its budget: dataclasses (and inspect, ast, dis), enum, re,
    # typing, collections (see slimwheel.runtime._record).
    for costly in ("dataclasses", "inspect", "enum", "re", "typing", "collections"):
        assert costly not in new, costly
    assert "email.parser" not in new
    assert "json" not in new
    assert "pathlib" not in new
