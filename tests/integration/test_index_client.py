"""The index client against a real simple index on 127.0.0.1 (tests/support/index_server.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import random
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from slimwheel.errors import IndexUnavailableError
from slimwheel.index import (
    Cache,
    DistributionFile,
    HashMismatchError,
    IndexClient,
    IndexSettings,
    ProjectNotFoundError,
    RangeFile,
)
from slimwheel.wheel import Wheel
from tests.support.index_server import IndexServer
from tests.support.wheels import make_wheel

StartServer = Callable[..., IndexServer]
BIG = 30 * 1024 * 1024


@pytest.fixture
def dists(tmp_path: Path) -> Path:
    """Two projects: demo (two versions, one yanked, one with Requires-Python) and other."""
    directory = tmp_path / "dists"
    directory.mkdir()
    make_wheel(directory, "demo", "1.0", {"demo/__init__.py": b"v = 1\n"}, requires=["numpy>=1.20"])
    make_wheel(directory, "demo", "2.0", {"demo/__init__.py": b"v = 2\n"})
    (directory / "demo-2.0.tar.gz").write_bytes(b"not really a tarball")
    make_wheel(directory, "other_pkg", "0.1", {"other_pkg/__init__.py": b""})
    return directory


@pytest.fixture(scope="module")
def big_dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 30 MB wheel whose payload is one stored member of random bytes."""
    directory = tmp_path_factory.mktemp("big")
    payload = random.Random(1234).randbytes(BIG)
    make_wheel(
        directory,
        "bigpkg",
        "1.0",
        {"bigpkg/__init__.py": b"", "bigpkg/payload.bin": payload},
        compression=zipfile.ZIP_STORED,
        requires=["nvidia-cublas-cu12"],
    )
    return directory


def configure(server: IndexServer, **options: object) -> IndexSettings:
    return dataclasses.replace(IndexSettings(server.simple_url), **options)  # type: ignore[arg-type]


def served_types(server: IndexServer, path: str) -> set[str | None]:
    return {record.content_type for record in server.log if record.path == path}


# -- project pages ---------------------------------------------------------------------------------


def test_json_and_html_pages_give_the_same_project(dists: Path, index_server: StartServer) -> None:
    json_server = index_server(dists)
    html_server = index_server(dists, json_api=False)
    for server in (json_server, html_server):
        server.requires_python["demo-1.0-py3-none-any.whl"] = ">=3.8, <4"
        server.yanked["demo-2.0.tar.gz"] = "bad <sdist>"
    with IndexClient(IndexSettings(json_server.simple_url)) as client:
        from_json = client.project("Demo")
    with IndexClient(IndexSettings(html_server.simple_url)) as client:
        from_html = client.project("DEMO")
    assert served_types(json_server, "/simple/demo/") == {"application/vnd.pypi.simple.v1+json"}
    assert served_types(html_server, "/simple/demo/") == {"application/vnd.pypi.simple.v1+html"}

    assert [file.filename for file in from_json.files] == [
        "demo-1.0-py3-none-any.whl",
        "demo-2.0-py3-none-any.whl",
        "demo-2.0.tar.gz",
    ]
    assert from_json.versions == from_html.versions == ("1.0", "2.0")
    assert from_json.name == from_html.name == "demo"
    wheel_1 = from_json.files[0]
    assert wheel_1.requires_python == ">=3.8, <4"
    assert wheel_1.sha256 == hashlib.sha256((dists / wheel_1.filename).read_bytes()).hexdigest()
    assert wheel_1.size == (dists / wheel_1.filename).stat().st_size
    assert wheel_1.url == json_server.file_url(wheel_1.filename)
    assert from_json.files[2].yanked == "bad <sdist>"

    def comparable(file: DistributionFile, server: IndexServer) -> DistributionFile:
        # HTML has no sizes or upload times (PEP 700 is JSON-only); the rest must agree.
        return dataclasses.replace(
            file, size=None, upload_time=None, url=file.url.replace(server.url, ""), index_url=""
        )

    assert [comparable(f, json_server) for f in from_json.files] == [
        comparable(f, html_server) for f in from_html.files
    ]


def test_pip_accept_header_preference(dists: Path, index_server: StartServer) -> None:
    server = index_server(dists)
    with IndexClient(IndexSettings(server.simple_url)) as client:
        client.project("demo")
    with httpx.Client() as plain:
        # Without our Accept header the same page comes back as HTML.
        assert plain.get(server.simple_url + "demo/").headers["Content-Type"] == "text/html"


