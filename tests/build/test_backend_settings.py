"""The backend's settings and requirement lists, on real pyproject.toml files (no build)."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from slimwheel.build.backend import scikit_build_settings
from slimwheel.build.requires import build_requirements, has_cuda_sources, missing_requirements
from slimwheel.build.sdist import pin_distribution, rename_sdist
from slimwheel.build.settings import BuildSettingsError, read_settings
from slimwheel.build.static import static_libraries, wheelless_libraries
from slimwheel.errors import SlimwheelError
from slimwheel.metadata import metadata_with

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


def test_static_fallback_takes_the_targets_with_no_wheel_out_of_the_requirements(tmp_path: Path) -> None:
    # The shipped catalog: cuDSS has wheels for CUDA 12 and 13, none for CUDA 11; cudart has all three.
    text = PYPROJECT.replace("cuda-majors = [12, 13]", "cuda-majors = [11, 12, 13]")
    project = _project(tmp_path, text)
    cu13 = read_settings(project, {"slimwheel.static-fallback": "true"}, {}, detect=False)
    assert cu13.static_fallback
    assert static_libraries(cu13, "manylinux_x86_64") == ()
    assert wheelless_libraries(["cudss", "cudart"], 11, "manylinux_x86_64") == ("cudss",)
    cu11 = read_settings(project, {"slimwheel.cuda": "11"}, {"SLIMWHEEL_STATIC_FALLBACK": "1"}, detect=False)
    static = static_libraries(cu11, "manylinux_x86_64")
    assert static == ("cudss",)
    # No wheel asked for cuDSS; the runtime and crt headers its header needs are CUDA 11's.
    assert build_requirements(cu11, cuda_sources=False, static=static) == (
        "nvidia-cuda-runtime-cu11",
        "nvidia-cuda-nvcc-cu11",
    )
    assert scikit_build_settings({}, cu11, None, static)["cmake.define.SLIMWHEEL_STATIC_LIBRARIES"] == "cudss"
    without = read_settings(project, {"slimwheel.cuda": "11"}, {}, detect=False)
    assert not without.static_fallback
    with pytest.raises(BuildSettingsError) as caught:
        static_libraries(without, "manylinux_x86_64")
    assert str(caught.value) == (
        "cudss: no NVIDIA wheel for CUDA 11 on manylinux_x86_64 (slimwheel plan: none): build for another "
        "of cuda-majors, or set static-fallback = true to link a static archive instead"
    )


DISTRIBUTIONS = """
[tool.slimwheel.distributions.core]
name = "demo-cu{major}"

