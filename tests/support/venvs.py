"""Real virtual environments for install tests: made without pip, filled by this environment's pip."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

__all__ = ["make_venv", "pip_install", "run_probe", "site_packages"]


def make_venv(path: Path) -> Path:
    """A fresh venv (no pip inside: ``pip --python`` installs into it); returns its interpreter."""
    venv.EnvBuilder(with_pip=False, clear=True).create(path)
    return path / "bin" / "python"


def pip_install(python: Path, *args: str, index_url: str) -> subprocess.CompletedProcess[str]:
    """``pip install`` into ``python``'s environment from ``index_url`` only.

    ``--isolated`` because this machine's pip configuration adds other indexes and find-links.
    """
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "--isolated",
        "--disable-pip-version-check",
        "install",
        "--no-cache-dir",
        "--index-url",
        index_url,
        *args,
    ]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)


PROBE = """
import json, sys
module = __import__(sys.argv[1])
result = {"value": getattr(module, sys.argv[2])()}
with open("/proc/self/maps") as maps:
    result["mapped"] = sorted({line.split()[-1] for line in maps if ".so" in line and "/" in line})
print(json.dumps(result))
"""


def run_probe(
    python: Path, module: str, function: str, *, cwd: Path, env: dict[str, str] | None = None
) -> Any:
    """Import ``module`` in a fresh process, call ``function``, and list the shared objects mapped."""
    process = subprocess.run(
        [str(python), "-c", PROBE, module, function],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=cwd,
        env=env,
    )
    if process.returncode != 0:
        raise AssertionError(f"probe failed ({process.returncode}): {process.stderr}")
    return json.loads(process.stdout)


def site_packages(python: Path) -> Path:
    output = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Path(output.strip())
