"""`slimwheel repair` on fat wheels around gcc-built libraries, then a real pip install from a real
index on 127.0.0.1 into a fresh venv, then an import in a fresh process that shows where each
library was mapped from."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from slimwheel.catalog.store import read_catalog
from slimwheel.check import check_wheel
from slimwheel.cli import main
from slimwheel.elf import read_elf
from slimwheel.findings import Severity
from slimwheel.manifest import Manifest, read_manifest
from slimwheel.repair.apply import find_patchelf
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import ProviderWheels
from tests.support.solver import SOLVER_INIT, SOLVER_TAG, fat_solver_wheel, plan_for_cuda13, repair_to_json
from tests.support.venvs import make_venv, pip_install, run_probe
from tests.support.wheels import make_wheel


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("style", ["auditwheel", "renamed", "plain"])
def test_repair_install_import_loads_from_the_provider(
    style: str,
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, style)
    before = _sha256(fat)
    out = tmp_path / "wheelhouse"
    arguments = ["repair", str(fat), "-w", str(out), "--catalog", str(own_catalog), "--json"]
    assert main([*arguments, "--cuda", "13", "--isolated-environment"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "slimwheel.repair/1"
    (result,) = document["wheels"]
    repaired = Path(result["output"])
    assert result["size_after"] < result["size_before"]
    assert _sha256(fat) == before  # the input is never touched

    with Wheel.open(repaired) as wheel:
        wheel.verify()
        names = {m.name for m in wheel.members}
        assert not any("libcudss" in name for name in names)
        requires = wheel.requires_dist()
        assert any(r.startswith("nvidia-cudss-cu13>=1.0.0.35,<2; sys_platform") for r in requires), requires
        manifest = Manifest.from_json(wheel.read_member(f"{wheel.dist_info}/slimwheel.json"))
        (library,) = manifest.libraries
        assert (library.soname, library.distribution, library.folder) == (
            "libcudss.so.1",
            "nvidia-cudss-cu13",
            "nvidia/cu13/lib",
        )
        assert library.needed_by == ("solver/_solver.so",)
        with wheel.seekable_member("solver/_solver.so") as stream:
            facts = read_elf(stream, path="solver/_solver.so", symbols=False)
    assert "libcudss.so.1" in facts.needed
    assert [need.file for need in facts.version_needs if "cudss" in need.file] == ["libcudss.so.1"]
    assert facts.rpath == ("$ORIGIN/../nvidia/cu13/lib",)
    assert facts.runpath == ()

    # check agrees: the input bundles a copy NVIDIA's wheel provides; the result resolves to the wheel.
    assert main(["check", str(fat), "--catalog", str(own_catalog)]) == 1
    assert main(["check", str(repaired), "--catalog", str(own_catalog)]) == 0
    capsys.readouterr()

    server = index_server(providers.directory)
    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, str(repaired), index_url=server.simple_url)
    assert installed.returncode == 0, installed.stderr
    probe = run_probe(python, "solver", "version", cwd=tmp_path)
    assert probe["value"] == 10000  # cudssGetProperty through the provider's library
    mapped = probe["mapped"]
    cudss = [path for path in mapped if path.endswith("/libcudss.so.1")]
    assert len(cudss) == 1, mapped
    assert cudss[0].endswith("site-packages/nvidia/cu13/lib/libcudss.so.1")
    assert any(path.endswith("site-packages/nvidia/cu13/lib/libcublas.so.13") for path in mapped)
    assert not any("solver.libs" in path or "solver/libcudss" in path for path in mapped)


def test_dry_run_writes_nothing_and_shows_the_plan(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    out = tmp_path / "wheelhouse"
    code = main(
        ["repair", str(fat), "-w", str(out), "--catalog", str(own_catalog), "--dry-run", "--cuda", "13"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "would drop      solver.libs/libcudss-1a2b3c4d.so.1.0.0" in printed
    assert "NEEDED libcudss-1a2b3c4d.so.1.0.0 -> libcudss.so.1" in printed
    assert "nvidia-cudss-cu13>=1.0.0.35,<2" in printed
    assert not out.exists()


def test_policies_and_linked_version(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    seen = {}
    for policy in ("compatible", "minimum", "exact"):
        out = tmp_path / policy
        extra = ("--cuda", "13", "--policy", policy, "--isolated-environment")
        result = repair_to_json(capsys, fat, out, own_catalog, *extra)
        (requirement,) = result["plan"]["requirements"]
        seen[policy] = requirement["requirement"].split(";")[0]
    assert seen == {
        "compatible": "nvidia-cudss-cu13>=1.0.0.35,<2",
        "minimum": "nvidia-cudss-cu13>=1.0.0.35",
        "exact": "nvidia-cudss-cu13==1.0.0.35",
    }


def test_fresh_build_without_copies_gets_requirement_and_rpath(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build linked against the pip wheel: nothing vendored, DT_NEEDED libcudss.so.1 only."""
    fresh = make_wheel(
        tmp_path, "fresh", "1.0", {"fresh/sub/_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=SOLVER_TAG
    )
    out = tmp_path / "wheelhouse"
    code = main(
        ["repair", str(fresh), "-w", str(out), "--catalog", str(own_catalog), "--json", "--cuda", "13",
         "--linked-version", "cudss=1.0.0.35", "--isolated-environment"]
    )  # fmt: skip
    assert code == 0
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    (requirement,) = result["plan"]["requirements"]
    assert requirement["version_source"] == "--linked-version"
    with Wheel.open(Path(result["output"])) as wheel, wheel.seekable_member("fresh/sub/_solver.so") as stream:
        facts = read_elf(stream, path="x", symbols=False)
    # One more .. for a file one folder deeper; the old RUNPATH into nvidia/cudss/lib is gone.
    assert facts.rpath == ("$ORIGIN/../../nvidia/cu13/lib",)


def test_search_path_entries_into_other_packages_stay(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A torch extension's ``$ORIGIN/../torch/lib`` and a conda-style entry above site-packages are the
    author's and stay; the stale NVIDIA folder and the wheel's own emptied folder go."""
    extension = tmp_path / "_ext.so"
    extension.write_bytes(elf_zoo.ext_auditwheel.read_bytes())
    rpath = "$ORIGIN/../torch/lib:$ORIGIN/../nvidia/cudss/lib:$ORIGIN/../solver.libs:$ORIGIN/../../../lib"
    subprocess.run([find_patchelf(), "--set-rpath", rpath, str(extension)], check=True)
    files = {
        "solver/_solver.so": extension.read_bytes(),
        "solver.libs/libcudss-1a2b3c4d.so.1.0.0": elf_zoo.auditwheel_copy.read_bytes(),
        "solver/__init__.py": SOLVER_INIT,
    }
    fat = make_wheel(tmp_path, "solver", "1.0", files, tag=SOLVER_TAG)
    result = repair_to_json(
        capsys, fat, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment"
    )
    with Wheel.open(Path(result["output"])) as wheel, wheel.seekable_member("solver/_solver.so") as stream:
        facts = read_elf(stream, path="x", symbols=False)
    assert facts.rpath == ("$ORIGIN/../torch/lib", "$ORIGIN/../../../lib", "$ORIGIN/../nvidia/cu13/lib")
    assert facts.runpath == ()


@pytest.mark.skipif(find_tool("gcc") is None, reason="needs gcc")
def test_entries_glibc_resolves_against_the_current_directory_go(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cucim-cu13 26.10's ``libcucim.so.26`` has RUNPATH ``:::::::`` and its extension module
    ``$ORIGIN:/__w/cucim/cucim/install/lib:``; neither needs an NVIDIA wheel. check calls an empty or
    relative entry an error (glibc searches the current directory), so repair refused the wheel. Those
    entries now go from any file, the rest stays as written under its own tag, and a file with none of
    them is not edited."""
    source = {"helper.c": "int helper(void) { return 1; }\n"}
    empty = compile_shared(tmp_path / "libempty.so", source, rpath=":::", new_dtags=True)
    mixed = compile_shared(
        tmp_path / "libmixed.so", source, rpath="$ORIGIN:lib::/opt/solver/lib", new_dtags=True
    )
    clean = compile_shared(tmp_path / "libclean.so", source, rpath="$ORIGIN/../other", new_dtags=True)
    files = {
        "solver/_solver.so": elf_zoo.ext_dynamic.read_bytes(),
        "solver/libempty.so": empty.read_bytes(),
        "solver/libmixed.so": mixed.read_bytes(),
        "solver/libclean.so": clean.read_bytes(),
    }
    wheel_file = make_wheel(tmp_path, "solver", "1.0", files, tag=SOLVER_TAG)
    result = repair_to_json(
        capsys, wheel_file, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment"
    )
    edited = {edit["path"]: edit for edit in result["plan"]["edits"]}
    assert "solver/libclean.so" not in edited
    searched = {}
    with Wheel.open(Path(result["output"])) as wheel:
        for member in ("solver/libempty.so", "solver/libmixed.so", "solver/libclean.so"):
            with wheel.seekable_member(member) as stream:
                facts = read_elf(stream, path="x", symbols=False)
            searched[member] = (facts.rpath, facts.runpath)
    assert searched == {
        "solver/libempty.so": ((), ()),
        "solver/libmixed.so": ((), ("$ORIGIN", "/opt/solver/lib")),
        "solver/libclean.so": ((), ("$ORIGIN/../other",)),
    }
    assert "current directory" in edited["solver/libempty.so"]["reason"]


def test_an_entry_above_the_wheels_own_files_stays(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """openmm-cuda-13 8.6.1 ships only plugins, in ``OpenMM.libs/lib/plugins/``, with RUNPATH
    ``$ORIGIN/..``: ``OpenMM.libs/lib`` holds none of its files but openmm's libOpenMM.so. Repair took
    the entry for a stale one of the wheel's own and dropped it; a stale guess below the wheel's files
    (``OpenMM.libs/lib/plugins/nvidia/...``) still goes."""
    plugin = tmp_path / "_solver.so"
    plugin.write_bytes(elf_zoo.ext_dynamic.read_bytes())
    rpath = "$ORIGIN/..:$ORIGIN/nvidia/cudss/lib"
    subprocess.run([find_patchelf(), "--set-rpath", rpath, str(plugin)], check=True)
    files = {"Solver.libs/lib/plugins/libSolverCUDA.so": plugin.read_bytes()}
    wheel_file = make_wheel(tmp_path, "solver-cuda", "1.0", files, tag=SOLVER_TAG)
    result = repair_to_json(
        capsys, wheel_file, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment"
    )
    member = "Solver.libs/lib/plugins/libSolverCUDA.so"
    with Wheel.open(Path(result["output"])) as wheel, wheel.seekable_member(member) as stream:
        facts = read_elf(stream, path="x", symbols=False)
    assert facts.rpath + facts.runpath == ("$ORIGIN/..", "$ORIGIN/../../../nvidia/cu13/lib")


def test_exclude_leaves_a_library_to_the_host(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """onnxruntime-gpu 1.20.2's TensorRT provider needs libnvinfer.so.10, which only a TensorRT
    install provides: repair refused the wheel (the input fails check too). ``--exclude`` names it for
    the host, as auditwheel's ``--exclude`` does, by soname (that soname alone) or by stem (each of
    its sonames): the wheel is written, the not-found is a warning that says so."""
    provider = tmp_path / "_solver.so"
    provider.write_bytes(elf_zoo.ext_dynamic.read_bytes())
    subprocess.run([find_patchelf(), "--add-needed", "libnvinfer.so.10", str(provider)], check=True)
    files = {"fresh/_solver.so": provider.read_bytes()}
    wheel_file = make_wheel(tmp_path, "fresh", "1.0", files, tag=SOLVER_TAG)
    base = [
        "repair",
        str(wheel_file),
        "--catalog",
        str(own_catalog),
        "--cuda",
        "13",
        "--isolated-environment",
    ]
    assert main([*base, "-w", str(tmp_path / "refused"), "--linked-version", "cudss=1.0.0.35"]) == 1
    assert "needs libnvinfer.so.10: not found" in capsys.readouterr().err
    assert not list((tmp_path / "refused").glob("*.whl"))
    result = repair_to_json(
        capsys, wheel_file, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment",
        "--linked-version", "cudss=1.0.0.35", "--exclude", "libnvinfer.so.10",
    )  # fmt: skip
    assert result["plan"]["left_to_host"] == ["libnvinfer.so.10"]
    assert (result["check"]["errors"], result["check"]["warnings"] > 0) == (0, True)
    # Not told: the manifest records what repair left to the host, and check counts on it too; the
    # wheel's files alone do not say so.
    with Wheel.open(Path(result["output"])) as written:
        manifest = read_manifest(written)
    assert manifest is not None
    assert manifest.left_to_host == ("libnvinfer.so.10",)
    assert main(["check", result["output"], "--catalog", str(own_catalog)]) == 0
    said = capsys.readouterr().out
    assert "counting on what its slimwheel.json records: --exclude libnvinfer.so.10" in said
    assert "left to the host (--exclude libnvinfer.so.10)" in said
    with Wheel.open(Path(result["output"])) as written:
        alone = check_wheel(written, read_catalog(own_catalog), recorded=False)
    assert [f.soname for f in alone.findings if f.severity is Severity.ERROR] == ["libnvinfer.so.10"]
    # check told by stem, or by that soname, judges it the same; another soname of it stays an error.
    for told, severity in (
        ("nvinfer", "warning"),
        ("libnvinfer.so.10", "warning"),
        ("libnvinfer.so.9", "error"),
    ):
        with Wheel.open(Path(result["output"])) as written:
            judged = check_wheel(written, read_catalog(own_catalog), recorded=False, host_provided=[told])
        (finding,) = [f for f in judged.findings if f.soname == "libnvinfer.so.10"]
        assert finding.severity.value == severity, told
        assert (f"left to the host (--exclude {told})" in finding.message) is (severity == "warning")


@pytest.mark.parametrize(
    ("rpath", "tag", "edited"),
    [
        # PyTorch 2.0's order: the NVIDIA folder before $ORIGIN, which holds none of its names.
        ("$ORIGIN/../nvidia/cu13/lib:$ORIGIN", "rpath", False),
        # Another package's folder may hold anything, but the NVIDIA folder is searched first: what
        # both might hold comes from NVIDIA's wheel already, which is what repair's order is for.
        ("$ORIGIN/../nvidia/cu13/lib:$ORIGIN/../torch/lib", "rpath", False),
        # Entries that can only miss: a folder searched twice, one no NVIDIA wheel installs into.
        (
            "$ORIGIN/../nvidia/cu13/lib:$ORIGIN/../torch/lib:$ORIGIN/../nvidia/cu13/lib:"
            "$ORIGIN/../nvidia/nothing/lib:$ORIGIN/../torch/../torch/lib",
            "rpath",
            False,
        ),
        # An absolute entry is searched on the host: it goes, and the order is repair's.
        ("$ORIGIN/../nvidia/cu13/lib:/usr/local/cuda/lib64:$ORIGIN/../torch/lib", "rpath", True),
        # A needed NVIDIA folder missing is an edit, whatever else is there.
        ("$ORIGIN/../torch/lib:$ORIGIN/../nvidia/nothing/lib", "rpath", True),
        # lmdeploy 0.18's RUNPATH into the NVIDIA folders: right as it is, tag included.
        ("$ORIGIN:$ORIGIN/../nvidia/cu13/lib", "runpath", False),
        ("$ORIGIN/../nvidia/cu13/lib:$ORIGIN/../torch/lib", "runpath", False),
        ("$ORIGIN/../nvidia/cu13/lib:/usr/local/cuda/lib64:$ORIGIN/../torch/lib", "runpath", True),
    ],
)
def test_an_rpath_only_in_another_order_is_left_alone(
    rpath: str,
    tag: str,
    edited: bool,
    elf_zoo: ElfZoo,
    own_catalog: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    extension = tmp_path / "_solver.so"
    extension.write_bytes(elf_zoo.ext_dynamic.read_bytes())
    force = ["--force-rpath"] if tag == "rpath" else []
    subprocess.run([find_patchelf(), *force, "--set-rpath", rpath, str(extension)], check=True)
    fresh = make_wheel(tmp_path, "fresh", "1.0", {"fresh/_solver.so": extension.read_bytes()}, tag=SOLVER_TAG)
    result = repair_to_json(
        capsys, fresh, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment"
    )
    assert bool(result["plan"]["edits"]) is edited
    with Wheel.open(Path(result["output"])) as wheel:
        assert (wheel.read_member("fresh/_solver.so") == extension.read_bytes()) is not edited
        with wheel.seekable_member("fresh/_solver.so") as stream:
            facts = read_elf(stream, path="x", symbols=False)
    wanted = "$ORIGIN/../torch/lib:$ORIGIN/../nvidia/cu13/lib"
    kept_runpath = tag == "runpath" and not edited
    written, other = (facts.runpath, facts.rpath) if kept_runpath else (facts.rpath, facts.runpath)
    assert (":".join(written), other) == (wanted if edited else rpath, ())


def test_ambiguous_cuda_major_is_a_clear_error(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = make_wheel(
        tmp_path, "fresh", "1.0", {"fresh/_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=SOLVER_TAG
    )
    code = main(["repair", str(fresh), "-w", str(tmp_path / "out"), "--catalog", str(own_catalog)])
    assert code == 2
    err = capsys.readouterr().err
    assert "CUDA 12 and 13 wheels all provide" in err
    assert "--cuda" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_conflicting_existing_requirement_is_reported(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cuDSS 1.0 requires nvidia-cublas==13.*; a wheel pinning cuBLAS 12 cannot have both."""
    pinned = make_wheel(
        tmp_path,
        "pinned",
        "1.0",
        {"pinned/_solver.so": elf_zoo.ext_dynamic.read_bytes()},
        tag=SOLVER_TAG,
        requires=("nvidia-cublas==12.9.1.4",),
    )
    code = main(
        [
            "repair",
            str(pinned),
            "-w",
            str(tmp_path / "out"),
            "--catalog",
            str(own_catalog),
            "--cuda",
            "13",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "nvidia-cublas" in err
    assert "no release of nvidia-cublas satisfies every requirement" in err


def test_bad_input_leaves_nothing(
    tmp_path: Path, own_catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "bad-1.0-py3-none-linux_x86_64.whl"
    text.write_text("not a wheel")
    out = tmp_path / "out"
    assert main(["repair", str(text), "-w", str(out), "--catalog", str(own_catalog)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())


HELPER_SOLVER_C = """\
extern int cudssGetProperty(int type, int *value);
extern int helper_scale(void);
int solver_cudss_version(void) {
    int major = -1, minor = -1, patch = -1;
    cudssGetProperty(0, &major);
    cudssGetProperty(1, &minor);
    cudssGetProperty(2, &patch);
    return (major * 10000 + minor * 100 + patch) * helper_scale();
}
"""


@pytest.mark.parametrize("tag", ["py3-none-linux_x86_64", "py3-none-any"], ids=["linux", "any"])
def test_linux_tagged_wheel_goes_through_auditwheel_first(
    tag: str,
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """auditwheel bundles the non-NVIDIA library and gives a manylinux tag; NVIDIA's is excluded exactly,
    then required from its wheel. So too for a wheel tagged for any platform that holds Linux ELF files
    (tsnecuda 3.0.1 is ``py3-none-any``): repair refused it ("no Linux platform tag") where auditwheel
    reads the architecture from its files and tags it. Where such a wheel also holds another system's
    binaries (CUDAInline 0.0.6 ships a Windows DLL beside its Linux library), a warning says that the
    repaired wheel, tagged for Linux, leaves that system without it."""
    from tests.support.elfbuild import compile_shared

    system = tmp_path / "system-libs"
    helper = compile_shared(
        system / "libhelper.so.1",
        {"helper.c": "int helper_scale(void) { return 1; }\n"},
        soname="libhelper.so.1",
    )
    extension = compile_shared(
        tmp_path / "build" / "_solver.so",
        {"solver.c": HELPER_SOLVER_C},
        link=[elf_zoo.libcudss, helper],
        rpath_link=[elf_zoo.libcublas.parent],
    )
    (tmp_path / "fat").mkdir()
    fat = make_wheel(
        tmp_path / "fat",
        "solver",
        "1.0",
        {
            "solver/_solver.so": extension.read_bytes(),
            "solver/_solver.pyd": b"MZ",
            "solver/__init__.py": SOLVER_INIT,
        },
        tag=tag,
    )
    monkeypatch.setenv("LD_LIBRARY_PATH", str(system))  # where auditwheel finds what it must bundle
    extra = ("--cuda", "13", "--linked-version", "cudss=1.0.0.35", "--isolated-environment")
    result = repair_to_json(capsys, fat, tmp_path / "wheelhouse", own_catalog, *extra)
    assert result["auditwheel"]["excluded"] == ["libcudss.so.1"]
    elsewhere = [w for w in result["plan"]["warnings"] if "publish the original beside it" in w]
    if tag == "py3-none-any":
        assert elsewhere == [
            f"{fat.name} is tagged for any platform and also holds Windows files (solver/_solver.pyd): "
            "its repair is tagged for Linux only, so pip installs it nowhere else; publish the original "
            "beside it for Windows"
        ]
    else:
        assert elsewhere == []
    repaired = Path(result["output"])
    assert "manylinux" in repaired.name
    with Wheel.open(repaired) as wheel:
        wheel.verify()
        bundled = [m.name for m in wheel.members if m.name.startswith("solver.libs/") and not m.is_dir]
        assert len(bundled) == 1
        assert bundled[0].startswith("solver.libs/libhelper-")
        assert not any("libcudss" in m.name for m in wheel.members)
        with wheel.seekable_member("solver/_solver.so") as stream:
            facts = read_elf(stream, path="_solver.so", symbols=False)
    # auditwheel's entry for its own bundle is kept; the NVIDIA folder is added after it.
    assert facts.rpath == ("$ORIGIN/../solver.libs", "$ORIGIN/../nvidia/cu13/lib")

    monkeypatch.delenv("LD_LIBRARY_PATH")
    server = index_server(providers.directory)
    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, str(repaired), index_url=server.simple_url)
    assert installed.returncode == 0, installed.stderr
    probe = run_probe(python, "solver", "version", cwd=tmp_path)
    assert probe["value"] == 10000
    mapped = probe["mapped"]
    assert any("site-packages/solver.libs/libhelper-" in path for path in mapped)
    assert any(path.endswith("site-packages/nvidia/cu13/lib/libcudss.so.1") for path in mapped)


@pytest.mark.parametrize("dry_run", [False, True], ids=["repair", "dry-run"])
def test_binaries_installed_into_purelib_are_refused_before_auditwheel_runs(
    dry_run: bool, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tensorrtserver 1.11.0 (``py3-none-any``) holds its libraries in ``.data/purelib/``, which
    auditwheel refuses ("has to be platlib compliant"): repair passed its last line on, advising
    LD_LIBRARY_PATH. It says what is wrong and what to do, in one line, exit 2, nothing written."""
    inside = "solver-1.0.data/purelib/solver/_solver.so"
    (tmp_path / "in").mkdir()
    wheel = make_wheel(
        tmp_path / "in",
        "solver",
        "1.0",
        {inside: elf_zoo.ext_auditwheel.read_bytes(), "solver/__init__.py": SOLVER_INIT},
        tag="py3-none-any",
    )
    before = _sha256(wheel)
    out = tmp_path / "wheelhouse"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, *(["--dry-run"] if dry_run else [])]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{inside} installs into purelib, and auditwheel" in line
    assert "rebuild it with them in platlib" in line
    assert "--no-auditwheel" in line
    assert not out.exists() or not any(out.iterdir())
    assert _sha256(wheel) == before


@pytest.mark.parametrize(
    "tag",
    [
        "py3-none-any",
        "py3-none-win_amd64",
        "py3-none-manylinux_2_28_aarch64.manylinux_2_28_x86_64",
        "py3-none-manylinux_2_17_x86_64",  # nvidia-tensorrt 99.0.0: written, with an empty manifest
    ],
)
def test_a_wheel_with_no_elf_file_or_no_linux_tag_is_one_line_and_exit_2(
    tag: str, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pure wheel has nothing to repair, and says so, as does one tagged for two architectures
    only so that pip installs it where its requirements exist (cuxfilter-cu13 26.6.0), where repair
    said "tagged for several architectures", and one tagged for one (nvidia-tensorrt 99.0.0, a stub),
    which repair had written again with a manifest of no library; a Windows wheel has no Linux tag."""
    files = {"pure/__init__.py": b"", "pure/pure.dll": b"MZ not ELF"}
    wheel = make_wheel(tmp_path, "pure", "1.0", files, tag=tag)
    argv = ["repair", str(wheel), "-w", str(tmp_path / "out"), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    windows = tag.endswith("win_amd64")
    expected = "no Linux platform tag" if windows else "holds no ELF file: nothing to repair"
    assert expected in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_build_environment_gives_linked_version_and_transitive_libraries(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Built against the pip-installed cuDSS: repair reads its version and what it needs from there."""
    server = index_server(providers.directory)
    build_python = make_venv(tmp_path / "build-env")
    installed = pip_install(build_python, "nvidia-cudss-cu13==1.0.0.35", index_url=server.simple_url)
    assert installed.returncode == 0, installed.stderr
    fresh = make_wheel(
        tmp_path, "fresh", "1.0", {"fresh/_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=SOLVER_TAG
    )
    extra = ("--cuda", "13", "--build-python", str(build_python))
    result = repair_to_json(capsys, fresh, tmp_path / "out", own_catalog, *extra)
    (requirement,) = result["plan"]["requirements"]
    assert requirement["linked_version"] == "1.0.0.35"
    assert requirement["version_source"].startswith("installed (the environment of")
    libraries = result["plan"]["manifest"]["libraries"]
    # Load order: cuBLAS (which cuDSS needs) first, then cuDSS.
    assert [(lib["soname"], lib["requires"]) for lib in libraries] == [
        ("libcublas.so.13", []),
        ("libcudss.so.1", ["cublas"]),
    ]
    assert libraries[0]["needed_by"] == []
    assert libraries[1]["needed_by"] == ["fresh/_solver.so"]


def test_a_failing_edit_leaves_no_output_and_the_input_untouched(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    from slimwheel.catalog.store import read_catalog
    from slimwheel.repair import RepairError
    from slimwheel.repair.apply import apply_plan

    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    before = _sha256(fat)
    catalog = read_catalog(own_catalog)
    with Wheel.open(fat) as wheel:
        plan = plan_for_cuda13(wheel, catalog)
    out = tmp_path / "out"
    failing = tmp_path / "patchelf-that-fails"
    failing.write_text("#!/bin/sh\necho 'cannot patch this file' >&2\nexit 1\n")
    failing.chmod(0o755)
    with pytest.raises(
        RepairError, match=re.escape("patchelf failed on solver/_solver.so: cannot patch this file")
    ):
        apply_plan(fat, plan, out, patchelf=str(failing))
    assert list(out.iterdir()) == []
    assert _sha256(fat) == before
    written = apply_plan(fat, plan, out)
    assert [p.name for p in out.iterdir()] == [written.name]


def test_only_and_exclude_pick_libraries_by_name(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    common = ["repair", str(fat), "-w", str(tmp_path / "out"), "--catalog", str(own_catalog), "--json"]
    plans = {}
    for flag in (["--exclude", "cudss"], ["--only", "cudss"], ["--only", "cublas"]):
        assert main([*common, "--dry-run", "--cuda", "13", "--isolated-environment", *flag]) == 0
        (result,) = json.loads(capsys.readouterr().out)["wheels"]
        plans[" ".join(flag)] = result["plan"]
    # The kept copy still needs cuBLAS, which an NVIDIA wheel provides: that part is still done.
    assert plans["--exclude cudss"]["drop"] == []
    assert [r["library"] for r in plans["--exclude cudss"]["requirements"]] == ["cublas"]
    assert plans["--only cudss"]["drop"] == ["solver.libs/libcudss-1a2b3c4d.so.1.0.0"]
    assert [r["library"] for r in plans["--only cudss"]["requirements"]] == ["cudss"]
    assert plans["--only cublas"]["drop"] == []
    # A copy kept on purpose is the user's choice: check (the post-condition) warns, and the wheel is written.
    assert plans["--exclude cudss"]["kept_copies"] == ["solver.libs/libcudss-1a2b3c4d.so.1.0.0"]
    assert main([*common, "--cuda", "13", "--isolated-environment", "--exclude", "cudss"]) == 0
    (written,) = json.loads(capsys.readouterr().out)["wheels"]
    assert written["check"]["errors"] == 0
    assert written["check"]["warnings"] >= 1
    # Of what kinds, most first: what a count of warnings alone does not say.
    kinds = written["check"]["warning_kinds"]
    assert sum(kinds.values()) == written["check"]["warnings"], kinds
    assert "vendored-while-provided" in kinds, kinds
    text = ["repair", str(fat), "-w", str(tmp_path / "text"), "--catalog", str(own_catalog)]
    assert main([*text, "--cuda", "13", "--isolated-environment", "--exclude", "cudss"]) == 0
    words = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    assert f"check passes ({written['check']['warnings']} warnings: {words})" in capsys.readouterr().out
    # check of the wheel written, told nothing, judges it as repair did: the manifest records the copy.
    assert written["plan"]["manifest"]["kept_copies"] == ["solver.libs/libcudss-1a2b3c4d.so.1.0.0"]
    assert main(["check", written["output"], "--catalog", str(own_catalog), "--cuda", "13"]) == 0
    assert "kept on purpose" in capsys.readouterr().out
