"""``yank`` (PEP 592) and ``promote`` (a release copied from one channel to another, server-side), each
as plan (plain data) -> apply, changing a project's state only by conditional writes."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from slimwheel.errors import UsageError
from slimwheel.publish.errors import ImmutableFileError, PublishRefusedError
from slimwheel.publish.layout import Layout, check_channel
from slimwheel.publish.pages import FileEntry, ProjectState
from slimwheel.publish.publishing import METADATA_CONTENT_TYPE, WHEEL_CONTENT_TYPE, layout_for, upload_time
from slimwheel.publish.state import add_to_root, read_project, sync_project_html, update_project
from slimwheel.publish.store import Store

__all__ = [
    "PromotePlan",
    "YankPlan",
    "apply_promote",
    "apply_yank",
    "parse_release",
    "plan_promote",
    "plan_yank",
]


def parse_release(text: str) -> tuple[str, str]:
    """``DIST==VERSION`` -> (normalised name, version)."""
    name, separator, version = text.partition("==")
    try:
        Version(version.strip())
    except InvalidVersion:
        separator = ""
    if not separator or not name.strip():
        raise UsageError(f"{text!r} is not DIST==VERSION", hint="name one release, e.g. mypkg==1.2.0")
    return canonicalize_name(name.strip()), version.strip()


def _release_files(
    state: ProjectState | None, project: str, version: str, where: str
) -> tuple[FileEntry, ...]:
    wanted = Version(version)
    files = tuple(entry for entry in (state.files if state else ()) if _same_version(entry.version, wanted))
    if not files:
        raise UsageError(
            f"{project}=={version}: no such release in {where}", hint="check the name and version"
        )
    return files


def _same_version(version: str, wanted: Version) -> bool:
    try:
        return Version(version) == wanted
    except InvalidVersion:
        return False


# -- yank -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class YankPlan:
    destination: str
    channel: str
    project: str
    version: str
    files: tuple[str, ...]
    reason: str | None
    undo: bool
    changes: bool  # False: already as asked


def plan_yank(
    store: Store, release: str, *, channel: str = "", reason: str | None = None, undo: bool = False
) -> YankPlan:
    project, version = parse_release(release)
    layout = layout_for(store, check_channel(channel))
    state = read_project(store, layout, project).state
    files = _release_files(state, project, version, f"{store.description} channel {channel or '(root)'}")
    wanted: str | bool = False if undo else (reason or True)
    return YankPlan(
        destination=store.description,
        channel=channel,
        project=project,
        version=version,
        files=tuple(entry.filename for entry in files),
        reason=reason,
        undo=undo,
        changes=any(entry.yanked != wanted for entry in files),
    )


def apply_yank(store: Store, plan: YankPlan) -> bool:
    """Mark (or unmark) the release's files; True when a page changed."""
    layout = layout_for(store, plan.channel)
    wanted: str | bool = False if plan.undo else (plan.reason or True)
    change = partial(_set_yank, filenames=frozenset(plan.files), wanted=wanted)
    state, etag, changed = update_project(store, layout, plan.project, change)
    sync_project_html(store, layout, plan.project, state, etag, changed=changed)
    return changed


def _set_yank(old: ProjectState, *, filenames: frozenset[str], wanted: str | bool) -> ProjectState:
    return replace(
        old,
        files=tuple(replace(e, yanked=wanted) if e.filename in filenames else e for e in old.files),
    )


# -- promote --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromotePlan:
    destination: str
    source: str
    target: str
    project: str
    version: str
    files: tuple[str, ...]
    copies: tuple[str, ...]  # the files to copy (the rest are already in the target channel)
    changes: bool


def plan_promote(store: Store, release: str, *, source: str, target: str) -> PromotePlan:
    project, version = parse_release(release)
    if check_channel(source) == check_channel(target):
        raise UsageError(f"--from and --to are both {source!r}", hint="promote between two channels")
    source_state = read_project(store, layout_for(store, source), project).state
    files = _release_files(source_state, project, version, f"channel {source or '(root)'}")
    target_state = read_project(store, layout_for(store, target), project).state
    copies = []
    for entry in files:
        listed = target_state.entry(entry.filename) if target_state else None
        if listed is not None and listed.sha256 != entry.sha256:
            raise ImmutableFileError(entry.filename, listed.sha256, entry.sha256)
        if listed is None:
            copies.append(entry.filename)
    return PromotePlan(
        destination=store.description,
        source=source,
        target=target,
        project=project,
        version=version,
        files=tuple(entry.filename for entry in files),
        copies=tuple(copies),
        changes=bool(copies),
    )


def apply_promote(store: Store, plan: PromotePlan, *, now: float | None = None) -> bool:
    """Copy the files (server-side) and list them in the target channel; True when it changed."""
    source, target = layout_for(store, plan.source), layout_for(store, plan.target)
    source_state = read_project(store, source, plan.project).state
    entries = [
        entry for entry in (source_state.files if source_state else ()) if entry.filename in plan.files
    ]
    if len(entries) != len(plan.files):
        raise PublishRefusedError(
            f"{plan.project}=={plan.version}: the source channel changed since the plan was made",
            hint="run the promote again",
        )
    stamp = upload_time(now if now is not None else time.time())
    for entry in entries:
        _copy(store, source, target, plan.project, entry)
    promoted = tuple(replace(entry, upload_time=stamp, yanked=False) for entry in entries)
    merge = partial(ProjectState.with_new_files, entries=promoted)
    state, etag, changed = update_project(store, target, plan.project, merge)
    sync_project_html(store, target, plan.project, state, etag, changed=changed)
    add_to_root(store, target, (plan.project,))
    return changed


def _copy(store: Store, source: Layout, target: Layout, project: str, entry: FileEntry) -> None:
    pairs = [(source.file(project, entry.filename), target.file(project, entry.filename), entry.sha256)]
    if entry.metadata_sha256:
        pairs.append(
            (
                source.metadata(project, entry.filename),
                target.metadata(project, entry.filename),
                entry.metadata_sha256,
            )
        )
    for from_key, to_key, sha256 in pairs:
        kind = METADATA_CONTENT_TYPE if to_key.endswith(".metadata") else WHEEL_CONTENT_TYPE
        store.copy(from_key, to_key, content_type=kind, sha256=sha256)
        stored = store.sha256_of(to_key)
        if stored != sha256:
            raise ImmutableFileError(to_key.rsplit("/", 1)[-1], stored or "?", sha256)
