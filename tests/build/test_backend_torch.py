"""The example's torch binding through ``build-backend = "slimwheel.build"``, built for real (pip,
scikit-build-core, CMake, g++ against torch's CPU wheel), with the system CUDA toolkit hidden.

In one build environment that has torch 2.13 (the CPU wheel in /opt/wheels, as pip's find-links
list it) besides what a CUDA 13 build needs: ``frameworks=torch`` adds the ``cudss_solver_torch``
package (``_cudss_torch.so``, linked against libc10/libtorch from torch and libcudss/libcudart from
the NVIDIA wheels) and ``Requires-Dist: torch==2.13.*``; ``frameworks=none`` has neither. ``check``
passes on both. The torch wheel installed by pip into a fresh venv with torch imports
``cudss_solver_torch``, which registers the operator, and refuses a CPU tensor with a clear error
(there is no GPU here to solve on); ``verify`` passes on it (its modules, ``cudss_solver_torch`` with
torch, imported in a venv of its requirements).

The TransformerEngine shape from the same tree: the torch distribution's sdist
(``distribution=torch``: ``cudss_solver_torch-0.1.0.tar.gz``), installed by pip without isolation
into the build environment once it has the core wheel (``distribution=core``: no torch part even
with torch there), builds against the torch there a wheel of ``cudss_solver_torch`` alone that
requires ``torch==2.13.*`` and ``cudss-solver-cu13==0.1.0``; ``check`` and ``verify`` pass on the wheel
pip built. An isolated ``pip wheel`` of the same sdist has pip install torch for it, and gives the same.
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
import zipfile
from email.parser import BytesParser
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from slimwheel.build.settings import read_settings
from slimwheel.catalog.store import load_catalog
from slimwheel.cli import main
from slimwheel.verify import verify_wheel
from tests.build.conftest import BUILD_REQUIREMENTS, EXAMPLE, can_hide_toolkit, hidden, run
from tests.build.test_backend import _call_hook, _metadata
from tests.support.venvs import make_venv, site_packages

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    pytest.mark.skipif(not can_hide_toolkit(), reason="hiding the system toolkit needs root and unshare"),
]

# The one torch release this machine keeps on disk: no other is fetched (they are GBs).
TORCH_WHEELS = Path("/opt/wheels")
TORCH = "torch==2.13.0"
EXTENSION = "cudss_solver_torch/_cudss_torch.so"

needs_torch_wheel = pytest.mark.skipif(
    not list(TORCH_WHEELS.glob("torch-2.13.0*.whl")), reason=f"no torch 2.13.0 wheel in {TORCH_WHEELS}"
)


def _pip(python: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "--python",
        str(python),
        *args,
    ]


@pytest.fixture(scope="module")
def torch_build_python(tmp_path_factory: pytest.TempPathFactory, slimwheel_wheelhouse: Path) -> Path:
    """A venv for a build without isolation: slimwheel, the CUDA 13 build wheels and torch 2.13 (CPU)."""
    python = make_venv(tmp_path_factory.mktemp("torch-build-venv") / "venv")
    argv = _pip(
        python,
        "install",
        "--find-links",
        str(slimwheel_wheelhouse),
        "--find-links",
        str(TORCH_WHEELS),
        "slimwheel",
        *BUILD_REQUIREMENTS,
        TORCH,
    )
    process = run(argv)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr
    return python


def _build(out: Path, python: Path, setting: str) -> Path:
    """A wheel of the example built without isolation by ``python``, with ``-C slimwheel.<setting>``."""
    argv = _pip(
        python, "wheel", "--no-deps", "--no-build-isolation", "-w", str(out),
        "-C", f"slimwheel.{setting}", str(EXAMPLE),
    )  # fmt: skip
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def torch_wheel(tmp_path_factory: pytest.TempPathFactory, torch_build_python: Path) -> Path:
    return _build(tmp_path_factory.mktemp("torch-wheel"), torch_build_python, "frameworks=torch")


def _members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


@needs_torch_wheel
def test_frameworks_torch_adds_the_extension_and_the_torch_requirement(
    torch_wheel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert torch_wheel.name.startswith("cudss_solver-0.1.0-cp310-abi3-manylinux")
    members = _members(torch_wheel)
    assert {EXTENSION, "cudss_solver_torch/__init__.py", "cudss_solver/_cudss_solver.abi3.so"} <= members
    _name, requires = _metadata(torch_wheel)
    # The minor the build compiled against ([tool.slimwheel.frameworks.torch] run-requires).
    assert "torch==2.13.*" in requires, requires
    assert any(r.startswith("nvidia-cudss-cu13>=1.0.0.35,<2") for r in requires), requires
    # check: libc10/libtorch resolve in torch's files (read from the index) through $ORIGIN/../torch/lib.
    assert main(["check", str(torch_wheel), "--cuda", "13", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    text = json.dumps(report)
    assert "torch/lib/libc10.so" in text, text[:3000]


@needs_torch_wheel
def test_frameworks_none_in_the_same_environment_has_no_torch_part(
    tmp_path: Path, torch_build_python: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _build(tmp_path, torch_build_python, "frameworks=none")
    members = _members(wheel)
    assert not [m for m in members if m.startswith("cudss_solver_torch/")], members
    assert "cudss_solver/_cudss_solver.abi3.so" in members
    _name, requires = _metadata(wheel)
    assert not [r for r in requires if r.startswith("torch")], requires
    assert main(["check", str(wheel), "--cuda", "13"]) == 0, capsys.readouterr().out[-3000:]


PROBE = """
import json, sys, warnings
warnings.simplefilter("ignore")  # torch's CPU wheel warns that numpy is missing
import torch
import cudss_solver_torch as binding  # registers the operator
result = {"op": str(torch.ops.cudss_solver.solve_csr.default._schema), "file": binding.__file__}
a = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, 1]),
                            torch.tensor([2.0, 4.0], dtype=torch.float64), size=(2, 2))