def test_several_indexes_merge_and_missing_projects(
    dists: Path, tmp_path: Path, index_server: StartServer
) -> None:
    first = index_server(dists)
    only_other = tmp_path / "only-other"
    only_other.mkdir()
    make_wheel(only_other, "other_pkg", "0.2", {"other_pkg/__init__.py": b""})
    (only_other / "other_pkg-0.1-py3-none-any.whl").write_bytes(
        (dists / "other_pkg-0.1-py3-none-any.whl").read_bytes()
    )
    second = index_server(only_other)
    settings = IndexSettings(second.simple_url, (first.simple_url,))
    with IndexClient(settings) as client:
        demo = client.project("demo")  # a 404 on the first index is "not there", not an error
        assert demo.sources == (first.simple_url + "demo/",)
        other = client.project("other-pkg")
        assert other.sources == (second.simple_url + "other-pkg/", first.simple_url + "other-pkg/")
        assert other.versions == ("0.1", "0.2")
        # The same file name on both: the first source wins.
        assert {file.filename: file.index_url for file in other.files} == {
            "other_pkg-0.1-py3-none-any.whl": second.simple_url,
            "other_pkg-0.2-py3-none-any.whl": second.simple_url,
        }
        with pytest.raises(ProjectNotFoundError) as caught:
            client.project("absent")
    message = str(caught.value)
    assert "\n" not in message
    assert "'absent'" in message
    assert first.simple_url + "absent/" in message
    assert second.simple_url + "absent/" in message
    assert caught.value.searched == (second.simple_url + "absent/", first.simple_url + "absent/")


def test_projects_concurrently(dists: Path, index_server: StartServer) -> None:
    server = index_server(dists)
    with IndexClient(IndexSettings(server.simple_url), max_workers=4) as client:
        pages = client.projects(["demo", "other-pkg", "demo"])
        assert set(pages) == {"demo", "other-pkg"}
        assert pages["other-pkg"].versions == ("0.1",)
        assert client.stats.requests == 2
        with pytest.raises(ProjectNotFoundError):
            client.projects(["demo", "absent"])


def test_file_index_and_find_links(dists: Path, tmp_path: Path, index_server: StartServer) -> None:
    # A file: index laid out like a static mirror: <index>/<project>/index.html, links relative.
    simple = tmp_path / "mirror" / "simple" / "demo"
    simple.mkdir(parents=True)
    html_server = index_server(dists, json_api=False)
    page = httpx.get(html_server.simple_url + "demo/").text.replace("../../files/", "../../../dists/")
    (simple / "index.html").write_text(page)
    links_dir = tmp_path / "links"
    links_dir.mkdir()
    make_wheel(links_dir, "demo", "3.0", {"demo/__init__.py": b""})
    make_wheel(links_dir, "unrelated", "1.0", {"unrelated/__init__.py": b""})
    (links_dir / "README.txt").write_text("not a distribution")

    settings = IndexSettings(
        (tmp_path / "mirror" / "simple").as_uri(),
        find_links=(str(links_dir), html_server.simple_url + "demo/", str(tmp_path / "missing")),
    )
    with IndexClient(settings) as client:
        page_files = client.project("demo")
        assert page_files.versions == ("1.0", "2.0", "3.0")
        by_name = {file.filename: file for file in page_files.files}
        assert by_name["demo-1.0-py3-none-any.whl"].local_path == dists / "demo-1.0-py3-none-any.whl"
        assert by_name["demo-1.0-py3-none-any.whl"].index_url == (tmp_path / "mirror" / "simple").as_uri()
        found = by_name["demo-3.0-py3-none-any.whl"]
        assert found.local_path == links_dir / "demo-3.0-py3-none-any.whl"
        assert found.hashes == ()
        assert found.size == found.local_path.stat().st_size
        assert page_files.sources == (
            (tmp_path / "mirror" / "simple").as_uri() + "/demo/",
            str(links_dir),
            html_server.simple_url + "demo/",
        )
        # Local files open and download in place, with no request.
        before = client.stats.snapshot()
        with client.open_wheel(found) as wheel:
            assert wheel.version == "3.0"
        assert client.download(found) == found.local_path
        assert client.stats.snapshot() == before
        # find-links alone, under --no-index.
    with IndexClient(IndexSettings(None, find_links=(links_dir.as_uri(),))) as client:
        assert client.project("unrelated").versions == ("1.0",)


