"""`catalog update` and `plan` against a real HTTP index on 127.0.0.1 serving fake NVIDIA wheels."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.catalog.store import read_catalog
from slimwheel.cli import main
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import build_provider_wheels
from tests.support.wheels import make_wheel

StartServer = Callable[..., IndexServer]


@pytest.fixture
def providers_dir(elf_zoo: ElfZoo, tmp_path: Path) -> Path:
    return build_provider_wheels(elf_zoo, tmp_path / "index").directory


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["plan", "cudss", "--cuda", "12,13", "--isolated", "--json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def _targets(document: dict[str, Any]) -> dict[tuple[int, str], dict[str, Any]]:
    return {(t["cuda"], t["platform"]): t for t in document["targets"]}


@pytest.mark.parametrize(("json_api", "ranges"), [(True, True), (False, True), (True, False)])
def test_catalog_update_learns_from_the_index(
    index_server: StartServer,
    providers_dir: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    json_api: bool,
    ranges: bool,
) -> None:
    server = index_server(providers_dir, json_api=json_api, ranges=ranges)
    output = isolated_env / "learned.json.gz"
    assert main(["catalog", "update", "--index-url", server.simple_url, "--isolated", "-o", str(output)]) == 0
    assert "learned" in capsys.readouterr().out
    catalog = read_catalog(output)
    assert set(catalog.distributions) == {
        "nvidia-cudss-cu12",
        "nvidia-cudss-cu13",
        "nvidia-cublas",
        "nvidia-cuda-nvrtc",
        "cuda-toolkit",
    }
    toolkit = catalog.release("cuda-toolkit", "13.0.2")
    assert toolkit is not None
    assert toolkit.cuda_major == 13
    assert "nvidia-cublas==13.1.0.3.*; extra == 'cublas'" in toolkit.requires_dist
    cu13 = catalog.release("nvidia-cudss-cu13", "1.0.0.35")
    assert cu13 is not None
    assert cu13.cuda_major == 13
    assert "nvidia-cublas==13.*" in cu13.requires_dist
    # nvidia-cublas carries no suffix: its CUDA major comes from cuda-toolkit's pin (or its folder).
    cublas = catalog.release("nvidia-cublas", "13.1.0.3")
    assert cublas is not None
    assert cublas.cuda_major == 13
    (library,) = cu13.wheels[0].libraries
    assert (library.path, library.soname, library.soname_confirmed) == (
        "nvidia/cu13/lib/libcudss.so.1",
        "libcudss.so.1",
        False,
    )
    if ranges:
        # Lazy reads: the wheel bodies were not downloaded whole.
        biggest = max(providers_dir.glob("*.whl"), key=lambda p: p.stat().st_size)
        assert server.bytes_sent[f"/files/{biggest.name}"] < biggest.stat().st_size / 20


def test_plan_live_against_the_index(
    index_server: StartServer,
    providers_dir: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = index_server(providers_dir)
    code, document, _ = _plan(capsys, "--index-url", server.simple_url)
    assert code == 0
    assert document["schema"] == "slimwheel.plan/1"
    targets = _targets(document)
    linux13 = targets[(13, "manylinux_x86_64")]
    main_library = linux13["libraries"][0]
    assert (main_library["distribution"], main_library["version"]) == ("nvidia-cudss-cu13", "1.0.0.35")
    assert (main_library["folder"], main_library["file"]) == ("nvidia/cu13/lib", "libcudss.so.1")
    assert linux13["manylinux"] == "manylinux_2_27_x86_64"  # from the cuBLAS wheel cuDSS requires
    assert targets[(12, "win_amd64")]["libraries"][0]["file"] == "cudss64_1.dll"
    assert targets[(13, "win_amd64")]["missing"] == ["cudss"]

    saved = isolated_env / "plan.json"
    saved.write_text(json.dumps(document))
    code, _, err = _plan(capsys, "--index-url", server.simple_url, "--strict")
    assert code == 1  # CUDA 13 on Windows has no wheel
    assert "no NVIDIA wheel for CUDA 13 win_amd64" in err
    code, _, err = _plan(capsys, "--index-url", server.simple_url, "--expect", str(saved))
    assert code == 0, err

    # NVIDIA closes the gap: the saved answer no longer holds, and CI notices.
    make_wheel(
        providers_dir,
        "nvidia-cudss-cu13",
        "1.0.0.35",
        {"nvidia/cu13/bin/cudss64_1.dll": b"MZ"},
        tag="py3-none-win_amd64",
    )
    code, document, err = _plan(capsys, "--index-url", server.simple_url, "--refresh", "--expect", str(saved))
    assert code == 1
    assert "CUDA 13 win_amd64: missing was ['cudss'], now []" in err
    assert _targets(document)[(13, "win_amd64")]["libraries"][0]["folder"] == "nvidia/cu13/bin"


def test_plan_offline_uses_the_catalog_only(
    providers_dir: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    output = isolated_env / "learned.json.gz"
    update = [
        "catalog",
        "update",
        "--find-links",
        str(providers_dir),
        "--no-index",
        "--isolated",
        "-o",
        str(output),
    ]
    assert main(update) == 0
    capsys.readouterr()
    shutil.rmtree(providers_dir)
    unreachable = f"http://127.0.0.1:{closed_port}/simple/"
    code, document, _ = _plan(capsys, "--offline", "--catalog", str(output), "--index-url", unreachable)
    assert code == 0
    assert _targets(document)[(12, "manylinux_aarch64")]["libraries"][0]["file"] == "libcudss.so.1"


def test_unreachable_index_is_one_line_and_exit_2(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    code = main(["plan", "cudss", "--isolated", "--index-url", f"http://127.0.0.1:{closed_port}/simple/"])
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert "connection refused" in lines[0]
