"""The PEP 517 backend's last step (``slimwheel.build.finish``) on what a build can make."""

from __future__ import annotations

from pathlib import Path

from slimwheel.build.finish import finish_wheel
from tests.support.elfbuild import compile_shared
from tests.support.solver import SOLVER_TAG
from tests.support.wheels import make_wheel


def test_a_built_wheel_with_no_elf_file_is_copied_as_it_is(tmp_path: Path) -> None:
    """A CMake build that installs only Python and data files links nothing: repair refuses such a wheel
    ("holds no ELF file: nothing to repair"), so the backend passes it on unchanged, where the build
    had failed on it."""
    files = {"datapkg/__init__.py": b"", "datapkg/d.json": b"{}"}
    (tmp_path / "built").mkdir()
    built = make_wheel(tmp_path / "built", "datapkg", "1.0", files, tag=SOLVER_TAG)
    out = tmp_path / "out"
    written = finish_wheel(built, out, {}, cuda_major=13, embed_loader=False)
    assert written == out / built.name
    assert written.read_bytes() == built.read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [built.name]  # no temporary left


def test_a_built_wheel_with_an_elf_file_is_repaired(tmp_path: Path) -> None:
    """One that holds an ELF file goes through repair, which records what it did."""
    plain = compile_shared(tmp_path / "build" / "libplain.so", {"plain.c": "int plain(void) { return 1; }\n"})
    files = {"datapkg/__init__.py": b"", "datapkg/libplain.so": plain.read_bytes()}
    (tmp_path / "built").mkdir()
    built = make_wheel(tmp_path / "built", "datapkg", "1.0", files, tag=SOLVER_TAG)
    written = finish_wheel(built, tmp_path / "out", {}, cuda_major=13, embed_loader=False)
    assert written.read_bytes() != built.read_bytes()
