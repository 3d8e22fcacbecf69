"""Fixtures for tests/build: a slimwheel wheel for isolated builds, a build venv, the hidden toolkit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.venvs import make_venv

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cudss_solver"
# What a build needs from pip, CUDA 13 (pip's own configuration and cache: re-runs download nothing).
BUILD_REQUIREMENTS = (
    "scikit-build-core>=0.10",
    "nvidia-cudss-cu13==1.0.0.35",
    "cuda-toolkit[cudart,crt,cccl,nvcc]==13.*",
)
SYSTEM_TOOLKITS = tuple(sorted(str(p) for p in Path("/usr/local").glob("cuda-*") if p.is_dir()))
# Run a command with the system toolkit invisible: a private mount namespace with an empty read-only
# tmpfs over each /usr/local/cuda-* (the /usr/local/cuda link then leads into an empty folder), and
# no CUDA variables or toolkit folders on PATH. Nothing under those folders can be opened or run.
HIDE = r"""
set -e
for d in "$@"; do [ "$d" = -- ] && break; mount -t tmpfs -o ro,size=1m slimwheel-hidden "$d"; done
while [ "$1" != -- ]; do shift; done; shift
exec env -u CUDA_HOME -u CUDA_PATH -u CUDA_ROOT -u CUDAToolkit_ROOT -u CUDACXX -u NVCC_PREPEND_FLAGS \
    -u NVCC_APPEND_FLAGS PATH=/usr/bin:/bin "$@"
"""


def can_hide_toolkit() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def hidden(argv: Sequence[str], *, strace_log: Path | None = None) -> list[str]:
    """``argv`` run with the system toolkit hidden; under strace (file calls) when a log is named."""
    traced = list(argv)
    if strace_log is not None:
        traced = ["strace", "-f", "--seccomp-bpf", "-e", "trace=%file,execve", "-o", str(strace_log), *traced]
    return [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "bash",
        "-c",
        HIDE,
        "hide",
        *SYSTEM_TOOLKITS,
        "--",
        *traced,
    ]


def run(argv: Sequence[str], *, timeout: int = 900, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=timeout, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.fixture(scope="session")
def slimwheel_wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with this checkout built as a wheel: pip installs slimwheel from it into build envs."""
    folder = tmp_path_factory.mktemp("slimwheel-wheelhouse")
    process = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "wheel",
            "--no-deps",
            "-w",
            str(folder),
            str(ROOT),
        ]
    )
    assert process.returncode == 0, process.stderr
    return folder


@pytest.fixture(scope="session")
def build_python(tmp_path_factory: pytest.TempPathFactory, slimwheel_wheelhouse: Path) -> Path:
    """A venv with everything a non-isolated build of the example needs (and nvcc, CCCL)."""
    python = make_venv(tmp_path_factory.mktemp("build-venv") / "venv")
    process = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "--disable-pip-version-check",
            "install",
            "--find-links",
            str(slimwheel_wheelhouse),
            "slimwheel",
            *BUILD_REQUIREMENTS,
        ]
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr
    return python
