"""``slimwheel repair --embed-loader``: the run-time loader copied into the repaired package, with a
call at its import. Proven on a split environment (the package ``pip install --target``-ed apart from
the NVIDIA wheels, which its RPATH cannot reach) in a real venv that has no slimwheel."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import slimwheel.runtime
from slimwheel.cli import main
from slimwheel.repair.embed import MARKER, call_lines
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import ProviderWheels
from tests.support.solver import SOLVER_INIT, SOLVER_TAG, fat_solver_wheel, repair_to_json
from tests.support.venvs import make_venv, pip_install, site_packages
from tests.support.wheels import make_wheel

RUNTIME = Path(slimwheel.runtime.__file__).parent
RUNTIME_FILES = sorted(p.name for p in RUNTIME.glob("*.py"))
CUDA13 = ("--cuda", "13", "--isolated-environment")
DOCUMENTED_INIT = (
    b'"""The solver, on NVIDIA\'s cuDSS wheel."""\n\nfrom __future__ import annotations\n\n' + SOLVER_INIT
)
# What a fresh process inherits from the test run must not steer where libraries come from.
STEERING = (
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTHONPATH",
    "PYTHONHOME",
    "CUDA_HOME",
    "CUDA_PATH",
    "CONDA_PREFIX",
)

PROBE = """
import importlib.util, json, sys
import solver
result = {
    "value": solver.version(),
    "doc": solver.__doc__,
    "loader": sys.modules["solver._slimwheel_runtime"].__file__,
    "slimwheel_modules": sorted(m for m in sys.modules if m.split(".")[0] == "slimwheel"),
    "slimwheel_importable": importlib.util.find_spec("slimwheel") is not None,
}
with open("/proc/self/maps") as maps:
    result["mapped"] = sorted({line.split()[-1] for line in maps if ".so" in line and "/" in line})
print(json.dumps(result))
"""


def _with_files(wheel: Path, directory: Path, changes: Mapping[str, bytes | None]) -> Path:
    """A copy of ``wheel`` (name, version, tag and Requires-Dist kept) with members replaced, added or,
    for None, removed."""
    with Wheel.open(wheel) as source:
        files = {
            m.name: source.read_member(m.name)
            for m in source.members
            if not m.is_dir and not m.name.startswith(f"{source.dist_info}/")
        }
        name, version, requires = source.distribution, source.version, source.requires_dist()
        tag = source.filename.removesuffix(".whl").split("-", 2)[2]
    for member, data in changes.items():
        if data is None:
            files.pop(member)
        else:
            files[member] = data
    directory.mkdir(parents=True, exist_ok=True)
    return make_wheel(directory, name, version, files, tag=tag, requires=requires)


def _install_target(target: Path, *wheels: Path) -> Path:
    """``pip install --target`` from the files alone: no index, no dependencies."""
    argv = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", "install"]
    argv += ["--no-cache-dir", "--no-index", "--no-deps", "--target", str(target), *map(str, wheels)]
    process = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert process.returncode == 0, process.stderr
    return target


def _import_from(python: Path, target: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``import solver`` in ``python`` with only ``target`` on PYTHONPATH, in a fresh process."""
    environment = {
        k: v for k, v in os.environ.items() if k not in STEERING and not k.startswith("SLIMWHEEL_")
    }
    environment.update(PYTHONPATH=str(target), PYTHONNOUSERSITE="1")
    argv = [str(python), "-c", PROBE]
    return subprocess.run(
        argv, capture_output=True, text=True, check=False, cwd=cwd, env=environment, timeout=120
    )


def _member(wheel: Path, name: str) -> bytes:
    with Wheel.open(wheel) as opened:
        opened.verify()
        return opened.read_member(name)


def test_embedded_loader_serves_a_split_environment_without_slimwheel(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The NVIDIA wheels in a venv's site-packages, the package in a --target folder on PYTHONPATH:
    ``$ORIGIN/../nvidia/cu13/lib`` finds nothing there; the embedded loader finds them through sys.path."""
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    fat = _with_files(fat, tmp_path / "documented", {"solver/__init__.py": DOCUMENTED_INIT})
    embedded = repair_to_json(capsys, fat, tmp_path / "embedded", own_catalog, *CUDA13, "--embed-loader")
    plain = repair_to_json(capsys, fat, tmp_path / "plain", own_catalog, *CUDA13)

    server = index_server(providers.directory)
    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, "nvidia-cudss-cu13==1.0.0.35", index_url=server.simple_url)
    assert installed.returncode == 0, installed.stderr
    site = site_packages(python)

    target = _install_target(tmp_path / "target", Path(embedded["output"]))
    assert sorted(p.name for p in (target / "solver/_slimwheel_runtime").glob("*.py")) == RUNTIME_FILES
    process = _import_from(python, target, tmp_path)
    assert process.returncode == 0, process.stderr
    probe: dict[str, Any] = json.loads(process.stdout)
    assert probe["value"] == 10000  # cudssGetProperty, through the provider's library
    assert probe["doc"] == "The solver, on NVIDIA's cuDSS wheel."
    assert probe["loader"] == str(target / "solver/_slimwheel_runtime/__init__.py")
    assert probe["slimwheel_modules"] == []
    assert probe["slimwheel_importable"] is False  # this venv has no slimwheel at all
    cudss = [path for path in probe["mapped"] if path.endswith("/libcudss.so.1")]
    assert cudss == [str(site / "nvidia/cu13/lib/libcudss.so.1")]
    assert str(site / "nvidia/cu13/lib/libcublas.so.13") in probe["mapped"]

    # The same repair without --embed-loader: the RPATH alone cannot reach the venv's NVIDIA wheels.
    bare = _install_target(tmp_path / "target-plain", Path(plain["output"]))
    assert not (bare / "solver/_slimwheel_runtime").exists()
    failed = _import_from(python, bare, tmp_path)
    assert failed.returncode != 0
    assert "libcudss.so.1: cannot open shared object file" in failed.stderr


