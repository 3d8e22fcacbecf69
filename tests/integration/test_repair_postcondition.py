"""repair proves its output: ``check`` runs on the wheel before it is renamed into place, and an error
repair introduced stops it with nothing written. Also: unusable output folders end in one line, exit 2."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from slimwheel.catalog.store import read_catalog
from slimwheel.cli import main
from slimwheel.repair import RepairOptions
from slimwheel.repair.apply import find_patchelf
from slimwheel.repair.pipeline import RepairRefusedError, repair_wheel
from tests.support.elfbuild import patchelf
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import ProviderWheels
from tests.support.solver import SOLVER_INIT, SOLVER_TAG, fat_solver_wheel, unresolvable_library
from tests.support.wheels import make_wheel


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _renamed_solver(
    tmp_path: Path, zoo: ElfZoo, more: dict[str, bytes] | None = None, *, requires: tuple[str, ...] = ()
) -> Path:
    """``solver`` with a renamed copy of libcudss (torchvision's naming), plus ``more`` members."""
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": zoo.ext_renamed.read_bytes(),
        "solver.libs/libcudss.8f0e2a1b.so.1": zoo.renamed_copy.read_bytes(),
        **(more or {}),
    }
    (tmp_path / "in").mkdir()
    return make_wheel(tmp_path / "in", "solver", "1.0", files, tag=SOLVER_TAG, requires=requires)


def _sabotaging_patchelf(tmp_path: Path) -> Path:
    """The real patchelf, then one wrong edit of its own: the RPATH no longer reaches the provider."""
    script = tmp_path / "patchelf-then-break"
    script.write_text(
        f'#!/bin/sh\nset -e\n"{find_patchelf()}" "$@"\n'
        'for last in "$@"; do :; done\n'
        f'"{find_patchelf()}" --force-rpath --set-rpath \'$ORIGIN/nowhere\' "$last"\n'
    )
    script.chmod(0o755)
    return script


