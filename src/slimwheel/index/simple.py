"""The data of the simple repository API and its two encodings: PEP 503 HTML and PEP 691 JSON."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from slimwheel.errors import IndexUnavailableError

__all__ = [
    "JSON_CONTENT_TYPE",
    "DistributionFile",
    "FileFilter",
    "ParsedPage",
    "ProjectPage",
    "file_url_to_path",
    "merge_pages",
    "parse_html_page",
    "parse_json_page",
    "parse_page",
    "project_of_filename",
    "version_of_filename",
]

JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"
_JSON_TYPES = frozenset({JSON_CONTENT_TYPE, "application/vnd.pypi.simple.latest+json"})
_FRAGMENT_HASH = re.compile(r"(sha1|sha224|sha384|sha256|sha512|md5)=([0-9a-fA-F]+)")
_SUPPORTED_MAJOR = 1

FileFilter = Callable[[str], bool]
"""Which file names of a page to keep. Big projects list about 9,000 files; a caller that wants a few
of them (one requirement's wheels for one target) says so before a ``DistributionFile`` is made."""


@dataclass(frozen=True)
class DistributionFile:
    """One file of a project as an index lists it."""

    filename: str
    url: str
    hashes: tuple[tuple[str, str], ...] = ()
    size: int | None = None
    requires_python: str | None = None
    yanked: str | bool = False  # False, True, or the reason given
    core_metadata: bool = False  # PEP 658: ``<url>.metadata`` exists
    upload_time: str | None = None
    index_url: str = ""  # the index or find-links location that listed it
    core_metadata_hashes: tuple[tuple[str, str], ...] = ()

    @property
    def sha256(self) -> str | None:
        return dict(self.hashes).get("sha256")

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @property
    def is_yanked(self) -> bool:
        return self.yanked is not False

    @property
    def metadata_url(self) -> str:
        return f"{self.url}.metadata"

    @property
    def local_path(self) -> Path | None:
        """The file's path when its URL is a ``file:`` URL."""
        return file_url_to_path(self.url)

    @property
    def version(self) -> str | None:
        return version_of_filename(self.filename)


@dataclass(frozen=True)
class ProjectPage:
    """Everything the configured indexes know about one project."""

    name: str
    files: tuple[DistributionFile, ...]
    versions: tuple[str, ...]
    sources: tuple[str, ...]  # the URLs that answered
    # Entries a ``FileFilter`` left out unread. With a filter, ``files`` are only those it kept, and so
    # are ``versions`` where no page gave PEP 700's list.
    skipped: int = 0

    @property
    def wheels(self) -> tuple[DistributionFile, ...]:
        return tuple(file for file in self.files if file.is_wheel)

    def files_for(self, version: str) -> tuple[DistributionFile, ...]:
        wanted = _parse_version(version)
        return tuple(file for file in self.files if _parse_version(file.version) == wanted)


@dataclass(frozen=True)
class ParsedPage:
    """One source's answer, before merging."""

    files: tuple[DistributionFile, ...]
    versions: tuple[str, ...] | None  # PEP 700, when the page gave them
    skipped: int = 0  # entries ``keep`` left out


def parse_page(
    body: bytes, content_type: str, page_url: str, index_url: str, *, keep: FileFilter | None = None
) -> ParsedPage:
    """Parse a project page in whichever encoding its Content-Type names.

    ``keep``: only files whose name it accepts are made into ``DistributionFile`` objects.
    """
    media_type, _, parameters = content_type.partition(";")
    media_type = media_type.strip().lower()
    if media_type in _JSON_TYPES:
        return parse_json_page(body, page_url, index_url, keep=keep)
    if media_type.startswith("application/vnd.pypi.simple.v") and media_type.endswith("+json"):
        raise IndexUnavailableError(
            page_url, f"unsupported simple API {media_type}", hint="upgrade slimwheel or use another index"
        )
    charset = re.search(r"charset=\"?([\w.-]+)", parameters, re.IGNORECASE)
    encoding = charset.group(1) if charset else "utf-8"
    try:
        text = body.decode(encoding, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    return parse_html_page(text, page_url, index_url, keep=keep)


class _AnchorParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.anchors: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "base" and self.base is None:
            self.base = dict(attrs).get("href")
        elif tag == "a":
            self.anchors.append(dict(attrs))


def parse_html_page(
    text: str, page_url: str, index_url: str, *, keep: FileFilter | None = None
) -> ParsedPage:
    """PEP 503 (with PEP 592 yanking, PEP 658/714 metadata): one anchor per file."""
    parser = _AnchorParser()
    parser.feed(text)
    parser.close()
    base_url = urllib.parse.urljoin(page_url, parser.base) if parser.base else page_url
    files = []
    skipped = 0
    for anchor in parser.anchors:
        href = anchor.get("href")
        if not href:
            continue
        url, fragment = urllib.parse.urldefrag(urllib.parse.urljoin(base_url, href.strip()))
        filename = _filename_of_url(url)
        if not filename:
            continue
        if keep is not None and not keep(filename):
            skipped += 1
            continue
        hashes = _FRAGMENT_HASH.fullmatch(fragment)
        # PEP 714 renamed the attribute; servers may send either or both.
        attribute = "data-core-metadata" if "data-core-metadata" in anchor else "data-dist-info-metadata"
        has_metadata, metadata_hashes = _html_metadata(anchor.get(attribute), attribute in anchor)
        yanked: str | bool = False
        if "data-yanked" in anchor:
            yanked = anchor["data-yanked"] or True
        files.append(
            DistributionFile(
                filename=filename,
                url=url,
                hashes=((hashes.group(1), hashes.group(2).lower()),) if hashes else (),
                requires_python=anchor.get("data-requires-python") or None,
                yanked=yanked,
                core_metadata=has_metadata,
                index_url=index_url,
                core_metadata_hashes=metadata_hashes,
            )
        )
    return ParsedPage(tuple(files), None, skipped)


def _html_metadata(value: str | None, present: bool) -> tuple[bool, tuple[tuple[str, str], ...]]:
    if not present or (value or "").strip().lower() == "false":
        return False, ()
    found = _FRAGMENT_HASH.fullmatch((value or "").strip())
    return True, (((found.group(1), found.group(2).lower()),) if found else ())


def parse_json_page(
    body: bytes, page_url: str, index_url: str, *, keep: FileFilter | None = None
) -> ParsedPage:
    """PEP 691 (with PEP 700's sizes, upload times and versions, PEP 714's core-metadata)."""
    try:
        document = json.loads(body)
        version = str(document.get("meta", {}).get("api-version", "1.0"))
        if int(version.split(".", maxsplit=1)[0]) != _SUPPORTED_MAJOR:
            raise IndexUnavailableError(page_url, f"unsupported simple API version {version}")
        entries = document["files"]
        if keep is None:
            files = tuple(_json_file(entry, page_url, index_url) for entry in entries)
        else:
            # The URL join and the object per file cost more than the JSON decode: only for kept ones.
            files = tuple(
                _json_file(entry, page_url, index_url) for entry in entries if keep(str(entry["filename"]))
            )
        skipped = len(entries) - len(files)
        versions = document.get("versions")
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise IndexUnavailableError(page_url, f"malformed JSON project page ({error})") from error
    return ParsedPage(files, tuple(str(v) for v in versions) if isinstance(versions, list) else None, skipped)


def _json_file(entry: Mapping[str, Any], page_url: str, index_url: str) -> DistributionFile:
    metadata = entry.get("core-metadata", entry.get("dist-info-metadata", False))
    yanked = entry.get("yanked", False)
    size = entry.get("size")
    return DistributionFile(
        filename=str(entry["filename"]),
        url=urllib.parse.urldefrag(urllib.parse.urljoin(page_url, str(entry["url"])))[0],
        hashes=_hash_pairs(entry.get("hashes") or {}),
        size=int(size) if isinstance(size, int) else None,
        requires_python=entry.get("requires-python") or None,
        yanked=(yanked or True) if isinstance(yanked, str) else bool(yanked),
        core_metadata=bool(metadata),
        upload_time=entry.get("upload-time"),
        index_url=index_url,
        core_metadata_hashes=_hash_pairs(metadata) if isinstance(metadata, dict) else (),
    )


def _hash_pairs(hashes: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(name).lower(), str(value).lower()) for name, value in hashes.items()))


