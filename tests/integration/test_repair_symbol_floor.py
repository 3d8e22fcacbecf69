"""The floor of a requirement whose linked version nothing tells: the oldest release that exports
what the wheel imports, not the oldest release that ships the file.

On a real GPU, TransformerEngine 2.20.2 (cu13) repaired with the first-release floor
(``nvidia-cublas>=13.0.0.19``) did not load with nvidia-cublas 13.1.0.3: ``undefined symbol:
cublasLtGroupedMatrixLayoutInit_internal, version libcublasLt.so.13``. Here five releases of a
gcc-built NVIDIA-style library each export one symbol more than the last, served by a real index on
127.0.0.1; an extension linked against the third must get that release as its floor.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.store import write_catalog
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")

TAG = "py3-none-manylinux_2_17_x86_64"
EXTENSION = "_ext.cpython-311-x86_64-linux-gnu.so"
DISTRIBUTION = "nvidia-cufoo-cu13"
SONAME = "libcufoo.so.1"
# Release i exports the first i + 1 symbols.
RELEASES = ("1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0")
SYMBOLS = ("foo_create", "foo_a", "foo_b", "foo_c", "foo_d")


def _library(out: Path, count: int, *, versioned: bool) -> Path:
    names = SYMBOLS[:count]
    source = "".join(f"int {name}(void) {{ return {i}; }}\n" for i, name in enumerate(names))
    return compile_shared(
        out / f"{count}" / SONAME,
        {"cufoo.c": source},
        soname=SONAME,
        version_nodes={SONAME: names} if versioned else None,
    )


def _extension(out: Path, library: Path, uses: Sequence[str], *, also: Path | None = None) -> bytes:
    calls = " + ".join(f"{name}()" for name in uses)
    declarations = "".join(f"int {name}(void);\n" for name in uses)
    if also is not None:
        declarations += "int bar_value(void);\n"
        calls += " + bar_value()"
    source = f"{declarations}int PyInit__ext(void) {{ return {calls}; }}\n"
    link = [library] if also is None else [library, also]
    rpath = None if also is None else "$ORIGIN"  # libbar.so.0 ships beside it
    return compile_shared(out / "ext" / EXTENSION, {"ext.c": source}, link=link, rpath=rpath).read_bytes()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[bool], dict[str, Any]]:
    """``built(versioned)``: the five releases as wheels in an index folder, their catalog, and the
    library each holds; with version nodes (as NVIDIA's toolkit libraries have) or without (NCCL)."""
    made: dict[bool, dict[str, Any]] = {}

    def build(versioned: bool) -> dict[str, Any]:
        if versioned not in made:
            out = tmp_path_factory.mktemp("symbol-floor")
            index = out / "index"
            index.mkdir()
            libraries = {}
            for count, version in enumerate(RELEASES, start=1):
                library = _library(out / "lib", count, versioned=versioned)
                libraries[version] = library
                files = {f"nvidia/cufoo/lib/{SONAME}": library.read_bytes()}
                make_wheel(index, DISTRIBUTION, version, files, tag=TAG)
            catalog = out / "catalog.json.gz"
            write_catalog(learn_from_wheels(sorted(index.glob("*.whl"))), catalog)
            made[versioned] = {
                "index": index,
                "catalog": catalog,
                "libraries": libraries,
                "versioned": versioned,
            }
        return made[versioned]

    return build


def _repair(
    capsys: pytest.CaptureFixture[str], wheel: Path, catalog: Path, index: str | None, *extra: str
) -> Mapping[str, Any]:
    argv = ["repair", "--dry-run", "--json", "--isolated", "--isolated-environment", str(wheel)]
    argv += ["--catalog", str(catalog), "-w", str(wheel.parent / "out"), *extra]
    argv += ["--index-url", index] if index else ["--offline"]
    code = main(argv)
    document = json.loads(capsys.readouterr().out)
    assert code == 0, document
    (result,) = document["wheels"]
    (added,) = result["plan"]["requirements"]
    return {"added": added, "warnings": result["plan"]["warnings"]}


def _wheel(directory: Path, extension: bytes) -> Path:
    return make_wheel(directory, "pkg", "1.0", {f"pkg/{EXTENSION}": extension}, tag=TAG)


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "unversioned"])
def test_the_floor_is_the_oldest_release_exporting_the_imports(
    built: Callable[[bool], dict[str, Any]],
    versioned: bool,
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    releases = built(versioned)
    server = index_server(releases["index"])
    extension = _extension(isolated_env, releases["libraries"]["1.2.0"], ["foo_create", "foo_b"])
    wheel = _wheel(isolated_env, extension)
    plan = _repair(capsys, wheel, releases["catalog"], server.simple_url)
    added = plan["added"]
    assert added["linked_version"] == "1.2.0"
    assert added["requirement"].startswith(f"{DISTRIBUTION}<2,>=1.2.0") or added["requirement"].startswith(
        f"{DISTRIBUTION}>=1.2.0,<2"
    )
    lacking = "foo_b@libcufoo.so.1" if releases["versioned"] else "foo_b"
    assert added["version_source"].startswith("symbols: ")
    assert f"1.1.0 lacks {lacking}" in added["version_source"]
    assert not any("is unknown" in warning for warning in plan["warnings"])
    # The oldest, then bisection: 1.2.0 exports both, 1.1.0 lacks foo_b. 1.3.0 is never read, nor is
    # the newest, unless unversioned imports must be told apart from other libraries' first.
    wheels_read = {Path(path).name.split("-")[1] for path in server.requests if path.endswith(".whl")}
    assert wheels_read == {"1.0.0", "1.2.0", "1.1.0"} | (set() if versioned else {"1.4.0"})

    # What each release exports is kept: offline, the same floor, without a request.
    before = sum(server.requests.values())
    assert _repair(capsys, wheel, releases["catalog"], None)["added"]["linked_version"] == "1.2.0"
    assert sum(server.requests.values()) == before


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "unversioned"])
def test_a_wheel_using_what_the_first_release_has_reads_one_release(
    built: Callable[[bool], dict[str, Any]],
    versioned: bool,
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    releases = built(versioned)
    server = index_server(releases["index"])
    wheel = _wheel(isolated_env, _extension(isolated_env, releases["libraries"]["1.4.0"], ["foo_create"]))
    added = _repair(capsys, wheel, releases["catalog"], server.simple_url)["added"]
    assert added["linked_version"] == "1.0.0"
    assert "the oldest release that ships them exports the 1 symbols" in added["version_source"]
    read = {Path(p).name for p in server.requests if p.endswith(".whl")}
    # Versioned imports name the library: one release read. Unversioned ones are checked against the
    # newest release first (what it does not export is another library's).
    assert len(read) == (1 if releases["versioned"] else 2)


def test_unversioned_imports_of_another_library_do_not_count(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """NCCL defines no version nodes: its imports are unversioned, like any other unversioned library's
    (libbar here). Only what the newest release exports counts as its."""
    releases = built(False)
    server = index_server(releases["index"])
    bar = compile_shared(
        isolated_env / "bar" / "libbar.so.0",
        {"bar.c": "int bar_value(void) { return 3; }\n"},
        soname="libbar.so.0",
    )
    extension = _extension(isolated_env, releases["libraries"]["1.1.0"], ["foo_a"], also=bar)
    wheel = make_wheel(
        isolated_env,
        "pkg",
        "1.0",
        {f"pkg/{EXTENSION}": extension, "pkg/libbar.so.0": bar.read_bytes()},
        tag=TAG,
    )
    added = _repair(capsys, wheel, releases["catalog"], server.simple_url)["added"]
    assert added["linked_version"] == "1.1.0"
    assert "1.0.0 lacks foo_a" in added["version_source"]


def test_a_reference_no_relocation_uses_does_not_raise_the_floor(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """jammi-ai-native-cu12 0.54 lists 30 NCCL functions newer than the NCCL it requires
    (``ncclCommShrink``) in its dynamic symbols, but no relocation uses them: the loader never looks
    them up. Here foo_c (1.3.0 on) is referenced only from a section that is not loaded."""
    releases = built(False)
    server = index_server(releases["index"])
    source = (
        "int foo_a(void);\nint PyInit__ext(void) { return foo_a(); }\n"
        '__asm__(".section .comment.refs,\\"\\",@progbits\\n.quad foo_c\\n.previous");\n'
    )
    built_extension = compile_shared(
        isolated_env / "unbound" / EXTENSION, {"ext.c": source}, link=[releases["libraries"]["1.1.0"]]
    )
    assert "foo_c" in {s.name for s in read_elf_file(built_extension).undefined_symbols}
    wheel = _wheel(isolated_env, built_extension.read_bytes())
    added = _repair(capsys, wheel, releases["catalog"], server.simple_url)["added"]
    assert added["linked_version"] == "1.1.0"
    assert "1.0.0 lacks foo_a" in added["version_source"]


def test_without_the_index_the_first_release_is_assumed_with_a_warning(
    built: Callable[[bool], dict[str, Any]], isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    releases = built(True)
    wheel = _wheel(isolated_env, _extension(isolated_env, releases["libraries"]["1.2.0"], ["foo_b"]))
    plan = _repair(capsys, wheel, releases["catalog"], None)
    assert plan["added"]["linked_version"] == "1.0.0"
    assert plan["added"]["version_source"] == "first release"
    (warning,) = [w for w in plan["warnings"] if "is unknown" in w]
    assert "may lack symbols" in warning


def _vendoring(directory: Path) -> Path:
    """A wheel vendoring its own build of ``libcufoo.so.1`` (1.2.0's symbols and one more of its own:
    bytes no release ships), beside an extension that calls foo_b from it."""
    names = (*SYMBOLS[:3], "foo_own")
    copy = compile_shared(
        directory / "copy" / SONAME,
        {"cufoo.c": "".join(f"int {name}(void) {{ return {i}; }}\n" for i, name in enumerate(names))},
        soname=SONAME,
        version_nodes={SONAME: names},
    )
    source = "int foo_b(void);\nint PyInit__ext(void) { return foo_b(); }\n"
    extension = compile_shared(directory / "ext" / EXTENSION, {"ext.c": source}, link=[copy], rpath="$ORIGIN")
    files = {f"pkg/{EXTENSION}": extension.read_bytes(), f"pkg/{SONAME}": copy.read_bytes()}
    return make_wheel(directory, "pkg", "1.0", files, tag=TAG)


def test_a_copy_known_by_its_soname_alone_takes_the_floor_its_consumers_need(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """cukks-cu124 0.2.2 vendors a ``libnvToolsExt.so.1`` whose bytes no release ships: only its soname
    matches, and every nvidia-nvtx-cu12 release up to 12.8.90 has it. Taking the newest of them as
    the linked version required ``nvidia-nvtx-cu12>=12.8.90,<12.9.19``, which torch cu124's
    ``==12.4.127`` cannot meet. The floor is what the wheel imports from it, as for a library nothing
    vendors; the newest release is the floor only where the exports cannot be read."""
    releases = built(True)
    wheel = _vendoring(isolated_env)
    offline = _repair(capsys, wheel, releases["catalog"], None)
    assert (offline["added"]["linked_version"], offline["added"]["version_source"]) == (
        "1.4.0",
        "vendored copy (by-soname)",
    )
    (warning,) = [w for w in offline["warnings"] if "by soname alone" in w]
    assert "assuming the newest that ships it, 1.4.0" in warning
    server = index_server(releases["index"])
    online = _repair(capsys, wheel, releases["catalog"], server.simple_url)
    assert not [w for w in online["warnings"] if "by soname alone" in w]
    added = online["added"]
    assert added["linked_version"] == "1.2.0"
    assert added["version_source"].startswith("symbols: ")
    assert "1.1.0 lacks foo_b@libcufoo.so.1" in added["version_source"]


def test_imports_no_release_exports_leave_the_floor_unknown(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Linked against a build newer than any release (foo_e): no release can be the floor."""
    releases = built(True)
    server = index_server(releases["index"])
    newer = compile_shared(
        isolated_env / "newer" / SONAME,
        {"cufoo.c": "".join(f"int {n}(void) {{ return 0; }}\n" for n in (*SYMBOLS, "foo_e"))},
        soname=SONAME,
        version_nodes={SONAME: (*SYMBOLS, "foo_e")},
    )
    wheel = _wheel(isolated_env, _extension(isolated_env, newer, ["foo_e"]))
    plan = _repair(capsys, wheel, releases["catalog"], server.simple_url)
    assert plan["added"]["version_source"] == "first release"
    assert any("is unknown" in w for w in plan["warnings"])


def test_a_file_that_links_the_library_and_imports_nothing_reads_no_release(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Over-linking (pylibraft's extensions need libcublas.so.12 and import nothing from it): any
    release that ships the file serves, so the oldest one is the floor, proven, without a warning."""
    releases = built(True)
    server = index_server(releases["index"])
    extension = compile_shared(
        isolated_env / "overlinked" / EXTENSION,
        {"ext.c": "int PyInit__ext(void) { return 0; }\n"},
        link=[releases["libraries"]["1.4.0"]],
        flags=["-Wl,--no-as-needed"],
    ).read_bytes()
    plan = _repair(capsys, _wheel(isolated_env, extension), releases["catalog"], server.simple_url)
    assert plan["added"]["linked_version"] == "1.0.0"
    assert plan["added"]["version_source"] == (
        "symbols: the wheel imports no symbol from them: the oldest release that ships them"
    )
    assert not any("is unknown" in warning for warning in plan["warnings"])
    assert not [path for path in server.requests if path.endswith(".whl")]


def test_a_server_that_ignores_ranges_gives_the_same_floor(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each member is streamed from one request for its bytes; a server that answers 200 with the
    whole file instead is read past the bytes before the member."""
    releases = built(True)
    server = index_server(releases["index"], ranges=False)
    extension = _extension(isolated_env, releases["libraries"]["1.3.0"], ["foo_c"])
    added = _repair(capsys, _wheel(isolated_env, extension), releases["catalog"], server.simple_url)["added"]
    assert added["linked_version"] == "1.3.0"
    assert "1.2.0 lacks foo_c@libcufoo.so.1" in added["version_source"]


def test_a_damaged_release_leaves_the_floor_unknown_not_a_crash(
    built: Callable[[bool], dict[str, Any]],
    isolated_env: Path,
    index_server: Callable[..., IndexServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The index serves a release whose library member does not inflate to its CRC: that release's
    exports cannot be known, so neither can the floor: the first release, with the warning."""
    releases = built(True)
    server = index_server(releases["index"])
    (oldest,) = releases["index"].glob("*-1.0.0-*.whl")
    data = bytearray(oldest.read_bytes())
    with zipfile.ZipFile(oldest) as archive:
        info = archive.getinfo(f"nvidia/cufoo/lib/{SONAME}")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for offset in range(start + info.compress_size // 3, start + info.compress_size // 2):
        data[offset] ^= 0x5A
    server.tampered[oldest.name] = bytes(data)
    extension = _extension(isolated_env, releases["libraries"]["1.2.0"], ["foo_b"])
    plan = _repair(capsys, _wheel(isolated_env, extension), releases["catalog"], server.simple_url)
    assert plan["added"]["version_source"] == "first release"
    assert any("is unknown" in warning for warning in plan["warnings"])