def test_page_cache_and_conditional_requests(dists: Path, tmp_path: Path, index_server: StartServer) -> None:
    server = index_server(dists)
    cache = Cache(tmp_path / "cache", page_ttl=600)
    with IndexClient(IndexSettings(server.simple_url), cache=cache) as client:
        first = client.project("demo")
        assert server.request_count("/simple/") == 1
        assert client.project("demo") == first  # fresh: no request at all
        assert server.request_count("/simple/") == 1
        assert client.project("demo", refresh=True) == first  # revalidated with the ETag
        assert [record.status for record in server.log if record.path == "/simple/demo/"] == [200, 304]
    stale = Cache(tmp_path / "cache", page_ttl=0)
    with IndexClient(IndexSettings(server.simple_url), cache=stale) as client:
        make_wheel(dists, "demo", "3.0", {"demo/__init__.py": b""})
        assert client.project("demo").versions == ("1.0", "2.0", "3.0")  # changed: 200 with the new page
    assert [record.status for record in server.log if record.path == "/simple/demo/"] == [200, 304, 200]


def test_retries_then_gives_up_with_one_line(dists: Path, index_server: StartServer) -> None:
    server = index_server(dists)
    server.failures["/simple/demo/"] = 1
    with IndexClient(IndexSettings(server.simple_url), retries=1) as client:
        assert client.project("demo").versions == ("1.0", "2.0")
        server.failures["/simple/demo/"] = 5
        with pytest.raises(IndexUnavailableError) as caught:
            client.project("demo")
    assert "HTTP 503" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unreachable_index_is_one_clear_line(closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/simple/"
    with IndexClient(IndexSettings(url)) as client, pytest.raises(IndexUnavailableError) as caught:
        client.project("demo")
    message = str(caught.value)
    assert message.startswith(f"{url}demo/: cannot reach the index: connection refused")
    assert "--index-url" in message
    assert "\n" not in message


# -- lazy wheels -----------------------------------------------------------------------------------


def test_lazy_wheel_reads_little(big_dists: Path, index_server: StartServer) -> None:
    server = index_server(big_dists)
    size = (big_dists / "bigpkg-1.0-py3-none-any.whl").stat().st_size
    with IndexClient(IndexSettings(server.simple_url)) as client:
        file = client.project("bigpkg").files[0]
        server.reset_counters()
        before = client.stats.snapshot()
        with client.open_wheel(file) as wheel:
            names = [member.name for member in wheel.members]
            assert "bigpkg/payload.bin" in names
            assert b"Requires-Dist: nvidia-cublas-cu12" in wheel.metadata_bytes()
            assert len(wheel.record()) == 5
        used = client.stats.snapshot() - before
    assert server.request_count("/files/") == used.requests <= 4
    assert server.bytes_count("/files/") < size * 0.001
    assert used.bytes_received == server.bytes_count("/files/")


def test_range_file_with_zipfile(big_dists: Path, index_server: StartServer) -> None:
    server = index_server(big_dists)
    url = server.file_url("bigpkg-1.0-py3-none-any.whl")
    size = (big_dists / "bigpkg-1.0-py3-none-any.whl").stat().st_size
    with httpx.Client() as http, RangeFile(url, http) as remote:
        archive = zipfile.ZipFile(remote)
        assert "bigpkg/payload.bin" in archive.namelist()
        assert archive.read("bigpkg-1.0.dist-info/METADATA").startswith(b"Metadata-Version")
        assert archive.read("bigpkg-1.0.dist-info/RECORD").count(b"\n") == 5
        assert remote.size == size
        assert remote.stats.requests <= 4
        assert remote.stats.bytes_received < size * 0.001
    assert server.request_count() <= 4


def test_range_file_random_reads_match(big_dists: Path, index_server: StartServer) -> None:
    server = index_server(big_dists)
    path = big_dists / "bigpkg-1.0-py3-none-any.whl"
    data = path.read_bytes()
    rng = random.Random(7)
    # A small memory bound forces eviction; every read must still return the right bytes.
    with httpx.Client() as http, RangeFile(server.file_url(path.name), http, max_memory=256 * 1024) as remote:
        assert remote.seek(0, io.SEEK_END) == len(data)
        for _ in range(200):
            start = rng.randrange(len(data))
            length = rng.choice([1, 100, 5000, 70_000, 300_000])
            remote.seek(start)
            assert remote.read(length) == data[start : start + length]
        remote.seek(len(data) - 10)
        assert remote.read() == data[-10:]
        assert remote.read(5) == b""
        remote.seek(5, io.SEEK_SET)
        remote.seek(-2, io.SEEK_CUR)
        assert remote.tell() == 3
        buffer = bytearray(4)
        assert remote.readinto(buffer) == 4
        assert bytes(buffer) == data[3:7]
    # A sequential scan grows its read-ahead instead of asking 8 KiB at a time.
    with httpx.Client() as http, RangeFile(server.file_url(path.name), http) as remote:
        scanned = bytearray()
        while chunk := remote.read(64 * 1024):
            scanned += chunk
        assert scanned == data
        assert remote.stats.requests < 15


@pytest.mark.parametrize(
    ("modules", "compression"), [(3000, zipfile.ZIP_STORED), (25_000, zipfile.ZIP_DEFLATED)]
)
def test_many_members_with_dist_info_last(
    tmp_path: Path, index_server: StartServer, modules: int, compression: int
) -> None:
    """A central directory bigger than the first request, with .dist-info just before it (as wheel
    builders write it): the directory request also brings METADATA and RECORD. The reader asks for
    a directory of 1.7 MB (25,000 members) a MiB at a time: still one request for all of it."""
    files = {f"aaa/module_{number:05d}.py": b"x = 1\n" for number in range(modules)}
    files["aaa/payload.bin"] = random.Random(3).randbytes(4 * 1024 * 1024)
    path = make_wheel(tmp_path, "zzz", "1.0", files, compression=compression)
    server = index_server(tmp_path)
    with IndexClient(IndexSettings(server.simple_url)) as client:
        file = client.project("zzz").files[0]
        server.reset_counters()
        with client.open_wheel(file) as wheel:
            assert len(wheel.members) == modules + 4
            assert wheel.metadata_bytes().startswith(b"Metadata-Version")
            assert len(wheel.record()) == modules + 4
    with zipfile.ZipFile(path) as archive:
        directory_size = path.stat().st_size - archive.start_dir
    assert server.request_count("/files/") <= 2
    assert server.bytes_count("/files/") < 3 * directory_size


def test_lazy_wheel_without_range_support(big_dists: Path, index_server: StartServer) -> None:
    server = index_server(big_dists, ranges=False)
    path = big_dists / "bigpkg-1.0-py3-none-any.whl"
    with IndexClient(IndexSettings(server.simple_url)) as client:
        file = client.project("bigpkg").files[0]
        server.reset_counters()
        with client.open_wheel(file) as wheel:
            assert b"Name: bigpkg" in wheel.metadata_bytes()
            assert wheel.read_member("bigpkg/__init__.py") == b""
    assert server.request_count("/files/") == 1
    assert server.bytes_count("/files/") == path.stat().st_size
    with httpx.Client() as http, RangeFile(server.file_url(path.name), http) as remote:
        assert not remote.ranges_supported
        remote.seek(-4, io.SEEK_END)
        assert remote.read() == path.read_bytes()[-4:]


def test_range_file_edge_cases(tmp_path: Path, index_server: StartServer, closed_port: int) -> None:
    (tmp_path / "empty-1.0-py3-none-any.whl").write_bytes(b"")
    (tmp_path / "tiny-1.0-py3-none-any.whl").write_bytes(b"0123456789")
    server = index_server(tmp_path)
    with httpx.Client() as http:
        with RangeFile(server.file_url("empty-1.0-py3-none-any.whl"), http) as empty:  # answered 416
            assert empty.size == 0
            assert empty.read() == b""
        with RangeFile(server.file_url("tiny-1.0-py3-none-any.whl"), http) as tiny:  # smaller than the tail
            assert tiny.size == 10
            tiny.seek(3)
            assert tiny.read(4) == b"3456"
            assert tiny.stats.requests == 1
        with pytest.raises(IndexUnavailableError, match="index lists 11"):
            RangeFile(server.file_url("tiny-1.0-py3-none-any.whl"), http, expected_size=11)
        with pytest.raises(IndexUnavailableError, match="HTTP 404"):
            RangeFile(server.file_url("absent-1.0-py3-none-any.whl"), http)
        with pytest.raises(IndexUnavailableError, match="connection refused"):
            RangeFile(f"http://127.0.0.1:{closed_port}/files/x.whl", http, retries=0)


def test_fetch_metadata(dists: Path, index_server: StartServer) -> None:
    expected = zipfile.ZipFile(dists / "demo-1.0-py3-none-any.whl").read("demo-1.0.dist-info/METADATA")
    with_metadata = index_server(dists, core_metadata=True)
    with IndexClient(IndexSettings(with_metadata.simple_url)) as client:
        file = client.project("demo").files[0]
        assert file.core_metadata
        with_metadata.reset_counters()
        assert client.fetch_metadata(file) == expected
        assert [record.path for record in with_metadata.log] == ["/files/demo-1.0-py3-none-any.whl.metadata"]
        with pytest.raises(HashMismatchError):
            client.fetch_metadata(dataclasses.replace(file, core_metadata_hashes=(("sha256", "0" * 64),)))
    without = index_server(dists)
    with IndexClient(IndexSettings(without.simple_url)) as client:
        file = client.project("demo").files[0]
        assert not file.core_metadata
        assert client.fetch_metadata(file) == expected  # from the lazy wheel
        assert b"Requires-Dist: numpy>=1.20" in expected


# -- downloads -------------------------------------------------------------------------------------


def test_download_caches_and_checks(dists: Path, tmp_path: Path, index_server: StartServer) -> None:
    server = index_server(dists)
    cache = Cache(tmp_path / "cache")
    progress: list[tuple[int, int | None]] = []
    with IndexClient(IndexSettings(server.simple_url), cache=cache) as client:
        file = client.project("demo").files[0]
        server.reset_counters()
        path = client.download(file, progress=lambda done, total: progress.append((done, total)))
        assert path.read_bytes() == (dists / file.filename).read_bytes()
        assert path.is_relative_to(cache.root)
        assert progress[-1] == (file.size, file.size)
        assert server.request_count() == 1
        # Cached: no request, also when a copy is asked for elsewhere, or the wheel opened.
        assert client.download(file) == path
        copy = client.download(file, tmp_path / "out")
        assert copy == tmp_path / "out" / file.filename
        assert copy.read_bytes() == path.read_bytes()
        with client.open_wheel(file) as wheel:
            assert wheel.version == "1.0"
        assert server.request_count() == 1

        # The server now sends other bytes than the index lists: nothing is kept.
        other = client.project("demo").files[1]
        server.tampered[other.filename] = b"x" * (other.size or 0)
        with pytest.raises(HashMismatchError) as caught:
            client.download(other)
        assert "sha256 mismatch" in str(caught.value)
        assert "\n" not in str(caught.value)
        server.tampered[other.filename] = b"short"
        with pytest.raises(IndexUnavailableError, match="index lists"):
            client.download(other)
    leftovers = [p.name for p in cache.root.rglob("*") if p.is_file() and p.name != path.name]
    assert [name for name in leftovers if not name.endswith(".json")] == []


def test_download_without_cache_into_directory(
    dists: Path, tmp_path: Path, index_server: StartServer
) -> None:
    server = index_server(dists)
    with IndexClient(IndexSettings(server.simple_url)) as client:
        file = client.project("demo").files[0]
        target = client.download(file, tmp_path / "out")
        assert target.read_bytes() == (dists / file.filename).read_bytes()
        requests = server.request_count("/files/")
        assert client.download(file, tmp_path / "out") == target  # present with the right hash
        assert server.request_count("/files/") == requests


# -- pip itself against the test server ------------------------------------------------------------


@pytest.mark.parametrize("json_api", [True, False], ids=["json", "html-only"])
def test_real_pip_downloads_from_the_test_server(
    dists: Path, tmp_path: Path, index_server: StartServer, json_api: bool
) -> None:
    server = index_server(dists, json_api=json_api)
    server.requires_python["demo-2.0-py3-none-any.whl"] = ">=3.8"
    out = tmp_path / "pip-out"
    # --isolated: this machine's pip configuration adds other indexes and find-links.
    command = [sys.executable, "-m", "pip", "download", "--isolated", "--no-deps", "--no-cache-dir"]
    command += ["--disable-pip-version-check", "--only-binary", ":all:", "--index-url", server.simple_url]
    result = subprocess.run(
        [*command, "-d", str(out), "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={key: value for key, value in os.environ.items() if not key.startswith("PIP_")},
    )
    assert result.returncode == 0, result.stderr
    assert [p.name for p in out.iterdir()] == ["demo-2.0-py3-none-any.whl"]
    wanted = "application/vnd.pypi.simple.v1+json" if json_api else "application/vnd.pypi.simple.v1+html"
    assert served_types(server, "/simple/demo/") == {wanted}
    with Wheel.open(out / "demo-2.0-py3-none-any.whl") as wheel:
        assert wheel.version == "2.0"
