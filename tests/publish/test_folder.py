"""A folder index served by ``python -m http.server``: pip and uv resolve through the HTML pages and the
.metadata files; immutability, yank, promote, reindex and the dependency-confusion guard."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from slimwheel.cli.main import main
from tests.publish.support import (
    check_consistency,
    folder_fetch,
    http_server,
    pip_install,
    requested_paths,
    uv_install,
    wheels,
)
from tests.support.index_server import IndexServer
from tests.support.venvs import make_venv

pytestmark = pytest.mark.install


def _publish(*args: str) -> int:
    return main(["publish", *args, "--offline", "--no-verify"])


def _version(python: Path) -> str:
    import subprocess

    return subprocess.run(
        [str(python), "-c", "import demo_pkg; print(demo_pkg.VERSION)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _files_of(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".slimwheel" not in p.parts
    }


def test_pip_and_uv_install_through_metadata_files(tmp_path: Path) -> None:
    built = wheels(tmp_path / "dist", "demo-pkg", ["1.0", "2.0", "3.0"])
    root = tmp_path / "index"
    assert _publish(*map(str, built), "--to", str(root)) == 0
    assert check_consistency(folder_fetch(root), (root / "simple").as_uri() + "/") == {
        "demo-pkg": {path.name for path in built}
    }
    with http_server(root, tmp_path) as served:
        for installer in (pip_install, uv_install):
            python = make_venv(tmp_path / f"venv-{installer.__name__}")
            done = installer(python, f"{served.url}/simple/", "demo-pkg")
            assert done.returncode == 0, done.stderr
            assert _version(python) == "3.0"
        paths = [path for path, _ in requested_paths(served)]
    # A static server answers the project URL with index.html: both resolve from it and the .metadata
    # files, and only the chosen version's wheel body is fetched.
    assert "/simple/demo-pkg/" in paths
    assert "/files/demo-pkg/demo_pkg-3.0-py3-none-any.whl" in paths
    for old in ("1.0", "2.0"):
        assert f"/files/demo-pkg/demo_pkg-{old}-py3-none-any.whl" not in paths
    assert "/files/demo-pkg/demo_pkg-3.0-py3-none-any.whl.metadata" in paths or any(
        p.endswith(".metadata") for p in paths
    )


def test_same_name_other_bytes_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    (first,) = wheels(tmp_path / "a", "demo-pkg", ["1.0"])
    root = tmp_path / "index"
    assert _publish(str(first), "--to", str(root)) == 0
    before = _files_of(root)
    assert _publish(str(first), "--to", str(root)) == 0  # the same bytes: nothing to do
    assert _files_of(root) == before
    other = tmp_path / "b"
    other.mkdir()
    changed = shutil.copy(first, other / first.name)
    Path(changed).write_bytes(Path(changed).read_bytes() + b"\0")
    (rebuilt,) = [other / first.name]
    assert _publish(str(rebuilt), "--to", str(root)) == 1
    assert _files_of(root) == before


def test_yanked_version_is_skipped_unless_pinned(tmp_path: Path) -> None:
    built = wheels(tmp_path / "dist", "demo-pkg", ["1.0", "2.0"])
    root = tmp_path / "index"
    assert _publish(*map(str, built), "--to", str(root)) == 0
    assert main(["yank", "demo-pkg==2.0", "--reason", "broken build", "--root", str(root)]) == 0
    assert 'data-yanked="broken build"' in (root / "simple/demo-pkg/index.html").read_text()
    with http_server(root, tmp_path) as served:
        python = make_venv(tmp_path / "venv")
        assert pip_install(python, f"{served.url}/simple/", "demo-pkg").returncode == 0
        assert _version(python) == "1.0"
        pinned = pip_install(python, f"{served.url}/simple/", "demo-pkg==2.0")
        assert pinned.returncode == 0, pinned.stderr
        assert _version(python) == "2.0"


def test_promote_copies_byte_identical(tmp_path: Path) -> None:
    (built,) = wheels(tmp_path / "dist", "demo-pkg", ["1.0"])
    root = tmp_path / "index"
    assert _publish(str(built), "--to", str(root), "--channel", "nightly") == 0
    assert main(["promote", "demo-pkg==1.0", "--from", "nightly", "--to", "test", "--root", str(root)]) == 0
    name = f"files/demo-pkg/{built.name}"
    assert (root / "nightly" / name).read_bytes() == (root / "test" / name).read_bytes() == built.read_bytes()
    assert check_consistency(folder_fetch(root), (root / "test/simple").as_uri() + "/") == {
        "demo-pkg": {built.name}
    }
    assert main(["promote", "demo-pkg==1.0", "--from", "nightly", "--to", "test", "--root", str(root)]) == 0


def test_reindex_repairs_what_something_else_wrote(tmp_path: Path) -> None:
    built = wheels(tmp_path / "dist", "demo-pkg", ["1.0", "2.0"])
    root = tmp_path / "index"
    assert _publish(str(built[0]), "--to", str(root)) == 0
    # Something else copies a wheel in (no .metadata, unlisted) and removes one that is listed.
    shutil.copy(built[1], root / "files/demo-pkg" / built[1].name)
    (root / "files/demo-pkg" / built[0].name).unlink()
    assert main(["reindex", "--root", str(root), "--dry-run"]) == 0
    assert main(["reindex", "--root", str(root)]) == 0
    assert check_consistency(folder_fetch(root), (root / "simple").as_uri() + "/") == {
        "demo-pkg": {built[1].name}
    }


def test_public_name_is_refused_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index_server: object
) -> None:
    public = tmp_path / "public"
    wheels(public, "demo-pkg", ["0.1"])
    server: IndexServer = index_server(public)  # type: ignore[operator]
    # "The public index" found as pip finds it: here PIP_INDEX_URL points at a local server.
    monkeypatch.setenv("PIP_INDEX_URL", server.simple_url)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    (built,) = wheels(tmp_path / "dist", "demo-pkg", ["1.0"])
    root = tmp_path / "index"
    publish = ["publish", str(built), "--to", str(root), "--no-verify"]
    assert main(publish) == 1
    assert not (root / "simple").exists()
    assert main([*publish, "--allow-public-name", "demo-pkg"]) == 0
    (private,) = wheels(tmp_path / "dist", "only-here", ["1.0"])
    assert main(["publish", str(private), "--to", str(root), "--no-verify"]) == 0


def test_a_wheel_that_does_not_import_is_not_published(tmp_path: Path) -> None:
    """verify runs before anything is written (the wheel installed from the staged index into a fresh
    venv and imported): a wheel whose import fails is refused and the index stays as it was."""
    from tests.support.wheels import make_wheel

    root = tmp_path / "index"
    good = wheels(tmp_path / "dist", "demo-pkg", ["1.0"])
    assert main(["publish", *map(str, good), "--to", str(root), "--offline"]) == 0
    before = _files_of(root)
    broken = make_wheel(
        tmp_path / "dist",
        "demo-pkg",
        "2.0",
        {"demo_pkg/__init__.py": b"raise ImportError('this build is broken')\n"},
        metadata_extra=[("Requires-Python", ">=3.8")],
    )
    assert main(["publish", str(broken), "--to", str(root), "--offline"]) == 1
    assert _files_of(root) == before
    assert check_consistency(folder_fetch(root), (root / "simple").as_uri() + "/") == {
        "demo-pkg": {good[0].name}
    }
