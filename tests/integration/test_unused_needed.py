"""A DT_NEEDED entry of an NVIDIA library a file imports nothing from (over-linking: no
``-Wl,--as-needed``): ``show`` says so (``unused-needed``), and ``repair --drop-unused-needed`` removes
the entry and the requirement it alone made.

gbgpu-cuda11x 1.2.4's extension needs libcublas.so.11, libcublasLt.so.11 and libcusparse.so.11 and
imports nothing from them: repaired without the flag, its users install nvidia-cublas-cu11 and
nvidia-cusparse-cu11 for nothing. Here a gcc-built ``libcurand.so.10`` with version nodes (as NVIDIA's
has) ships in an NVIDIA-style wheel, and gcc-built extensions link it: one imports nothing from it but
the Python C API, one calls it, one imports a symbol bound to no version (which could be curand's).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.store import write_catalog
from slimwheel.cli import main
from slimwheel.elf import iter_unversioned_imports, read_elf, read_elf_file
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")

TAG = "cp311-cp311-manylinux_2_17_x86_64"
SONAME = "libcurand.so.10"
DISTRIBUTION = "nvidia-curand-cu12"
EXTENSIONS = {
    # imports PyLong_FromLong (bound to no version: the interpreter's) and nothing of curand
    "unused": "long PyLong_FromLong(long);\nlong PyInit_unused(void) { return PyLong_FromLong(1); }\n",
    "used": "int curandCreateGenerator(void);\nint PyInit_used(void) { return curandCreateGenerator(); }\n",
    # other_call is bound to no version: it could come from any library the file needs, curand too
    "foreign": "int other_call(void);\nint PyInit_foreign(void) { return other_call(); }\n",
    # linked against libother.so.1 first, which defines curandCreateGenerator with no version: the
    # import is bound to none, and libcurand.so.10 exports that name, so it may serve it
    "shadow": (
        "int curandCreateGenerator(void);\nint PyInit_shadow(void) { return curandCreateGenerator(); }\n"
    ),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("unused-needed")
    library = compile_shared(
        out / "lib" / SONAME,
        {"curand.c": "int curandCreateGenerator(void) { return 0; }\n"},
        soname=SONAME,
        version_nodes={SONAME: ("curandCreateGenerator",)},
    )
    index = out / "index"
    index.mkdir()
    make_wheel(
        index,
        DISTRIBUTION,
        "10.3.5.147",
        {f"nvidia/curand/lib/{SONAME}": library.read_bytes()},
        tag="py3-none-manylinux2014_x86_64",
    )
    catalog = out / "catalog.json.gz"
    write_catalog(learn_from_wheels(sorted(index.glob("*.whl"))), catalog)
    other = compile_shared(
        out / "other" / "libother.so.1",
        {"other.c": "int curandCreateGenerator(void) { return 1; }\nint other_call(void) { return 2; }\n"},
        soname="libother.so.1",
    )
    extensions = {
        name: compile_shared(
            out / "ext" / f"{name}.cpython-311-x86_64-linux-gnu.so",
            {f"{name}.c": source},
            link=[other, library] if name == "shadow" else [library],
            flags=["-Wl,--no-as-needed"],
        )
        for name, source in EXTENSIONS.items()
    }
    return {"catalog": catalog, "extensions": extensions, "out": out, "index": index}


def _wheel(built: dict[str, Any], directory: Path, name: str) -> Path:
    extension: Path = built["extensions"][name]
    return make_wheel(
        directory, f"pkg-{name}", "1.0", {f"pkg/{extension.name}": extension.read_bytes()}, tag=TAG
    )


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def _unused_findings(document: dict[str, Any]) -> list[dict[str, Any]]:
    (wheel,) = document["wheels"]
    return [f for f in wheel["findings"] if f["kind"] == "unused-needed"]


@pytest.mark.parametrize(
    ("name", "unused"), [("unused", True), ("used", False), ("foreign", False), ("shadow", False)]
)
def test_show_names_a_library_the_file_imports_nothing_from(
    built: dict[str, Any], isolated_env: Path, capsys: pytest.CaptureFixture[str], name: str, unused: bool
) -> None:
    wheel = _wheel(built, isolated_env, name)
    code, document = _json(capsys, "show", str(wheel), "--json", "--catalog", str(built["catalog"]))
    assert code == 0
    findings = _unused_findings(document)
    if not unused:
        assert findings == []
        return
    (finding,) = findings
    assert finding["severity"] == "info"
    assert finding["path"] == f"pkg/{built['extensions'][name].name}"
    assert f"needs {SONAME} but imports no symbol from it" in finding["message"]
    assert "--drop-unused-needed" in finding["message"]
    (elf,) = document["wheels"][0]["elf_files"]
    assert elf["unused_needed"] == [SONAME]


def _repair(
    built: dict[str, Any], capsys: pytest.CaptureFixture[str], wheel: Path, *extra: str, index: str = ""
) -> tuple[int, dict[str, Any], Path]:
    out = wheel.parent / "out"
    argv = ["repair", "--json", "--isolated", "--catalog", str(built["catalog"])]
    argv += ["--index-url", index] if index else ["--offline"]
    code, document = _json(capsys, *argv, "-w", str(out), *extra, str(wheel))
    return code, document, out


def _check_kinds(built: dict[str, Any], capsys: pytest.CaptureFixture[str], wheel: Path) -> list[str]:
    argv = ["check", "--json", "--isolated", "--offline", "--catalog", str(built["catalog"]), str(wheel)]
    _code, document = _json(capsys, *argv)
    (report,) = document["wheels"]
    return [finding["kind"] for finding in report["findings"]]


def _needed_in(output: Path, member: str) -> tuple[str, ...]:
    with zipfile.ZipFile(output) as archive:
        data = archive.read(member)
    target = output.parent / "member.so"
    target.write_bytes(data)
    return read_elf_file(target).needed


def test_repair_drops_the_entry_and_its_requirement_only_when_asked(
    built: dict[str, Any], isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _wheel(built, isolated_env, "unused")
    member = f"pkg/{built['extensions']['unused'].name}"
    before = wheel.read_bytes()

    code, document, out = _repair(built, capsys, wheel)
    assert code == 0, document
    (kept,) = document["wheels"]
    assert [r["distribution"] for r in kept["plan"]["requirements"]] == [DISTRIBUTION]
    (hint,) = [w for w in kept["plan"]["warnings"] if "--drop-unused-needed" in w]
    assert hint.startswith(f"{DISTRIBUTION} is required only because {member} needs {SONAME}")
    (output,) = out.glob("*.whl")
    assert SONAME in _needed_in(output, member)
    if ctypes.util.find_library("curand") is None:  # else the host's libcurand.so.10 serves it
        assert not _loads(output, member)
    assert kept["check"]["errors"] == 0
    assert _check_kinds(built, capsys, output).count("unused-needed") == 1
    output.unlink()

    code, document, out = _repair(built, capsys, wheel, "--drop-unused-needed")
    assert code == 0, document
    (output,) = out.glob("*.whl")
    assert _loads(output, member)
    (dropped,) = document["wheels"]
    assert dropped["plan"]["requirements"] == []
    assert not [w for w in dropped["plan"]["warnings"] if "--drop-unused-needed" in w]
    (edit,) = dropped["plan"]["edits"]
    assert edit["remove_needed"] == [SONAME]
    assert edit["unused"] == [SONAME]
    assert SONAME not in _needed_in(output, member)
    with zipfile.ZipFile(output) as archive:
        metadata = archive.read("pkg_unused-1.0.dist-info/METADATA").decode()
    assert DISTRIBUTION not in metadata
    assert dropped["check"]["errors"] == 0
    assert "unused-needed" not in _check_kinds(built, capsys, output)
    assert wheel.read_bytes() == before


def _loads(output: Path, member: str) -> bool:
    """Whether the dynamic loader maps the member (in this process, where the Python C API is)."""
    target = output.parent / f"load-{output.stem}.so"
    with zipfile.ZipFile(output) as archive:
        target.write_bytes(archive.read(member))
    try:
        ctypes.CDLL(str(target))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(("name", "dropped"), [("foreign", True), ("shadow", False), ("used", False)])
def test_what_the_library_exports_tells_the_rest(
    built: dict[str, Any],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
    name: str,
    dropped: bool,
) -> None:
    """A file that imports a symbol bound to no version is judged, with the index, by what the
    newest release of the library exports: ``other_call`` is none of curand's, ``curandCreateGenerator``
    is (libother.so.1 defines it too, but the loader may take curand's)."""
    server = index_server(built["index"])
    wheel = _wheel(built, isolated_env, name)
    code, document, _out = _repair(
        built, capsys, wheel, "--drop-unused-needed", "--allow-broken", "--dry-run", index=server.simple_url
    )
    assert code in (0, 1), document
    (result,) = document["wheels"]
    removed = [soname for edit in result["plan"]["edits"] for soname in edit["unused"]]
    assert removed == ([SONAME] if dropped else [])
    required = [r["distribution"] for r in result["plan"]["requirements"]]
    assert required == ([] if dropped else [DISTRIBUTION])


@pytest.mark.parametrize("name", ["used", "foreign", "shadow"])
def test_repair_keeps_a_library_the_file_may_import_from(
    built: dict[str, Any], isolated_env: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    wheel = _wheel(built, isolated_env, name)
    code, document, _out = _repair(built, capsys, wheel, "--drop-unused-needed", "--allow-broken")
    assert code in (0, 1), document
    (result,) = document["wheels"]
    assert [r["distribution"] for r in result["plan"]["requirements"]] == [DISTRIBUTION]
    assert all(not edit["remove_needed"] for edit in result["plan"]["edits"])


def test_iter_unversioned_imports_match_the_full_symbol_read(built: dict[str, Any], tmp_path: Path) -> None:
    """The scanner's answer is what read_elf's full table says: undefined, non-weak, no version."""
    weak = compile_shared(
        tmp_path / "weak.so",
        {
            "weak.c": (
                "extern int maybe(void) __attribute__((weak));\nint f(void) { return maybe ? maybe() : 0; }\n"
            )
        },
    )
    bare = compile_shared(  # no libraries at all: no .gnu.version table
        tmp_path / "bare.so", {"bare.c": "int g(void);\nint f(void) { return g(); }\n"}, flags=["-nostdlib"]
    )
    for path in [*built["extensions"].values(), weak, bare]:
        with path.open("rb") as stream:
            facts = read_elf(stream, path=str(path), symbols=False)
            scanned = list(iter_unversioned_imports(stream, facts, path=str(path), chunk_size=48))
            stream.seek(0)
            full = read_elf(stream, path=str(path), symbols=True, defined=False)
        expected = sorted(s.name for s in full.undefined_symbols if s.version is None and s.binding != "weak")
        assert sorted(scanned) == expected, path.name
    with bare.open("rb") as stream:
        assert list(iter_unversioned_imports(stream, read_elf(stream, path="bare", symbols=False))) == ["g"]


def test_a_damaged_symbol_table_is_an_elf_error(built: dict[str, Any], tmp_path: Path) -> None:
    from slimwheel.errors import ElfError

    source: Path = built["extensions"]["unused"]
    data = bytearray(source.read_bytes())
    with source.open("rb") as stream:
        facts = read_elf(stream, path="x", symbols=False)
    dynsym = next(s for s in facts.sections if s.name == ".dynsym")
    dynstr = next(s for s in facts.sections if s.name == ".dynstr")
    # every name offset points past the string table
    for at in range(dynsym.offset + 24, dynsym.offset + dynsym.size, 24):
        data[at : at + 4] = (dynstr.size + 1000).to_bytes(4, "little")
    damaged = tmp_path / "damaged.so"
    damaged.write_bytes(bytes(data))
    with damaged.open("rb") as stream, pytest.raises(ElfError):
        list(iter_unversioned_imports(stream, facts, path="damaged.so"))


def test_without_the_flag_a_floor_read_from_nothing_names_it(
    built: dict[str, Any],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """onnxruntime-gpu's CUDA provider: the analysis cannot judge it (it imports onnxruntime's
    symbols bound to no version), but the symbol floor, read from the index, finds that it imports
    nothing curand exports; the requirement stays, and the warning names the flag."""
    server = index_server(built["index"])
    wheel = _wheel(built, isolated_env, "foreign")
    code, document, _out = _repair(
        built, capsys, wheel, "--allow-broken", "--dry-run", index=server.simple_url
    )
    assert code in (0, 1), document
    (result,) = document["wheels"]
    (added,) = result["plan"]["requirements"]
    assert added["distribution"] == DISTRIBUTION
    assert added["version_source"].startswith("symbols: the wheel imports no symbol from them")
    (hint,) = [w for w in result["plan"]["warnings"] if "--drop-unused-needed" in w]
    assert f"needs {SONAME} and imports no symbol from it" in hint
