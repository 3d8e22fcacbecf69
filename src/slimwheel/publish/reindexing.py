"""``reindex``: rebuild a channel's pages from the files in the store, when something other than
slimwheel wrote to it, and say what disagreed. It reads the whole channel (a listing and every file's
hash): use it to repair, not to publish.

A listed file is kept with its upload time and yank; a stored file nobody listed is listed; a listed
file that is gone is dropped; a wheel without its ``.metadata`` gets one. Pages are replaced by
conditional writes against the versions read, so a publish racing a reindex is never lost: the reindex
fails and is run again.
"""

from __future__ import annotations

import email.parser
import hashlib
import io
from dataclasses import dataclass

from slimwheel.index.simple import project_of_filename
from slimwheel.publish.layout import check_channel
from slimwheel.publish.pages import (
    HTML_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    FileEntry,
    ProjectState,
    render_project_html,
    render_project_json,
    render_root_html,
    render_root_json,
)
from slimwheel.publish.publishing import METADATA_CONTENT_TYPE, layout_for, upload_time
from slimwheel.publish.state import read_project, read_root
from slimwheel.publish.store import Store

__all__ = ["Disagreement", "ReindexPlan", "apply_reindex", "plan_reindex"]


@dataclass(frozen=True)
class Disagreement:
    # "unlisted" (stored, not listed), "missing" (listed, not stored), "hash" (listed with other bytes),
    # "metadata" (no .metadata, or other bytes), "html" (the HTML page differs from the JSON page),
    # "root" (the root pages do not list exactly the projects with files), "foreign" (not a wheel of
    # this project where it lies: left alone)
    kind: str
    project: str
    filename: str | None
    message: str


@dataclass(frozen=True)
class _Rebuilt:
    state: ProjectState
    etag: str | None  # of the JSON page read (None: there was none)
    metadata: tuple[str, ...]  # wheels whose .metadata must be (re)written


@dataclass(frozen=True)
class ReindexPlan:
    destination: str
    channel: str
    projects: tuple[str, ...]
    files: int
    disagreements: tuple[Disagreement, ...]
    rebuilt: tuple[_Rebuilt, ...]  # only the projects whose pages change
    root: tuple[str, ...]
    root_etag: str | None
    root_changes: bool

    @property
    def changes(self) -> bool:
        return bool(self.rebuilt) or self.root_changes


