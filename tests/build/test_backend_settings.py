"""The backend's settings and requirement lists, on real pyproject.toml files (no build)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from slimwheel.build.backend import scikit_build_settings
from slimwheel.build.requires import build_requirements, has_cuda_sources, missing_requirements
from slimwheel.build.settings import BuildSettingsError, read_settings
from slimwheel.errors import SlimwheelError

PYPROJECT = """
[project]
name = "demo"
version = "1.0"

[tool.slimwheel]
cuda-majors = [12, 13]
libraries = ["cudss", "cudart"]
name-suffix = "-cu{major}"

[tool.slimwheel.frameworks.torch]
cmake-option = "DEMO_TORCH"
build-requires = ["torch>=2.4"]
run-requires = ["torch=={major}.{minor}.*"]

[tool.slimwheel.frameworks.jax]
module = "jax"
cmake-defines = { DEMO_JAX_FFI = true }
build-requires = ["jax[cuda13]"]
"""


def _project(tmp_path: Path, text: str = PYPROJECT) -> Path:
    (tmp_path / "pyproject.toml").write_text(text)
    return tmp_path


def test_precedence_config_then_environment_then_file_then_detection(tmp_path: Path) -> None:
    project = _project(tmp_path)
    detected = read_settings(project, {}, {}, installed_major=12)
    assert (detected.cuda, detected.source_of("cuda")) == (12, "the installed NVIDIA wheels")
    assert detected.suffix == "-cu12"
    newest = read_settings(project, {}, {}, installed_major=None, detect=False)
    assert (newest.cuda, newest.source_of("cuda")) == (13, "the newest of cuda-majors")
    from_env = read_settings(project, {}, {"SLIMWHEEL_CUDA": "12"}, installed_major=13)
    assert (from_env.cuda, from_env.source_of("cuda")) == (12, "SLIMWHEEL_CUDA")
    from_config = read_settings(project, {"slimwheel.cuda": "13"}, {"SLIMWHEEL_CUDA": "12"})
    assert (from_config.cuda, from_config.source_of("cuda")) == (13, "-C slimwheel.cuda")
    # The file's name-suffix, overridden by the environment (an empty variable counts as unset).
    assert read_settings(project, {}, {"SLIMWHEEL_NAME_SUFFIX": "none"}, detect=False).suffix == ""
    assert read_settings(project, {}, {"SLIMWHEEL_NAME_SUFFIX": ""}, detect=False).suffix == "-cu13"


@pytest.mark.parametrize(
    ("value", "selected"),
    [("none", ()), ("all", ("torch", "jax")), ("pytorch", ("torch",)), ("jax,torch", ("torch", "jax"))],
)
def test_frameworks_take_nvte_framework_values(tmp_path: Path, value: str, selected: tuple[str, ...]) -> None:
    settings = read_settings(_project(tmp_path), {}, {"SLIMWHEEL_FRAMEWORKS": value}, detect=False)
    assert settings.frameworks == selected


def test_frameworks_are_detected_by_finding_the_module(tmp_path: Path) -> None:
    # Neither torch nor jax is installed for this interpreter; "auto" finds what is.
    text = PYPROJECT + '\n[tool.slimwheel.frameworks.pytest]\nbuild-requires = ["pytest"]\n'
    settings = read_settings(_project(tmp_path, text), {}, {}, installed_major=13)
    assert settings.frameworks == ("pytest",)


def test_scikit_build_gets_the_major_and_the_framework_options(tmp_path: Path) -> None:
    settings = read_settings(_project(tmp_path), {}, {"SLIMWHEEL_FRAMEWORKS": "jax"}, detect=False)
    passed = scikit_build_settings(
        {"slimwheel.cuda": "13", "cmake.define.DEMO_TORCH": "ON", "build-dir": "b"}, settings, Path("/r.json")
    )
    assert passed == {
        "cmake.define.DEMO_TORCH": "ON",  # the caller's own define wins
        "build-dir": "b",
        "cmake.define.SLIMWHEEL_CUDA_MAJOR": "13",
        "cmake.define.SLIMWHEEL_LINK_RECORD": "/r.json",
        "cmake.define.DEMO_JAX_FFI": "ON",
    }


def test_requirements_follow_the_major_and_cu_sources(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cu13 = read_settings(project, {"slimwheel.frameworks": "torch"}, {}, detect=False)
    assert not has_cuda_sources(project)
    assert build_requirements(cu13, cuda_sources=False) == (
        "nvidia-cudss-cu13",
        "cuda-toolkit[crt,cudart]==13.*",
        "torch>=2.4",
    )
    assert build_requirements(cu13, cuda_sources=True) == (
        "nvidia-cudss-cu13",
        "cuda-toolkit[cccl,crt,cudart,nvcc]==13.*",
        "torch>=2.4",
    )
    (project / "src").mkdir()
    (project / "src" / "k.cu").write_text("__global__ void k() {}\n")
    (project / "build").mkdir()
    assert has_cuda_sources(project)
    cu12 = read_settings(project, {"slimwheel.cuda": "12", "slimwheel.frameworks": "none"}, {})
    assert build_requirements(cu12, cuda_sources=False) == (
        "nvidia-cudss-cu12",
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-nvcc-cu12",
    )


def test_missing_requirements_follow_extras() -> None:
    found = missing_requirements(["packaging>=1", "pytest[nope]", "nosuch-x"])
    missing = {m.requirement: m.reason for m in found}
    assert missing == {"nosuch-x": "not installed"}
    (too_old,) = missing_requirements(["packaging<1"])
    assert too_old.reason.endswith("installed")


@pytest.mark.parametrize(
    ("config", "environ", "expected"),
    [
        ({"slimwheel.cuda": "11"}, {}, "-C slimwheel.cuda: CUDA 11 is not one this project builds for"),
        ({"slimwheel.cuda": "latest"}, {}, "-C slimwheel.cuda: 'latest' is not a CUDA major"),
        ({"slimwheel.cude": "13"}, {}, "-C slimwheel.cude: no such setting"),
        ({}, {"SLIMWHEEL_FRAMEWORKS": "tensorflow"}, "SLIMWHEEL_FRAMEWORKS: no framework 'tensorflow'"),
        ({}, {"SLIMWHEEL_FRAMEWORKS": "all,torch"}, "'all' cannot be combined"),
        ({}, {"SLIMWHEEL_EMBED_LOADER": "maybe"}, "SLIMWHEEL_EMBED_LOADER: 'maybe' is not true or false"),
        ({"slimwheel.name-suffix": "/cu"}, {}, "'/cu' is not a name suffix"),
    ],
)
def test_bad_settings_are_one_line(
    tmp_path: Path, config: dict[str, str], environ: dict[str, str], expected: str
) -> None:
    with pytest.raises(BuildSettingsError) as caught:
        read_settings(_project(tmp_path), config, environ, installed_major=13)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, SlimwheelError)


def test_unknown_file_key_is_one_line(tmp_path: Path) -> None:
    text = PYPROJECT.replace("libraries =", "librarys =")
    with pytest.raises(BuildSettingsError, match="no key 'librarys'"):
        read_settings(_project(tmp_path, text), {}, {}, detect=False)


def test_locate_does_not_import_the_backend() -> None:
    # CMake runs `python -m slimwheel.build.locate` at every configure: the hooks stay out of it.
    code = (
        "import sys, runpy; sys.argv = ['locate', '--json', 'cudart']\n"
        "try:\n    runpy.run_module('slimwheel.build.locate', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scikit_build_core', 'slimwheel.build.'))))"
    )
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    # run as __main__ (the only slimwheel.build module loaded is the package, for its __path__)
    assert process.stdout.strip().splitlines()[-1] == "[]", process.stderr