def test_an_error_repair_introduces_stops_it_and_nothing_is_written(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    before = _sha256(fat)
    out = tmp_path / "out"
    catalog = read_catalog(own_catalog)
    options = RepairOptions(cuda_major=13)
    with pytest.raises(RepairRefusedError) as refused:
        repair_wheel(fat, out, catalog, options=options, patchelf=str(_sabotaging_patchelf(tmp_path)))
    problems = refused.value.problems
    assert [(p.path, p.soname, p.kind) for p in problems] == [
        ("solver/_solver.so", "libcudss.so.1", "unresolved-needed")
    ]
    assert "nowhere" in problems[0].message
    assert refused.value.exit_code == 1
    assert "--allow-broken" in str(refused.value)
    assert list(out.iterdir()) == []  # no output, no staging folder left behind
    assert _sha256(fat) == before

    # --allow-broken writes it, and says so.
    outcome = repair_wheel(
        fat,
        out,
        catalog,
        options=options,
        patchelf=str(_sabotaging_patchelf(tmp_path)),
        allow_broken=True,
    )
    assert outcome.output is not None
    assert outcome.output.is_file()
    assert outcome.check.allowed_broken
    assert not outcome.ok
    assert [p.soname for p in outcome.check.introduced] == ["libcudss.so.1"]
    assert [p.name for p in out.iterdir()] == [outcome.output.name]


def test_the_report_carries_the_check_of_the_output(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "renamed")
    out = tmp_path / "out"
    argv = ["repair", str(fat), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--json", "--isolated-environment"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    assert result["check"]["ran"] is True
    assert result["check"]["errors"] == 0
    assert result["check"]["introduced"] == []
    # A dry run writes into its scratch folder, checks that and throws it away: it answers as the
    # real run does, and writes nothing.
    dry = tmp_path / "dry"
    dry_argv = ["repair", str(fat), "-w", str(dry), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*dry_argv, "--isolated-environment", "--dry-run", "--json"]) == 0
    (planned,) = json.loads(capsys.readouterr().out)["wheels"]
    assert planned["check"]["ran"] is True
    assert planned["check"]["errors"] == 0
    assert planned["output"] is None
    assert planned["size_after"] == result["size_after"]
    assert not dry.exists()


def test_a_wheel_that_still_fails_check_is_not_written(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error in the input that repair cannot fix (a bundled driver the package's code names, kept
    without --force) still fails the output: a wheel slimwheel writes passes its own check, or is not
    written. The refusal says which errors repair caused and which the input had; --allow-broken
    writes it and exits 1."""
    driver = {
        "solver.libs/libcuda.so.1": elf_zoo.libcudss.read_bytes(),
        "solver/_driver.py": b'DRIVER = "libcuda.so.1"\n',
    }
    wheel = _renamed_solver(tmp_path, elf_zoo, driver)
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment"]) == 1
    err = capsys.readouterr().err
    assert "not written (--allow-broken writes it anyway)" in err
    assert "solver.libs/libcuda.so.1: bundles the NVIDIA driver library" in err
    assert "[the input had it too]" in err
    assert list(out.iterdir()) == []

    assert main([*argv, "--isolated-environment", "--allow-broken", "--json"]) == 1
    captured = capsys.readouterr()
    (result,) = json.loads(captured.out)["wheels"]
    assert result["check"]["allowed_broken"] is True
    assert [p["kind"] for p in result["check"]["inherited"]] == ["bundled-driver"]
    assert "written with --allow-broken although it fails check" in captured.err
    assert [p.name for p in out.glob("*.whl")] == [Path(result["output"]).name]


@pytest.mark.parametrize("where", ["existing-file", "under-a-file", "dev-null", "proc"])
def test_an_unusable_output_folder_is_one_line_and_exit_2(
    where: str, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    out = {
        "existing-file": a_file,
        "under-a-file": a_file / "sub",
        "dev-null": Path("/dev/null"),
        "proc": Path("/proc/nope"),
    }[where]
    code = main(["repair", str(fat), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"slimwheel repair: error: {out}: ")
    assert "Traceback" not in err
    assert a_file.read_text() == "not a folder"


def test_a_provider_the_wheel_requires_is_learned_on_demand(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The catalog knows nothing (no shipped snapshot, no user copy); the wheel requires
    nvidia-cudss-cu13==1.0.0.35. repair learns it (and what it requires) from the index, keeps it in
    the user's catalog, and takes the pin as the linked version and CUDA 13 as the major."""
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    user_catalog = tmp_path / "user-catalog.json.gz"
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(user_catalog))
    monkeypatch.setenv("SLIMWHEEL_CACHE_DIR", str(tmp_path / "cache"))
    server = index_server(providers.directory)
    wheel = _renamed_solver(tmp_path, elf_zoo, requires=("nvidia-cudss-cu13==1.0.0.35",))
    out = tmp_path / "out"
    index = ["--index-url", server.simple_url, "--isolated"]
    argv = ["repair", str(wheel), "-w", str(out), "--json", "--isolated-environment", *index]
    assert main(argv) == 0, capsys.readouterr().err
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    plan = result["plan"]
    assert plan["cuda_major"] == 13
    assert plan["drop"] == ["solver.libs/libcudss.8f0e2a1b.so.1"]
    assert plan["kept_requirements"] == ["nvidia-cudss-cu13==1.0.0.35"]
    assert result["check"]["errors"] == 0
    learned = read_catalog(user_catalog)
    assert "nvidia-cudss-cu13" in learned.distributions
    assert "nvidia-cublas" in learned.distributions  # followed from cuDSS's own requirements

    # Offline, with nothing learned, it is said; the copy stays, and check cannot pass the pin.
    user_catalog.unlink()
    assert main([*argv, "--offline"]) == 1
    err = capsys.readouterr().err
    assert "nvidia-cudss-cu13: not in the catalog (--offline: not learned)" in err
    assert "not written" in err
    assert not user_catalog.exists()


def test_files_with_the_same_problem_share_a_line(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pylibcudf's 43 extensions of one folder each need libcudf.so from another wheel: the refusal
    says so once, naming three files and counting the rest; -v names them all."""
    unresolvable = unresolvable_library(elf_zoo, tmp_path)
    names = [f"solver/misc/lib{letter}.so.1" for letter in "abcde"]
    wheel = _renamed_solver(tmp_path, elf_zoo, dict.fromkeys(names, unresolvable))
    argv = ["repair", str(wheel), "-w", str(tmp_path / "out"), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "[the input had it too]" in line]
    assert len(lines) == 1
    assert f"5 files ({', '.join(names[:3])} and 2 more (-v names them)): " in lines[0]
    assert main([*argv, "--isolated-environment", "-v"]) == 1
    (verbose,) = [line for line in capsys.readouterr().err.splitlines() if "[the input had it too]" in line]
    assert f"5 files ({', '.join(names)}): " in verbose


def test_sonames_the_same_files_miss_for_the_same_reason_share_a_line(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cuequivariance-ops-torch's extension needs six of torch's libraries, each not found for the
    same reason: one line names the six; a soname that other files miss has its own line."""
    unresolvable = tmp_path / "libtwice.so.1"
    unresolvable.write_bytes(unresolvable_library(elf_zoo, tmp_path))
    patchelf(unresolvable, "--add-needed", "libelsewhere.so.2")
    members = {
        "solver/misc/liba.so.1": unresolvable.read_bytes(),
        "solver/misc/libb.so.1": unresolvable.read_bytes(),
    }
    other = tmp_path / "libother.so.1"
    other.write_bytes(unresolvable_library(elf_zoo, tmp_path))
    patchelf(other, "--replace-needed", "libnowhere.so.3", "libthird.so.4")
    members["solver/misc/libc.so.1"] = other.read_bytes()
    wheel = _renamed_solver(tmp_path, elf_zoo, members)
    argv = ["repair", str(wheel), "-w", str(tmp_path / "out"), "--catalog", str(own_catalog), "--cuda", "13"]
    # The three files miss what they miss for one cause, which one line says; -v says each file's.
    assert main([*argv, "--isolated-environment"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "[the input had it too]" in line]
    assert len(lines) == 1, lines
    assert (
        "3 files (solver/misc/liba.so.1, solver/misc/libb.so.1, solver/misc/libc.so.1): needs "
        "libelsewhere.so.2, libnowhere.so.3, libthird.so.4 between them: not found (they are not among the "
        "host libraries manylinux_2_17 lets a wheel count on: a requirement must install them, or "
        "`auditwheel repair` bundle them into the wheel) [the input had it too]"
    ) in lines[0]
    assert main([*argv, "--isolated-environment", "-v"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "[the input had it too]" in line]
    assert len(lines) == 2, lines
    both, one = sorted(lines, key=lambda line: "libelsewhere" not in line)
    assert (
        "2 files (solver/misc/liba.so.1, solver/misc/libb.so.1): needs libelsewhere.so.2, libnowhere.so.3: "
        in both
    )
    # The words for the sonames agree with how many the line names.
    assert "they are not among the host libraries" in both
    assert "a requirement must install them, or `auditwheel repair` bundle them into the wheel" in both
    assert "it is not one of the host libraries" in one
    assert "solver/misc/libc.so.1: needs libthird.so.4: not found" in one
