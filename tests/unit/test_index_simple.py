"""Parsing PEP 503 HTML and PEP 691 JSON project pages, merging them, and the page/file cache."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from slimwheel.errors import IndexUnavailableError
from slimwheel.index.cache import Cache, CachedPage, atomic_writer, safe_filename
from slimwheel.index.simple import (
    DistributionFile,
    ParsedPage,
    file_url_to_path,
    merge_pages,
    parse_html_page,
    parse_page,
)

PAGE = "https://index.invalid/simple/demo/"
SHA = "ab" * 32

HTML = f"""<!DOCTYPE html><html><body>
<a href="../../files/demo-1.0-py3-none-any.whl#sha256={SHA.upper()}"
   data-requires-python="&gt;=3.8,&lt;4" data-core-metadata="sha256={SHA}">demo-1.0</a>
<a href="/abs/demo-2.0.tar.gz" data-yanked="broken build" data-dist-info-metadata="true">demo-2.0</a>
<a href="https://other.invalid/demo-2.0-py3-none-any.whl#md5=00ff" data-yanked>wheel</a>
<a href="demo%2B-3.0rc1-py3-none-any.whl" data-core-metadata="false">relative</a>
<a>no href</a>
</body></html>"""


def test_html_page() -> None:
    parsed = parse_html_page(HTML, PAGE, "https://index.invalid/simple/")
    assert parsed.versions is None
    first, second, third, fourth = parsed.files
    assert first == DistributionFile(
        filename="demo-1.0-py3-none-any.whl",
        url="https://index.invalid/files/demo-1.0-py3-none-any.whl",
        hashes=(("sha256", SHA),),
        requires_python=">=3.8,<4",
        core_metadata=True,
        index_url="https://index.invalid/simple/",
        core_metadata_hashes=(("sha256", SHA),),
    )
    assert first.sha256 == SHA
    assert first.is_wheel
    assert not first.is_yanked
    assert first.metadata_url == first.url + ".metadata"
    assert second.url == "https://index.invalid/abs/demo-2.0.tar.gz"
    assert second.yanked == "broken build"
    assert second.core_metadata
    assert second.core_metadata_hashes == ()
    assert not second.is_wheel
    assert third.yanked is True
    assert third.hashes == (("md5", "00ff"),)
    assert fourth.filename == "demo+-3.0rc1-py3-none-any.whl"
    assert fourth.url == PAGE + "demo%2B-3.0rc1-py3-none-any.whl"
    assert not fourth.core_metadata


def test_html_base_tag_and_charset() -> None:
    body = '<html><head><base href="https://mirror.invalid/pkgs/"></head><a href="démo-1.0.tar.gz">x</a>'
    parsed = parse_page(body.encode("latin-1"), "text/html; charset=ISO-8859-1", PAGE, "")
    assert parsed.files[0].url == "https://mirror.invalid/pkgs/démo-1.0.tar.gz"
    assert parsed.files[0].filename == "démo-1.0.tar.gz"


def test_json_page() -> None:
    document = {
        "meta": {"api-version": "1.1"},
        "name": "demo",
        "versions": ["1.0", "2.0", "3.0"],
        "files": [
            {
                "filename": "demo-1.0-py3-none-any.whl",
                "url": "../../files/demo-1.0-py3-none-any.whl",
                "hashes": {"sha256": SHA.upper()},
                "requires-python": ">=3.8,<4",
                "core-metadata": {"sha256": SHA},
                "size": 123,
                "upload-time": "2020-01-01T00:00:00Z",
            },
            {
                "filename": "demo-2.0.tar.gz",
                "url": "/abs/demo-2.0.tar.gz",
                "hashes": {},
                "yanked": "broken build",
                "dist-info-metadata": True,
            },
            {"filename": "demo-2.0-py3-none-any.whl", "url": "x.whl", "hashes": {}, "yanked": True},
        ],
    }
    parsed = parse_page(json.dumps(document).encode(), "application/vnd.pypi.simple.v1+json", PAGE, "idx")
    assert parsed.versions == ("1.0", "2.0", "3.0")
    first, second, third = parsed.files
    assert first.hashes == (("sha256", SHA),)
    assert first.size == 123
    assert first.upload_time == "2020-01-01T00:00:00Z"
    assert first.core_metadata_hashes == (("sha256", SHA),)
    assert first.requires_python == ">=3.8,<4"
    assert first.url == "https://index.invalid/files/demo-1.0-py3-none-any.whl"
    assert second.yanked == "broken build"
    assert second.core_metadata
    assert third.yanked is True
    assert third.url == PAGE + "x.whl"


@pytest.mark.parametrize(
    ("body", "content_type", "words"),
    [
        (
            b'{"meta": {"api-version": "2.0"}, "files": []}',
            "application/vnd.pypi.simple.v1+json",
            "version 2.0",
        ),
        (b'{"meta": {}}', "application/vnd.pypi.simple.v1+json", "malformed"),
        (b"not json", "application/vnd.pypi.simple.v1+json", "malformed"),
        (b"{}", "application/vnd.pypi.simple.v2+json", "unsupported simple API"),
    ],
)
def test_unusable_json_pages(body: bytes, content_type: str, words: str) -> None:
    with pytest.raises(IndexUnavailableError, match=words) as caught:
        parse_page(body, content_type, PAGE, "")
    assert "\n" not in str(caught.value)


def test_merge_first_source_wins_and_versions() -> None:
    a = DistributionFile("demo-1.0-py3-none-any.whl", "https://a.invalid/x", index_url="a")
    a_copy = DistributionFile("demo-1.0-py3-none-any.whl", "https://b.invalid/x", index_url="b")
    b = DistributionFile("demo-10.0-py3-none-any.whl", "https://b.invalid/y", index_url="b")
    page = merge_pages(
        "demo",
        [("a", ParsedPage((a,), ("1.0", "0.9"))), ("b", ParsedPage((a_copy, b), None))],
    )
    assert page.files == (a, b)
    assert page.versions == ("0.9", "1.0", "10.0")
    assert page.sources == ("a", "b")
    assert page.wheels == (a, b)
    assert page.files_for("10") == (b,)


def test_file_urls() -> None:
    assert file_url_to_path("file:///opt/x%20y/a.whl") == Path("/opt/x y/a.whl")
    assert file_url_to_path("file://localhost/opt/a.whl") == Path("/opt/a.whl")
    assert file_url_to_path("file://remote-host/opt/a.whl") is None
    assert file_url_to_path("https://index.invalid/a.whl") is None


def test_cache_location_from_environment(tmp_path: Path) -> None:
    assert Cache.default({"SLIMWHEEL_CACHE_DIR": str(tmp_path / "c")}).root == tmp_path / "c"
    assert Cache.default({"XDG_CACHE_HOME": str(tmp_path / "x")}).root == tmp_path / "x" / "slimwheel"
    assert Cache.default({"HOME": str(tmp_path)}).root == tmp_path / ".cache" / "slimwheel"


def test_cache_pages_round_trip(tmp_path: Path) -> None:
    cache = Cache(tmp_path, page_ttl=60)
    assert cache.load_page("https://index.invalid/simple/demo/") is None
    page = CachedPage(
        "https://index.invalid/simple/demo/", "text/html", b"\x00\xffbody", '"tag"', "Mon", time.time(), "b"
    )
    cache.store_page(page)
    assert cache.load_page(page.url) == page
    assert page.is_fresh(cache.page_ttl)
    assert not page.is_fresh(0)
    assert page.validators() == {"If-None-Match": '"tag"', "If-Modified-Since": "Mon"}
    # A damaged entry is a miss, not an error.
    next((tmp_path / "pages").rglob("*.json")).write_text("{")
    assert cache.load_page(page.url) is None


def test_cache_file_paths(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    by_hash = cache.file_path("a-1.0-py3-none-any.whl", sha256=SHA.upper(), url="u")
    assert by_hash == tmp_path / "files" / "ab" / SHA / "a-1.0-py3-none-any.whl"
    by_url = cache.file_path("a.whl", sha256=None, url="https://index.invalid/a.whl")
    assert by_url.parent.parent.parent.name == "by-url"
    assert cache.cached_file("a.whl", sha256=None, url="https://index.invalid/a.whl") is None
    with pytest.raises(ValueError, match="unsafe"):
        safe_filename("..")
    assert safe_filename("../../evil.whl") == "evil.whl"


def test_atomic_writer_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "d" / "out.bin"

    def fail_halfway() -> None:
        with atomic_writer(target) as handle:
            handle.write(b"half")
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        fail_halfway()
    assert list(target.parent.iterdir()) == []
    with atomic_writer(target) as handle:
        handle.write(b"whole")
    assert target.read_bytes() == b"whole"
    assert list(target.parent.iterdir()) == [target]
