"""`show --confirm`: vendored copies matched by name are confirmed by the official file's GNU build-id."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.store import write_catalog
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import build_provider_wheels
from tests.support.wheels import make_wheel

TAG = "cp311-cp311-linux_x86_64"


def _vendoring_wheel(directory: Path, copy: bytes, consumer: bytes) -> Path:
    return make_wheel(
        directory,
        "solver",
        "1.0",
        {"solver/_solver.so": consumer, "solver.libs/libcudss-1a2b3c4d.so.1.0.0": copy},
        tag=TAG,
    )


def _vendored(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["show", "--json", "--isolated", *args]) == 0
    document = json.loads(capsys.readouterr().out)
    (copy,) = document["wheels"][0]["vendored"]
    identified: dict[str, Any] = copy["identified"]
    return identified


def test_confirm_by_build_id(
    elf_zoo: ElfZoo,
    tmp_path: Path,
    index_server: Callable[..., IndexServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(tmp_path / "user.json.gz"))
    monkeypatch.setenv("SLIMWHEEL_CACHE_DIR", str(tmp_path / "cache"))
    providers = build_provider_wheels(elf_zoo, tmp_path / "index")
    server = index_server(providers.directory)
    catalog = tmp_path / "catalog.json.gz"
    write_catalog(learn_from_wheels(providers.all), catalog)
    # patchelf rewrote the copy's SONAME: its sha256 differs from NVIDIA's, its build-id does not.
    copy = elf_zoo.auditwheel_copy.read_bytes()
    wheel = _vendoring_wheel(tmp_path, copy, elf_zoo.ext_auditwheel.read_bytes())
    common = [str(wheel), "--catalog", str(catalog), "--index-url", server.simple_url]

    by_name = _vendored(capsys, *common)
    assert (by_name["confidence"], by_name["evidence"]) == ("by-name", "file version")

    confirmed = _vendored(capsys, *common, "--confirm")
    assert (confirmed["confidence"], confirmed["evidence"]) == ("exact", "build-id")
    assert confirmed["distribution"].startswith("nvidia-cudss-cu1")
    assert confirmed["version"] == "1.0.0.35"
    file_requests = sum(n for path, n in server.requests.items() if path.startswith("/files/"))
    assert file_requests > 0

    again = _vendored(capsys, *common, "--confirm")
    assert again == confirmed
    assert sum(n for path, n in server.requests.items() if path.startswith("/files/")) == file_requests

    # A copy whose build-id matches no official file stays unconfirmed: the check can fail.
    build_id = read_elf_file(elf_zoo.auditwheel_copy).build_id
    assert build_id
    other = copy.replace(bytes.fromhex(build_id), bytes(len(build_id) // 2))
    assert other != copy
    (tmp_path / "other").mkdir()
    stranger = _vendoring_wheel(tmp_path / "other", other, elf_zoo.ext_auditwheel.read_bytes())
    unconfirmed = _vendored(capsys, str(stranger), *common[1:], "--confirm")
    assert unconfirmed["confidence"] == "by-name"
