"""``publish``: put wheels into a static index and list them, as analyse -> plan -> apply.

analyse reads each wheel (name, version, sha256, METADATA) and, where asked, the public index for the
project names; plan reads the current state of each project touched and decides per file: ``add`` (new),
``list`` (its bytes are already stored, unlisted: an interrupted run) or ``present`` (listed with the same
bytes: nothing to do); a file listed or stored with other bytes refuses the whole publish before anything
is written. apply writes, per project: the wheels and their ``.metadata`` files (never over anything),
the JSON page (a conditional write), the HTML page; then the root pages. Reads and writes are
proportional to the projects touched, never to the size of the index.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from packaging.utils import canonicalize_name

from slimwheel.errors import InputError
from slimwheel.publish.errors import ImmutableFileError, PublishRefusedError
from slimwheel.publish.guard import NameCheck, refuse_public_names
from slimwheel.publish.layout import Layout
from slimwheel.publish.pages import FileEntry, ProjectState
from slimwheel.publish.state import add_to_root, read_project, sync_project_html, update_project
from slimwheel.publish.store import StatsSnapshot, Store

__all__ = [
    "FileAction",
    "PublishPlan",
    "PublishResult",
    "WheelFacts",
    "apply_publish",
    "index_url",
    "layout_for",
    "plan_publish",
    "read_wheels",
    "upload_time",
]

WHEEL_CONTENT_TYPE = "application/octet-stream"
METADATA_CONTENT_TYPE = "text/plain; charset=utf-8"
_CHUNK = 1024 * 1024

# A verifier installs and imports a wheel before it is listed; it returns why it failed, or None.
Verifier = Callable[["WheelFacts"], "str | None"]


@dataclass(frozen=True)
class WheelFacts:
    path: str
    filename: str
    project: str  # normalised
    version: str
    sha256: str
    size: int
    requires_python: str | None
    metadata_sha256: str


@dataclass(frozen=True)
class FileAction:
    filename: str
    project: str
    version: str
    sha256: str
    size: int
    action: str  # "add", "list" (stored, not listed: an interrupted run), "present" (nothing to do)


@dataclass(frozen=True)
class PublishPlan:
    destination: str
    channel: str
    index_url: str | None  # where pip reads this channel (--index-url)
    files: tuple[FileAction, ...]
    projects: tuple[str, ...]
    names: tuple[NameCheck, ...]  # the dependency-confusion guard's answers

    @property
    def changes(self) -> bool:
        return any(file.action != "present" for file in self.files)


@dataclass(frozen=True)
class PublishResult:
    plan: PublishPlan
    uploaded: tuple[str, ...]  # keys of wheel and metadata files written
    projects_changed: tuple[str, ...]
    root_changed: bool
    requests: StatsSnapshot
    seconds: float


def layout_for(store: Store, channel: str) -> Layout:
    return Layout(channel, store.pages_at_folder_keys)


def index_url(store: Store, channel: str) -> str | None:
    return store.public_url(layout_for(store, channel).simple)


def upload_time(now: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if now is None else now, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def read_wheels(paths: Sequence[Path]) -> tuple[WheelFacts, ...]:
    """The facts of each wheel; a file that is not a readable wheel is an InputError."""
    from slimwheel.wheel import Wheel

    facts = []
    for path in paths:
        if not path.is_file():
            raise InputError(str(path), "no such file" if not path.exists() else "not a regular file")
        with Wheel.open(path) as wheel:
            metadata = wheel.metadata_bytes()
            name = wheel.metadata().get("Name")
            project = canonicalize_name(wheel.distribution)
            if name is None or canonicalize_name(str(name)) != project:
                raise InputError(
                    str(path),
                    f"METADATA names {name!r}, the file name {wheel.distribution!r}",
                    hint="rebuild the wheel: installers trust the file name, the index the metadata",
                )
            requires_python = wheel.metadata().get("Requires-Python")
            filename = wheel.filename
        facts.append(
            WheelFacts(
                path=str(path),
                filename=filename,
                project=project,
                version=wheel.version,
                sha256=_sha256(path),
                size=path.stat().st_size,
                requires_python=str(requires_python).strip() if requires_python else None,
                metadata_sha256=hashlib.sha256(metadata).hexdigest(),
            )
        )
    return tuple(facts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def plan_publish(
    store: Store, wheels: Sequence[WheelFacts], *, channel: str = "", names: Iterable[NameCheck] = ()
) -> PublishPlan:
    """Decide what each wheel needs; refuses (PublishRefusedError) before anything is written."""
    name_checks = tuple(names)
    refuse_public_names(name_checks)
    layout = layout_for(store, channel)
    unique: dict[str, WheelFacts] = {}
    for wheel in wheels:
        earlier = unique.setdefault(wheel.filename, wheel)
        if earlier.sha256 != wheel.sha256:
            raise ImmutableFileError(wheel.filename, earlier.sha256, wheel.sha256)
    projects = tuple(sorted({wheel.project for wheel in unique.values()}))
    actions = []
    for project in projects:
        state = read_project(store, layout, project).state or ProjectState(project, ())
        for wheel in sorted((w for w in unique.values() if w.project == project), key=lambda w: w.filename):
            actions.append(_decide(store, layout, state, wheel))
    return PublishPlan(
        destination=store.description,
        channel=channel,
        index_url=store.public_url(layout.simple),
        files=tuple(actions),
        projects=projects,
        names=name_checks,
    )


def _decide(store: Store, layout: Layout, state: ProjectState, wheel: WheelFacts) -> FileAction:
    listed = state.entry(wheel.filename)
    if listed is not None:
        if listed.sha256 != wheel.sha256:
            raise ImmutableFileError(wheel.filename, listed.sha256, wheel.sha256)
        action = "present"
    else:
        stored = store.sha256_of(layout.file(wheel.project, wheel.filename))
        if stored is not None and stored != wheel.sha256:
            raise PublishRefusedError(
                f"{wheel.filename}: an unlisted file of this name is stored with other bytes "
                f"(sha256 {stored[:16]}...), left by an interrupted publish or written by something else",
                hint="publish a new version, or delete that file from the store and run again",
            )
        action = "add" if stored is None else "list"
    return FileAction(wheel.filename, wheel.project, wheel.version, wheel.sha256, wheel.size, action)


def apply_publish(
    store: Store,
    plan: PublishPlan,
    wheels: Sequence[WheelFacts],
    *,
    verifier: Verifier | None = None,
    now: float | None = None,
) -> PublishResult:
    """Write what ``plan`` says. Each wheel is verified (installed and imported by ``verifier``) before
    anything is written; a failure refuses the publish."""
    started = time.monotonic()
    before = store.stats.snapshot()
    by_name = {wheel.filename: wheel for wheel in wheels}
    layout = layout_for(store, plan.channel)
    if verifier is not None:
        for action in plan.files:
            if action.action == "add":
                problem = verifier(by_name[action.filename])
                if problem:
                    raise PublishRefusedError(
                        f"{action.filename}: verify failed: {problem}",
                        hint="fix the wheel, or pass --no-verify to publish it unverified",
                    )
    uploaded: list[str] = []
    changed_projects: list[str] = []
    stamp = upload_time(now)
    for project in plan.projects:
        actions = [action for action in plan.files if action.project == project]
        entries = []
        for action in actions:
            wheel = by_name[action.filename]
            if action.action != "present":
                uploaded += _store_files(store, layout, wheel)
            entries.append(
                FileEntry(
                    filename=wheel.filename,
                    sha256=wheel.sha256,
                    size=wheel.size,
                    upload_time=stamp,
                    requires_python=wheel.requires_python,
                    metadata_sha256=wheel.metadata_sha256,
                )
            )
        merge = partial(ProjectState.with_new_files, entries=tuple(entries))
        state, etag, changed = update_project(store, layout, project, merge)
        sync_project_html(store, layout, project, state, etag, changed=changed)
        if changed:
            changed_projects.append(project)
    root_changed = add_to_root(store, layout, plan.projects) if plan.projects else False
    return PublishResult(
        plan=plan,
        uploaded=tuple(uploaded),
        projects_changed=tuple(changed_projects),
        root_changed=root_changed,
        requests=_difference(store.stats.snapshot(), before),
        seconds=round(time.monotonic() - started, 6),
    )


def _difference(after: StatsSnapshot, before: StatsSnapshot) -> StatsSnapshot:
    return StatsSnapshot(
        after.reads - before.reads,
        after.heads - before.heads,
        after.writes - before.writes,
        after.lists - before.lists,
    )


def _store_files(store: Store, layout: Layout, wheel: WheelFacts) -> list[str]:
    """The wheel, then its .metadata (listed files always have both); never over other bytes."""
    from slimwheel.wheel import Wheel

    written = []
    key = layout.file(wheel.project, wheel.filename)
    if store.upload(key, Path(wheel.path), content_type=WHEEL_CONTENT_TYPE, sha256=wheel.sha256):
        written.append(key)
    else:
        stored = store.sha256_of(key)
        if stored != wheel.sha256:  # another publisher stored other bytes since the plan was made
            raise ImmutableFileError(wheel.filename, stored or "?", wheel.sha256)
    with Wheel.open(wheel.path) as opened:
        metadata = opened.metadata_bytes()
    metadata_key = layout.metadata(wheel.project, wheel.filename)
    from slimwheel.publish.errors import ConflictError

    try:
        store.write(
            metadata_key,
            metadata,
            content_type=METADATA_CONTENT_TYPE,
            if_absent=True,
            sha256=wheel.metadata_sha256,
        )
        written.append(metadata_key)
    except ConflictError:
        stored = store.sha256_of(metadata_key)
        if stored != wheel.metadata_sha256:
            raise ImmutableFileError(
                metadata_key.rsplit("/", 1)[-1], stored or "?", wheel.metadata_sha256
            ) from None
    return written
