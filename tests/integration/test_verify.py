"""`slimwheel verify`: a real pip install from a 127.0.0.1 index into a fresh venv, an import in a fresh
process, and a verdict on where each NVIDIA library was mapped from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.cli import main
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import ProviderWheels
from tests.support.solver import fat_solver_wheel, repair_to_json
from tests.support.wheels import make_wheel


def _verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_repaired_wheel_loads_from_its_provider_also_at_the_lowest_versions(
    elf_zoo: ElfZoo,
    providers: ProviderWheels,
    own_catalog: Path,
    index_server: Callable[..., IndexServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo)
    result = repair_to_json(
        capsys, fat, tmp_path / "wheelhouse", own_catalog, "--cuda", "13", "--isolated-environment"
    )
    repaired = Path(result["output"])
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
    (problem,) = document["problems"]
    assert problem["kind"] == "import"
    assert problem["message"].endswith(
        "libcublas.so.13: cannot open shared object file: No such file or directory"
    )

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


def test_import_failure_is_reported(
    own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "links"
    empty.mkdir()
    wheel = make_wheel(
        tmp_path,
        "broken",
        "1.0",
        {"broken/__init__.py": b"raise RuntimeError('boom here')\n"},
        tag="py3-none-any",
    )
    code, document = _verify(capsys, str(wheel), "--find-links", str(empty), "--catalog", str(own_catalog))
    assert code == 1
    (problem,) = document["problems"]
    assert problem["kind"] == "import"
    assert problem["message"].endswith("RuntimeError: boom here")


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