[tool.slimwheel.distributions.meta]
metapackage = true
requires = ["demo-common=={version}"]
extras = { cu12 = ["demo-cu12=={version}"], cu13 = ["demo-cu13=={version}; sys_platform == 'linux'"] }
"""


def test_distributions_from_one_tree(tmp_path: Path) -> None:
    project = _project(tmp_path, PYPROJECT + DISTRIBUTIONS)
    plain = read_settings(project, {}, {}, detect=False)
    assert plain.distribution is None
    core = read_settings(project, {"slimwheel.distribution": "core", "slimwheel.cuda": "12"}, {})
    assert core.distribution is not None
    assert core.render(core.distribution.name or "", "1.0") == "demo-cu12"
    meta = read_settings(project, {}, {"SLIMWHEEL_DISTRIBUTION": "meta"}, detect=False)
    assert meta.distribution is not None
    assert meta.distribution.metapackage
    assert build_requirements(meta, cuda_sources=True) == ()  # no CMake, no NVIDIA wheel
    assert dict(meta.distribution.extras)["cu13"] == ("demo-cu13=={version}; sys_platform == 'linux'",)
    metadata = metadata_with(
        b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        name=None,
        requires=["demo-common==1.0"],
        extras=[("cu13", ["demo-cu13==1.0; sys_platform == 'linux'"])],
    )
    assert metadata.decode().splitlines()[3:] == [
        "Requires-Dist: demo-common==1.0",
        "Provides-Extra: cu13",
        'Requires-Dist: demo-cu13==1.0; (sys_platform == "linux") and extra == "cu13"',
    ]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"slimwheel.distribution": "wheel"}, "-C slimwheel.distribution: no distribution 'wheel'"),
        ({"slimwheel.static-fallback": "sometimes"}, "'sometimes' is not true or false"),
    ],
)
def test_bad_distribution_settings_are_one_line(
    tmp_path: Path, config: dict[str, str], expected: str
) -> None:
    with pytest.raises(BuildSettingsError) as caught:
        read_settings(_project(tmp_path, PYPROJECT + DISTRIBUTIONS), config, {}, detect=False)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


# The core that never has a framework part, and an extension package of the torch framework alone.
CORE_ONLY = DISTRIBUTIONS.replace('"demo-cu{major}"\n', '"demo-cu{major}"\nframeworks = []\n')
EXTENSION = """
[tool.slimwheel.distributions.ext]
name = "demo-torch"
frameworks = ["pytorch"]
requires = ["demo-cu{major}=={version}"]
cmake-defines = { DEMO_CORE = false, DEMO_LEVEL = 2 }
install-components = ["torch"]
packages = []
"""


def test_a_distribution_fixes_what_its_build_makes(tmp_path: Path) -> None:
    project = _project(tmp_path, PYPROJECT + CORE_ONLY + EXTENSION)
    ext = read_settings(
        project, {"slimwheel.distribution": "ext"}, {"SLIMWHEEL_FRAMEWORKS": "auto"}, detect=False
    )
    assert ext.frameworks == ("torch",)
    assert ext.source_of("frameworks") == "[tool.slimwheel.distributions.ext] frameworks"
    assert build_requirements(ext, cuda_sources=False)[-1] == "torch>=2.4"
    passed = scikit_build_settings({"wheel.packages": ["src/mine"]}, ext, None)
    assert passed == {
        "wheel.packages": ["src/mine"],  # the caller's own wins
        "cmake.define.SLIMWHEEL_CUDA_MAJOR": "13",
        "cmake.define.DEMO_TORCH": "ON",
        "cmake.define.DEMO_CORE": "OFF",
        "cmake.define.DEMO_LEVEL": "2",
        "install.components": ["torch"],
    }
    assert scikit_build_settings({}, ext, None)["wheel.packages"] == []
    # The core leaves every framework out, even one the build interpreter has (pytest, found by import).
    text = PYPROJECT + "\n[tool.slimwheel.frameworks.pytest]\n" + CORE_ONLY
    core = read_settings(_project(tmp_path, text), {"slimwheel.distribution": "core"}, {}, installed_major=13)
    assert core.frameworks == ()
    assert scikit_build_settings({}, core, None)["cmake.define.DEMO_TORCH"] == "OFF"
    assert "wheel.packages" not in scikit_build_settings({}, core, None)


@pytest.mark.parametrize(
    ("table", "config", "expected"),
    [
        ("packages = 'src/a'", {}, "[tool.slimwheel.distributions.bad] packages: expected a list of strings"),
        (
            "install-component = ['a']",
            {},
            "[tool.slimwheel.distributions.bad] has no key 'install-component'",
        ),
        ("frameworks = ['tensorflow']", {}, "frameworks: no framework 'tensorflow'"),
        ("frameworks = 'torch'", {}, "frameworks: expected a list of framework names"),
        ("cmake-defines = ['A=1']", {}, "cmake-defines must be a table of NAME = value"),
        ("metapackage = true\npackages = []", {}, "packages: a metapackage runs no CMake and holds no files"),
        (
            "frameworks = ['torch']",
            {"slimwheel.frameworks": "none"},
            "-C slimwheel.frameworks: distribution 'bad' builds frameworks torch "
            "([tool.slimwheel.distributions.bad] frameworks), not none",
        ),
    ],
)
def test_bad_distribution_keys_are_one_line(
    tmp_path: Path, table: str, config: dict[str, str], expected: str
) -> None:
    text = PYPROJECT + f"\n[tool.slimwheel.distributions.bad]\n{table}\n"
    with pytest.raises(BuildSettingsError) as caught:
        read_settings(_project(tmp_path, text), {"slimwheel.distribution": "bad", **config}, {}, detect=False)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_sdist_pyproject_pins_the_distribution() -> None:
    text = (
        '[project]\nname = "demo"\n\n[tool.slimwheel]\ncuda = 12  # old\ndistribution = "meta"\n'
        "libraries = []\n\n[x]\ncuda = 1\n"
    )
    pinned = pin_distribution(text, "ext", 13)
    assert pinned.splitlines()[3:7] == [
        "[tool.slimwheel]",
        "# written by slimwheel's build_sdist: this sdist builds distribution 'ext'",
        'distribution = "ext"',
        "cuda = 13",
    ]
    assert pinned.splitlines()[7:] == ["libraries = []", "", "[x]", "cuda = 1"]  # other tables kept
    # No [tool.slimwheel] header, only subtables: the table follows them.
    only_subtables = '[tool.slimwheel.distributions.ext]\nname = "demo-torch"'
    pinned = pin_distribution(only_subtables, "ext", None)
    assert pinned.endswith(
        "\n\n[tool.slimwheel]\n"
        + "# written by slimwheel's build_sdist: this sdist builds distribution 'ext'\n"
        + 'distribution = "ext"\n'
    )
    with pytest.raises(BuildSettingsError, match="cannot write distribution = 'ext'"):
        pin_distribution("[tool]\nslimwheel = { cuda = 13 }\n", "ext", None)


def test_the_sdist_of_a_distribution_is_renamed_member_by_member(tmp_path: Path) -> None:
    source = tmp_path / "demo-1.0.tar.gz"
    files = {
        "demo-1.0/PKG-INFO": b"Metadata-Version: 2.2\nName: demo\nVersion: 1.0\n\nA demo of\nName: demo\n",
        "demo-1.0/pyproject.toml": b'[project]\nname = "demo"\nversion = "1.0"\n\n[tool.slimwheel]\n',
        "demo-1.0/src/demo/__init__.py": b"",
    }
    with tarfile.open(source, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1_600_000_000, 0o644
            archive.addfile(info, io.BytesIO(data))
    renamed = rename_sdist(source, tmp_path / "out", name="demo-torch", key="ext", cuda=None)
    assert renamed.name == "demo_torch-1.0.tar.gz"
    with tarfile.open(renamed) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert list(members) == [
            "demo_torch-1.0/PKG-INFO",
            "demo_torch-1.0/pyproject.toml",
            "demo_torch-1.0/src/demo/__init__.py",
        ]
        assert {m.mtime for m in members.values()} == {1_600_000_000}
        pkg_info = archive.extractfile("demo_torch-1.0/PKG-INFO").read()  # type: ignore[union-attr]
        pyproject = archive.extractfile("demo_torch-1.0/pyproject.toml").read().decode()  # type: ignore[union-attr]
    # The Name header only (the description keeps its own text); Requires-Dist is the build's.
    assert pkg_info == (
        b"Metadata-Version: 2.2\nName: demo-torch\nVersion: 1.0\nDynamic: Requires-Dist\n"
        b"\nA demo of\nName: demo\n"
    )
    assert 'distribution = "ext"' in pyproject
    again = rename_sdist(source, tmp_path / "again", name="demo-torch", key="ext", cuda=None)
    assert again.read_bytes() == renamed.read_bytes()  # reproducible