def plan_reindex(store: Store, *, channel: str = "", now: float | None = None) -> ReindexPlan:
    layout = layout_for(store, check_channel(channel))
    stamp = upload_time(now)
    stored: dict[str, dict[str, int]] = {}
    disagreements: list[Disagreement] = []

    def note(kind: str, project: str, filename: str | None, message: str) -> None:
        disagreements.append(Disagreement(kind, project, filename, message))

    prefix = layout.files_prefix()
    for info in store.list(prefix):
        project, _, filename = info.key[len(prefix) :].partition("/")
        if filename.endswith(".metadata"):
            continue
        if "/" in filename or project_of_filename(filename) != project or not filename.endswith(".whl"):
            note("foreign", project, filename, f"{info.key}: not a wheel of {project}")
            continue
        stored.setdefault(project, {})[filename] = info.size
    listed_root, root_etag = read_root(store, layout)
    rebuilt = []
    for project in sorted(set(stored) | set(listed_root)):
        current = (
            read_project(store, layout, project) if project in stored or project in listed_root else None
        )
        old = current.state if current and current.state else ProjectState(project, ())
        entries = []
        metadata = []
        for filename, size in sorted(stored.get(project, {}).items()):
            key = layout.file(project, filename)
            sha256 = store.sha256_of(key) or ""
            listed = old.entry(filename)
            metadata_sha256, requires_python = _metadata_facts(store, layout.metadata(project, filename))
            if metadata_sha256 is None or (listed and listed.metadata_sha256 not in (None, metadata_sha256)):
                metadata_sha256, requires_python = _metadata_of_wheel(store, key)
                metadata.append(filename)
                note("metadata", project, filename, "no .metadata file or other bytes")
            if listed is None:
                note("unlisted", project, filename, "stored but not listed")
                listed = FileEntry(filename, sha256, size, stamp, requires_python, metadata_sha256)
            elif listed.sha256 != sha256 or listed.size != size:
                note(
                    "hash",
                    project,
                    filename,
                    f"listed {listed.sha256[:16]}..., stored {sha256[:16]}...",
                )
            entries.append(
                FileEntry(
                    filename,
                    sha256,
                    size,
                    listed.upload_time or stamp,
                    requires_python,
                    metadata_sha256,
                    listed.yanked,
                )
            )
        for entry in old.files:
            if entry.filename not in stored.get(project, {}):
                note("missing", project, entry.filename, "listed but not stored")
        new = ProjectState(project, tuple(entries))
        html = store.read(layout.project_html(project))
        html_stale = entries and (html is None or html.data != render_project_html(new))
        if html_stale and new == old:
            note("html", project, None, "HTML page differs from JSON page")
        if new != old or html_stale or metadata or (current and current.state is None and entries):
            rebuilt.append(_Rebuilt(new, current.etag if current else None, tuple(metadata)))
    root = tuple(sorted(project for project, files in stored.items() if files))
    root_changes = root != listed_root or root_etag is None
    if root != listed_root:
        note("root", "", None, "the root lists other projects than the files")
    return ReindexPlan(
        destination=store.description,
        channel=channel,
        projects=root,
        files=sum(len(files) for files in stored.values()),
        disagreements=tuple(disagreements),
        rebuilt=tuple(rebuilt),
        root=root,
        root_etag=root_etag,
        root_changes=root_changes,
    )


def _metadata_facts(store: Store, key: str) -> tuple[str | None, str | None]:
    found = store.read(key)
    if found is None:
        return None, None
    return hashlib.sha256(found.data).hexdigest(), _requires_python(found.data)


def _metadata_of_wheel(store: Store, key: str) -> tuple[str, str | None]:
    from slimwheel.wheel import Wheel

    found = store.read(key)
    data = found.data if found is not None else b""
    with Wheel.from_fileobj(io.BytesIO(data), key.rsplit("/", 1)[-1]) as wheel:
        metadata = wheel.metadata_bytes()
    return hashlib.sha256(metadata).hexdigest(), _requires_python(metadata)


def _requires_python(metadata: bytes) -> str | None:
    value = email.parser.BytesHeaderParser().parsebytes(metadata).get("Requires-Python")
    return str(value).strip() if value else None


def apply_reindex(store: Store, plan: ReindexPlan) -> None:
    """Write the rebuilt pages (and missing .metadata files), JSON before HTML, the root last."""
    from slimwheel.wheel import Wheel

    layout = layout_for(store, plan.channel)
    for rebuilt in plan.rebuilt:
        project = rebuilt.state.name
        for filename in rebuilt.metadata:
            found = store.read(layout.file(project, filename))
            with Wheel.from_fileobj(io.BytesIO(found.data if found else b""), filename) as wheel:
                metadata = wheel.metadata_bytes()
            store.write(
                layout.metadata(project, filename),
                metadata,
                content_type=METADATA_CONTENT_TYPE,
                sha256=hashlib.sha256(metadata).hexdigest(),
            )
        store.write(
            layout.project_json(project),
            render_project_json(rebuilt.state),
            content_type=JSON_CONTENT_TYPE,
            if_match=rebuilt.etag,
            if_absent=rebuilt.etag is None,
        )
        store.write(
            layout.project_html(project), render_project_html(rebuilt.state), content_type=HTML_CONTENT_TYPE
        )
    if plan.root_changes:
        store.write(
            layout.root_json(),
            render_root_json(plan.root),
            content_type=JSON_CONTENT_TYPE,
            if_match=plan.root_etag,
            if_absent=plan.root_etag is None,
        )
        store.write(layout.root_html(), render_root_html(plan.root), content_type=HTML_CONTENT_TYPE)
