"""``slimwheel.runtime`` is imported by packages at their own import time: standard library only, and
cheap. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import statistics
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
    assert "email.parser" not in new
    assert "json" not in new
    assert "pathlib" not in new


def test_import_time_is_printed(tmp_path: Path) -> None:
    """Not a benchmark (no threshold): prints the median of fresh imports next to importlib.metadata's."""
    _probe(_PROBE, tmp_path)  # writes the bytecode
    runtime = [float(str(_probe(_PROBE, tmp_path)["ms"])) for _ in range(7)]
    metadata_probe = _PROBE.replace("import slimwheel.runtime", "import importlib.metadata")
    metadata = [float(str(_probe(metadata_probe, tmp_path)["ms"])) for _ in range(7)]
    dataclasses_probe = _PROBE.replace("import slimwheel.runtime", "import dataclasses")
    dataclasses = [float(str(_probe(dataclasses_probe, tmp_path)["ms"])) for _ in range(7)]
    print(
        f"\nimport slimwheel.runtime: {statistics.median(runtime):.1f} ms "
        f"(of which dataclasses and inspect: {statistics.median(dataclasses):.1f} ms); "
        f"import importlib.metadata: {statistics.median(metadata):.1f} ms"
    )
    assert min(runtime) > 0
