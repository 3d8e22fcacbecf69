"""A ``.so`` that the loader cannot load (text, a linker script, empty, a cut ELF file) is an error in
``check`` as in ``show``, and repair names it: its own check of the output fails, so nothing is written
unless ``--allow-broken``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slimwheel.catalog.model import Catalog
from slimwheel.check import CheckKind, check_wheel
from slimwheel.cli import main
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import SOLVER_INIT, SOLVER_TAG
from tests.support.wheels import make_wheel

EXTENSION = "solver/_core.cpython-311-x86_64-linux-gnu.so"
LINKER_SCRIPT = b"/* GNU ld script */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( libsolver.so.1 )\n"


def _unloadable(kind: str, zoo: ElfZoo) -> tuple[bytes, str]:
    """Content for a member named like an extension module, and the words check uses for it."""
    return {
        "text": (b"this is not a shared object\n", "not an ELF file"),
        "linker-script": (LINKER_SCRIPT, "a linker script"),
        "empty": (b"", "empty"),
        "tiny": (b"\x7fEL", "not an ELF file"),
        "truncated": (zoo.truncated.read_bytes(), ""),
    }[kind]


def _wheel(tmp_path: Path, zoo: ElfZoo, kind: str) -> Path:
    data, _ = _unloadable(kind, zoo)
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": zoo.ext_renamed.read_bytes(),
        "solver.libs/libcudss.8f0e2a1b.so.1": zoo.renamed_copy.read_bytes(),
        EXTENSION: data,
    }
    (tmp_path / "in").mkdir()
    return make_wheel(tmp_path / "in", "solver", "1.0", files, tag=SOLVER_TAG)


KINDS = ["text", "linker-script", "empty", "tiny", "truncated"]


@pytest.mark.parametrize("kind", KINDS)
def test_check_reports_an_extension_module_the_loader_cannot_load(
    kind: str, elf_zoo: ElfZoo, provider_catalog: Catalog, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path, elf_zoo, kind)
    with Wheel.open(wheel) as opened:
        report = check_wheel(opened, provider_catalog)
    errors = [f for f in report.findings if f.path == EXTENSION]
    assert [f.kind for f in errors] == [
        CheckKind.CORRUPT_ELF if kind == "truncated" else CheckKind.NOT_ELF
    ], report.findings
    assert errors[0].severity.value == "error"
    assert _unloadable(kind, elf_zoo)[1] in errors[0].message
    assert report.has_errors


@pytest.mark.parametrize("kind", ["text", "linker-script", "empty"])
def test_check_exits_1_naming_it(
    kind: str,
    elf_zoo: ElfZoo,
    provider_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A wheel whose only extension module cannot be loaded: nothing else to report, and yet it fails."""
    data, words = _unloadable(kind, elf_zoo)
    files = {"solver/__init__.py": b"from ._core import *\n", EXTENSION: data}
    wheel = make_wheel(tmp_path, "solver", "1.0", files, tag=SOLVER_TAG)
    argv = ["check", str(wheel), "--catalog", str(provider_catalog_file), "--offline"]
    assert main([*argv, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    (found,) = [f for w in document["wheels"] for f in w["findings"]]
    assert (found["path"], found["kind"], found["severity"]) == (EXTENSION, "not-elf", "error")
    assert words in found["message"]
    assert main(argv) == 1
    assert EXTENSION in capsys.readouterr().out


@pytest.mark.parametrize("kind", KINDS)
def test_repair_names_it_and_writes_nothing(
    kind: str, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _wheel(tmp_path, elf_zoo, kind)
    before = wheel.read_bytes()
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment"]) == 1
    err = capsys.readouterr().err
    assert f"{EXTENSION}: " in err
    assert "[the input had it too]" in err
    assert list(out.iterdir()) == []
    assert wheel.read_bytes() == before

    # --allow-broken writes it, and still exits 1.
    assert main([*argv, "--isolated-environment", "--allow-broken"]) == 1
    assert EXTENSION in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == [wheel.name]


@pytest.mark.parametrize("kind", ["empty", "text"])
def test_a_vendored_copy_that_is_not_elf_is_named_not_silently_dropped(
    kind: str, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """repair does not inflate the copies it drops, but it reads their first bytes: one that is not
    ELF is no copy of libcudss, whatever its name says, and the wheel is refused naming it, as check
    and show report it."""
    copy = "solver.libs/libcudss-1a2b3c4d.so.1.0.0"
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
        copy: _unloadable(kind, elf_zoo)[0],
    }
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "solver", "1.0", files, tag=SOLVER_TAG)
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment"]) == 1
    err = capsys.readouterr().err
    assert f"{copy}: not an ELF file" in err
    assert list(out.iterdir()) == []


def test_a_linker_script_named_as_a_library_is_a_warning_until_something_needs_it(
    provider_catalog: Catalog, tmp_path: Path
) -> None:
    """RAPIDS's libcuopt-cu12 ships libcuopt/lib64/libcuopt.so as a GNU ld script for ``-lcuopt``;
    nothing loads it, and check refused the wheel for it. Named as a library, it is a warning; a file
    that needs it by that name still fails (the loader would find text)."""
    real = compile_shared(
        tmp_path / "b/libfoo.so.1", {"foo.c": "int foo(void) { return 1; }\n"}, soname="libfoo.so.1"
    )
    extension = compile_shared(
        tmp_path / "b/_ext.so",
        {"ext.c": "int foo(void);\nint PyInit__ext(void) { return foo(); }\n"},
        link=[real],
        rpath="$ORIGIN",
    )
    script = b"/* GNU ld script */\nINPUT(libfoo.so.1)\n"
    ext_name = "pkg/_ext.cpython-311-x86_64-linux-gnu.so"
    shipped = {
        ext_name: extension.read_bytes(),
        "pkg/libfoo.so.1": real.read_bytes(),
        "pkg/libfoo.so": script,
    }
    (tmp_path / "ok").mkdir()
    wheel = make_wheel(tmp_path / "ok", "pkg", "1.0", shipped, tag=SOLVER_TAG)
    with Wheel.open(wheel) as opened:
        report = check_wheel(opened, provider_catalog)
    assert [(f.kind, f.severity.value) for f in report.findings if f.path == "pkg/libfoo.so"] == [
        (CheckKind.NOT_ELF, "warning")
    ]
    assert not report.has_errors, report.findings

    needed = {ext_name: extension.read_bytes(), "pkg/libfoo.so.1": script}
    (tmp_path / "bad").mkdir()
    wheel = make_wheel(tmp_path / "bad", "pkg", "1.0", needed, tag=SOLVER_TAG)
    with Wheel.open(wheel) as opened:
        report = check_wheel(opened, provider_catalog)
    errors = {(f.kind, f.path) for f in report.findings if f.severity.value == "error"}
    assert (CheckKind.LOADS_UNREADABLE, ext_name) in errors, report.findings
