"""``build-backend = "slimwheel.build"`` builds the example for real (pip, scikit-build-core, CMake, gcc),
with the system CUDA toolkit hidden (see ``conftest.HIDE``).

A build without isolation (``build_python`` has what a CUDA 13 build needs) with ``frameworks=none``
and with ``cuda=13`` plus a name suffix, then the metapackage from the same tree
(``distribution=meta``), through which pip installs ``cudss_solver[cu13]``; a CUDA 12 build in that
environment stops with one line naming the pip command; a CUDA 11 build (cuDSS has no wheel there,
nor a static archive) stops with one line, with and without ``static-fallback``; the sdist,
installed by pip into a fresh venv (an isolated build there), imports and maps cuDSS from that venv.
An editable wheel (the backend's ``build_editable``) passes ``check`` and ``verify``, and ``pip install
-e`` (isolated) gives a venv whose ``cudss_solver`` is the tree's and whose extension maps cuDSS from
that venv. ``check`` and ``verify`` (installed into a fresh venv with its real dependencies, imported,
``/proc/self/maps`` read) pass on every wheel made.
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Sequence
from email.parser import BytesParser
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from slimwheel.catalog.store import load_catalog
from slimwheel.cli import main
from slimwheel.verify import verify_wheel
from tests.build.conftest import EXAMPLE, can_hide_toolkit, hidden, run
from tests.support.venvs import make_venv, run_probe, site_packages

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    pytest.mark.skipif(not can_hide_toolkit(), reason="hiding the system toolkit needs root and unshare"),
]


def _pip_wheel(out: Path, python: Path, *options: str) -> Path:
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "--python",
        str(python),
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(out),
        *options,
        str(EXAMPLE),
    ]
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    (wheel,) = out.glob("*.whl")
    return wheel


def _call_hook(hook: str, out: Path, python: Path, config: dict[str, str] | None = None) -> str:
    """One of the backend's PEP 517 hooks on the example, run by ``python`` the way pip runs it (pip's
    own hook caller, no other frontend to install), with the system toolkit hidden and ``config`` as
    its config settings: what it returned."""
    call = (
        "import json, sys; from pip._vendor.pyproject_hooks import BuildBackendHookCaller as Caller; "
        "caller = Caller(sys.argv[1], 'slimwheel.build', python_executable=sys.argv[3]); "
        f"print(caller.{hook}(sys.argv[2], json.loads(sys.argv[4])))"
    )
    argv = [sys.executable, "-c", call, str(EXAMPLE), str(out), str(python), json.dumps(config or {})]
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    return process.stdout.strip().splitlines()[-1]


def _metadata(wheel: Path) -> tuple[str, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        message = BytesParser().parsebytes(archive.read(name))
    return str(message["Name"]), list(message.get_all("Requires-Dist") or [])


def _checks(wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(wheel), "--cuda", "13"]) == 0, capsys.readouterr().out[-3000:]
    capsys.readouterr()
    verified(wheel)


def verified(wheel: Path, imports: Sequence[str] = ("cudss_solver", "cudss_solver._cudss_solver")) -> None:
    """``slimwheel verify``: pip installs the wheel with its real dependencies into a fresh venv, a fresh
    process imports every module of it, and each NVIDIA library mapped comes from its provider there."""
    report = verify_wheel(wheel, load_catalog())
    assert report.ok, [problem.message for problem in report.problems]
    assert set(imports) <= {i.name for i in report.imports if i.status == "ok"}, report.imports
    mapped = {library.soname: library for library in report.libraries}
    assert mapped["libcudss.so.1"].distribution == "nvidia-cudss-cu13", report.libraries
    assert mapped["libcudart.so.13"].ok, report.libraries


def test_frameworks_none_builds_the_core_only(
    tmp_path: Path, build_python: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _pip_wheel(tmp_path, build_python, "-C", "slimwheel.frameworks=none")
    assert wheel.name == "cudss_solver-0.1.0-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
    name, requires = _metadata(wheel)
    assert name == "cudss_solver"
    assert not [r for r in requires if r.startswith("torch")]
    # Ranges from the versions the build linked (conftest pins cuDSS 1.0.0.35), the runtime included.
    assert any(r.startswith("nvidia-cudss-cu13>=1.0.0.35,<2") for r in requires), requires
    assert any(r.startswith("nvidia-cuda-runtime>=13") for r in requires), requires
    with zipfile.ZipFile(wheel) as archive:
        assert "cudss_solver-0.1.0.dist-info/slimwheel.json" in archive.namelist()
    _checks(wheel, capsys)


def test_cuda13_with_name_suffix_renames_the_distribution(
    tmp_path: Path, build_python: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _pip_wheel(
        tmp_path, build_python, "-C", "slimwheel.cuda=13", "-C", "slimwheel.name-suffix=-cu{major}"
    )
    assert wheel.name.startswith("cudss_solver_cu13-0.1.0-cp310-abi3-manylinux")
    name, requires = _metadata(wheel)
    assert canonicalize_name(name) == "cudss-solver-cu13"
    assert any(r.startswith("nvidia-cudss-cu13>=") for r in requires)
    with zipfile.ZipFile(wheel) as archive:
        folders = {n.split("/", 1)[0] for n in archive.namelist()}
    assert folders == {"cudss_solver", "cudss_solver_cu13-0.1.0.dist-info"}
    _checks(wheel, capsys)

    # The metapackage from the same tree ([tool.slimwheel.distributions.meta]): a pure wheel, CMake
    # not run, whose extras name the core wheel of each major (and the torch package, built from its
    # sdist: test_backend_torch); "cudss_solver[cu13]" installs it.
    meta = _pip_wheel(tmp_path / "meta", build_python, "-C", "slimwheel.distribution=meta")
    assert meta.name == "cudss_solver-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(meta) as archive:
        assert sorted(archive.namelist()) == [
            f"cudss_solver-0.1.0.dist-info/{n}" for n in ("METADATA", "RECORD", "WHEEL")
        ]
        message = BytesParser().parsebytes(archive.read("cudss_solver-0.1.0.dist-info/METADATA"))
    assert message.get_all("Provides-Extra") == ["cu12", "cu13", "torch"]
    assert message.get_all("Requires-Dist") == [
        'cudss-solver-cu12==0.1.0; extra == "cu12"',
        'cudss-solver-cu13==0.1.0; extra == "cu13"',
        'cudss-solver-torch==0.1.0; extra == "torch"',
    ]
    python = make_venv(tmp_path / "venv")
    links = ["--find-links", str(tmp_path), "--find-links", str(tmp_path / "meta")]
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python), "install",
            *links, "cudss_solver[cu13]==0.1.0"]  # fmt: skip
    process = run(argv)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    installed = {p.name.split("-")[0] for p in site_packages(python).glob("*.dist-info")}
    assert {"cudss_solver", "cudss_solver_cu13", "nvidia_cudss_cu13"} <= installed, installed
    assert run_probe(python, "cudss_solver", "cudss_version", cwd=tmp_path)["value"][0] == 1


def test_a_missing_requirement_without_isolation_is_one_line_with_the_pip_command(
    tmp_path: Path, build_python: Path
) -> None:
    # build_python has the CUDA 13 wheels: a CUDA 12 build there lacks cuDSS and the runtime for 12.
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "--python",
        str(build_python),
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(tmp_path),
        "-C",
        "slimwheel.cuda=12",
        str(EXAMPLE),
    ]
    process = run(hidden(argv))
    assert process.returncode != 0
    output = process.stdout + process.stderr
    assert "[1 lines of output]" in output, output[-3000:]
    (line,) = [x.strip() for x in output.splitlines() if "slimwheel:" in x]
    assert line.startswith("slimwheel: this build (CUDA 12, frameworks: none) needs")
    assert f"{build_python} -m pip install 'nvidia-cudss-cu12' 'nvidia-cuda-runtime-cu12'" in line, line
    assert not list(tmp_path.glob("*.whl"))


def test_a_target_with_no_wheel_and_no_static_archive_is_one_line(tmp_path: Path, build_python: Path) -> None:
    # cuDSS has no wheel for CUDA 11 (slimwheel plan: "none: link statically here"); static-fallback
    # would link libcudss_static.a, which no installed wheel ships (cuDSS's wheels have shared ones only).
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(build_python),
            "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
            "-C", "slimwheel.cuda-majors=11,12,13", "-C", "slimwheel.cuda=11"]  # fmt: skip
    process = run(hidden([*argv, "-C", "slimwheel.static-fallback=true", str(EXAMPLE)]))
    assert process.returncode != 0
    output = process.stdout + process.stderr
    (line,) = [x.strip() for x in output.splitlines() if "slimwheel:" in x]
    assert line == (
        "slimwheel: cudss: no NVIDIA wheel for CUDA 11 on manylinux_x86_64 and no installed wheel ships "
        "libcudss_static.a: nothing to link it from (static-fallback); build for another of cuda-majors"
    ), output[-3000:]
    # Without static-fallback: one line before pip is asked for a wheel that does not exist.
    process = run(hidden([*argv, str(EXAMPLE)]))
    output = process.stdout + process.stderr
    (line,) = [x.strip() for x in output.splitlines() if "slimwheel:" in x]
    assert "cudss: no NVIDIA wheel for CUDA 11 on manylinux_x86_64 (slimwheel plan: none)" in line, line
    assert "set static-fallback = true" in line
    assert not list(tmp_path.glob("*.whl"))


def test_pip_install_from_the_sdist_builds_where_it_lands(
    tmp_path: Path, build_python: Path, slimwheel_wheelhouse: Path
) -> None:
    # The sdist through the backend's own hook, run by build_python (pip's PEP 517 caller: no other
    # frontend to install).
    sdist_dir = tmp_path / "sdist"
    sdist_dir.mkdir()
    _call_hook("build_sdist", sdist_dir, build_python)
    (sdist,) = sdist_dir.glob("*.tar.gz")
    assert sdist.name == "cudss_solver-0.1.0.tar.gz"

    # An isolated build in pip: slimwheel from the wheelhouse, the CUDA 13 wheels the backend asks for.
    python = make_venv(tmp_path / "venv")
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "--python",
        str(python),
        "install",
        "--find-links",
        str(slimwheel_wheelhouse),
        str(sdist),
    ]
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    probe = run_probe(python, "cudss_solver", "cudss_version", cwd=tmp_path)
    assert probe["value"][0] == 1
    lib_dir = (site_packages(python) / "nvidia" / "cu13" / "lib").resolve()
    mapped = {Path(p).name: Path(p).resolve() for p in probe["mapped"]}
    assert mapped["libcudss.so.1"] == lib_dir / "libcudss.so.1", probe["mapped"]


EDITABLE_PROBE = """
import json, cudss_solver
maps = open("/proc/self/maps").read().split()
print(json.dumps({"package": cudss_solver.__file__, "extension": cudss_solver._cudss_solver.__file__,
                  "cudss": cudss_solver.cudss_version(), "runtime": cudss_solver.cuda_runtime_version(),
                  "mapped": sorted({p for p in maps if "/libcudss.so" in p or "/libcudart.so" in p})}))
