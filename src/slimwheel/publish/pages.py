"""The pages of a static index: PEP 503 HTML and PEP 691 JSON (API 1.1: PEP 700's ``versions``, ``size``,
``upload-time``), with PEP 592 yanking and PEP 658/714 metadata files, rendered from one state.

The JSON project page *is* the project's state: it is read back (``parse_project_json``) and replaced
with a conditional write, and the HTML page is rendered from it.
"""

from __future__ import annotations

import html
import json
import urllib.parse
from dataclasses import dataclass, replace

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from slimwheel.index.simple import JSON_CONTENT_TYPE, version_of_filename
from slimwheel.publish.errors import ImmutableFileError, IndexStateError

__all__ = [
    "HTML_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "FileEntry",
    "ProjectState",
    "parse_project_json",
    "parse_root_json",
    "render_project_html",
    "render_project_json",
    "render_root_html",
    "render_root_json",
]

HTML_CONTENT_TYPE = "text/html; charset=utf-8"
API_VERSION = "1.1"


@dataclass(frozen=True)
class FileEntry:
    filename: str
    sha256: str
    size: int
    upload_time: str  # PEP 700: yyyy-mm-ddThh:mm:ss.ffffffZ
    requires_python: str | None
    metadata_sha256: str | None  # of the .metadata file beside it (PEP 658); None: there is none
    yanked: str | bool = False  # False, True, or the reason (PEP 592)

    @property
    def version(self) -> str:
        return version_of_filename(self.filename) or ""


@dataclass(frozen=True)
class ProjectState:
    name: str  # normalised (PEP 503)
    files: tuple[FileEntry, ...]  # sorted by file name

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(sorted({entry.version for entry in self.files}, key=_version_key))

    def entry(self, filename: str) -> FileEntry | None:
        return next((entry for entry in self.files if entry.filename == filename), None)

    def with_new_files(self, entries: tuple[FileEntry, ...]) -> ProjectState:
        """``entries`` added; a file already listed keeps its entry (its upload time, its yank), and the
        same name with other bytes is an ImmutableFileError: files never change."""
        new = []
        for entry in entries:
            listed = self.entry(entry.filename)
            if listed is None:
                new.append(entry)
            elif listed.sha256 != entry.sha256:
                raise ImmutableFileError(entry.filename, listed.sha256, entry.sha256)
        return self.with_entries(tuple(new)) if new else self

    def with_entries(self, entries: tuple[FileEntry, ...]) -> ProjectState:
        """This state with ``entries`` added or replacing those of the same name."""
        merged = {entry.filename: entry for entry in self.files}
        merged.update((entry.filename, entry) for entry in entries)
        return replace(self, files=tuple(merged[name] for name in sorted(merged)))


def _version_key(version: str) -> tuple[int, Version | None, str]:
    try:
        return (1, Version(version), version)
    except InvalidVersion:
        return (0, None, version)


def _file_url(state: ProjectState, entry: FileEntry) -> str:
    return f"../../files/{state.name}/{urllib.parse.quote(entry.filename)}"


def render_project_json(state: ProjectState) -> bytes:
    files = []
    for entry in state.files:
        item: dict[str, object] = {
            "filename": entry.filename,
            "url": _file_url(state, entry),
            "hashes": {"sha256": entry.sha256},
            "size": entry.size,
            "upload-time": entry.upload_time,
        }
        if entry.requires_python:
            item["requires-python"] = entry.requires_python
        if entry.metadata_sha256:
            item["core-metadata"] = {"sha256": entry.metadata_sha256}
            item["dist-info-metadata"] = {"sha256": entry.metadata_sha256}  # before PEP 714
        if entry.yanked is not False:
            item["yanked"] = entry.yanked
        files.append(item)
    document: dict[str, object] = {
        "meta": {"api-version": API_VERSION},
        "name": state.name,
        "versions": list(state.versions),
    }
    document["files"] = files
    return (json.dumps(document, indent=1) + "\n").encode()


def render_project_html(state: ProjectState) -> bytes:
    name = html.escape(state.name)
    lines = [
        "<!DOCTYPE html>",
        "<html>",
        f'<head><meta name="pypi:repository-version" content="{API_VERSION}"><title>Links for {name}</title>'
        "</head>",
        f"<body><h1>Links for {name}</h1>",
    ]
    for entry in state.files:
        attributes = [f'href="{html.escape(_file_url(state, entry))}#sha256={entry.sha256}"']
        if entry.requires_python:
            attributes.append(f'data-requires-python="{html.escape(entry.requires_python)}"')
        if entry.metadata_sha256:
            attributes.append(f'data-dist-info-metadata="sha256={entry.metadata_sha256}"')
            attributes.append(f'data-core-metadata="sha256={entry.metadata_sha256}"')
        if entry.yanked is not False:
            reason = "" if entry.yanked is True else str(entry.yanked)
            attributes.append(f'data-yanked="{html.escape(reason)}"')
        lines.append(f"<a {' '.join(attributes)}>{html.escape(entry.filename)}</a><br>")
    lines += ["</body>", "</html>", ""]
    return "\n".join(lines).encode()


def parse_project_json(data: bytes, where: str) -> ProjectState:
    """A project page this module wrote (or one in the same shape); IndexStateError otherwise."""
    try:
        document = json.loads(data)
        files = []
        for item in document["files"]:
            metadata = item.get("core-metadata", item.get("dist-info-metadata"))
            yanked = item.get("yanked", False)
            files.append(
                FileEntry(
                    filename=str(item["filename"]),
                    sha256=str(item["hashes"]["sha256"]).lower(),
                    size=int(item["size"]),
                    upload_time=str(item.get("upload-time") or ""),
                    requires_python=item.get("requires-python") or None,
                    metadata_sha256=str(metadata["sha256"]).lower() if isinstance(metadata, dict) else None,
                    yanked=yanked if isinstance(yanked, str) else bool(yanked),
                )
            )
        name = canonicalize_name(str(document["name"]))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise IndexStateError(
            f"{where}: not a project page slimwheel can read ({error})",
            hint="run `slimwheel reindex` to rebuild the pages from the files",
        ) from error
    return ProjectState(name, tuple(sorted(files, key=lambda entry: entry.filename)))


def render_root_json(projects: tuple[str, ...]) -> bytes:
    document = {"meta": {"api-version": API_VERSION}, "projects": [{"name": name} for name in projects]}
    return (json.dumps(document, indent=1) + "\n").encode()


def render_root_html(projects: tuple[str, ...]) -> bytes:
    anchors = [f'<a href="{html.escape(name)}/">{html.escape(name)}</a><br>' for name in projects]
    head = (
        f'<head><meta name="pypi:repository-version" content="{API_VERSION}">'
        "<title>Simple index</title></head>"
    )
    return "\n".join(
        ["<!DOCTYPE html>", "<html>", head, "<body>", *anchors, "</body>", "</html>", ""]
    ).encode()


def parse_root_json(data: bytes, where: str) -> tuple[str, ...]:
    try:
        document = json.loads(data)
        return tuple(sorted({canonicalize_name(str(item["name"])) for item in document["projects"]}))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise IndexStateError(
            f"{where}: not a root page slimwheel can read ({error})",
            hint="run `slimwheel reindex` to rebuild the pages from the files",
        ) from error
