"""A real cuDSS extension, end to end: built with gcc against NVIDIA's real pip wheels (fetched from the
package index the way pip resolves it), repaired, checked, installed by pip with its real
dependencies into a fresh venv, and imported in a fresh process that shows where each library was
mapped from; then ``slimwheel verify`` passes on the repaired wheel (also at the lowest releases it
allows) and fails on the unrepaired one, naming the library with no requirement and no RPATH.

Needs gcc, Python's headers and a CUDA 13 toolkit's headers; no GPU (cudssGetProperty needs none).
The first run downloads about 700 MB of NVIDIA wheels; slimwheel's cache and pip's cache keep them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from slimwheel.cli import main
from slimwheel.elf import read_elf
from slimwheel.manifest import Manifest
from slimwheel.wheel import Wheel
from tests.support.venvs import make_venv, run_probe, site_packages

pytestmark = [pytest.mark.network, pytest.mark.slow]

CUDSS_WHEEL_VERSION = "1.0.0.35"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cudss_solver"
EXTENSION = "cudss_solver/_cudss_solver.abi3.so"
ONE_MB = 1_000_000

SOLVE_PROBE = """
import json, cudss_solver
try:
    print(json.dumps({"result": cudss_solver.solve_poisson3d(4)}))
except RuntimeError as error:
    print(json.dumps({"error": str(error)}))