try:
    binding.solve(a, torch.ones(2, dtype=torch.float64))
except RuntimeError as error:
    result["error"] = str(error).splitlines()[0]
with open("/proc/self/maps") as maps:
    result["mapped"] = sorted({line.split()[-1] for line in maps if ".so" in line and "/" in line})
print(json.dumps(result))
"""


@needs_torch_wheel
@pytest.mark.install
def test_the_torch_wheel_installs_imports_and_refuses_a_cpu_tensor(torch_wheel: Path, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    process = run(_pip(python, "install", "--find-links", str(TORCH_WHEELS), str(torch_wheel), TORCH))
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    process = run([str(python), "-c", PROBE], cwd=tmp_path)
    assert process.returncode == 0, process.stderr[-3000:]
    result = json.loads(process.stdout)
    assert result["op"].startswith("cudss_solver::solve_csr(Tensor crow_indices")
    assert result["error"].startswith("cudss_solver: A must be on a CUDA device, not cpu"), result
    site = Path(str(python)).parent.parent
    mapped = {Path(p).name: p for p in result["mapped"]}
    # The extension's libraries from the venv's wheels: torch's, and cuDSS and the runtime from NVIDIA's.
    for name in ("_cudss_torch.so", "libc10.so", "libtorch_cpu.so", "libcudss.so.1", "libcudart.so.13"):
        assert mapped[name].startswith(str(site)), (name, mapped.get(name))

    # slimwheel verify on it: pip installs it with its real dependencies (torch==2.13.* is the CPU
    # wheel on disk, as pip's configuration here lists it) and imports the package, its extension and
    # its torch package (which imports torch) in one process; cuDSS and the runtime map from their wheels.
    imports = ("cudss_solver", "cudss_solver._cudss_solver", "cudss_solver_torch")
    report = verify_wheel(torch_wheel, load_catalog(), import_names=imports)
    assert report.ok, [problem.message for problem in report.problems]
    assert [(i.name, i.status) for i in report.imports if i.name in imports] == [(n, "ok") for n in imports]
    assert any(line.startswith("torch==2.13.") for line in report.installed), report.installed
    libraries = {library.soname: library for library in report.libraries}
    assert libraries["libcudss.so.1"].distribution == "nvidia-cudss-cu13", report.libraries
    assert libraries["libcudart.so.13"].ok, report.libraries


@pytest.fixture(scope="module")
def torch_sdist(tmp_path_factory: pytest.TempPathFactory, torch_build_python: Path) -> Path:
    """The torch distribution's sdist, from the one tree (the backend's build_sdist, as pip calls it)."""
    out = tmp_path_factory.mktemp("torch-sdist")
    name = _call_hook("build_sdist", out, torch_build_python, {"slimwheel.distribution": "torch"})
    return out / name


def _torch_only(wheel: Path) -> list[str]:
    """The torch distribution's wheel: named so, ``cudss_solver_torch`` alone; its Requires-Dist."""
    assert wheel.name.startswith("cudss_solver_torch-0.1.0-cp310-abi3-manylinux"), wheel.name
    folders = {m.split("/", 1)[0] for m in _members(wheel)}
    assert folders == {"cudss_solver_torch", "cudss_solver_torch-0.1.0.dist-info"}, folders
    assert {EXTENSION, "cudss_solver_torch/__init__.py"} <= _members(wheel)
    name, requires = _metadata(wheel)
    assert canonicalize_name(name) == "cudss-solver-torch"
    assert {"torch==2.13.*", "cudss-solver-cu13==0.1.0"} <= set(requires), requires
    return requires


@needs_torch_wheel
def test_the_torch_sdist_names_its_distribution_and_builds_it(tmp_path: Path, torch_sdist: Path) -> None:
    assert torch_sdist.name == "cudss_solver_torch-0.1.0.tar.gz"
    with tarfile.open(torch_sdist) as archive:
        pkg_info = archive.extractfile("cudss_solver_torch-0.1.0/PKG-INFO")
        pyproject = archive.extractfile("cudss_solver_torch-0.1.0/pyproject.toml")
        assert pkg_info is not None
        assert pyproject is not None
        assert BytesParser().parsebytes(pkg_info.read())["Name"] == "cudss-solver-torch"
        (tmp_path / "pyproject.toml").write_bytes(pyproject.read())
    # What a build from it reads: the torch distribution, for the CUDA major found where it lands.
    settings = read_settings(tmp_path, {}, {}, installed_major=12)
    assert settings.distribution is not None
    assert (settings.distribution.key, settings.frameworks, settings.cuda) == ("torch", ("torch",), 12)


