"""A DT_NEEDED off the file's search path that another file of the wheel carries as its SONAME.

glibc reuses an object already loaded under that soname, so UCX's plugins (``libucx/lib/ucx/*.so``
need ``libuct.so.0`` and have no RPATH to it) load when libuct loads them. check once called that
"not found", an error, and repair refused libucx-cu12. It is a warning for a library (a plugin);
an extension module, which ``import`` loads before anything of its package, still does not find it.

The libraries are built by gcc, and a fresh interpreter loads them with ctypes to show glibc
behaves as the finding says: the plugin alone fails, after its host library it loads.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from slimwheel.analysis import Resolution, Severity, analyse_wheel
from slimwheel.catalog.model import Catalog
from slimwheel.check import CheckKind, CheckReport, check_wheel
from slimwheel.cli import main
from slimwheel.repair.apply import find_patchelf
from slimwheel.repair.pipeline import repair_wheel
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_program, compile_shared, find_tool
from tests.support.summary import summary_line
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")

TAG = "py3-none-manylinux_2_17_x86_64"
EXTENSION = "_ext.cpython-311-x86_64-linux-gnu.so"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """pkg/lib/libhost.so.0 (SONAME libhost.so.0); a plugin and an extension module that need it,
    with no RPATH."""
    out = tmp_path_factory.mktemp("loaded-first")
    host = compile_shared(
        out / "libhost.so.0", {"host.c": "int host_value(void) { return 7; }\n"}, soname="libhost.so.0"
    )
    plugin = compile_shared(
        out / "libplug.so",
        {"plug.c": "int host_value(void);\nint plug(void) { return host_value() + 1; }\n"},
        link=[host],
    )
    extension = compile_shared(
        out / EXTENSION,
        {"ext.c": "int host_value(void);\nint PyInit__ext(void) { return host_value(); }\n"},
        link=[host],
    )
    # Named as an extension module with no ABI tag: mitsuba's plugins/aov.so exports no PyInit_aov
    # (libmitsuba.so loads it); torchvision's _C.so exports PyInit__C (import loads it).
    untagged_plugin = compile_shared(
        out / "aov.so",
        {"aov.c": "int host_value(void);\nint aov_create(void) { return host_value() + 2; }\n"},
        link=[host],
    )
    untagged_extension = compile_shared(
        out / "_C.so",
        {"c.c": "int host_value(void);\nint PyInit__C(void) { return host_value() + 3; }\n"},
        link=[host],
    )
    return {
        "pkg/lib/libhost.so.0": host.read_bytes(),
        "pkg/lib/plugins/libplug.so": plugin.read_bytes(),
        f"pkg/{EXTENSION}": extension.read_bytes(),
        "pkg/plugins/aov.so": untagged_plugin.read_bytes(),
        "pkg/_C.so": untagged_extension.read_bytes(),
    }


def _only(built: dict[str, bytes], *names: str) -> dict[str, bytes]:
    return {name: data for name, data in built.items() if name in ("pkg/lib/libhost.so.0", *names)}


def _check(wheel: Path, catalog: Catalog) -> CheckReport:
    with Wheel.open(wheel) as opened:
        return check_wheel(opened, catalog)


def test_a_plugin_finds_its_host_library_once_loaded_a_warning(
    built: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    files = _only(built, "pkg/lib/plugins/libplug.so")
    report = _check(make_wheel(tmp_path, "pkg", "1.0", files, tag=TAG), provider_catalog)
    assert not report.has_errors
    (finding,) = [f for f in report.findings if f.kind is CheckKind.LOADED_FIRST]
    assert finding.severity is Severity.WARNING
    assert finding.path == "pkg/lib/plugins/libplug.so"
    assert "pkg/lib/libhost.so.0" in finding.message
    assert "'$ORIGIN/..'" in finding.message
    (file,) = [f for f in report.files if f.installed_path == "pkg/lib/plugins/libplug.so"]
    (needed,) = [n for n in file.needed if n.soname == "libhost.so.0"]
    (lookup,) = needed.lookups
    assert (lookup.resolution, lookup.path, lookup.found_by) == (
        Resolution.WHEEL,
        "pkg/lib/libhost.so.0",
        None,
    )


def test_an_extension_module_that_needs_it_is_still_not_found(
    built: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    files = _only(built, "pkg/lib/plugins/libplug.so", f"pkg/{EXTENSION}")
    report = _check(make_wheel(tmp_path, "pkg", "1.0", files, tag=TAG), provider_catalog)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert [(f.kind, f.path) for f in errors] == [(CheckKind.UNRESOLVED, f"pkg/{EXTENSION}")]
    assert "this wheel's pkg/lib/libhost.so.0 has that soname" in errors[0].message
    assert "add RPATH '$ORIGIN/lib'" in errors[0].message


def test_an_untagged_so_is_an_extension_module_only_if_it_exports_pyinit(
    built: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    """mitsuba 3.9.1's 100 plugins (``mitsuba/plugins/aov.so``) were taken for extension modules by
    their names, and check failed the wheel with 1,500 errors; they export no ``PyInit_``."""
    files = _only(built, "pkg/plugins/aov.so", "pkg/_C.so")
    report = _check(make_wheel(tmp_path, "pkg", "1.0", files, tag=TAG), provider_catalog)
    by_path = {
        (f.path, f.severity)
        for f in report.findings
        if f.kind in (CheckKind.UNRESOLVED, CheckKind.LOADED_FIRST)
    }
    assert by_path == {("pkg/plugins/aov.so", Severity.WARNING), ("pkg/_C.so", Severity.ERROR)}
    with Wheel.open(next(tmp_path.glob("*.whl"))) as opened:
        report_files = {e.path: e.extension_module for e in analyse_wheel(opened, provider_catalog).elf_files}
    assert report_files == {"pkg/lib/libhost.so.0": False, "pkg/plugins/aov.so": False, "pkg/_C.so": True}


def test_without_a_file_of_that_soname_it_is_not_found(
    built: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    files = {"pkg/lib/plugins/libplug.so": built["pkg/lib/plugins/libplug.so"]}
    report = _check(make_wheel(tmp_path, "pkg", "1.0", files, tag=TAG), provider_catalog)
    kinds = {(f.kind, f.severity) for f in report.findings}
    assert (CheckKind.UNRESOLVED, Severity.ERROR) in kinds
    assert not any(kind is CheckKind.LOADED_FIRST for kind, _ in kinds)


_LOAD = """
import ctypes, sys
root = sys.argv[1]
try:
    ctypes.CDLL(root + "/pkg/lib/plugins/libplug.so")