def _older_python(version: str) -> Path | None:
    """An interpreter older than slimwheel's own minimum, from pyenv (as scripts/test finds 3.10)."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = sorted(root.glob(f"{version}.*/bin/python"))
    return found[-1] if found else None


@pytest.mark.parametrize("version", ["3.8", "3.9"])
def test_the_embedded_loader_runs_on_the_packages_older_python(
    version: str,
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The copy runs on the repaired package's interpreter, which may be older than slimwheel's 3.10."""
    interpreter = _older_python(version)
    if interpreter is None:
        pytest.skip(f"needs Python {version} (pyenv)")
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    result = repair_to_json(capsys, fat, tmp_path / "out", own_catalog, *CUDA13, "--embed-loader")
    venv = tmp_path / "venv"
    subprocess.run([str(interpreter), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = _install_target(site_packages(python), providers.cudss_cu13, providers.cublas)
    target = _install_target(tmp_path / "target", Path(result["output"]))
    process = _import_from(python, target, tmp_path)
    assert process.returncode == 0, process.stderr
    probe = json.loads(process.stdout)
    assert probe["value"] == 10000
    assert probe["slimwheel_importable"] is False
    assert str(site / "nvidia/cu13/lib/libcudss.so.1") in probe["mapped"]


def test_dry_run_and_json_show_the_embedding(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    out = tmp_path / "out"
    argv = ["repair", str(fat), "-w", str(out), "--catalog", str(own_catalog), *CUDA13, "--dry-run"]
    assert main([*argv, "--embed-loader"]) == 0
    printed = capsys.readouterr().out
    assert (
        f"would embed     solver/_slimwheel_runtime/: {len(RUNTIME_FILES)} files of slimwheel.runtime"
        in printed
    )
    assert 'would call      _slimwheel_preload("solver") in solver/__init__.py, at the top' in printed

    for flag in ("--embed-loader", "--embed-loader=solver"):
        assert main([*argv, flag, "--json"]) == 0
        (result,) = json.loads(capsys.readouterr().out)["wheels"]
        (loader,) = result["plan"]["embedded"]
        assert loader["package"] == "solver"
        assert [f["path"] for f in loader["files"]] == [
            f"solver/_slimwheel_runtime/{n}" for n in RUNTIME_FILES
        ]
        assert [f["source"] for f in loader["files"]] == [str(RUNTIME / n) for n in RUNTIME_FILES]
        assert loader["replaced"] == []
        assert loader["init"] == {
            "path": "solver/__init__.py",
            "after_line": 0,
            "removed": None,
            "lines": list(call_lines("solver")),
            "changes_anything": True,
        }
    assert not out.exists()


def test_docstring_and_future_imports_stay_first(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    fat = _with_files(fat, tmp_path / "documented", {"solver/__init__.py": DOCUMENTED_INIT})
    result = repair_to_json(capsys, fat, tmp_path / "out", own_catalog, *CUDA13, "--embed-loader")
    init = _member(Path(result["output"]), "solver/__init__.py")
    head = b'"""The solver, on NVIDIA\'s cuDSS wheel."""\n\nfrom __future__ import annotations\n'
    call = "".join(f"{line}\n" for line in call_lines("solver")).encode()
    assert init == head + call + b"\n" + SOLVER_INIT
    tree = ast.parse(init)
    assert ast.get_docstring(tree) == "The solver, on NVIDIA's cuDSS wheel."
    assert isinstance(tree.body[1], ast.ImportFrom)
    assert tree.body[1].module == "__future__"


def test_embedding_again_replaces_the_loader_and_keeps_one_call(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older embedded loader (another module set, a call naming another distribution) is replaced;
    repairing the result again changes neither the call nor the files. The loader's own text, which
    names libcudss.so.1, does not make the plain copy beside it look loaded by path."""
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "plain")
    older_call = "".join(f"{line}\n" for line in call_lines("solver-old")).encode()
    older_loader = (RUNTIME / "__init__.py").read_bytes()
    assert b"libcudss.so.1" in older_loader
    older = _with_files(
        fat,
        tmp_path / "older",
        {
            "solver/__init__.py": older_call + SOLVER_INIT,
            "solver/_slimwheel_runtime/__init__.py": older_loader,
            "solver/_slimwheel_runtime/_gone.py": b"",
        },
    )
    first = repair_to_json(capsys, older, tmp_path / "first", own_catalog, *CUDA13, "--embed-loader")
    assert first["plan"]["drop"] == ["solver/libcudss.so.1"]
    (loader,) = first["plan"]["embedded"]
    assert loader["replaced"] == [
        "solver/_slimwheel_runtime/__init__.py",
        "solver/_slimwheel_runtime/_gone.py",
    ]
    assert loader["init"]["removed"] == [1, 5]
    repaired = Path(first["output"])
    init = _member(repaired, "solver/__init__.py")
    assert init == "".join(f"{line}\n" for line in call_lines("solver")).encode() + SOLVER_INIT
    with Wheel.open(repaired) as wheel:
        copied = {
            m.name: wheel.read_member(m.name) for m in wheel.members if "/_slimwheel_runtime/" in m.name
        }
    assert copied == {f"solver/_slimwheel_runtime/{n}": (RUNTIME / n).read_bytes() for n in RUNTIME_FILES}

    extra = ("--linked-version", "cudss=1.0.0.35")
    second = repair_to_json(
        capsys, repaired, tmp_path / "second", own_catalog, *CUDA13, *extra, "--embed-loader"
    )
    (again,) = second["plan"]["embedded"]
    assert again["init"]["changes_anything"] is False
    assert again["replaced"] == sorted(copied)
    assert _member(Path(second["output"]), "solver/__init__.py") == init
    assert init.count(MARKER.encode()) == 1


def test_embedding_needs_a_package_with_an_init(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top_level = make_wheel(
        tmp_path, "flat", "1.0", {"_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=SOLVER_TAG
    )
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    namespace = _with_files(fat, tmp_path / "namespace", {"solver/__init__.py": None})
    out = tmp_path / "out"
    cases = [
        (top_level, "--embed-loader", "flat-1.0-py3-none-manylinux_2_17_x86_64.whl has the extension module "
         "_solver.so at top level: pass --embed-loader=PACKAGE"),
        (namespace, "--embed-loader", "has solver/_solver.so in solver/, which has none"),
        (fat, "--embed-loader=solver.missing", "has no solver/missing/__init__.py"),
    ]  # fmt: skip
    for wheel, flag, expected in cases:
        argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), *CUDA13, flag]
        assert main([*argv, "--linked-version", "cudss=1.0.0.35"]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith(
            f"slimwheel repair: error: {wheel.name}: --embed-loader needs a package with an __init__.py; "
        )
        assert expected in line
    assert not out.exists() or not any(out.iterdir())

    # A wheel right after a bare --embed-loader would be its value: refused, with what to write instead.
    assert main(["repair", "--embed-loader", str(fat), "-w", str(out)]) == 2
    assert "write --embed-loader=PACKAGE" in capsys.readouterr().err


def test_nothing_to_load_embeds_nothing(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An ELF library that needs no NVIDIA library: a wheel with none at all is refused as nothing to repair.
    plain = compile_shared(tmp_path / "build" / "libplain.so", {"plain.c": "int plain(void) { return 1; }\n"})
    files = {"pure/__init__.py": b"VALUE = 1\n", "pure/libplain.so": plain.read_bytes()}
    pure = make_wheel(tmp_path, "pure", "1.0", files, tag=SOLVER_TAG)
    result = repair_to_json(capsys, pure, tmp_path / "out", own_catalog, *CUDA13, "--embed-loader")
    assert result["plan"]["embedded"] == []
    assert any("nothing is embedded" in line for line in result["plan"]["warnings"])
    with Wheel.open(Path(result["output"])) as wheel:
        assert not any("_slimwheel_runtime" in m.name for m in wheel.members)
        assert wheel.read_member("pure/__init__.py") == b"VALUE = 1\n"
