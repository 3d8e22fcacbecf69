"""Against the real package index, resolved the way pip resolves it. Downloads are cached and reused."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from slimwheel.cli import main
from slimwheel.index import Cache, IndexClient, resolve_index_settings

pytestmark = pytest.mark.network

CUDSS_WHEEL_VERSION = "1.0.0.35"


def _newest_by_pip(project: str) -> Version:
    """pip itself is the oracle: what it would install is what plan must report."""
    process = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", project, "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
    )
    match = re.search(rf"^{re.escape(project)} \(([^)]+)\)", process.stdout, re.MULTILINE)
    assert match, process.stdout
    return Version(match[1])


@pytest.fixture(scope="module")
def real_cudss_wheel() -> Path:
    settings = resolve_index_settings()
    with IndexClient(settings, cache=Cache.default()) as client:
        page = client.project("nvidia-cudss-cu13")
        (file,) = [
            f
            for f in page.files
            if f.filename == f"nvidia_cudss_cu13-{CUDSS_WHEEL_VERSION}-py3-none-manylinux_2_17_x86_64.whl"
        ]
        return client.download(file)


def test_plan_cudss_reports_the_newest_wheel_for_both_majors(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "cudss", "--cuda", "12,13", "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0
    targets = {(t["cuda"], t["platform"]): t for t in document["targets"]}
    for major in (12, 13):
        newest = _newest_by_pip(f"nvidia-cudss-cu{major}")
        for platform in ("manylinux_x86_64", "manylinux_aarch64", "win_amd64"):
            target = targets[(major, platform)]
            assert target["missing"] == [], target
            library = target["libraries"][0]
            assert library["distribution"] == f"nvidia-cudss-cu{major}"
            assert Version(library["version"]) == newest
            if platform == "win_amd64":
                assert (library["folder"], library["file"]) == (
                    f"nvidia/cu{major}/bin",
                    f"cudss64_{newest.major}.dll",
                )
            else:
                assert (library["folder"], library["file"]) == (
                    f"nvidia/cu{major}/lib",
                    f"libcudss.so.{newest.major}",
                )
                assert target["manylinux"].startswith("manylinux_2_")


def test_show_real_cudss_wheel(real_cudss_wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = real_cudss_wheel.stat().st_mtime_ns
    code = main(["show", str(real_cudss_wheel), "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0
    (wheel,) = document["wheels"]
    files = {elf["path"]: elf for elf in wheel["elf_files"]}
    cudss = files["nvidia/cu13/lib/libcudss.so.1"]
    assert cudss["soname"] == "libcudss.so.1"
    needs = {need["soname"]: need for need in cudss["needed"]}
    for soname, distribution in (
        ("libcublas.so.13", "nvidia-cublas"),
        ("libnvrtc.so.13", "nvidia-cuda-nvrtc"),
    ):
        assert needs[soname]["resolution"] == "nvidia-wheel"
        assert distribution in needs[soname]["provided_by"]
    assert wheel["vendored"] == []  # NVIDIA's own wheel: its libraries are the originals
    assert real_cudss_wheel.stat().st_mtime_ns == before
