"""An index in S3, through moto's server on 127.0.0.1: pip and uv resolve through the JSON pages (served
with their content type at the project's own key) and the .metadata files."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from slimwheel.cli.main import main
from tests.publish.support import (
    Served,
    aws_environment,
    check_consistency,
    http_fetch,
    moto_server,
    pip_install,
    requested_paths,
    s3_client,
    uv_install,
    wheels,
)
from tests.support.venvs import make_venv

pytest.importorskip("boto3")


@pytest.fixture
def moto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    with moto_server(tmp_path) as served:
        for key, value in aws_environment(served.url).items():
            monkeypatch.setenv(key, value)
        s3_client(served.url, "wheels")
        yield served


@pytest.mark.install
def test_pip_and_uv_install_through_json_pages(tmp_path: Path, moto: Served) -> None:
    built = wheels(tmp_path / "dist", "demo-pkg", ["1.0", "2.0", "3.0"])
    nvidia = wheels(tmp_path / "dist", "nvidia-demo-cu13", ["13.0.1"], tag="py3-none-manylinux_2_17_x86_64")
    dest = "s3://wheels/cuda"
    assert main(["publish", *map(str, built + nvidia), "--to", dest, "--offline", "--no-verify"]) == 0
    index = f"{moto.url}/wheels/cuda/simple/"
    assert check_consistency(http_fetch, index) == {
        "demo-pkg": {path.name for path in built},
        "nvidia-demo-cu13": {nvidia[0].name},
    }
    start = len(requested_paths(moto))
    for installer in (pip_install, uv_install):
        python = make_venv(tmp_path / f"venv-{installer.__name__}")
        done = installer(python, index, "demo-pkg")
        assert done.returncode == 0, done.stderr
        version = subprocess.run(
            [str(python), "-c", "import demo_pkg; print(demo_pkg.VERSION)"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert version.stdout.strip() == "3.0"
    paths = [path for path, _ in requested_paths(moto)[start:]]
    assert "/wheels/cuda/simple/demo-pkg/" in paths
    assert "/wheels/cuda/files/demo-pkg/demo_pkg-3.0-py3-none-any.whl.metadata" in paths
    assert "/wheels/cuda/files/demo-pkg/demo_pkg-3.0-py3-none-any.whl" in paths
    for old in ("1.0", "2.0"):
        assert f"/wheels/cuda/files/demo-pkg/demo_pkg-{old}-py3-none-any.whl" not in paths
    assert not any(path.endswith("index.html") for path in paths)  # the JSON pages were used


def test_s3_immutable_yank_promote(tmp_path: Path, moto: Served) -> None:
    (built,) = wheels(tmp_path / "dist", "demo-pkg", ["1.0"])
    dest = "s3://wheels/idx"
    assert (
        main(["publish", str(built), "--to", dest, "--channel", "nightly", "--offline", "--no-verify"]) == 0
    )
    tampered = tmp_path / "other" / built.name
    tampered.parent.mkdir()
    tampered.write_bytes(built.read_bytes() + b"\0")
    assert (
        main(["publish", str(tampered), "--to", dest, "--channel", "nightly", "--offline", "--no-verify"])
        == 1
    )
    assert main(["promote", "demo-pkg==1.0", "--from", "nightly", "--to", "stable", "--root", dest]) == 0
    assert main(["yank", "demo-pkg==1.0", "--root", dest, "--channel", "nightly"]) == 0
    for channel in ("nightly", "stable"):
        status, _, body = http_fetch(f"{moto.url}/wheels/idx/{channel}/files/demo-pkg/{built.name}")
        assert status == 200
        assert body == built.read_bytes()
    listed = check_consistency(http_fetch, f"{moto.url}/wheels/idx/stable/simple/")
    assert listed == {"demo-pkg": {built.name}}
    _, _, page = http_fetch(f"{moto.url}/wheels/idx/nightly/simple/demo-pkg/")
    assert b'"yanked": true' in page