except OSError as exc:
    print("alone:", exc)
else:
    print("alone: loaded")
ctypes.CDLL(root + "/pkg/lib/libhost.so.0")
print("after host:", ctypes.CDLL(root + "/pkg/lib/plugins/libplug.so").plug())
"""


def test_glibc_loads_the_plugin_only_after_its_host_library(built: dict[str, bytes], tmp_path: Path) -> None:
    """What the warning says, by the real loader: alone the plugin fails, after libhost.so.0 it loads."""
    wheel = make_wheel(tmp_path, "pkg", "1.0", built, tag=TAG)
    root = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(root)
    result = subprocess.run(
        [sys.executable, "-c", _LOAD, str(root)], capture_output=True, text=True, check=True, timeout=60
    )
    alone, after = result.stdout.splitlines()
    assert "libhost.so.0: cannot open shared object file" in alone
    assert after == "after host: 8"


@pytest.fixture(scope="module")
def misnamed(tmp_path_factory: pytest.TempPathFactory, built: dict[str, bytes]) -> dict[str, bytes]:
    """libhost.so.0 shipped as ``pkg/lib/libhost.so.0.1.2`` (onnxruntime-ep-nv-tensorrt-rtx-cu13
    0.5.0 ships ``libtensorrt_rtx.so.1.7.1``, soname ``libtensorrt_rtx.so.1``), and a plugin whose
    RPATH is that folder."""
    out = tmp_path_factory.mktemp("misnamed")
    host = out / "libhost.so.0"
    host.write_bytes(built["pkg/lib/libhost.so.0"])
    plugin = compile_shared(
        out / "libplug.so",
        {"plug.c": "int host_value(void);\nint plug(void) { return host_value() + 1; }\n"},
        link=[host],
        rpath="$ORIGIN/..",
    )
    return {"pkg/lib/libhost.so.0.1.2": host.read_bytes(), "pkg/lib/plugins/libplug.so": plugin.read_bytes()}


def test_a_library_named_otherwise_than_its_soname_is_found_by_no_rpath(
    misnamed: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    """Its RPATH reaches the folder, and still no search finds the file: check says to ship it under
    its soname, not to add the RPATH it has; show says the wheel has that soname under another name."""
    wheel = make_wheel(tmp_path, "pkg", "1.0", misnamed, tag=TAG)
    report = _check(wheel, provider_catalog)
    assert not report.has_errors
    (finding,) = [f for f in report.findings if f.kind is CheckKind.LOADED_FIRST]
    assert finding.path == "pkg/lib/plugins/libplug.so"
    assert "searched pkg/lib" in finding.message
    assert "ship libhost.so.0.1.2 as libhost.so.0" in finding.message
    assert "add RPATH" not in finding.message
    with Wheel.open(wheel) as opened:
        shown = analyse_wheel(opened, provider_catalog)
    (unresolved,) = [f for f in shown.findings if f.path == "pkg/lib/plugins/libplug.so"]
    assert "pkg/lib/libhost.so.0.1.2 has that soname" in unresolved.message
    assert "not in the wheel" not in unresolved.message


def test_glibc_finds_a_misnamed_library_by_no_rpath_only_once_loaded(
    misnamed: dict[str, bytes], tmp_path: Path
) -> None:
    """What the finding says, by the real loader: the plugin's RPATH names the folder, and it fails
    alone; after the host library is loaded by path, it loads."""
    root = tmp_path / "site"
    for name, data in misnamed.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    script = _LOAD.replace("/pkg/lib/libhost.so.0", "/pkg/lib/libhost.so.0.1.2")
    result = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, check=True, timeout=60
    )
    alone, after = result.stdout.splitlines()
    assert "libhost.so.0: cannot open shared object file" in alone
    assert after == "after host: 8"


def test_many_warnings_of_one_kind_are_said_again_on_one_line(
    built: dict[str, bytes], provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """openmm-unofficial-cu12 8.3.0rc2's plugins give 30 such warnings: after the findings, one line
    names the files and sonames and says once what each of them says. Few warnings get no such line."""
    from slimwheel.cli import main

    plugins = {
        f"pkg/lib/plugins/libplug{index}.so": built["pkg/lib/plugins/libplug.so"] for index in range(8)
    }
    wheel = make_wheel(tmp_path, "pkg", "1.0", {**_only(built), **plugins}, tag=TAG)
    line = summary_line(
        ["check", str(wheel), "--catalog", str(provider_catalog_file)],
        capsys,
        status=0,
        heading="The 8 warnings by kind (of those that say the same of each file):",
        starts="  found-loaded-first (8): ",
    )
    assert line.startswith(
        "  found-loaded-first (8): 8 files (pkg/lib/plugins/libplug0.so, pkg/lib/plugins/libplug1.so, "
        "pkg/lib/plugins/libplug2.so and 5 more (the findings name them)) need libhost.so.0: found only "
        "if this wheel's own library of that soname is loaded first"
    )

    (tmp_path / "few").mkdir()
    few = make_wheel(tmp_path / "few", "pkg", "1.0", _only(built, "pkg/lib/plugins/libplug.so"), tag=TAG)
    assert main(["check", str(few), "--catalog", str(provider_catalog_file)]) == 0
    assert "warnings by kind" not in capsys.readouterr().out


def test_a_program_finds_nothing_loaded_first_and_repair_reaches_the_library_by_rpath(
    built: dict[str, bytes], provider_catalog: Catalog, tmp_path: Path
) -> None:
    """libucx-cu13 1.22.0's ``libucx/bin/ucx_info`` needs ``libucx/lib``'s libraries and has no RPATH
    to them (only its build folder): run, it fails to start. A program, like an extension module,
    runs with nothing of its package loaded first, so check calls it not found; repair adds the RPATH
    entry to the folder of the wheel's library of that soname, and the program written runs."""
    host = tmp_path / "libhost.so.0"
    host.write_bytes(built["pkg/lib/libhost.so.0"])
    main_c = (
        "#include <stdio.h>\nint host_value(void);\n"
        'int main(void) { printf("%d\\n", host_value()); return 0; }\n'
    )
    programs = {
        "pkg/bin/prog": compile_program(tmp_path / "pie" / "prog", main_c, link=[host]),
        "pkg/bin/prog-exec": compile_program(tmp_path / "exec" / "prog", main_c, link=[host], pie=False),
    }
    files = {
        **_only(built, f"pkg/{EXTENSION}"),
        **{name: path.read_bytes() for name, path in programs.items()},
    }
    wheel = make_wheel(tmp_path, "pkg", "1.0", files, tag=TAG)
    report = _check(wheel, provider_catalog)
    errors = {f.path: f.message for f in report.findings if f.severity is Severity.ERROR}
    assert sorted(errors) == [f"pkg/{EXTENSION}", "pkg/bin/prog", "pkg/bin/prog-exec"]
    assert (
        "a program runs with none of its package's libraries loaded: add RPATH '$ORIGIN/../lib'"
        in (errors["pkg/bin/prog"])
    )
    assert "import loads an extension module before" in errors[f"pkg/{EXTENSION}"]
    assert {(r.path, r.soname, r.folders) for r in report.reachable} == {
        ("pkg/bin/prog", "libhost.so.0", ("pkg/lib",)),
        ("pkg/bin/prog-exec", "libhost.so.0", ("pkg/lib",)),
        (f"pkg/{EXTENSION}", "libhost.so.0", ("pkg/lib",)),
    }

    outcome = repair_wheel(wheel, tmp_path / "out", provider_catalog)
    assert outcome.output is not None
    edits = {edit.path: edit for edit in outcome.plan.edits}
    assert edits["pkg/bin/prog"].search_path == ("$ORIGIN/../lib",)
    assert edits[f"pkg/{EXTENSION}"].search_path == ("$ORIGIN/lib",)
    assert "also reaches libhost.so.0 in this wheel's pkg/lib" in edits["pkg/bin/prog"].reason
    assert not _check(outcome.output, provider_catalog).has_errors
    for which, source in (("input", wheel), ("output", outcome.output)):
        with zipfile.ZipFile(source) as archive:
            archive.extractall(tmp_path / which)
        for name in programs:
            program = tmp_path / which / name
            program.chmod(0o755)
            ran = subprocess.run([str(program)], capture_output=True, text=True, check=False)
            if which == "input":
                assert "libhost.so.0: cannot open shared object file" in ran.stderr
            else:
                assert (ran.returncode, ran.stdout) == (0, "7\n"), ran.stderr