"""


@pytest.mark.install
def test_an_editable_install_imports_the_tree_and_maps_cudss_from_the_venv(
    tmp_path: Path, build_python: Path, slimwheel_wheelhouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The backend's build_editable (no isolation): scikit-build-core's editable wheel, the compiled
    # extension in it and the Python package left in the tree, finished like any other wheel.
    out = tmp_path / "editable"
    out.mkdir()
    name = _call_hook("build_editable", out, build_python)
    wheel = out / name
    assert name.startswith("cudss_solver-0.1.0-cp310-abi3-manylinux"), name
    with zipfile.ZipFile(wheel) as archive:
        members = set(archive.namelist())
    assert "cudss_solver/_cudss_solver.abi3.so" in members
    assert "cudss_solver/__init__.py" not in members  # imported from the tree
    assert "cudss_solver-0.1.0.dist-info/slimwheel.json" in members
    _name, requires = _metadata(wheel)
    assert any(r.startswith("nvidia-cudss-cu13>=1.0.0.35,<2") for r in requires), requires
    assert main(["check", str(wheel), "--cuda", "13"]) == 0, capsys.readouterr().out[-3000:]
    capsys.readouterr()
    verified(wheel, imports=("cudss_solver._cudss_solver",))

    # pip install -e, as a user runs it: an isolated build (prepare_metadata_for_build_editable, then
    # build_editable) with slimwheel from the wheelhouse and the CUDA 13 wheels the backend asks for.
    python = make_venv(tmp_path / "venv")
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python), "install",
            "--find-links", str(slimwheel_wheelhouse), "-e", str(EXAMPLE)]  # fmt: skip
    process = run(hidden(argv))
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    probed = run([str(python), "-c", EDITABLE_PROBE], cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr[-3000:]
    probe = json.loads(probed.stdout)
    site = site_packages(python).resolve()
    assert Path(probe["package"]).resolve() == EXAMPLE / "src" / "cudss_solver" / "__init__.py", probe
    assert Path(probe["extension"]).resolve() == site / "cudss_solver" / "_cudss_solver.abi3.so", probe
    assert probe["cudss"][0] == 1, probe
    assert probe["runtime"] >= 13000, probe
    lib_dir = site / "nvidia" / "cu13" / "lib"
    assert {Path(p).name: Path(p).resolve().parent for p in probe["mapped"]} == {
        "libcudss.so.1": lib_dir,
        "libcudart.so.13": lib_dir,
    }, probe["mapped"]
