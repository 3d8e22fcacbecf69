"""Real parts for the publish tests: moto's S3 server and ``python -m http.server`` on 127.0.0.1 (as
subprocesses, with their request logs), pip and uv installs, and an index consistency checker."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from slimwheel.index.simple import parse_page
from tests.support.wheels import make_wheel

__all__ = [
    "BIN",
    "Served",
    "check_consistency",
    "http_server",
    "moto_server",
    "pip_install",
    "requested_paths",
    "s3_client",
    "uv_install",
    "wheels",
]

BIN = Path(sys.executable).parent
_LOG_LINE = re.compile(r'"(GET|HEAD) (\S+) HTTP/[\d.]+" (\d+)')


@dataclass(frozen=True)
class Served:
    url: str  # http://127.0.0.1:PORT
    log: Path  # the server's request log (stderr)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(url: str) -> None:
    for _ in range(200):
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError(f"{url} did not start")


@contextmanager
def _serve(argv: list[str], url: str, log: Path, cwd: Path | None = None) -> Iterator[Served]:
    with log.open("w") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    try:
        _wait(url + "/")
        yield Served(url, log)
    finally:
        process.terminate()
        process.wait(timeout=10)


# moto's server, one request at a time. S3 applies a conditional write (If-Match, If-None-Match)
# atomically; moto checks the condition and then writes, and its stock server runs each request in
# its own thread, so two writers holding the same ETag can both pass the check and one update is lost
# (seen: 8 publishers x 50 wheels lost listings). Serving requests one by one makes moto's check-then-
# write as atomic as S3's, which is what the publishers' conditional writes rely on.
_SERIAL_MOTO = """
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
run_simple(sys.argv[1], int(sys.argv[2]), DomainDispatcherApplication(create_backend_app), threaded=False,
           request_handler=MotoRequestHandler)
"""


@contextmanager
def moto_server(tmp: Path) -> Iterator[Served]:
    port = _free_port()
    argv = [sys.executable, "-c", _SERIAL_MOTO, "127.0.0.1", str(port)]
    with _serve(argv, f"http://127.0.0.1:{port}", tmp / "moto.log") as served:
        yield served


@contextmanager
def http_server(folder: Path, tmp: Path) -> Iterator[Served]:
    port = _free_port()
    argv = [sys.executable, "-m", "http.server", "-b", "127.0.0.1", "-d", str(folder), str(port)]
    with _serve(argv, f"http://127.0.0.1:{port}", tmp / "http.log") as served:
        yield served


def aws_environment(endpoint: str) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }


def s3_client(endpoint: str, bucket: str) -> object:
    """A public-read bucket (anonymous GETs, as an index bucket serves), made with boto3."""
    import boto3  # type: ignore[import-untyped]

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=bucket)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{bucket}/*",
            }
        ],
    }
    client.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    return client


def requested_paths(served: Served) -> list[tuple[str, int]]:
    return [
        (urllib.parse.unquote(found.group(2)), int(found.group(3)))
        for found in _LOG_LINE.finditer(served.log.read_text(errors="replace"))
    ]


def wheels(folder: Path, name: str, versions: list[str], *, tag: str = "py3-none-any") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    module = name.replace("-", "_")
    return [
        make_wheel(
            folder,
            name,
            version,
            {f"{module}/__init__.py": f"VERSION = {version!r}\n".encode()},
            tag=tag,
            metadata_extra=[("Requires-Python", ">=3.8")],
        )
        for version in versions
    ]


def _clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update({"PIP_CONFIG_FILE": os.devnull, "UV_NO_CONFIG": "1", **(extra or {})})
    return env


def pip_install(python: Path, index_url: str, *requirements: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pip", "--python", str(python), "--isolated", "--disable-pip-version-check"]
    argv += ["install", "--no-cache-dir", "--index-url", index_url, *requirements]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300, env=_clean_env())


def uv_install(python: Path, index_url: str, *requirements: str) -> subprocess.CompletedProcess[str]:
    argv = [
        str(BIN / "uv"),
        "pip",
        "install",
        "--python",
        str(python),
        "--no-cache",
        "--index-url",
        index_url,
    ]
    return subprocess.run(
        [*argv, *requirements], capture_output=True, text=True, check=False, timeout=300, env=_clean_env()
    )


def check_consistency(fetch: object, index_url: str) -> dict[str, set[str]]:
    """Read every page and every file the index lists (over ``fetch``: url -> (status, content type,
    body)) and fail unless each listed file exists with the listed sha256 and .metadata hash. Returns
    project -> listed file names (JSON page)."""
    get = fetch
    status, kind, body = get(index_url)  # type: ignore[operator]
    listed: dict[str, set[str]] = {}
    if status == 404:
        return listed
    assert status == 200, (index_url, status)
    names = (
        [p["name"] for p in json.loads(body)["projects"]]
        if "json" in kind
        else re.findall(r'href="([^"/]+)/"', body.decode())
    )
    for name in names:
        page_url = urllib.parse.urljoin(index_url, f"{name}/")
        seen: dict[str, set[str]] = {}
        for variant in ("json", "html"):
            url = page_url if variant == "json" else page_url + "index.html"
            status, kind, body = get(url)  # type: ignore[operator]
            assert status == 200, (url, status)
            parsed = parse_page(body, kind, url, index_url)
            seen[variant] = set()
            for file in parsed.files:
                status, _, data = get(file.url)  # type: ignore[operator]
                assert status == 200, (file.url, status)
                assert hashlib.sha256(data).hexdigest() == file.sha256, file.url
                if file.core_metadata:
                    status, _, metadata = get(file.metadata_url)  # type: ignore[operator]
                    assert status == 200, (file.metadata_url, status)
                    assert hashlib.sha256(metadata).hexdigest() == dict(file.core_metadata_hashes)["sha256"]
                seen[variant].add(file.filename)
        # The HTML page may trail the JSON page (a run killed between the two), never lead it.
        assert seen["html"] <= seen["json"], (name, seen["html"] - seen["json"])
        listed[name] = seen["json"]
    return listed


def folder_fetch(root: Path, json_name: str = "index.json") -> object:
    """fetch over file: URLs of a folder index, reading the JSON page as a static server cannot."""

    def fetch(url: str) -> tuple[int, str, bytes]:
        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
        if url.endswith("/"):
            path, kind = path / json_name, "application/vnd.pypi.simple.v1+json"
        else:
            kind = "text/html" if path.name == "index.html" else "application/octet-stream"
        if not path.is_file():
            return 404, "", b""
        return 200, kind, path.read_bytes()

    return fetch


def http_fetch(url: str) -> tuple[int, str, bytes]:
    answer = httpx.get(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"}, timeout=30)
    return answer.status_code, answer.headers.get("content-type", ""), answer.content