def merge_pages(name: str, pages: Iterable[tuple[str, ParsedPage]]) -> ProjectPage:
    """Merge pages from several sources; the first source to list a file name wins."""
    files: dict[str, DistributionFile] = {}
    versions: set[str] = set()
    sources = []
    skipped = 0
    for source, page in pages:
        sources.append(source)
        skipped += page.skipped
        for file in page.files:
            files.setdefault(file.filename, file)
        if page.versions is not None:
            versions.update(page.versions)
        else:
            versions.update(v for v in (version_of_filename(file.filename) for file in page.files) if v)
    return ProjectPage(
        name=name,
        files=tuple(files.values()),
        versions=tuple(sorted(versions, key=_version_key)),
        sources=tuple(sources),
        skipped=skipped,
    )


def _version_key(version: str) -> tuple[int, Version | None, str]:
    parsed = _parse_version(version)
    return (0, None, version) if parsed is None else (1, parsed, version)


def _parse_version(version: str | None) -> Version | None:
    try:
        return Version(version) if version else None
    except InvalidVersion:
        return None


def _split_filename(filename: str) -> tuple[NormalizedName, str] | None:
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return name, str(version)
        if filename.endswith((".tar.gz", ".zip")):
            sdist_name, sdist_version = parse_sdist_filename(filename)
            return sdist_name, str(sdist_version)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return None


def project_of_filename(filename: str) -> NormalizedName | None:
    split = _split_filename(filename)
    return canonicalize_name(split[0]) if split else None


def version_of_filename(filename: str) -> str | None:
    split = _split_filename(filename)
    return split[1] if split else None


def _filename_of_url(url: str) -> str:
    path = urllib.parse.urlsplit(url).path
    return urllib.parse.unquote(path.rsplit("/", 1)[-1])


def file_url_to_path(url: str) -> Path | None:
    """The local path of a ``file:`` URL (``file:///x`` or ``file://localhost/x``), else None."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(urllib.request.url2pathname(parts.path))
