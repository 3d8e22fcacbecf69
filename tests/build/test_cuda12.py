"""CUDA 12 from the same tree: ``-C slimwheel.cuda=12 -C slimwheel.name-suffix=-cu{major}`` builds the
example, isolated, against ``nvidia-cudss-cu12`` and the CUDA 12 wheels, whose libraries live in
per-library folders (``nvidia/cuda_runtime/lib``) or cuDSS's own (``nvidia/cu12/lib``), with the system
toolkit hidden. The wheel is ``cudss_solver_cu12`` and requires the cu12 distributions, where the CUDA 13
build of the same tree with the same suffix is ``cudss_solver_cu13`` and requires the CUDA 13 ones; it
passes ``check --cuda 12`` and ``verify`` (installed into a fresh venv with its real dependencies, both
libraries mapped from their providers there), and its extension calls into cuDSS from that venv."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from slimwheel.catalog.store import load_catalog
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from slimwheel.verify import verify_wheel
from tests.build.conftest import EXAMPLE, can_hide_toolkit, hidden, run
from tests.build.test_backend import _metadata, _pip_wheel
from tests.support.venvs import make_venv, site_packages

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    pytest.mark.skipif(not can_hide_toolkit(), reason="hiding the system toolkit needs root and unshare"),
]

EXTENSION = "cudss_solver/_cudss_solver.abi3.so"
PROBE = """
import importlib.metadata, json, cudss_solver
maps = open("/proc/self/maps").read().split()
print(json.dumps({"cudss": cudss_solver.cudss_version(), "runtime": cudss_solver.cuda_runtime_version(),
                  "cudss_wheel": importlib.metadata.version("nvidia-cudss-cu12"),
                  "files": sorted({p for p in maps if "/libcudss.so" in p or "/libcudart.so" in p})}))
"""


def test_cuda_12_builds_from_the_same_tree_and_loads_from_the_venv(
    tmp_path: Path, slimwheel_wheelhouse: Path, build_python: Path, capsys: pytest.CaptureFixture[str]
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
        "slimwheel.name-suffix=-cu{major}",
        "-C",
        f"build-dir={tmp_path / 'build'}",
        str(EXAMPLE),
    ]
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    (wheel,) = out.glob("*.whl")
    assert wheel.name.startswith("cudss_solver_cu12-0.1.0-cp310-abi3-manylinux"), wheel.name

    name, requires = _metadata(wheel)
    assert canonicalize_name(name) == "cudss-solver-cu12"
    assert any(r.startswith("nvidia-cudss-cu12>=") for r in requires), requires
    assert any(r.startswith("nvidia-cuda-runtime-cu12>=12") for r in requires), requires
    assert not [r for r in requires if "cu13" in r or r.startswith("nvidia-cuda-runtime>=")], requires
    with zipfile.ZipFile(wheel) as archive:
        (tmp_path / "ext.so").write_bytes(archive.read(EXTENSION))
    facts = read_elf_file(tmp_path / "ext.so", symbols=False)
    assert {"libcudss.so.1", "libcudart.so.12"} <= set(facts.needed)

    # The same tree, the same suffix, CUDA 13 (build_python has its wheels; no isolation): another
    # distribution, requiring CUDA 13's NVIDIA wheels and none of CUDA 12's.
    other = _pip_wheel(tmp_path / "cu13", build_python, "-C", "slimwheel.name-suffix=-cu{major}")
    assert other.name.startswith("cudss_solver_cu13-0.1.0-cp310-abi3-manylinux"), other.name
    other_name, other_requires = _metadata(other)
    assert canonicalize_name(other_name) == "cudss-solver-cu13"
    required = {canonicalize_name(Requirement(r).name) for r in requires}
    other_required = {canonicalize_name(Requirement(r).name) for r in other_requires}
    assert required == {"nvidia-cudss-cu12", "nvidia-cuda-runtime-cu12"}, requires
    assert other_required == {"nvidia-cudss-cu13", "nvidia-cuda-runtime"}, other_requires

    assert main(["check", str(wheel), "--cuda", "12"]) == 0, capsys.readouterr().out[-3000:]
    capsys.readouterr()
    report = verify_wheel(wheel, load_catalog())
    assert report.ok, [problem.message for problem in report.problems]
    assert {"cudss_solver", "cudss_solver._cudss_solver"} <= {
        i.name for i in report.imports if i.status == "ok"
    }
    mapped = {library.soname: library for library in report.libraries}
    assert mapped["libcudss.so.1"].distribution == "nvidia-cudss-cu12", report.libraries
    assert mapped["libcudart.so.12"].distribution == "nvidia-cuda-runtime-cu12", report.libraries
    assert "libcudart.so.13" not in mapped, report.libraries

    # The extension calls into cuDSS (no GPU needed) with both libraries from a venv of the wheel's.
    python = make_venv(tmp_path / "venv")
    installed = run([sys.executable, "-m", "pip", "--python", str(python), "install", str(wheel)])
    assert installed.returncode == 0, installed.stderr[-3000:]
    probed = run([str(python), "-c", PROBE], cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr[-3000:]
    probe = json.loads(probed.stdout)
    # The cuDSS the extension called is the wheel's: its version is the wheel's (1.0.0.35 -> 1, 0, 0).
    assert ".".join(map(str, probe["cudss"])) == probe["cudss_wheel"].rsplit(".", 1)[0], probe
    assert probe["runtime"] // 1000 == 12, probe
    site = str(site_packages(python))
    files = probe["files"]
    assert any(f.startswith(f"{site}/nvidia/") and "/libcudss.so.1" in f for f in files), files
    assert any(f.startswith(f"{site}/nvidia/") and "/libcudart.so.12" in f for f in files), files
    assert all(f.startswith(f"{site}/") for f in files), files
