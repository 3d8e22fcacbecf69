"""CUDA 12 from the same tree: ``-C slimwheel.cuda=12`` builds the example, isolated, against
``nvidia-cudss-cu12`` and the CUDA 12 wheels, whose libraries live in per-library folders
(``nvidia/cuda_runtime/lib``) or cuDSS's own (``nvidia/cu12/lib``), with the system toolkit hidden.
The wheel requires the cu12 distributions, passes ``check --cuda 12``, installs into a fresh venv
with its real dependencies and maps both libraries from that venv."""

from __future__ import annotations

import json
import sys
import zipfile
from email.parser import BytesParser
from pathlib import Path

import pytest

from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from tests.build.conftest import EXAMPLE, can_hide_toolkit, hidden, run
from tests.support.venvs import make_venv, site_packages

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    pytest.mark.skipif(not can_hide_toolkit(), reason="hiding the system toolkit needs root and unshare"),
]

EXTENSION = "cudss_solver/_cudss_solver.abi3.so"
PROBE = """
import json, cudss_solver
maps = open("/proc/self/maps").read().split()
print(json.dumps({"cudss": cudss_solver.cudss_version(),
                  "files": sorted({p for p in maps if "/libcudss.so" in p or "/libcudart.so" in p})}))
"""


def test_cuda_12_builds_from_the_same_tree_and_loads_from_the_venv(
    tmp_path: Path, slimwheel_wheelhouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "wheel",
        "--no-deps",
        "-w",
        str(out),
        "--find-links",
        str(slimwheel_wheelhouse),
        "-C",
        "slimwheel.cuda=12",
        "-C",
        f"build-dir={tmp_path / 'build'}",
        str(EXAMPLE),
    ]
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    (wheel,) = out.glob("cudss_solver-*.whl")

    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = BytesParser().parsebytes(archive.read(metadata)).get_all("Requires-Dist") or []
        (tmp_path / "ext.so").write_bytes(archive.read(EXTENSION))
    assert any(r.startswith("nvidia-cudss-cu12>=") for r in requires), requires
    assert any(r.startswith("nvidia-cuda-runtime-cu12>=12") for r in requires), requires
    assert not [r for r in requires if "cu13" in r or r.startswith("nvidia-cuda-runtime>=")], requires
    facts = read_elf_file(tmp_path / "ext.so", symbols=False)
    assert {"libcudss.so.1", "libcudart.so.12"} <= set(facts.needed)
    assert main(["check", str(wheel), "--cuda", "12"]) == 0, capsys.readouterr().out[-3000:]

    python = make_venv(tmp_path / "venv")
    installed = run([sys.executable, "-m", "pip", "--python", str(python), "install", str(wheel)])
    assert installed.returncode == 0, installed.stderr[-3000:]
    probed = run([str(python), "-c", PROBE], cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr[-3000:]
    probe = json.loads(probed.stdout)
    assert probe["cudss"][0] >= 0
    site = str(site_packages(python))
    files = probe["files"]
    assert any(f.startswith(f"{site}/nvidia/") and "/libcudss.so.1" in f for f in files), files
    assert any(f.startswith(f"{site}/nvidia/") and "/libcudart.so.12" in f for f in files), files
    assert all(f.startswith(f"{site}/") for f in files), files