@needs_torch_wheel
@pytest.mark.install
def test_the_torch_sdist_installs_without_isolation_against_the_installed_torch(
    tmp_path: Path,
    torch_build_python: Path,
    torch_sdist: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The core wheel from the same tree, in the same environment: no torch part although torch is there.
    core = _build(tmp_path / "core", torch_build_python, "distribution=core")
    assert core.name.startswith("cudss_solver_cu13-0.1.0-cp310-abi3-manylinux"), core.name
    assert {m.split("/", 1)[0] for m in _members(core)} == {
        "cudss_solver",
        "cudss_solver_cu13-0.1.0.dist-info",
    }
    _name, requires = _metadata(core)
    assert not [r for r in requires if r.startswith("torch")], requires
    process = run(_pip(torch_build_python, "install", "--no-index", str(core)))
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]

    # pip install of the sdist, as TransformerEngine documents for its torch package: built where it
    # lands, against the torch there; a private cache keeps the wheel pip built.
    cache = tmp_path / "cache"
    argv = _pip(torch_build_python, "install", "--no-build-isolation", "--no-index",
                "--cache-dir", str(cache), str(torch_sdist))  # fmt: skip
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    process = run([str(torch_build_python), "-c", INSTALLED_PROBE], cwd=tmp_path)
    assert process.returncode == 0, process.stderr[-3000:]
    installed = json.loads(process.stdout)
    assert installed["name"] == "cudss-solver-torch", installed
    assert {"torch==2.13.*", "cudss-solver-cu13==0.1.0"} <= set(installed["requires"]), installed
    assert EXTENSION in installed["files"], installed
    assert not [f for f in installed["files"] if f.startswith("cudss_solver/")], installed["files"]
    assert installed["op"].startswith("cudss_solver::solve_csr(Tensor crow_indices"), installed
    site = str(site_packages(torch_build_python))
    assert installed["library"] == f"{site}/{EXTENSION}", installed

    (built,) = (cache / "wheels").rglob("*.whl")
    _torch_only(built)
    assert main(["check", str(built), "--cuda", "13"]) == 0, capsys.readouterr().out[-3000:]
    capsys.readouterr()
    # verify installs it with its requirements: cudss-solver-cu13 from the core wheel's folder, torch
    # from the wheels on disk; importing cudss_solver_torch loads the operator library.
    monkeypatch.setenv("PIP_FIND_LINKS", f"{TORCH_WHEELS} {core.parent}")
    report = verify_wheel(built, load_catalog(), import_names=("cudss_solver_torch",))
    assert report.ok, [problem.message for problem in report.problems]
    assert [(i.name, i.status) for i in report.imports if i.name == "cudss_solver_torch"] == [
        ("cudss_solver_torch", "ok")
    ]
    assert any(line.startswith("cudss-solver-cu13==0.1.0") for line in report.installed), report.installed
    libraries = {library.soname: library for library in report.libraries}
    assert libraries["libcudss.so.1"].distribution == "nvidia-cudss-cu13", report.libraries


INSTALLED_PROBE = """
import importlib.metadata, json, warnings
warnings.simplefilter("ignore")  # torch's CPU wheel warns that numpy is missing
import torch
import cudss_solver_torch
distribution = importlib.metadata.distribution("cudss-solver-torch")
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "/_cudss_torch.so" in line}
print(json.dumps({"name": distribution.metadata["Name"], "requires": distribution.requires,
                  "files": [str(f) for f in distribution.files],
                  "op": str(torch.ops.cudss_solver.solve_csr.default._schema), "library": mapped.pop()}))
"""


@needs_torch_wheel
def test_an_isolated_build_of_the_torch_sdist_installs_torch_itself(
    tmp_path: Path, slimwheel_wheelhouse: Path, torch_sdist: Path
) -> None:
    # The backend asks pip for the framework's build requirement (torch>=2.4); this machine's pip
    # would pick its newest torch, a CUDA build with GBs of NVIDIA wheels: a constraint keeps it to
    # the CPU wheel on disk (pip passes PIP_CONSTRAINT on to the isolated environment's install).
    constraints = tmp_path / "constraints.txt"
    system = Path("/etc/xdg/pip/constraints.txt")  # this machine's caps, which PIP_CONSTRAINT replaces
    constraints.write_text((system.read_text() if system.is_file() else "") + "\ntorch==2.13.0+cpu\n")
    python = make_venv(tmp_path / "venv")
    argv = _pip(
        python, "wheel", "--no-deps", "-w", str(tmp_path / "out"), "--find-links", str(slimwheel_wheelhouse),
        str(torch_sdist),
    )  # fmt: skip
    process = run(hidden(argv), env={**os.environ, "PIP_CONSTRAINT": str(constraints)})
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    (wheel,) = (tmp_path / "out").glob("*.whl")
    _torch_only(wheel)
