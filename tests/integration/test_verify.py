"""`slimwheel verify`: a real pip install from a 127.0.0.1 index into a fresh venv, an import in a fresh
process, and a verdict on where each NVIDIA library was mapped from."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import shutil
import sysconfig
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.catalog.store import load_catalog
from slimwheel.cli import main
from slimwheel.verify import diagnose
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_program, compile_shared, patchelf
from tests.support.elfmutate import mutate_elf
from tests.support.extensions import EXTENSION_SUFFIX, OTHER_PYTHON_SUFFIX, build_extension_module
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import ProviderWheels
from tests.support.solver import SOLVER_INIT, SOLVER_TAG, fat_solver_wheel, repair_to_json
from tests.support.wheels import make_wheel


def _verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _verify_pure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Path, name: str, files: dict[str, bytes]
) -> tuple[int, dict[str, Any]]:
    """Verify a pure wheel ``name`` of ``files`` that requires nothing, installed from no index."""
    empty = tmp_path / "links"
    empty.mkdir()
    wheel = make_wheel(tmp_path, name, "1.0", files, tag="py3-none-any")
    return _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(catalog))


def _repaired_solver(
    zoo: ElfZoo, catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> Path:
    """The auditwheel-style fat solver wheel, repaired for CUDA 13 (with ``extra`` flags)."""
    fat = fat_solver_wheel(tmp_path / "fat", zoo)
    result = repair_to_json(
        capsys, fat, tmp_path / "wheelhouse", catalog, "--cuda", "13", "--isolated-environment", *extra
    )
    return Path(result["output"])


def test_repaired_wheel_loads_from_its_provider_also_at_the_lowest_versions(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repaired = _repaired_solver(elf_zoo, own_catalog, tmp_path, capsys)
    server = index_server(providers.directory)

    common = [str(repaired), "--index-url", server.simple_url, "--catalog", str(own_catalog)]
    code, document = _verify(capsys, *common)
    assert code == 0, document["problems"]
    assert document["schema"] == "slimwheel.verify/1"
    assert document["ok"] is True
    assert document["pip_configuration"] == "isolated"
    assert document["import_name"] == "solver"
    assert document["pins"] == []
    cudss = [lib for lib in document["libraries"] if lib["name"] == "cudss"]
    assert len(cudss) == 1, document["libraries"]
    assert cudss[0]["path"].endswith("site-packages/nvidia/cu13/lib/libcudss.so.1")
    assert cudss[0]["distribution"] == "nvidia-cudss-cu13"
    assert cudss[0]["ok"] is True
    cublas = [lib for lib in document["libraries"] if lib["name"] == "cublas"]
    assert [lib["distribution"] for lib in cublas] == ["nvidia-cublas"]

    code, document = _verify(capsys, *common, "--lowest")
    assert code == 0, document["problems"]
    pins = {pin["distribution"]: pin["version"] for pin in document["pins"]}
    assert pins["nvidia-cudss-cu13"] == "1.0.0.35"
    assert pins["nvidia-cublas"] == "13.1.0.3"  # transitive, from cuDSS's own Requires-Dist
    assert "nvidia-cudss-cu13==1.0.0.35" in document["installed"]

    # Importing something that does not load the extension: the manifest's library is missing.
    code, document = _verify(capsys, *common, "--import", "json")
    assert code == 1
    assert [p["kind"] for p in document["problems"]] == ["missing"]
    assert "libcudss.so.1 is not mapped" in document["problems"][0]["message"]

    # The text rendering names the verdict and the provider.
    assert main(["verify", *common]) == 0
    printed = capsys.readouterr().out
    assert "passes" in printed
    assert "nvidia-cudss-cu13" in printed


def test_a_library_left_behind_an_extra_loads_once_verify_installs_that_extra(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A wheel that asks for cuDSS only with its extra 'gpu' and vendors none: repair keeps the extra
    (the manifest marks cuDSS optional), and verify installs ``solver.whl[gpu]`` by default, where it
    loads; with --no-extras the import fails, as it did before the repair."""
    (tmp_path / "in").mkdir()
    wheel = make_wheel(
        tmp_path / "in",
        "solver",
        "1.0",
        {"solver/_solver.so": elf_zoo.ext_dynamic.read_bytes(), "solver/__init__.py": SOLVER_INIT},
        tag=SOLVER_TAG,
        requires=['nvidia-cudss-cu13>=1.0; extra == "gpu"'],
        metadata_extra=[("Provides-Extra", "gpu")],  # pip installs only the extras a wheel provides
    )
    result = repair_to_json(capsys, wheel, tmp_path / "out", own_catalog, "--isolated-environment")
    plan = result["plan"]
    assert plan["requirements"] == []
    assert plan["made_hard"] == []
    assert [lib["optional"] for lib in plan["manifest"]["libraries"] if lib["name"] == "cudss"] == [True]
    server = index_server(providers.directory)
    common = [result["output"], "--index-url", server.simple_url, "--catalog", str(own_catalog)]

    code, document = _verify(capsys, *common)
    assert code == 0, document["problems"]
    assert document["extras"] == ["gpu"]
    (cudss,) = [lib for lib in document["libraries"] if lib["name"] == "cudss"]
    assert cudss["distribution"] == "nvidia-cudss-cu13"

    code, document = _verify(capsys, *common, "--no-extras")
    assert code == 1
    assert document["extras"] == []
    assert not any(name.startswith("nvidia-cudss-cu13==") for name in document["installed"])
    assert any("libcudss.so.1" in problem["message"] for problem in document["problems"])

    # A name pip would misread inside ``pkg.whl[...]`` is refused before any install.
    assert main(["verify", *common, "--extra", "gpu]x"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert (
        line
        == "slimwheel verify: error: --extra 'gpu]x': not an extra's name (letters, digits, '.', '_', '-') "
        "(name one of the extras the wheel's METADATA offers (Provides-Extra))"
    )


def test_a_wheel_of_several_majors_verifies_with_each_majors_extra(
    index_server: Callable[..., IndexServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pkg/cu12/ and cu13/ each hold a build needing its major's CUDA runtime (cuda-cccl's shape),
    repaired with --cuda 12,13 (offline, with the shipped catalog), the runtimes served by a local
    index: verify installs each major's extra in a venv of its own by default, where each loads; with
    one major's extra the other major's build is skipped, saying which install loads it. A cu11/ build
    beside them, whose runtime the repair leaves to the host, is skipped in each as the host's."""
    build, index = tmp_path / "build", tmp_path / "index"
    index.mkdir()
    files: dict[str, bytes] = {"pkg/__init__.py": b""}
    for major, soname, distribution, version, folder in (
        ("11", "libcudart.so.11.0", None, None, None),  # a major --cuda 12,13 leaves to the host
        ("12", "libcudart.so.12", "nvidia-cuda-runtime-cu12", "12.9.79", "nvidia/cuda_runtime/lib"),
        ("13", "libcudart.so.13", "nvidia-cuda-runtime", "13.0.96", "nvidia/cu13/lib"),
    ):
        runtime = compile_shared(
            build / major / soname, {"rt.c": "int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n"},
            soname=soname,
        )  # fmt: skip
        if distribution is not None:
            files_of_runtime = {f"{folder}/{soname}": runtime.read_bytes()}
            make_wheel(index, distribution, str(version), files_of_runtime, tag=SOLVER_TAG)
        extension = compile_shared(
            build / major / "libext.so",
            {"ext.c": "int cudaGetDeviceCount(int *);\nint ext(int *n) { return cudaGetDeviceCount(n); }\n"},
            link=[runtime],
        )
        files[f"pkg/cu{major}/libext.so"] = extension.read_bytes()
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "pkg", "1.0", files, tag=SOLVER_TAG)
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--offline", "--isolated-environment", "--cuda", "12,13"]
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    assert [r["extra"] for r in result["plan"]["requirements"]] == ["cu12", "cu13"]
    common = [result["output"], "--index-url", index_server(index).simple_url]
    code, document = _verify(capsys, *common)
    assert code == 0, document["problems"]
    assert document["extras"] == ["cu12", "cu13"]
    assert [(run["cuda_major"], run["extras"]) for run in document["runs"]] == [
        (12, ["cu12"]),
        (13, ["cu13"]),
    ]
    loads = {load["member"]: load for load in document["loads"]}
    assert "which the wheel leaves to the host" in loads["pkg/cu11/libext.so"]["error"]
    assert {load["member"]: load["status"] for load in document["loads"]} == {
        "pkg/cu11/libext.so": "skipped",
        "pkg/cu12/libext.so": "ok",
        "pkg/cu13/libext.so": "ok",
    }
    code, document = _verify(capsys, *common, "--extra", "cu13")
    assert code == 0, document["problems"]
    loads = {load["member"]: load for load in document["loads"]}
    assert loads["pkg/cu13/libext.so"]["status"] == "ok"
    skipped = loads["pkg/cu12/libext.so"]
    assert skipped["status"] == "skipped", skipped
    assert (
        skipped["error"] == "CUDA 12's build: loaded by the install of CUDA 12's libraries (the extra 'cu12')"
    )
    assert document["cuda_major"] == 13


def test_a_wheel_of_several_majors_whose_wheels_share_a_folder_is_verified_one_install_a_major(
    index_server: Callable[..., IndexServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nccl-extensions 0.1.0's shape: cu12/ and cu13/ builds each need libnccl.so.2, which
    nvidia-nccl-cu12 and nvidia-nccl-cu13 both install as nvidia/nccl/lib/libnccl.so.2. Both extras in
    one venv, one wheel's file overwrites the other's and one build fails (or loads the other major's
    NCCL); a user installs one major's extra, and verify installs each major's alone."""
    build, index = tmp_path / "build", tmp_path / "index"
    index.mkdir()
    files: dict[str, bytes] = {"pkg/__init__.py": b""}
    for major in ("12", "13"):
        nccl = compile_shared(
            build / major / "libnccl.so.2",
            {"nccl.c": f"int ncclGetVersion(int *v) {{ *v = 23004; return 0; }}\n"
                       f"int nccl_of_cu{major} = {major};\n"},
            soname="libnccl.so.2",
        )  # fmt: skip
        make_wheel(
            index, f"nvidia-nccl-cu{major}", "2.30.4", {"nvidia/nccl/lib/libnccl.so.2": nccl.read_bytes()},
            tag=SOLVER_TAG,
        )  # fmt: skip
        extension = compile_shared(
            build / major / "libext.so",
            # Data, not a function: bound when the library is loaded, even lazily.
            {"ext.c": f"extern int nccl_of_cu{major};\nint ext(void) {{ return nccl_of_cu{major}; }}\n"},
            link=[nccl],
        )
        files[f"pkg/cu{major}/libext.so"] = extension.read_bytes()
    (tmp_path / "in").mkdir()
    wheel = make_wheel(tmp_path / "in", "pkg", "1.0", files, tag=SOLVER_TAG)
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--offline", "--isolated-environment", "--cuda", "12,13"]
    assert main([*argv, "--linked-version", "nccl=2.30.4", "--json"]) == 0, capsys.readouterr().err
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    assert [(r["distribution"], r["extra"]) for r in result["plan"]["requirements"]] == [
        ("nvidia-nccl-cu12", "cu12"),
        ("nvidia-nccl-cu13", "cu13"),
    ]
    server = index_server(index)
    common = [result["output"], "--index-url", server.simple_url]
    # --dry-run: the installs it would make, nothing asked of the index.
    code, planned = _verify(capsys, *common, "--dry-run")
    assert code == 0
    assert server.request_count() == 0
    installs = planned["plan"]["installs"]
    assert [(i["cuda_major"], i["requirement"].rsplit("[", 1)[1]) for i in installs] == [
        (12, "cu12]"),
        (13, "cu13]"),
    ]
    assert [i["libraries"] for i in installs] == [["pkg/cu12/libext.so"], ["pkg/cu13/libext.so"]]
    assert [[load["member"] for load in i["left_alone"]] for i in installs] == [
        ["pkg/cu13/libext.so"],
        ["pkg/cu12/libext.so"],
    ]
    code, document = _verify(capsys, *common)
    assert code == 0, document["problems"]
    assert server.request_count() > 0
    runs = {run["cuda_major"]: run for run in document["runs"]}
    assert {major: run["extras"] for major, run in runs.items()} == {12: ["cu12"], 13: ["cu13"]}
    for major, run in runs.items():
        loads = {load["member"]: load["status"] for load in run["loads"]}
        # The other major's build is left alone: its NCCL is not installed, or is this major's.
        assert loads == {f"pkg/cu{major}/libext.so": "ok", f"pkg/cu{25 - major}/libext.so": "skipped"}
        assert f"nvidia-nccl-cu{major}==2.30.4" in run["installed"]
        assert f"nvidia-nccl-cu{25 - major}==2.30.4" not in run["installed"]
    assert {load["member"]: load["status"] for load in document["loads"]} == {
        "pkg/cu12/libext.so": "ok",
        "pkg/cu13/libext.so": "ok",
    }
    assert main(["verify", *common]) == 0
    told = " ".join(capsys.readouterr().out.split())
    assert "one install per CUDA major, each with its own extras alone" in told
    assert "CUDA 12 (cu12), CUDA 13 (cu13)" in told
    # Both majors' extras in one venv, as asked: the wheels' files clash, and a build fails to load.
    code, document = _verify(capsys, *common, "--extra", "cu12", "--extra", "cu13")
    assert code == 1
    assert document["runs"] == []
    assert any("undefined symbol: nccl_of_cu1" in p["message"] for p in document["problems"]), document[
        "problems"
    ]


def test_a_repaired_dependency_in_find_links_is_installed_over_the_indexs_of_the_same_version(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """spconv-cu118 repaired, verified with the cumm-cu118 it requires repaired beside it in --find-links:
    pip took cumm from the index (it breaks a tie of name and version in the index's favour), and verify
    judged the published copy. Here ``app`` imports ``solver``, published fat on the index."""
    index = providers.directory
    fat_solver_wheel(index, elf_zoo)  # solver 1.0 as published, beside NVIDIA's: its own libcudss copy
    repaired = _repaired_solver(elf_zoo, own_catalog, tmp_path, capsys)  # solver 1.0, repaired
    (tmp_path / "app").mkdir()
    app = make_wheel(
        tmp_path / "app", "app", "1.0", {"app/__init__.py": b"import solver\n"}, requires=["solver"]
    )
    server = index_server(index)
    sources = ["--index-url", server.simple_url, "--catalog", str(own_catalog)]
    code, document = _verify(capsys, str(app), *sources)
    # From the index alone: the published solver, whose copy needs a cuBLAS nothing brings.
    assert code == 1
    assert "libcublas.so.13" in _problems(document, "import")[0]
    monkeypatch.chdir(repaired.parent.parent)  # a relative folder, as typed (pip runs elsewhere)
    code, document = _verify(capsys, str(app), *sources, "--find-links", repaired.parent.name)
    assert code == 0, document["problems"]
    cudss = {lib["name"]: lib for lib in document["libraries"]}["cudss"]
    assert cudss["distribution"] == "nvidia-cudss-cu13"
    assert "solver==1.0" in document["installed"]
    # Folders only: the relative one is pip's whole source, so pip must find it from where it runs.
    assert index == tmp_path / index.name
    code, document = _verify(capsys, str(repaired), "--find-links", index.name, "--catalog", str(own_catalog))
    assert code == 0, document["problems"]


def test_a_copy_repair_kept_on_purpose_loads_from_the_wheel_without_a_problem(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``repair --exclude cudss`` keeps the cuDSS copy (the user's choice) and gives it cuBLAS from its
    wheel. The manifest records the copy, and verify takes its load from inside the wheel as the
    repair meant it, where it once reported it as loaded outside its provider (and cumm-cu113's
    builtins copy, which no NVIDIA wheel of CUDA 11 replaces, with it)."""
    repaired = _repaired_solver(elf_zoo, own_catalog, tmp_path, capsys, "--exclude", "cudss")
    server = index_server(providers.directory)
    code, document = _verify(
        capsys, str(repaired), "--index-url", server.simple_url, "--catalog", str(own_catalog)
    )
    assert code == 0, document["problems"]
    by_name = {lib["name"]: lib for lib in document["libraries"]}
    assert "solver.libs/libcudss-1a2b3c4d" in by_name["cudss"]["path"]
    assert (by_name["cudss"]["distribution"], by_name["cudss"]["expected"]) == ("solver", ["solver"])
    assert by_name["cudss"]["ok"] is True
    assert by_name["cublas"]["distribution"] == "nvidia-cublas"


def test_fat_wheel_fails(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo)
    server = index_server(providers.directory)
    code, document = _verify(
        capsys, str(fat), "--index-url", server.simple_url, "--catalog", str(own_catalog)
    )
    assert code == 1
    assert document["ok"] is False
    # The copy needs libcublas.so.13, which nothing the wheel requires brings in.
    problem, why = document["problems"]
    assert problem["kind"] == "import"
    assert problem["message"].endswith(
        "libcublas.so.13: cannot open shared object file: No such file or directory"
    )
    assert why == {
        "kind": "unresolved",
        "message": "solver.libs/libcudss-1a2b3c4d.so.1.0.0 needs libcublas.so.13: no Requires-Dist on "
        "nvidia-cublas and RPATH $ORIGIN does not reach nvidia/cu13/lib; run `slimwheel repair`",
        "member": "solver.libs/libcudss-1a2b3c4d.so.1.0.0",
        "soname": "libcublas.so.13",
        "cuda_major": None,
    }

    # Given cuBLAS from outside (LD_LIBRARY_PATH), the import works and the vendored copy is caught.
    monkeypatch.setenv("LD_LIBRARY_PATH", str(elf_zoo.libcublas.parent))
    code, document = _verify(
        capsys, str(fat), "--index-url", server.simple_url, "--catalog", str(own_catalog)
    )
    assert code == 1
    by_name = {lib["name"]: lib for lib in document["libraries"]}
    assert "solver.libs/libcudss-1a2b3c4d" in by_name["cudss"]["path"]
    assert by_name["cudss"]["distribution"] == "solver"  # a copy inside the wheel itself
    assert by_name["cublas"]["distribution"] is None
    assert not by_name["cudss"]["ok"]
    assert not by_name["cublas"]["ok"]
    messages = [p["message"] for p in document["problems"] if p["kind"] == "outside-provider"]
    assert any("a copy inside the wheel itself" in m and "nvidia-cudss-cu13" in m for m in messages), messages
    # Each says which mapped file needs it: the copy needs cuBLAS; the package's __init__ opens the copy.
    (cublas,) = [m for m in messages if m.startswith("libcublas.so.13 ")]
    assert cublas.endswith("; needed by solver.libs/libcudss-1a2b3c4d.so.1.0.0"), cublas


def _local_sources(catalog: Path, *folders: Path) -> list[str]:
    """verify's arguments to install only from ``folders`` (pip's --find-links), with ``catalog``."""
    return [
        *(argument for folder in folders for argument in ("--find-links", str(folder))),
        "--catalog",
        str(catalog),
    ]


def _problems(document: dict[str, Any], kind: str) -> list[str]:
    return [problem["message"] for problem in document["problems"] if problem["kind"] == kind]


def _bare_extension(zoo: ElfZoo, directory: Path) -> bytes:
    """The solver extension as a fresh build against the pip wheel leaves it: NEEDED libcudss.so.1, no
    RPATH or RUNPATH."""
    directory.mkdir(parents=True, exist_ok=True)
    extension = directory / "_solver.so"
    shutil.copyfile(zoo.ext_dynamic, extension)
    return patchelf(extension, "--remove-rpath").read_bytes()


def test_unrepaired_wheels_name_each_nvidia_library_without_a_requirement_or_rpath(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = index_server(providers.directory)
    sources = ["--index-url", server.simple_url, "--catalog", str(own_catalog)]
    extension = _bare_extension(elf_zoo, tmp_path / "build")
    files = {"solver/_solver.so": extension, "solver/__init__.py": SOLVER_INIT}
    for folder in ("bare", "required"):
        (tmp_path / folder).mkdir()

    # A fresh build, no copy shipped, nothing required: the import fails and verify says why.
    bare = make_wheel(tmp_path / "bare", "solver", "1.0", files, tag=SOLVER_TAG)
    code, document = _verify(capsys, str(bare), *sources)
    assert code == 1
    assert [p["kind"] for p in document["problems"]] == ["import", "unresolved"]
    assert "libcudss.so.1: cannot open shared object file" in document["problems"][0]["message"]
    assert _problems(document, "unresolved") == [
        "solver/_solver.so needs libcudss.so.1: no Requires-Dist on nvidia-cudss-cu13 (or nvidia-cudss-cu12) "
        "and no RPATH; run `slimwheel repair`"
    ]
    # Imported without loading the extension, the library is missing, for the same reason.
    code, document = _verify(capsys, str(bare), *sources, "--import", "json")
    assert code == 1
    assert [p["kind"] for p in document["problems"]] == ["missing", "unresolved"]
    # The text output says it too.
    assert main(["verify", str(bare), *sources]) == 1
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "unresolved: solver/_solver.so needs libcudss.so.1: no Requires-Dist on nvidia-cudss-cu13" in printed
    )

    # An RPATH into the provider's folder, but nothing required: the simulation alone says so.
    pointed = tmp_path / "pointed" / "_solver.so"
    pointed.parent.mkdir()
    pointed.write_bytes(extension)
    patchelf(pointed, "--force-rpath", "--set-rpath", "$ORIGIN/../nvidia/cu13/lib")
    files_pointed = {**files, "solver/_solver.so": pointed.read_bytes()}
    wheel = make_wheel(pointed.parent, "solver", "1.0", files_pointed, tag=SOLVER_TAG)
    assert [p.message for p in diagnose(wheel, load_catalog(own_catalog))] == [
        "solver/_solver.so needs libcudss.so.1: no Requires-Dist on nvidia-cudss-cu13 "
        "(or nvidia-cudss-cu12), so nothing installs it in nvidia/cu13/lib, where its search path looks; "
        "run `slimwheel repair`"
    ]

    # Required, but no RPATH reaches the provider's folder.
    required = make_wheel(
        tmp_path / "required",
        "solver",
        "1.0",
        files,
        tag=SOLVER_TAG,
        requires=("nvidia-cudss-cu13>=1.0.0.35,<2",),
    )
    code, document = _verify(capsys, str(required), *sources)
    assert code == 1
    assert "nvidia-cudss-cu13==1.0.0.35" in document["installed"]
    assert _problems(document, "unresolved") == [
        "solver/_solver.so needs libcudss.so.1: Requires-Dist brings in nvidia-cudss-cu13 but no RPATH "
        "reaches nvidia/cu13/lib; run `slimwheel repair`"
    ]

    # A plain copy beside the extension, which its RUNPATH does not reach; the copy needs cuBLAS, which
    # only CUDA 13 wheels ship, so only the CUDA 13 cuDSS is named.
    plain = fat_solver_wheel(tmp_path / "plain", elf_zoo, style="plain")
    code, document = _verify(capsys, str(plain), *sources)
    assert code == 1
    assert document["problems"][0]["kind"] == "import"
    assert _problems(document, "unresolved") == [
        "solver/_solver.so needs libcudss.so.1: no Requires-Dist on nvidia-cudss-cu13 and RUNPATH "
        "$ORIGIN/../nvidia/cudss/lib does not reach nvidia/cu13/lib; run `slimwheel repair`",
        "solver/libcudss.so.1 needs libcublas.so.13: no Requires-Dist on nvidia-cublas and RPATH "
        "$ORIGIN:$ORIGIN/../../cublas/lib does not reach nvidia/cu13/lib; run `slimwheel repair`",
    ]


SECOND_COPY_INIT = (
    SOLVER_INIT
    + b"""# As torchvision loads its own libcudart: by path, after the extension loaded the provider's copy.
_second = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "_vendored", "libcudss.so.1"))
"""
)


def test_second_copy_loaded_by_path_is_mapped_twice(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repaired = _repaired_solver(elf_zoo, own_catalog, tmp_path, capsys)
    # The repaired wheel, plus a copy of libcudss that its __init__ loads by path.
    with zipfile.ZipFile(repaired) as archive:
        files = {
            name: archive.read(name)
            for name in archive.namelist()
            if name.rsplit("/", 1)[-1] not in ("METADATA", "WHEEL", "RECORD")
        }
    with Wheel.open(repaired) as wheel:
        requires = wheel.requires_dist()
    files["solver/__init__.py"] = SECOND_COPY_INIT
    files["solver/_vendored/libcudss.so.1"] = elf_zoo.libcudss.read_bytes()
    twice = make_wheel(tmp_path, "solver", "1.0", files, tag=SOLVER_TAG, requires=requires)
    server = index_server(providers.directory)

    code, document = _verify(
        capsys, str(twice), "--index-url", server.simple_url, "--catalog", str(own_catalog)
    )
    assert code == 1
    assert sorted({p["kind"] for p in document["problems"]}) == ["mapped-twice", "outside-provider"]
    (twice_message,) = _problems(document, "mapped-twice")
    paths = [lib["path"] for lib in document["libraries"] if lib["name"] == "cudss"]
    assert len(paths) == 2, document["libraries"]
    assert sorted(path.split("site-packages/", 1)[1] for path in paths) == [
        "nvidia/cu13/lib/libcudss.so.1",
        "solver/_vendored/libcudss.so.1",
    ]
    assert all(path in twice_message for path in paths), twice_message
    (outside,) = _problems(document, "outside-provider")
    assert "solver/_vendored/libcudss.so.1" in outside
    assert "a copy inside the wheel itself" in outside


def test_a_library_the_packages_code_loaded_first_by_name_says_the_providers_copy_was_reachable(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """moreau-cuda13 0.4.1, repaired, maps the system toolkit's libcudart.so.13 though its extension
    module's RPATH reaches the NVIDIA wheel's: its ``__init__`` calls ``ctypes.CDLL("libcudart.so.13")``
    first, which the system's folders answer. verify said only "needed by" the extension module,
    which reads as though its RPATH were wrong: it now says the provider's copy was on that search
    path, and that the one mapped was loaded first, by name."""
    repaired = _repaired_solver(elf_zoo, own_catalog, tmp_path, capsys)
    system = tmp_path / "system"  # a toolkit the host's search finds (here through LD_LIBRARY_PATH)
    system.mkdir()
    shutil.copyfile(elf_zoo.libcudss, system / "libcudss.so.1")
    shutil.copyfile(elf_zoo.libcublas, system / "libcublas.so.13")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(system))
    (tmp_path / "app").mkdir()
    loads_first = b"import ctypes, os\nctypes.CDLL('libcudss.so.1', os.RTLD_GLOBAL)\nimport solver\n"
    app = make_wheel(tmp_path / "app", "app", "1.0", {"app/__init__.py": loads_first}, requires=["solver"])
    links = tmp_path / "links"
    links.mkdir()
    shutil.copy(repaired, links)
    server = index_server(providers.directory)
    sources = ["--index-url", server.simple_url, "--find-links", str(links), "--catalog", str(own_catalog)]
    code, document = _verify(capsys, str(app), *sources)
    assert code == 1
    outside = [m for m in _problems(document, "outside-provider") if m.startswith("libcudss.so.1 ")]
    assert len(outside) == 1, document["problems"]
    assert f"was loaded from {system / 'libcudss.so.1'} (no installed distribution)" in outside[0]
    assert (
        "; needed by solver/_solver.so, whose search path reaches the provider's "
        "nvidia/cu13/lib/libcudss.so.1: "
    ) in outside[0], outside[0]
    assert "this one was loaded before them, by name (a dlopen of 'libcudss.so.1'" in outside[0]
    # The repaired wheel alone maps the provider's copy: the RPATH was right.
    monkeypatch.delenv("LD_LIBRARY_PATH")
    code, document = _verify(capsys, str(repaired), *sources)
    assert code == 0, document["problems"]


def test_a_copy_a_requirement_vendors_names_that_requirement_and_the_way_out(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """spconv-cu117 2.3.6, repaired, requires cumm-cu117, whose published wheel bundles cudart and
    NVRTC: verify found them loaded from cumm_cu117.libs and said only "not from
    nvidia-cuda-runtime-cu11". The fix is in that requirement: verify says so, and how to verify
    with its repaired wheel."""
    links = tmp_path / "links"
    links.mkdir()
    loads_copy = b"""import ctypes, os
_copy = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "..", "dep.libs", "libcudss-1a2b3c4d.so.1"))
"""
    copy = tmp_path / "build" / "libcudss-1a2b3c4d.so.1"
    copy.parent.mkdir()
    shutil.copyfile(elf_zoo.libcudss, copy)
    patchelf(copy, "--set-rpath", "$ORIGIN/../nvidia/cu13/lib")
    dep_files = {"dep/__init__.py": loads_copy, "dep.libs/libcudss-1a2b3c4d.so.1": copy.read_bytes()}
    make_wheel(links, "dep", "1.0", dep_files, tag=SOLVER_TAG, requires=["nvidia-cublas"])
    (tmp_path / "w").mkdir()
    wheel = make_wheel(
        tmp_path / "w", "ops", "1.0", {"ops/__init__.py": b"import dep\n"}, tag=SOLVER_TAG, requires=["dep"]
    )
    sources = _local_sources(own_catalog, providers.directory, links)
    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 1, document["problems"]
    (outside,) = _problems(document, "outside-provider")
    assert "dep.libs/libcudss-1a2b3c4d.so.1 (dep)" in outside
    assert "; dep vendors it: repair dep too, and verify with its repaired wheel in a --find-links" in outside
    assert outside.endswith(
        "; no file mapped names it in DT_NEEDED: it was opened by name or path (a dlopen)"
    )


def test_an_import_of_a_module_nothing_required_installs_says_so(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pynvvideocodec 2.2.4 ships top-level samples whose scripts import pycuda, which it does not
    require: each failed import says that nothing the wheel requires installs it, and how to verify
    only the modules that matter. A submodule missing from a package that is installed is no such case."""
    files = {
        "ops/__init__.py": b"",
        "samples/sample.py": b"import pycuda_not_required\n",  # a namespace folder: each module imported
        "samples/broken.py": b"import ops.gone\n",
    }
    (tmp_path / "w").mkdir()
    wheel = make_wheel(tmp_path / "w", "ops", "1.0", files, tag="py3-none-any")
    empty = tmp_path / "links"
    empty.mkdir()
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 1
    sample, broken = sorted(_problems(document, "import"), key=lambda message: "pycuda" not in message)
    assert sample.endswith(
        "(pycuda_not_required: nothing the wheel requires installs it; --import NAME imports only the "
        "modules named)"
    )
    assert "nothing the wheel requires" not in broken


def test_uninstallable_wheel_reports_pips_error(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "links"
    empty.mkdir()
    wheel = make_wheel(
        tmp_path,
        "needy",
        "1.0",
        {"needy/__init__.py": b""},
        tag="py3-none-any",
        requires=("nvidia-does-not-exist-anywhere>=1",),
    )
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 1
    (problem,) = document["problems"]
    assert problem["kind"] == "install"
    assert "ERROR:" in problem["message"]
    assert "nvidia-does-not-exist-anywhere" in problem["message"]
    assert document["sources"] == ["--no-index", "--find-links", str(empty)]


def test_an_import_that_fails_for_an_nvidia_library_nothing_installs_names_its_wheels(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gpu4pyscf-cuda12x 1.9.2 loads nvJitLink by name at import ("Failure finding libnvJitLink.so.13
    or libnvJitLink.so.12") and requires no nvidia-nvjitlink: verify said only the error. It now names
    the NVIDIA wheels that ship what the message names, where no installed distribution does."""
    source = b'raise ImportError("Failure finding \\"libnvrtc.so.13 or libfrob.so.2\\": No such file")\n'
    code, document = _verify_pure(capsys, tmp_path, own_catalog, "loader", {"loader/__init__.py": source})
    assert code == 1
    (problem,) = document["problems"]
    assert problem["message"].endswith(
        "(libnvrtc.so.13: nvidia-cuda-nvrtc ships it, which nothing the wheel requires installs)"
    )


def test_an_import_killed_by_sigill_says_what_that_means(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastlisaresponse-cuda12x 1.1.17's import dies of SIGILL here: code for a newer CPU."""
    source = b"import os, signal\nos.kill(os.getpid(), signal.SIGILL)\n"
    code, document = _verify_pure(capsys, tmp_path, own_catalog, "newer", {"newer/__init__.py": source})
    assert code == 1
    (problem,) = document["problems"]
    assert problem["message"] == (
        "import newer failed: killed by SIGILL (an instruction this CPU does not have: the build assumes "
        "a newer CPU)"
    )


def test_import_failure_is_reported(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {"broken/__init__.py": b"raise RuntimeError('boom here')\n"}
    code, document = _verify_pure(capsys, tmp_path, own_catalog, "broken", files)
    assert code == 1
    (problem,) = document["problems"]
    assert problem["kind"] == "import"
    assert problem["message"].endswith("RuntimeError: boom here")


def test_a_library_of_another_machine_is_not_loaded(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nvidia-cutlass-dsl-libs-qnx-cu12 ships the aarch64 QNX runtime its DSL cross-compiles for in an
    x86_64 wheel: no loader here can load it, so verify does not try (dlopen would fail: wrong machine)."""
    built = compile_shared(tmp_path / "libruntime.so", {"rt.c": "int runtime(void) { return 1; }\n"})
    native = built.read_bytes()
    foreign = mutate_elf(native, {"elf": "header", "field": "e_machine", "value": 183})  # EM_AARCH64
    files = {"cross/__init__.py": b"", "cross/qnx/libruntime.so": foreign, "cross/libhost.so": native}
    code, document = _verify_pure(capsys, tmp_path, own_catalog, "cross", files)
    assert (code, document["problems"]) == (0, [])
    loaded = [load["member"] for load in document["loads"]]
    assert any(path.endswith("cross/libhost.so") for path in loaded), loaded
    assert not any("qnx" in path for path in loaded), loaded


def test_text_file_named_whl_is_bad_input(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "bad-1.0-py3-none-any.whl"
    text.write_text("not a wheel")
    assert main(["verify", str(text), "--catalog", str(own_catalog)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert main(["verify", str(tmp_path / "missing-1.0-py3-none-any.whl")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("tag", "requires_python", "said"),
    [
        ("cp39-cp39-win_amd64", None, "which supports none of its tags (cp39-cp39-win_amd64)"),
        ("py3-none-linux_x86_64", ">=3.99", "it requires Python >=3.99"),
    ],
    ids=["tags", "requires-python"],
)
def test_a_wheel_this_python_cannot_install_is_bad_usage_before_any_venv(
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tag: str,
    requires_python: str | None,
    said: str,
) -> None:
    """dyng-cu13 0.2.0 (cp312-abi3) under Python 3.11: pip refused it as "not a supported wheel on this
    platform", and verify called that a problem of the wheel (exit 1); xgboost-cu12 3.4.1 (py3) the
    same, as pip's "requires a different Python: 3.11.7 not in '>=3.12'". It is the Python running
    verify that cannot install it: exit 2, one line, before a venv is made or pip is run."""
    files = {"elsewhere/__init__.py": b""}
    extra = [("Requires-Python", requires_python)] if requires_python else []
    wheel = make_wheel(tmp_path, "elsewhere", "1.0", files, tag=tag, metadata_extra=extra)
    before = sorted(tmp_path.iterdir())
    assert main(["verify", str(wheel), "--find-links", str(tmp_path), "--catalog", str(own_catalog)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert "pip cannot install it under this Python" in line
    assert said in line
    assert sorted(tmp_path.iterdir()) == before


# -- what verify imports -------------------------------------------------------------------------------

CUDSS_CU13 = ("nvidia-cudss-cu13>=1.0.0.35,<2",)


def _core_cc_wheel(
    zoo: ElfZoo,
    directory: Path,
    *,
    rpath: str | None = "$ORIGIN/../nvidia/cu13/lib",
    top_level: bytes | None = None,
) -> Path:
    """``pkgcc``: package ``pkg`` (an empty ``__init__.py``) holding the real extension module
    ``pkg/core_cc.<this Python's suffix>.so``, which needs cuDSS, and a build of it for another Python."""
    directory.mkdir(parents=True, exist_ok=True)
    extension = build_extension_module(
        directory / "build" / f"core_cc{EXTENSION_SUFFIX}",
        "core_cc",
        link=[zoo.libcudss],
        rpath=rpath,
        rpath_link=[zoo.libcublas.parent],
    ).read_bytes()
    files = {
        "pkg/__init__.py": b"",
        f"pkg/core_cc{EXTENSION_SUFFIX}": extension,
        f"pkg/core_cc{OTHER_PYTHON_SUFFIX}": extension,
    }
    if top_level is not None:
        files["pkgcc-1.0.dist-info/top_level.txt"] = top_level
    return make_wheel(directory, "pkgcc", "1.0", files, tag=SOLVER_TAG, requires=CUDSS_CU13)


def _imports(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(entry["name"], entry["kind"], entry["status"]) for entry in document["imports"]]


@pytest.mark.parametrize("top_level", [None, b"core_cc\n"], ids=["no-top-level", "wrong-top-level"])
def test_extension_module_in_a_package_is_imported_by_its_dotted_name(
    top_level: bytes | None,
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    wheel = _core_cc_wheel(elf_zoo, tmp_path / "wheel", top_level=top_level)
    server = index_server(providers.directory)
    sources = ["--index-url", server.simple_url, "--catalog", str(own_catalog)]

    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 0, document["problems"]
    assert document["import_name"] == "pkg"
    assert _imports(document) == [
        ("pkg", "package", "ok"),
        ("pkg.core_cc", "extension", "ok"),
        ("pkg.core_cc", "extension", "skipped"),  # the build for another Python
    ]
    assert [entry["member"] for entry in document["imports"]] == [
        "pkg/__init__.py",
        f"pkg/core_cc{EXTENSION_SUFFIX}",
        f"pkg/core_cc{OTHER_PYTHON_SUFFIX}",
    ]
    assert document["imports"][0]["error"] is None
    assert OTHER_PYTHON_SUFFIX in document["imports"][2]["error"]
    # Only the extension module loads cuDSS: its being mapped proves pkg.core_cc was imported.
    (cudss,) = [lib for lib in document["libraries"] if lib["name"] == "cudss"]
    assert cudss["distribution"] == "nvidia-cudss-cu13"
    assert cudss["ok"] is True

    # The text output lists each import.
    assert main(["verify", str(wheel), *sources]) == 0
    printed = capsys.readouterr().out
    assert "pkg.core_cc" in printed
    assert "passes" in printed


def test_each_import_failure_is_reported_with_its_module(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No RPATH: the package imports, its extension module cannot find cuDSS.
    wheel = _core_cc_wheel(elf_zoo, tmp_path / "wheel", rpath=None)
    server = index_server(providers.directory)
    code, document = _verify(
        capsys, str(wheel), "--index-url", server.simple_url, "--catalog", str(own_catalog)
    )
    assert code == 1
    assert _imports(document) == [
        ("pkg", "package", "ok"),
        ("pkg.core_cc", "extension", "failed"),
        ("pkg.core_cc", "extension", "skipped"),
    ]
    failed = document["imports"][1]
    assert failed["error"].endswith(
        "libcudss.so.1: cannot open shared object file: No such file or directory"
    )
    assert [p["kind"] for p in document["problems"]] == ["import", "unresolved", "unresolved"]
    message = document["problems"][0]["message"]
    assert message.startswith("import pkg.core_cc failed: ")
    assert message.endswith(failed["error"])
    # Both builds need cuDSS, and neither reaches it.
    assert sorted(_problems(document, "unresolved")) == [
        f"pkg/core_cc{suffix} needs libcudss.so.1: Requires-Dist brings in nvidia-cudss-cu13 but "
        "no RPATH reaches nvidia/cu13/lib; run `slimwheel repair`"
        for suffix in sorted((EXTENSION_SUFFIX, OTHER_PYTHON_SUFFIX))
    ]


def test_every_top_level_package_and_module_is_imported(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    files = {
        "alpha/__init__.py": b"",
        "alpha/sub.py": b"raise RuntimeError('submodules are not imported')\n",
        "beta/__init__.py": b"raise RuntimeError('beta is broken')\n",
        "gamma.py": b"VALUE = 1\n",
        "ns/inner/__init__.py": b"",  # a namespace package: its regular package is imported
        "docs/readme.txt": b"no Python here\n",  # a folder without Python: nothing to import
        "alpha.libs/libhelper.so.1": b"not imported\n",
        "twin-1.0.data/scripts/twin-tool": b"#!python\nprint('hi')\n",
    }
    wheel = make_wheel(tmp_path, "twin", "1.0", files, tag="py3-none-any")
    sources = ["--find-links", str(links), "--catalog", str(own_catalog)]

    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 1
    assert document["import_name"] == "alpha"
    assert _imports(document) == [
        ("alpha", "package", "ok"),
        ("beta", "package", "failed"),
        ("gamma", "module", "ok"),
        ("ns.inner", "package", "ok"),
    ]
    assert document["imports"][1]["error"] == "RuntimeError: beta is broken"
    assert document["problems"] == [
        {
            "kind": "import",
            "message": "import beta failed: RuntimeError: beta is broken",
            "member": None,
            "soname": None,
            "cuda_major": None,
        }
    ]
    assert main(["verify", str(wheel), *sources]) == 1
    printed = " ".join(capsys.readouterr().out.split())
    assert "import beta failed: RuntimeError: beta is broken" in printed

    # --import is repeatable, and the names given replace the default set.
    code, document = _verify(capsys, str(wheel), *sources, "--import", "gamma", "--import", "alpha")
    assert code == 0, document["problems"]
    assert document["import_name"] == "gamma"
    assert _imports(document) == [("gamma", "given", "ok"), ("alpha", "given", "ok")]
    assert [entry["member"] for entry in document["imports"]] == [None, None]


def test_an_import_that_fails_in_its_own_words_for_want_of_the_driver_is_skipped(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mlrs-cuda 0.1.0's extension module raises its own ImportError on a machine without the driver
    ("mlrs-cuda requires the cuda runtime/driver; none was detected"), not dlopen's words: verify
    failed it on every machine without a GPU. Where this machine cannot load libcuda.so.1, such an
    import is skipped for want of the driver; one that fails otherwise still fails."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("this machine has the NVIDIA driver")
    files = {
        "gated/__init__.py": b'raise ImportError("gated requires the cuda driver; none was detected")\n',
        "configured/__init__.py": b'raise ImportError("configured needs a config file")\n',
    }
    code, document = _verify_pure(capsys, tmp_path, own_catalog, "gated", files)
    statuses = {entry["name"]: entry["status"] for entry in document["imports"]}
    assert statuses == {"gated": "skipped", "configured": "failed"}
    (skipped,) = [entry for entry in document["imports"] if entry["status"] == "skipped"]
    assert skipped["error"].startswith("it needs the NVIDIA driver, which this machine does not have")
    assert [problem["message"] for problem in document["problems"]] == [
        "import configured failed: ImportError: configured needs a config file"
    ]
    assert code == 1


def test_the_wheels_other_shared_libraries_are_loaded_after_the_imports(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A library no import loads (a framework's operator library, one the package opens with ctypes)
    is loaded after the imports: one that finds what it needs passes, one that needs a library the
    wheel neither ships nor requires fails verify with a "load" problem naming both."""
    missing = compile_shared(
        tmp_path / "build" / "libmissing.so.7",
        {"m.c": "int missing(void) { return 7; }"},
        soname="libmissing.so.7",
    )
    good = compile_shared(tmp_path / "build" / "libgood.so", {"g.c": "int good(void) { return 1; }"})
    bad = compile_shared(
        tmp_path / "build" / "libbad.so",
        {"b.c": "int missing(void);\nint bad(void) { return missing(); }"},
        link=[missing],
    )
    empty = tmp_path / "links"
    empty.mkdir()
    files = {"ops/__init__.py": b"", "ops/libgood.so": good.read_bytes()}
    (tmp_path / "ok").mkdir()
    (tmp_path / "bad").mkdir()
    wheel = make_wheel(tmp_path / "ok", "ops", "1.0", files, tag="py3-none-linux_x86_64")
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 0, document["problems"]
    assert document["loads"] == [
        {"member": "ops/libgood.so", "status": "ok", "error": None, "kind": "library", "after": []}
    ]

    files["ops/libbad.so"] = bad.read_bytes()
    wheel = make_wheel(tmp_path / "bad", "ops", "1.0", files, tag="py3-none-linux_x86_64")
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 1
    assert [(load["member"], load["status"]) for load in document["loads"]] == [
        ("ops/libbad.so", "failed"),
        ("ops/libgood.so", "ok"),
    ]
    load_problems = [p for p in document["problems"] if p["kind"] == "load"]
    assert len(load_problems) == 1
    assert "ops/libbad.so" in load_problems[0]["message"]
    assert "libmissing.so.7" in load_problems[0]["message"]


def test_an_untagged_extension_module_no_import_loads_is_loaded_as_a_library(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """torchmd-net-cu11 2.4.14's torchmdnet_extensions.so is untagged and exports PyInit_: torch.ops
    loads it by path, not import. It alone needs the CUDA runtime; verify skipped its import, loaded it
    neither, and then said libcudart.so.11.0 was "not mapped". It is loaded as a library after the
    imports: here one that needs a library nothing installs fails that load, naming it."""
    missing = compile_shared(
        tmp_path / "build" / "libmissing.so.7",
        {"m.c": "int missing(void) { return 7; }"},
        soname="libmissing.so.7",
    )
    source = (
        "int missing(void);\nint run(void) { return missing(); }\nvoid *PyInit__ops(void) { return 0; }\n"
    )
    ops = compile_shared(tmp_path / "build" / "_ops.so", {"ops.c": source}, link=[missing])
    empty = tmp_path / "links"
    empty.mkdir()
    (tmp_path / "w").mkdir()
    files = {"ops/__init__.py": b"", "ops/_ops.so": ops.read_bytes()}
    wheel = make_wheel(tmp_path / "w", "ops", "1.0", files, tag="py3-none-linux_x86_64")
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 1
    assert [(i["name"], i["status"]) for i in document["imports"]] == [("ops", "ok"), ("ops._ops", "skipped")]
    (load,) = document["loads"]
    assert (load["member"], load["status"]) == ("ops/_ops.so", "failed")
    assert "libmissing.so.7" in load["error"]


_REGISTERS_ONCE_C = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static int made;
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "core", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_core(void) {
    if (made++) {  /* as pybind11 refuses a type registered by an earlier load */
        PyErr_SetString(PyExc_ImportError, "generic_type: type \\"Core\\" is already registered!");
        return NULL;
    }
    return PyModule_Create(&module);
}
"""

_LOADS_ITS_OWN = b"""\
import importlib.util, pathlib
_file = next(pathlib.Path(__file__).parent.glob("core.*.so"))
_spec = importlib.util.spec_from_file_location("core", _file)
core = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(core)
"""


def test_an_extension_module_the_package_loaded_under_another_name_is_not_loaded_again(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gbrl-gpu 1.1.0's ``__init__`` loads ``gbrl/gbrl_cpp....so`` with importlib as ``gbrl_cpp``;
    verify then imported ``gbrl.gbrl_cpp``, a second load of the same file, which pybind11 refuses
    ("type already registered"): the wheel failed for what no user of it does. It is skipped, saying
    under which name it was loaded."""
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        pytest.skip(f"building an extension module needs {include / 'Python.h'}")
    core = compile_shared(
        tmp_path / "build" / f"core{EXTENSION_SUFFIX}", {"core.c": _REGISTERS_ONCE_C}, flags=(f"-I{include}",)
    )
    empty = tmp_path / "links"
    empty.mkdir()
    (tmp_path / "w").mkdir()
    files = {"pkg/__init__.py": _LOADS_ITS_OWN, f"pkg/core{EXTENSION_SUFFIX}": core.read_bytes()}
    wheel = make_wheel(tmp_path / "w", "pkg", "1.0", files, tag="py3-none-linux_x86_64")
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert [(i["name"], i["status"]) for i in document["imports"]] == [("pkg", "ok"), ("pkg.core", "skipped")]
    assert "loaded already, as core " in document["imports"][1]["error"]
    assert code == 0


@pytest.mark.parametrize("new_dtags", [False, True], ids=["consumer-rpath", "consumer-runpath"])
def test_a_library_is_loaded_by_the_file_that_needs_it_before_it_is_loaded_alone(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], new_dtags: bool
) -> None:
    """auditwheel's grafted libraries have no search path: nvidia-pytriton's libarchive needs libnettle,
    beside it, and finds it only through the DT_RPATH of the file that loads it, which glibc searches
    for the needs of everything that file loads. So verify loads the consumer first, as in use: loaded
    alone, libarchive failed where it never does. A DT_RUNPATH serves only its own file's needs: then
    the consumer fails at first, and so does the library, alone; each loads once the wheel's library
    they miss is loaded (check's found-loaded-first), and says so. The names sort the needed library
    first, which by name would have loaded it before the library that needs it and hidden the RUNPATH
    case."""
    build = tmp_path / "build"
    leaf = compile_shared(
        build / "libaleaf.so.1", {"l.c": "int leaf(void) { return 1; }"}, soname="libaleaf.so.1"
    )
    mid = compile_shared(
        build / "libbmid.so.1",
        {"m.c": "int leaf(void);\nint mid(void) { return leaf(); }"},
        soname="libbmid.so.1",
        link=[leaf],
    )
    top = compile_shared(
        build / "libctop.so",
        {"t.c": "int mid(void);\nint top(void) { return mid(); }"},
        link=[mid],
        rpath="$ORIGIN",
        new_dtags=new_dtags,
    )
    files = {
        "ops/__init__.py": b"",
        "ops/libaleaf.so.1": leaf.read_bytes(),
        "ops/libbmid.so.1": mid.read_bytes(),
        "ops/libctop.so": top.read_bytes(),
    }
    (tmp_path / "w").mkdir()
    wheel = make_wheel(tmp_path / "w", "ops", "1.0", files, tag="py3-none-linux_x86_64")
    empty = tmp_path / "links"
    empty.mkdir()
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    after = ["ops/libaleaf.so.1"] if new_dtags else []
    assert [(load["member"], load["status"], load["after"]) for load in document["loads"]] == [
        ("ops/libctop.so", "ok", after),
        ("ops/libbmid.so.1", "ok", after),
        ("ops/libaleaf.so.1", "ok", []),
    ]
    assert code == 0, document["problems"]


def _cudss_caller(zoo: ElfZoo, path: Path, *, rpath: str | None = "$ORIGIN/../nvidia/cu13/lib") -> Path:
    """A library at ``path`` that calls cudssCreate, linked against the zoo's cuDSS, with ``rpath``."""
    source = "int cudssCreate(void *);\nint solve(void) { return cudssCreate(0); }\n"
    return compile_shared(path, {"s.c": source}, link=[zoo.libcudss], rpath=rpath)


def _ops_wheel(folder: Path, files: dict[str, bytes]) -> Path:
    """``ops`` 1.0 of ``files``, for Linux, requiring nvidia-cudss-cu13, written into ``folder`` (made)."""
    folder.mkdir()
    requires = ["nvidia-cudss-cu13"]
    return make_wheel(folder, "ops", "1.0", files, tag="py3-none-linux_x86_64", requires=requires)


_GPU_C = (
    "int cuInit(unsigned);\nint cudssCreate(void *);\nint gpu(void) { return cuInit(0) + cudssCreate(0); }\n"
)
_NO_DRIVER = pytest.mark.skipif(
    ctypes.util.find_library("cuda") is not None, reason="this machine has the NVIDIA driver"
)


def _gpu_wheel(
    zoo: ElfZoo, folder: Path, driver: Path, *, requires: tuple[str, ...] = (), package: bool = True
) -> Path:
    """``ops`` with ``ops/libgpu.so``, which needs cuDSS (RPATH into nvidia/cu13/lib) and ``driver``;
    without ``package``, the library alone."""
    gpu = compile_shared(
        folder / "build" / "libgpu.so",
        {"gpu.c": _GPU_C},
        link=[driver, zoo.libcudss],
        rpath="$ORIGIN/../nvidia/cu13/lib",
    )
    files = {"ops/libgpu.so": gpu.read_bytes(), **({"ops/__init__.py": b""} if package else {})}
    return make_wheel(folder, "ops", "1.0", files, tag="py3-none-linux_x86_64", requires=requires)


@_NO_DRIVER
def test_a_library_that_needs_the_driver_is_loaded_with_a_stand_in_without_one(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On a machine without a GPU every file that needs ``libcuda.so.1`` failed to load, however right
    its packaging: kedm-cuda13x 0.10.1's extension, whose libcublas.so.13 no requirement brings, and its
    repaired wheel alike. A stand-in (``slimwheel.elf.stub``) exports the driver functions the file
    imports, so the file loads and where its NVIDIA libraries come from is judged: cuDSS from its wheel
    when the wheel requires it, a load problem naming libcudss.so.1 when it does not."""
    sources = _local_sources(own_catalog, providers.directory)
    right = _gpu_wheel(elf_zoo, tmp_path / "right", elf_zoo.libcuda, requires=("nvidia-cudss-cu13",))
    code, document = _verify(capsys, str(right), *sources)
    assert code == 0, document["problems"]
    assert document["stand_ins"] == ["libcuda.so.1"]
    assert [(load["member"], load["status"]) for load in document["loads"]] == [("ops/libgpu.so", "ok")]
    owners = {library["name"]: library["distribution"] for library in document["libraries"]}
    assert owners["cudss"] == "nvidia-cudss-cu13"
    assert main(["verify", str(right), *sources]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "stand-ins: libcuda.so.1: this machine has no NVIDIA driver" in printed

    wrong = _gpu_wheel(elf_zoo, tmp_path / "wrong", elf_zoo.libcuda)  # no Requires-Dist on cuDSS
    code, document = _verify(capsys, str(wrong), *sources)
    assert code == 1
    (load,) = _problems(document, "load")
    assert "libcudss.so.1: cannot open shared object file" in load
    assert any("libcudss.so.1" in problem for problem in _problems(document, "unresolved"))


_WRAPPING_INIT = b"""\
try:
    from ops import _gpu
except ImportError as error:
    raise RuntimeError("ops: the GPU module did not load\\n- check your NVIDIA driver") from error
"""


@_NO_DRIVER
@pytest.mark.parametrize("given", [(), ("--import", "ops")], ids=["default", "import-ops"])
def test_an_import_raised_from_the_drivers_absence_is_skipped_and_its_modules_loaded(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    given: tuple[str, ...],
) -> None:
    """pynvvideocodec 2.2.4's package turns the ImportError of its extension modules (they need the
    driver's libraries) into a RuntimeError of its own, whose last line names no library: verify
    failed its import on a machine without a GPU. The exceptions it was raised from say so; the
    import is skipped, and the extension modules it would have imported are loaded with a stand-in,
    also when ``--import`` names the package."""
    build = tmp_path / "build"
    module = build_extension_module(
        build / f"_gpu{EXTENSION_SUFFIX}",
        "_gpu",
        link=[elf_zoo.libcudss],
        rpath="$ORIGIN/../nvidia/cu13/lib",
    )
    patchelf(module, "--add-needed", "libcuda.so.1")
    files = {"ops/__init__.py": _WRAPPING_INIT, f"ops/_gpu{EXTENSION_SUFFIX}": module.read_bytes()}
    (tmp_path / "w").mkdir()
    wheel = make_wheel(
        tmp_path / "w", "ops", "1.0", files, tag="py3-none-linux_x86_64", requires=["nvidia-cudss-cu13"]
    )
    sources = _local_sources(own_catalog, providers.directory)
    code, document = _verify(capsys, str(wheel), *sources, *given)
    assert code == 0, document["problems"]
    assert {target["status"] for target in document["imports"]} == {"skipped"}
    assert all("libcuda.so.1: cannot open shared object file" in t["error"] for t in document["imports"])
    assert [(load["member"], load["status"]) for load in document["loads"]] == [
        (f"ops/_gpu{EXTENSION_SUFFIX}", "ok")
    ]
    assert document["stand_ins"] == ["libcuda.so.1"]
    owners = {library["name"]: library["distribution"] for library in document["libraries"]}
    assert owners["cudss"] == "nvidia-cudss-cu13"


@_NO_DRIVER
def test_what_only_a_library_needing_the_driver_needs_is_not_judged_without_it(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cuequivariance-ops-cu11 0.5.1's ``libcue_ops.so`` alone needs cuBLAS and NVRTC, and the driver:
    its load was skipped, and verify failed the wheel since they were "not mapped". Where no stand-in
    can be made (a driver library whose API ``DRIVER_API`` does not know: NVIDIA's optical flow), they
    are not judged, and verify says so."""
    flow = compile_shared(
        tmp_path / "driver" / "libnvidia-opticalflow.so.1",
        {"of.c": "int cuInit(unsigned x) { return (int)x; }\n"},
        soname="libnvidia-opticalflow.so.1",
    )
    wheel = _gpu_wheel(elf_zoo, tmp_path / "w", flow)
    empty = tmp_path / "links"
    empty.mkdir()
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 0, document["problems"]
    assert [(load["member"], load["status"]) for load in document["loads"]] == [("ops/libgpu.so", "skipped")]
    assert document["unjudged"] == ["libcudss.so.1"]
    assert document["stand_ins"] == []
    assert main(["verify", str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "not judged: libcudss.so.1: only libraries whose load was skipped need them" in printed
    assert "passes: 0 NVIDIA libraries mapped, 1 not judged, 0 problems" in printed


@_NO_DRIVER
def test_a_library_that_reaches_the_driver_through_another_distribution_gets_a_stand_in(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """acellera-openmmtorch-cu12 1.10's CUDA plugin needs openmm's libOpenMMCUDA.so, which needs
    libcuda.so.1; the plugin's own files need no driver library, so no stand-in was made, its load was
    skipped and what only it needs was not judged. The installed files that need the driver say what
    its stand-in must export (here cuInit, bound at load: -z now), and the load runs again."""
    build = tmp_path / "build"
    dep = compile_shared(
        build / "libdep.so",
        {"dep.c": "int cuInit(unsigned);\nint dep(void) { return cuInit(0); }\n"},
        soname="libdep.so",
        link=[elf_zoo.libcuda],
        flags=("-Wl,-z,now",),
    )
    plugin = compile_shared(
        build / "libplugin.so",
        {
            "p.c": "int dep(void);\nint cudssCreate(void *);\n"
            "int plugin(void) { return dep() + cudssCreate(0); }\n"
        },
        link=[dep, elf_zoo.libcudss],
        rpath="$ORIGIN/../dep:$ORIGIN/../nvidia/cu13/lib",
    )
    links = tmp_path / "links"
    links.mkdir()
    make_wheel(
        links, "dep", "1.0", {"dep/__init__.py": b"", "dep/libdep.so": dep.read_bytes()}, tag=SOLVER_TAG
    )
    files = {"ops/__init__.py": b"", "ops/libplugin.so": plugin.read_bytes()}
    (tmp_path / "w").mkdir()
    wheel = make_wheel(
        tmp_path / "w",
        "ops",
        "1.0",
        files,
        tag=SOLVER_TAG,
        requires=["dep", "nvidia-cudss-cu13>=1.0.0.35,<2"],
    )
    sources = _local_sources(own_catalog, providers.directory, links)
    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 0, document["problems"]
    assert [(load["member"], load["status"]) for load in document["loads"]] == [("ops/libplugin.so", "ok")]
    assert document["stand_ins"] == ["libcuda.so.1"]
    assert document["unjudged"] == []
    owners = {library["name"]: library["distribution"] for library in document["libraries"]}
    assert owners["cudss"] == "nvidia-cudss-cu13"


@pytest.mark.parametrize("how", ["extra", "excluded"])
def test_a_library_left_to_the_host_or_to_an_extra_is_skipped_not_failed(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    how: str,
) -> None:
    """cudaq-qec-cu12 0.8.1's TensorRT decoder plugin needs ``libnvinfer.so.10``, which only its extra
    'trt-decoder' brings in (tensorrt-cu12), and onnxruntime-gpu's TensorRT provider one that repair
    --exclude nvinfer left to the host: check warns of both, and verify failed the plugin's load where
    TensorRT is not installed. The load is skipped, saying why; what only it needs is not judged."""
    build = tmp_path / "build"
    nvinfer = compile_shared(
        build / "libnvinfer.so.10",
        {"nv.c": "int nvinfer_entry(void) { return 10; }\n"},
        soname="libnvinfer.so.10",
    )
    plugin = compile_shared(
        build / "libtrt_plugin.so",
        {"p.c": "int nvinfer_entry(void);\nint plugin(void) { return nvinfer_entry(); }\n"},
        link=[nvinfer],
        rpath="$ORIGIN/../nvidia/cu13/lib",
    )
    solver = _cudss_caller(elf_zoo, build / "libsolver.so")
    optional = ['tensorrt-cu13; extra == "trt" or extra == "all"', 'numpy; extra == "all"']
    requires = ["nvidia-cudss-cu13>=1.0.0.35,<2", *(optional if how == "extra" else [])]
    files = {
        "ops/__init__.py": b"",
        "ops/libsolver.so": solver.read_bytes(),
        "ops/plugins/libtrt_plugin.so": plugin.read_bytes(),
    }
    (tmp_path / "w").mkdir()
    wheel = make_wheel(tmp_path / "w", "ops", "1.0", files, tag=SOLVER_TAG, requires=requires)
    if how == "excluded":
        result = repair_to_json(
            capsys,
            wheel,
            tmp_path / "out",
            own_catalog,
            "--cuda",
            "13",
            "--isolated-environment",
            "--exclude",
            "nvinfer",
        )
        wheel = Path(result["output"])
    sources = _local_sources(own_catalog, providers.directory)
    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 0, document["problems"]
    loads = {load["member"]: load for load in document["loads"]}
    assert loads["ops/libsolver.so"]["status"] == "ok"
    plugin_load = loads["ops/plugins/libtrt_plugin.so"]
    assert plugin_load["status"] == "skipped"
    if how == "extra":
        assert "only the extra 'all' or 'trt' installs (tensorrt-cu13)" in plugin_load["error"]
        assert "(--extra trt installs it)" in plugin_load["error"]  # the one that brings in least
    else:
        assert "which the wheel leaves to the host (--exclude nvinfer)" in plugin_load["error"]


@_NO_DRIVER
def test_a_wheel_of_libraries_alone_is_verified_by_loading_them(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """cutensornet-cu13 2.14.0 ships cuquantum/lib/libcutensornet.so.2 and no Python: verify refused it
    ("no package or module to import"). Its libraries are loaded instead, and judged."""
    wheel = _gpu_wheel(
        elf_zoo, tmp_path / "w", elf_zoo.libcuda, requires=("nvidia-cudss-cu13",), package=False
    )
    sources = _local_sources(own_catalog, providers.directory)
    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 0, document["problems"]
    assert document["imports"] == []
    assert [(load["member"], load["status"]) for load in document["loads"]] == [("ops/libgpu.so", "ok")]
    assert {library["name"]: library["distribution"] for library in document["libraries"]}["cudss"] == (
        "nvidia-cudss-cu13"
    )


_RAN = """#include <stdio.h>
int tool(void);
int main(void) {{ FILE *mark = fopen("{mark}", "w"); if (mark) fclose(mark); return tool(); }}
"""


def test_a_wheels_programs_are_traced_by_the_loader_not_run(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jammi-server-cu12 0.54.0 ships one program that links six NVIDIA libraries, and an entry point
    that runs it with LD_LIBRARY_PATH set; repair gave the program an RPATH to each. verify loaded no
    program: it found the manifest's libraries "not mapped after import" and failed the repaired wheel,
    and passed the published one, whose program finds none of them. Each program is now traced by the
    loader of the venv's Python (what ``ldd`` asks; nothing of it runs): a program whose RPATH reaches
    its library passes and maps it from its wheel, one that needs a library nothing installs fails
    with a "load" problem naming it, and a program the wheel installs into the venv's ``bin`` counts.
    One whose search path misses the wheel's library but finds another copy on the machine fails too:
    libucx-cu13 1.22.0's ucx_info found the GPU machine's own UCX 1.16 and ran with it, without the
    wheel's CUDA transports, and its trace passed there."""
    build = tmp_path / "build"
    library = compile_shared(
        build / "libtool.so.1", {"t.c": "int tool(void) { return 0; }"}, soname="libtool.so.1"
    )
    mark = tmp_path / "ran"
    source = _RAN.format(mark=mark)
    found = compile_program(build / "found", source, link=[library], rpath="$ORIGIN/../lib")
    lost = compile_program(build / "lost", source, link=[library])
    hello = compile_program(build / "hello", "int main(void) { return 0; }")
    gpu = compile_program(
        build / "gpu",
        "int cudssCreate(void *);\nint main(void) { return cudssCreate(0); }",
        link=[elf_zoo.libcudss],
        rpath="$ORIGIN/../../nvidia/cu13/lib",
    )
    files = {
        "ops/__init__.py": b"",
        "ops/lib/libtool.so.1": library.read_bytes(),
        "ops/bin/found": found.read_bytes(),
        "ops/bin/gpu": gpu.read_bytes(),
        "ops-1.0.data/scripts/hello": hello.read_bytes(),
    }
    sources = _local_sources(own_catalog, providers.directory)
    good = _ops_wheel(tmp_path / "good", files)
    code, document = _verify(capsys, str(good), *sources)
    assert code == 0, document["problems"]
    programs = [(load["member"], load["status"]) for load in document["loads"] if load["kind"] == "program"]
    assert programs == [("../../../bin/hello", "ok"), ("ops/bin/found", "ok"), ("ops/bin/gpu", "ok")]
    owners = {library["name"]: library["distribution"] for library in document["libraries"]}
    assert owners["cudss"] == "nvidia-cudss-cu13"  # mapped by ops/bin/gpu alone
    assert not mark.exists(), "a traced program ran"

    files["ops/bin/lost"] = lost.read_bytes()
    bad = _ops_wheel(tmp_path / "bad", files)
    code, document = _verify(capsys, str(bad), *sources)
    assert code == 1
    (problem,) = _problems(document, "load")
    assert problem.startswith("tracing ops/bin/lost failed: libtool.so.1: cannot open shared object file")
    assert not mark.exists(), "a traced program ran"

    system = tmp_path / "system"
    system.mkdir()
    shutil.copyfile(library, system / "libtool.so.1")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(system))  # as a machine's own copy, on the loader's path
    code, document = _verify(capsys, str(bad), *sources)
    assert code == 1
    (problem,) = _problems(document, "load")
    assert problem == (
        f"tracing ops/bin/lost failed: libtool.so.1 was found at {system / 'libtool.so.1'} (no installed "
        "distribution's), not as this wheel's ops/lib/libtool.so.1: its search path misses the wheel's copy"
    )
    assert not mark.exists(), "a traced program ran"


def test_a_library_loads_after_the_wheels_own_library_it_misses_and_not_after_another_wheels(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """openmm-cuda 8.1.1.12's plugins need libOpenMMCUDA.so, beside them, and their RPATH misses it:
    OpenMM's plugin loader loads it first, and loads again each plugin that failed, and check warns
    found-loaded-first. verify loaded each alone and failed three of four. It now loads again one that
    missed a soname a library of the wheel carries, once that library is loaded, and says after which.
    A library that misses an NVIDIA library another file of the wheel maps from its wheel stays failed:
    no file of the wheel carries that soname, and in use nothing loads it first."""
    build = tmp_path / "build"
    host = compile_shared(build / "libhost.so", {"h.c": "int host(void) { return 3; }"}, soname="libhost.so")
    plugin = compile_shared(
        build / "libplugin.so",
        {"p.c": "int host(void);\nint plugin(void) { return host(); }"},
        link=[host],
        rpath="$ORIGIN/../../elsewhere",
    )
    reaching = _cudss_caller(elf_zoo, build / "libzreach.so")
    missing = _cudss_caller(elf_zoo, build / "libamiss.so", rpath=None)
    files = {
        "ops/__init__.py": b"",
        "ops/plugins/libhost.so": host.read_bytes(),
        "ops/plugins/libplugin.so": plugin.read_bytes(),
        "ops/libzreach.so": reaching.read_bytes(),
    }
    sources = _local_sources(own_catalog, providers.directory)
    wheel = _ops_wheel(tmp_path / "plugins", files)
    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 0, document["problems"]
    loads = {load["member"]: (load["status"], load["after"]) for load in document["loads"]}
    assert loads == {
        "ops/libzreach.so": ("ok", []),
        "ops/plugins/libhost.so": ("ok", []),
        "ops/plugins/libplugin.so": ("ok", ["ops/plugins/libhost.so"]),
    }
    assert main(["verify", str(wheel), *sources]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "ops/plugins/libplugin.so ok once ops/plugins/libhost.so was loaded (not on its search path)" in (
        printed
    )

    files["ops/libamiss.so"] = missing.read_bytes()
    wheel = _ops_wheel(tmp_path / "missing", files)
    code, document = _verify(capsys, str(wheel), *sources)
    assert code == 1
    loads = {load["member"]: (load["status"], load["after"]) for load in document["loads"]}
    assert loads["ops/libamiss.so"] == ("failed", [])
    (problem,) = _problems(document, "load")
    assert "libamiss.so" in problem
    assert "libcudss.so.1: cannot open shared object file" in problem


_RAPIDS_INIT = b"""\
import ctypes, os

def load_library(prefer_system=False):
    import libdeps  # the package the library needs, as RAPIDS' libcudf needs librmm

    ctypes.CDLL(os.path.join(os.path.dirname(libdeps.__file__), "libdep.so"), ctypes.RTLD_GLOBAL)
    if os.path.exists(os.path.join(os.path.dirname(__file__), "broken")):
        raise OSError("libdep.so: a dependency of libops is missing")
    return ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib64", "libops.so"))
"""


def test_a_rapids_library_packages_load_library_is_called_as_its_consumers_do(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """libcudf-streaming-cu13 26.10.2 ships lib64/libcudf_streaming.so, whose RUNPATH reaches none of
    the RAPIDS libraries it needs: its load_library() loads them (librmm's, libcudf's...) and then it,
    and pylibcudf calls it after the import. verify loaded the library without that and failed the
    published wheel and its repair alike ("librapidsmpf.so: cannot open shared object file"). A
    top-level package's own load_library() that takes no argument is now called after its import; one
    that raises fails the import, with what it raised."""
    build = tmp_path / "build"
    dep = compile_shared(build / "libdep.so", {"d.c": "int dep(void) { return 2; }"}, soname="libdep.so")
    ops = compile_shared(
        build / "libops.so", {"o.c": "int dep(void);\nint ops(void) { return dep(); }"}, link=[dep]
    )
    links = tmp_path / "links"
    links.mkdir()
    make_wheel(
        links,
        "libdeps",
        "1.0",
        {"libdeps/__init__.py": b"", "libdeps/libdep.so": dep.read_bytes()},
        tag="py3-none-linux_x86_64",
    )
    files = {"libops/__init__.py": _RAPIDS_INIT, "libops/lib64/libops.so": ops.read_bytes()}
    (tmp_path / "good").mkdir()
    wheel = make_wheel(
        tmp_path / "good", "libops", "1.0", files, tag="py3-none-linux_x86_64", requires=["libdeps"]
    )
    code, document = _verify(capsys, str(wheel), "--find-links", str(links), "--catalog", str(own_catalog))
    assert code == 0, document["problems"]
    ((imported, called),) = [(i["status"], i["called"]) for i in document["imports"]]
    assert (imported, called) == ("ok", "libops.load_library()")
    assert [(load["member"], load["status"]) for load in document["loads"]] == [
        ("libops/lib64/libops.so", "ok")
    ]

    files["libops/broken"] = b""
    (tmp_path / "broken").mkdir()
    wheel = make_wheel(
        tmp_path / "broken", "libops", "1.0", files, tag="py3-none-linux_x86_64", requires=["libdeps"]
    )
    code, document = _verify(capsys, str(wheel), "--find-links", str(links), "--catalog", str(own_catalog))
    assert code == 1
    (problem,) = _problems(document, "import")
    assert problem == (
        "import libops failed: libops.load_library() raised OSError: "
        "libdep.so: a dependency of libops is missing"
    )


def test_against_the_original_only_problems_it_lacks_fail(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Published wheels fail verify for reasons of their own (pylibraft-cu13 26.10 imports cupy, which
    it does not require; NEURON-gpu 8.2.2's modules were built for another numpy): ``--against`` the
    wheel it was repaired from tells what the repair broke from what the package does anyway."""
    # A module that imports a requirement the package forgot.
    forgot = {"solver_plugins/__init__.py": b"import jaxlike_nowhere\n"}
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, more=forgot)
    repaired = Path(
        repair_to_json(
            capsys, fat, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment"
        )["output"]
    )
    server = index_server(providers.directory)
    common = ["--index-url", server.simple_url, "--catalog", str(own_catalog)]

    code, alone = _verify(capsys, str(repaired), *common)
    assert code == 1
    assert [p["kind"] for p in alone["problems"]] == ["import"]
    assert alone["against"] is None

    code, document = _verify(capsys, str(repaired), "--against", str(fat), *common)
    assert code == 0, document["against"]
    assert document["ok"] is True
    against = document["against"]
    assert against["wheel"] == str(fat)
    assert against["new"] == []
    assert against["shared"] == alone["problems"]  # the same words, from another venv
    assert "No module named 'jaxlike_nowhere'" in against["shared"][0]["message"]
    # The original's own problems, which the repair mended: its copy of cuDSS needs a cuBLAS nothing
    # installed, so `import solver` failed, for want of a Requires-Dist and an RPATH.
    gone = {(p["kind"], p.get("soname")) for p in against["gone"]}
    assert {("import", None), ("unresolved", "libcublas.so.13")} <= gone
    assert document["libraries"]  # the repaired wheel's own report, as without --against

    # The other way round, a wheel that lost what the original had fails, naming what it lost.
    assert main(["verify", str(fat), "--against", str(repaired), *common]) == 1
    out = capsys.readouterr().out
    assert "(the original too): import solver_plugins failed" in out.replace("\n", " ")
    assert "fails against " + repaired.name in out
    assert "problems the original does not have" in out


def test_against_a_wheel_of_another_distribution_is_bad_usage(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = make_wheel(tmp_path, "one", "1.0", {"one/__init__.py": b""}, tag="py3-none-any")
    other = make_wheel(tmp_path, "other", "1.0", {"other/__init__.py": b""}, tag="py3-none-any")
    assert main(["verify", str(one), "--against", str(other), "--catalog", str(own_catalog)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--against other-1.0-py3-none-any.whl: a wheel of other, not of one" in line
    assert (
        main(["verify", str(one), "--against", str(tmp_path / "gone.whl"), "--catalog", str(own_catalog)])
        == 2
    )
    assert "no such file" in capsys.readouterr().err


def _another_cpython() -> Path | None:
    """A CPython of another minor version than this one, with its headers (pyenv's, where there)."""
    import os
    import sys

    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for folder in sorted(root.glob("3.*"), reverse=True):
        python = folder / "bin" / "python"
        minor = folder.name.split(".")[1] if folder.name.count(".") >= 1 else ""
        headers = list(folder.glob("include/python3.*/Python.h"))
        if (
            python.is_file()
            and headers
            and minor.isdigit()
            and int(minor) >= 8
            and int(minor) != sys.version_info[1]
        ):
            return python
    return None


_PLAIN_MODULE_C = """\
#include <Python.h>
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fast", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_fast(void) { return PyModule_Create(&module); }
"""


def test_a_wheel_for_another_python_is_verified_with_that_python(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cp3X wheel of another Python than the one running slimwheel: refused in one line without
    --python; with --python naming that interpreter, its venv is made with it, and its extension
    module, built against its headers, imports there (the corpus's cp312-only wheels, verified from
    Python 3.11)."""
    from slimwheel.verify import interpreter_of

    other = _another_cpython()
    if other is None:
        pytest.skip("no CPython of another minor version with its headers on this machine")
    python = interpreter_of(other)
    suffix = python.extension_suffixes[0]
    include = next(other.parent.parent.glob("include/python3.*"))
    module = compile_shared(
        tmp_path / "build" / f"fast{suffix}", {"fast.c": _PLAIN_MODULE_C}, flags=(f"-I{include}",)
    )
    tag = "cp" + "".join(python.version.split(".")[:2])
    files = {"fast_pkg/__init__.py": b"from . import fast\n", f"fast_pkg/fast{suffix}": module.read_bytes()}
    wheel = make_wheel(tmp_path, "fast-pkg", "1.0", files, tag=f"{tag}-{tag}-manylinux_2_17_x86_64")
    links = tmp_path / "links"
    links.mkdir()
    sources = [str(wheel), "--find-links", str(links), "--catalog", str(own_catalog)]
    assert main(["verify", *sources]) == 2
    assert "--python python3.X" in capsys.readouterr().err
    code, planned = _verify(capsys, *sources, "--python", str(other), "--dry-run")
    assert code == 0
    assert planned["plan"]["python"]["version"] == python.version
    code, document = _verify(capsys, *sources, "--python", str(other))
    assert code == 0, document["problems"]
    assert document["python"].startswith(f"CPython {python.version}, ")
    assert _imports(document) == [("fast_pkg", "package", "ok"), ("fast_pkg.fast", "extension", "ok")]
    assert main(["verify", *sources, "--python", str(tmp_path / "no-python")]) == 2
    assert "--python" in capsys.readouterr().err