def test_a_linux_wheel_whose_program_reaches_its_library_only_through_the_build_folder_is_repaired(
    built: dict[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mindsponge-gpu 1.0.0rc1 (``py3-none-any``) ships programs whose RPATH names the build machine's
    folder of ``mindsponge/libs``, where its ``libsponge.so`` lies in the wheel: auditwheel, which
    tags such a wheel first, looked for it there, failed ("could not be located"), and repair ended
    with exit 2. It is left to slimwheel's own pass, which adds the RPATH entry that reaches it."""
    host = tmp_path / "build" / "lib" / "libhost.so.0"
    host.parent.mkdir(parents=True)
    host.write_bytes(built["pkg/lib/libhost.so.0"])
    main_c = (
        "#include <stdio.h>\nint host_value(void);\n"
        'int main(void) { printf("%d\\n", host_value()); return 0; }\n'
    )
    program = compile_program(tmp_path / "build" / "prog", main_c, link=[host])
    subprocess.run([find_patchelf(), "--set-rpath", str(host.parent), str(program)], check=True)
    files = {**_only(built), "pkg/bin/prog": program.read_bytes()}
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "pkg", "1.0", files, tag="py3-none-linux_x86_64")
    shutil.rmtree(tmp_path / "build")  # the build machine's folder is not on the machine that repairs
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    argv = ["repair", str(wheel), "-w", str(tmp_path / "out"), "--json", "--no-index", "-f", str(empty)]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    (result,) = json.loads(captured.out)["wheels"]
    assert "libhost.so.0" in result["auditwheel"]["excluded"], result
    (edit,) = result["plan"]["edits"]
    assert (edit["path"], edit["search_path"]) == ("pkg/bin/prog", ["$ORIGIN/../lib"]), edit
    with zipfile.ZipFile(result["output"]) as archive:
        archive.extractall(tmp_path / "installed")
    written = tmp_path / "installed" / "pkg" / "bin" / "prog"
    written.chmod(0o755)
    ran = subprocess.run([str(written)], capture_output=True, text=True, check=False)
    assert (ran.returncode, ran.stdout) == (0, "7\n"), ran.stderr


def test_a_library_auditwheel_cannot_locate_is_left_to_check(
    built: dict[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """openmm-torch-cuda-12 1.5 (``py3-none-any``) ships a plugin that needs openmm-cuda-12's and
    torch's libraries, which the machine that repairs has not: auditwheel stopped at the first ("could
    not be located"), and repair with it. auditwheel is run again leaving each such library alone, and
    check says of each where it comes from, or, as here, that nothing installs it."""
    host = tmp_path / "build" / "libhost.so.0"
    host.parent.mkdir(parents=True)
    host.write_bytes(built["pkg/lib/libhost.so.0"])
    main_c = "int host_value(void);\nint main(void) { return host_value(); }\n"
    files = {
        "pkg/__init__.py": b"",
        "pkg/bin/prog": compile_program(tmp_path / "build" / "prog", main_c, link=[host]).read_bytes(),
    }
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "pkg", "1.0", files, tag="py3-none-linux_x86_64")
    argv = [
        "repair",
        str(wheel),
        "-w",
        str(tmp_path / "out"),
        "--json",
        "--no-index",
        "-f",
        str(tmp_path / "in"),
    ]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 1, captured.err
    (result,) = json.loads(captured.out)["wheels"]
    assert result["auditwheel"]["excluded"] == ["libhost.so.0"], result["auditwheel"]
    assert "pkg/bin/prog: needs libhost.so.0: not found" in captured.err, captured.err
    assert "auditwheel repair failed" not in captured.err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
