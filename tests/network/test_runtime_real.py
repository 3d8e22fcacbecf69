"""slimwheel.runtime against NVIDIA's real cuDSS wheel: pip installs ``nvidia-cudss-cu13`` with its real
dependencies into a fresh venv, and a fresh process there loads it with ``slimwheel.runtime.load``.

The runtime is standard library only, so the probe process gets it through ``PYTHONPATH`` (this
checkout's ``src``) rather than an install. No GPU is needed: ``cudssGetProperty`` answers without one.
pip runs with its normal configuration and its cache, so the wheels are downloaded once across runs
(the same ones tests/network/test_real_cudss.py installs).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from tests.support.venvs import make_venv, site_packages

pytestmark = [pytest.mark.network, pytest.mark.slow]

SRC = Path(__file__).resolve().parents[2] / "src"

LOAD_PROBE = """
import json, sys
import slimwheel.runtime as runtime
try:
    loaded = runtime.load("cudss", cuda=int(sys.argv[1]))
except runtime.RuntimeLoadError as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error),
                      "pip_command": error.pip_command}))
    raise SystemExit(0)
with open("/proc/self/maps") as maps:
    mapped = sorted({line.split()[-1] for line in maps if ".so" in line and "/" in line})
print(json.dumps({
    "path": loaded.path, "soname": loaded.soname, "how": loaded.how.value,
    "distribution": loaded.distribution, "version": loaded.version,
    "library_version": loaded.library_version, "cuda_major": loaded.cuda_major,
    "mapped": mapped,
}))
"""


@pytest.fixture(scope="module")
def cudss_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = make_venv(tmp_path_factory.mktemp("runtime-real") / "venv")
    # pip with its normal configuration (no --isolated, no --index-url) and its cache kept.
    process = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "install",
         "nvidia-cudss-cu13"],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )  # fmt: skip
    assert process.returncode == 0, f"pip install failed:\n{process.stdout[-3000:]}\n{process.stderr}"
    return python


def _probe(python: Path, cuda: int, cwd: Path) -> Any:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLIMWHEEL_")}
    env["PYTHONPATH"] = str(SRC)
    for variable in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX"):
        env.pop(variable, None)
    process = subprocess.run(
        [str(python), "-c", LOAD_PROBE, str(cuda)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=cwd,
        env=env,
    )
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout)


def _installed_version(python: Path, distribution: str) -> Version:
    output = subprocess.run(
        [str(python), "-c", f"from importlib.metadata import version; print(version({distribution!r}))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return Version(output.strip())


def test_load_real_cudss_cu13_from_its_wheel(cudss_venv: Path, tmp_path: Path) -> None:
    result = _probe(cudss_venv, 13, tmp_path)
    assert "error" not in result, result
    lib_dir = site_packages(cudss_venv) / "nvidia" / "cu13" / "lib"
    assert result["path"].endswith("site-packages/nvidia/cu13/lib/libcudss.so.1"), result["path"]
    assert Path(result["path"]).resolve() == (lib_dir / "libcudss.so.1").resolve()
    assert result["soname"] == "libcudss.so.1"
    assert result["how"] == "wheel"
    assert result["distribution"] == "nvidia-cudss-cu13"
    assert result["cuda_major"] == 13
    installed = _installed_version(cudss_venv, "nvidia-cudss-cu13")
    assert Version(result["version"]) == installed
    # What the library reports through cudssGetProperty: 1.0.x today, the wheel's first three parts.
    assert re.fullmatch(r"1\.\d+\.\d+", result["library_version"]), result["library_version"]
    assert result["library_version"] == ".".join(map(str, installed.release[:3]))
    assert installed.release[:2] == (1, 0), installed
    # Exactly one libcudss mapped, the wheel's copy.
    mapped = [Path(path) for path in result["mapped"] if Path(path).name.startswith("libcudss.so")]
    assert [path.resolve() for path in mapped] == [(lib_dir / "libcudss.so.1").resolve()], result["mapped"]


def test_load_cudss_for_cuda_12_names_the_cu12_distribution(cudss_venv: Path, tmp_path: Path) -> None:
    result = _probe(cudss_venv, 12, tmp_path)
    assert result.get("error") == "LibraryNotFoundError", result
    assert result["pip_command"] == "pip install 'nvidia-cudss-cu12'", result
    assert "pip install 'nvidia-cudss-cu12'" in result["message"]
    # The CUDA 13 copy was seen and turned down for its major, not missed.
    assert "nvidia-cudss-cu13" in result["message"]
    assert "CUDA 12 was asked for" in result["message"]