"""


def _elf_of(wheel_path: Path) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    with Wheel.open(wheel_path) as wheel:
        wheel.verify()
        with wheel.seekable_member(EXTENSION) as stream:
            facts = read_elf(stream, path=EXTENSION, symbols=False)
    return tuple(facts.needed), tuple(facts.rpath), tuple(facts.runpath)


def _slimwheel_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, document


def _build(out_dir: Path) -> dict[str, Any]:
    process = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE / "build_wheel.py"),
            "-o",
            str(out_dir),
            "--cudss-version",
            CUDSS_WHEEL_VERSION,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    # gcc, Python.h or the CUDA headers missing: build_wheel.py says which, and how to fix it.
    assert process.returncode == 0, f"examples/cudss_solver/build_wheel.py failed:\n{process.stderr}"
    built: dict[str, Any] = json.loads(process.stdout)
    return built


def _pip_install_from_the_real_index(python: Path, wheel: Path) -> None:
    """pip with its normal configuration (no --isolated, no --index-url) and its cache kept, so the
    NVIDIA wheels are downloaded once across runs."""
    process = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "install",
         str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )  # fmt: skip
    assert process.returncode == 0, f"pip install failed:\n{process.stdout[-3000:]}\n{process.stderr}"


def _installed_version(python: Path, distribution: str) -> Version:
    output = subprocess.run(
        [str(python), "-c", f"from importlib.metadata import version; print(version({distribution!r}))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return Version(output.strip())


def test_real_cudss_extension_built_repaired_installed_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = _build(tmp_path / "dist")
    fat = Path(built["wheel"])
    assert fat.name == "cudss_solver-0.1.0-cp310-abi3-linux_x86_64.whl"
    assert built["cudss"]["version"] == CUDSS_WHEEL_VERSION
    runtime_version = built["cuda_runtime"]["version"]
    needed, rpath, runpath = _elf_of(fat)
    assert {"libcudss.so.1", "libcudart.so.13"} <= set(needed), needed
    assert (rpath, runpath) == ((), ()), "a fresh build against the pip wheels carries no search path"

    # The catalog learned from the live index now, so a release newer than the shipped snapshot is known.
    catalog = tmp_path / "catalog.json.gz"
    code = main(["catalog", "update", "nvidia-cudss-cu13", "nvidia-cuda-runtime", "-o", str(catalog)])
    assert code == 0
    capsys.readouterr()

    # check: the unrepaired wheel needs NVIDIA libraries that no Requires-Dist brings in.
    code, document = _slimwheel_json(capsys, "check", str(fat), "--cuda", "13", "--catalog", str(catalog))
    assert code == 1
    (report,) = document["wheels"]
    missing = {f["soname"] for f in report["findings"] if f["kind"] == "missing-requirement"}
    assert missing == {"libcudss.so.1", "libcudart.so.13"}, report["findings"]

    code, document = _slimwheel_json(
        capsys,
        "repair", str(fat), "-w", str(tmp_path / "wheelhouse"), "--catalog", str(catalog), "--cuda", "13",
        "--isolated-environment", "--linked-version", f"cudss={CUDSS_WHEEL_VERSION}",
        "--linked-version", f"cudart={runtime_version}",
    )  # fmt: skip
    assert code == 0
    (result,) = document["wheels"]
    repaired = Path(result["output"])
    # auditwheel gives the linux_* wheel a manylinux tag; the abi3 tag stays.
    assert re.fullmatch(r"cudss_solver-0\.1\.0-cp310-abi3-manylinux[\w.]*_x86_64\.whl", repaired.name), (
        repaired
    )
    assert repaired.stat().st_size < ONE_MB
    assert result["size_after"] == repaired.stat().st_size

    needed, rpath, runpath = _elf_of(repaired)
    assert {"libcudss.so.1", "libcudart.so.13"} <= set(needed), needed
    assert rpath == ("$ORIGIN/../nvidia/cu13/lib",)
    assert runpath == ()
    with Wheel.open(repaired) as wheel:
        requirements = {r.name: r for r in map(Requirement, wheel.requires_dist())}
        manifest = Manifest.from_json(wheel.read_member(f"{wheel.dist_info}/slimwheel.json"))
    assert requirements["nvidia-cudss-cu13"].specifier == SpecifierSet(f">={CUDSS_WHEEL_VERSION},<2")
    runtime = requirements["nvidia-cuda-runtime"].specifier
    assert Version(runtime_version) in runtime
    assert ">=" + runtime_version in str(runtime)
    libraries = {library.soname: library for library in manifest.libraries}
    assert (libraries["libcudss.so.1"].distribution, libraries["libcudss.so.1"].folder) == (
        "nvidia-cudss-cu13",
        "nvidia/cu13/lib",
    )
    assert libraries["libcudart.so.13"].distribution == "nvidia-cuda-runtime"

    code, document = _slimwheel_json(
        capsys, "check", str(repaired), "--cuda", "13", "--catalog", str(catalog)
    )
    assert code == 0, [f for w in document["wheels"] for f in w["findings"]]

    # pip installs it with its real dependencies; a fresh process loads cuDSS from the venv's wheel.
    python = make_venv(tmp_path / "venv")
    _pip_install_from_the_real_index(python, repaired)
    probe = run_probe(python, "cudss_solver", "cudss_version", cwd=tmp_path)
    installed = _installed_version(python, "nvidia-cudss-cu13")
    assert probe["value"][0] == 1
    assert tuple(probe["value"]) == installed.release[:3], (probe["value"], installed)
    lib_dir = (site_packages(python) / "nvidia" / "cu13" / "lib").resolve()
    mapped = [Path(path) for path in probe["mapped"]]
    for soname in ("libcudss.so.1", "libcudart.so.13"):
        found = [path for path in mapped if path.name == soname]
        # RPATH wins over the system toolkit's copy of libcudart in the loader cache.
        assert [path.resolve() for path in found] == [lib_dir / soname], (soname, probe["mapped"])

    _verify_with_the_real_index(capsys, repaired, fat, catalog)

    # On a machine without a GPU the solve fails cleanly, naming the failed call and its status.
    process = subprocess.run(
        [str(python), "-c", SOLVE_PROBE],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=tmp_path,
    )
    assert process.returncode == 0, process.stderr
    outcome = json.loads(process.stdout)
    if "error" in outcome:
        assert re.search(r"\bfailed: (cudaError\w+|CUDSS_STATUS_\w+)", outcome["error"]), outcome
    else:
        solved = outcome["result"]
        assert solved["unknowns"] == 64
        assert solved["residual"] < 1e-12


def _verify_with_the_real_index(
    capsys: pytest.CaptureFixture[str], repaired: Path, fat: Path, catalog: Path
) -> None:
    """``slimwheel verify`` with the user's pip configuration (the real index): the repaired wheel maps
    cuDSS from its provider, also at the lowest releases its requirements allow; the unrepaired one
    fails, and says which library has no requirement and no RPATH."""
    code, document = _slimwheel_json(capsys, "verify", str(repaired), "--catalog", str(catalog))
    assert code == 0, document["problems"]
    assert document["pip_configuration"] == "user's"
    assert document["import_name"] == "cudss_solver"
    by_name = {lib["name"]: lib for lib in document["libraries"]}
    assert by_name["cudss"]["distribution"] == "nvidia-cudss-cu13", document["libraries"]
    assert by_name["cudss"]["path"].endswith("site-packages/nvidia/cu13/lib/libcudss.so.1")
    assert all(lib["ok"] for lib in document["libraries"]), document["libraries"]

    code, document = _slimwheel_json(capsys, "verify", str(repaired), "--lowest", "--catalog", str(catalog))
    assert code == 0, document["problems"]
    pins = [f"{pin['distribution']}=={pin['version']}" for pin in document["pins"]]
    assert f"nvidia-cudss-cu13=={CUDSS_WHEEL_VERSION}" in pins
    assert set(pins) <= set(document["installed"]), (pins, document["installed"])

    code, document = _slimwheel_json(capsys, "verify", str(fat), "--catalog", str(catalog))
    assert code == 1
    assert document["problems"][0]["kind"] == "import"
    assert "cannot open shared object file" in document["problems"][0]["message"]
    unresolved = {p["soname"]: p["message"] for p in document["problems"] if p["kind"] == "unresolved"}
    assert unresolved["libcudss.so.1"] == (
        f"{EXTENSION} needs libcudss.so.1: no Requires-Dist on nvidia-cudss-cu13 and no RPATH; "
        "run `slimwheel repair`"
    ), document["problems"]
