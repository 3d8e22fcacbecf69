"""Concurrent publishers into one project, and publishers killed with SIGKILL at random moments: the
index stays consistent (every page lists only files that exist with the listed hashes) and nothing is
lost; a re-run completes an interrupted publish."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.publish.support import (
    aws_environment,
    check_consistency,
    folder_fetch,
    http_fetch,
    moto_server,
    s3_client,
    wheels,
)

REPO = Path(__file__).resolve().parents[2]

# One wheel per plan/apply, so each publisher commits once per wheel: the most contention.
_PUBLISHER = """
import sys
from pathlib import Path
from slimwheel.publish import apply_publish, open_store, plan_publish, read_wheels
store = open_store(sys.argv[1])
for path in sys.argv[2:]:
    wheels = read_wheels([Path(path)])
    apply_publish(store, plan_publish(store, wheels), wheels)
"""


def _start(dest: str, paths: list[Path], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _PUBLISHER, dest, *map(str, paths)],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stderr=subprocess.PIPE,
    )


def _crowd(tmp_path: Path, publishers: int, each: int) -> list[list[Path]]:
    return [
        wheels(tmp_path / f"dist{p}", "crowd", [f"{p}.{i}" for i in range(each)]) for p in range(publishers)
    ]


def _run_all(dest: str, groups: list[list[Path]], env: dict[str, str] | None = None) -> None:
    processes = [_start(dest, group, env) for group in groups]
    for process in processes:
        _, err = process.communicate(timeout=900)
        assert process.returncode == 0, err.decode()


@pytest.mark.parametrize(
    "each", [pytest.param(4, id="8x4"), pytest.param(50, id="8x50", marks=pytest.mark.slow)]
)
def test_concurrent_publishers_into_one_folder_project(tmp_path: Path, each: int) -> None:
    groups = _crowd(tmp_path, 8, each)
    root = tmp_path / "index"
    _run_all(str(root), groups)
    listed = check_consistency(folder_fetch(root), (root / "simple").as_uri() + "/")
    assert listed == {"crowd": {path.name for group in groups for path in group}}
    assert len(listed["crowd"]) == 8 * each


@pytest.mark.parametrize(
    "each", [pytest.param(3, id="8x3"), pytest.param(50, id="8x50", marks=pytest.mark.slow)]
)
def test_concurrent_publishers_into_one_s3_project(tmp_path: Path, each: int) -> None:
    pytest.importorskip("boto3")
    groups = _crowd(tmp_path, 8, each)
    with moto_server(tmp_path) as served:
        env = aws_environment(served.url)
        s3_client(served.url, "wheels")
        _run_all("s3://wheels/crowd", groups, env)
        listed = check_consistency(http_fetch, f"{served.url}/wheels/crowd/simple/")
    assert listed == {"crowd": {path.name for group in groups for path in group}}


@pytest.mark.parametrize(
    "kills", [pytest.param(3, id="3"), pytest.param(20, id="20", marks=pytest.mark.slow)]
)
def test_kill_at_random_moments_leaves_a_consistent_index(tmp_path: Path, kills: int) -> None:
    rng = random.Random(kills)
    paths = wheels(tmp_path / "dist", "victim", [f"1.{i}" for i in range(12)])
    root = tmp_path / "index"
    fetch, url = folder_fetch(root), (root / "simple").as_uri() + "/"
    for _ in range(kills):
        process = _start(str(root), paths)
        time.sleep(rng.uniform(0.05, 1.2))
        process.send_signal(signal.SIGKILL)
        process.wait()
        listed = check_consistency(fetch, url)  # consistent after every kill
        assert listed.get("victim", set()) <= {path.name for path in paths}
    _run_all(str(root), [paths])  # a re-run completes it
    assert check_consistency(fetch, url) == {"victim": {path.name for path in paths}}
    assert not list((root / ".slimwheel" / "tmp").glob("*.tmp"))  # the killed runs' leftovers are gone
