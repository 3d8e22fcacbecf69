"""What `slimwheel verify` imports by default, read from a wheel's member paths (no install)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.cli import main
from slimwheel.verify import ImportResult, find_imports
from slimwheel.wheel import Wheel
from tests.support.extensions import EXTENSION_SUFFIX, OTHER_PYTHON_SUFFIX
from tests.support.fixtures_elf import ElfZoo
from tests.support.wheels import make_wheel


def _found(tmp_path: Path, files: dict[str, bytes]) -> list[tuple[str, str, str | None, str]]:
    wheel = make_wheel(tmp_path, "demo", "1.0", files, tag="py3-none-manylinux_2_17_x86_64")
    with Wheel.open(wheel) as opened:
        return [(r.name, r.kind, r.member, r.status) for r in find_imports(opened)]


def test_packages_modules_and_extension_modules_by_dotted_name(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": b"",
        "pkg/util.py": b"",  # a submodule: imported by its package if at all
        f"pkg/core_cc{EXTENSION_SUFFIX}": b"\x7fELF",
        "pkg/limited.abi3.so": b"\x7fELF",
        f"pkg/sub/deep{EXTENSION_SUFFIX}": b"\x7fELF",  # sub/ has no __init__: a namespace in pkg
        f"_speedups{EXTENSION_SUFFIX}": b"\x7fELF",  # a top-level extension module
        "six.py": b"",
        "pkga/__init__.py": b"",
    }
    # A private top-level name last: the package imports it itself, or it is meant for use apart
    # (cudaq-qec-cu12's _qec_decoders_standalone, imported first, broke `import cudaq_qec`).
    assert _found(tmp_path, files) == [
        ("pkg", "package", "pkg/__init__.py", "not-run"),
        ("pkg.core_cc", "extension", f"pkg/core_cc{EXTENSION_SUFFIX}", "not-run"),
        ("pkg.limited", "extension", "pkg/limited.abi3.so", "not-run"),
        ("pkg.sub.deep", "extension", f"pkg/sub/deep{EXTENSION_SUFFIX}", "not-run"),
        ("pkga", "package", "pkga/__init__.py", "not-run"),
        ("six", "module", "six.py", "not-run"),
        ("_speedups", "extension", f"_speedups{EXTENSION_SUFFIX}", "not-run"),
    ]


def test_what_is_no_package(tmp_path: Path) -> None:
    files = {
        "demo-1.0.data/purelib/purely/__init__.py": b"",  # lands in site-packages
        f"demo-1.0.data/platlib/platly{EXTENSION_SUFFIX}": b"\x7fELF",
        "demo-1.0.data/scripts/tool.py": b"",  # lands in bin/
        "demo-1.0.data/headers/x.h": b"",
        "demo.libs/libhelper-1a2b3c4d.so.1": b"\x7fELF",  # auditwheel's folder
        "demo.libs/helper.cpython-311-x86_64-linux-gnu.so": b"\x7fELF",
        "__pycache__/old.cpython-311.pyc": b"",
        "class/__init__.py": b"",  # a keyword: no import can name it
        "nvidia/cu13/lib/libcudss.so.1": b"\x7fELF",  # a namespace folder with no Python in it
        "nvidia/cu13/include/cudss.h": b"",
        "google/protobuf/__init__.py": b"",  # a namespace holding a regular package and a module
        "google/helper.py": b"",
        "lib/libfoo.1.so": b"\x7fELF",  # a library, however named
        "demo-1.0.dist-info/top_level.txt": b"wrong\n",  # not read
    }
    assert _found(tmp_path, files) == [
        ("google.helper", "module", "google/helper.py", "not-run"),
        ("google.protobuf", "package", "google/protobuf/__init__.py", "not-run"),
        ("platly", "extension", f"platly{EXTENSION_SUFFIX}", "not-run"),
        ("purely", "package", "purely/__init__.py", "not-run"),
    ]


def test_a_setup_py_at_the_top_is_not_imported(tmp_path: Path) -> None:
    """uc-manager-cuda-cu129 0.8.1 ships its setup.py at the top of site-packages: importing it would
    run setup() (a build), and failed for want of setuptools. A setup.py inside a package is that
    package's module."""
    files = {
        "setup.py": b"from setuptools import setup\nsetup()\n",
        "ucm/__init__.py": b"",
        "ucm/setup.py": b"",
    }
    wheel = make_wheel(tmp_path, "demo", "1.0", files, tag="py3-none-manylinux_2_17_x86_64")
    with Wheel.open(wheel) as opened:
        found = {r.name: r for r in find_imports(opened)}
    assert sorted(found) == ["setup", "ucm"]
    assert (found["setup"].status, found["setup"].member) == ("skipped", "setup.py")
    assert found["setup"].error is not None
    assert "importing it would run setup()" in found["setup"].error
    assert found["ucm"].status == "not-run"


def test_extension_modules_this_python_cannot_load_are_skipped(tmp_path: Path, elf_zoo: ElfZoo) -> None:
    files = {
        f"pkg/__init__{EXTENSION_SUFFIX}": b"\x7fELF",  # a compiled package (Cython): imported once
        f"pkg/core{EXTENSION_SUFFIX}": b"\x7fELF",
        f"pkg/core{OTHER_PYTHON_SUFFIX}": b"\x7fELF",
        f"only_other{OTHER_PYTHON_SUFFIX}": b"\x7fELF",
        "pkg/_solver.so": elf_zoo.ext_dynamic.read_bytes(),  # untagged, exports PyInit__solver
        "pkg/libcublas.so": elf_zoo.libcublas.read_bytes(),  # untagged, no PyInit_: a library
    }
    wheel = make_wheel(tmp_path, "demo", "1.0", files, tag="py3-none-manylinux_2_17_x86_64")
    with Wheel.open(wheel) as opened:
        found = find_imports(opened)
    assert [(r.name, r.kind, r.status) for r in found] == [
        ("only_other", "extension", "skipped"),
        ("pkg", "package", "not-run"),
        ("pkg._solver", "extension", "skipped"),
        ("pkg.core", "extension", "not-run"),
        ("pkg.core", "extension", "skipped"),
    ]
    by_member = {r.member: r for r in found}
    assert by_member[f"pkg/__init__{EXTENSION_SUFFIX}"].importable
    other = by_member[f"pkg/core{OTHER_PYTHON_SUFFIX}"]
    assert other.error is not None
    assert other.error.startswith(f"built for another Python ({OTHER_PYTHON_SUFFIX}; this one loads ")
    assert EXTENSION_SUFFIX in other.error
    untagged = by_member["pkg/_solver.so"]
    assert untagged == ImportResult(
        "pkg._solver",
        "extension",
        "pkg/_solver.so",
        "skipped",
        "an untagged .so: an extension module or a library loaded with ctypes (it exports PyInit__solver): "
        "loaded as a library after the imports; --import pkg._solver imports it",
    )


def test_a_wheel_with_nothing_to_import_is_bad_input(
    tmp_path: Path, own_catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {"nvidia/cu13/lib/libx.so.1": b"\x7fELF", f"other{OTHER_PYTHON_SUFFIX}": b"\x7fELF"}
    wheel = make_wheel(tmp_path, "demo", "1.0", files, tag="py3-none-manylinux_2_17_x86_64")
    assert main(["verify", str(wheel), "--catalog", str(own_catalog)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert "no package, module or shared library to load in the wheel" in line
    assert f"other{OTHER_PYTHON_SUFFIX}" in line
