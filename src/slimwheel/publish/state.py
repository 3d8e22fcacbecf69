"""A project's state (its JSON page) and the root page, changed only by conditional writes.

Every change is read -> compute -> write-if-unchanged, retried on a lost condition: N publishers racing
on one project each land their files, none is lost. The HTML page is rendered from the JSON page and
written after it; whoever writes it reads the JSON page again afterwards and renders once more if it
moved meanwhile, so the last HTML written matches the last JSON written. A publisher killed between the
two leaves an HTML page that lists fewer files (all of them present): the next run repairs it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from slimwheel.publish.errors import ConflictError, DestinationError
from slimwheel.publish.layout import Layout
from slimwheel.publish.pages import (
    HTML_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    ProjectState,
    parse_project_json,
    parse_root_json,
    render_project_html,
    render_project_json,
    render_root_html,
    render_root_json,
)
from slimwheel.publish.store import Store

__all__ = ["Versioned", "add_to_root", "read_project", "read_root", "sync_project_html", "update_project"]

ATTEMPTS = 400  # eight publishers on one project settle within a few dozen rounds
_BACKOFF = 0.005  # seconds, times a random factor growing with the attempt (capped)


@dataclass(frozen=True)
class Versioned:
    state: ProjectState | None  # None: no such project yet
    etag: str | None


def read_project(store: Store, layout: Layout, project: str) -> Versioned:
    key = layout.project_json(project)
    found = store.read(key)
    if found is None:
        return Versioned(None, None)
    return Versioned(parse_project_json(found.data, store.description + "/" + key), found.etag)


def read_root(store: Store, layout: Layout) -> tuple[tuple[str, ...], str | None]:
    key = layout.root_json()
    found = store.read(key)
    if found is None:
        return (), None
    return parse_root_json(found.data, store.description + "/" + key), found.etag


def _pause(rng: random.Random, attempt: int) -> None:
    time.sleep(_BACKOFF * rng.uniform(0.5, 1.5) * min(2 ** min(attempt, 6), 40))


def _gave_up(store: Store, key: str) -> DestinationError:
    return DestinationError(
        f"{store.description}/{key}: still changing after {ATTEMPTS} attempts",
        hint="too many writers at once: run again",
    )


def update_project(
    store: Store, layout: Layout, project: str, change: Callable[[ProjectState], ProjectState]
) -> tuple[ProjectState, str, bool]:
    """Apply ``change`` to the project's state until a conditional write lands: (state, its etag,
    whether anything was written). ``change`` may raise to refuse; it may be called several times."""
    key = layout.project_json(project)
    rng = random.Random()  # noqa: S311 - jitter, not secrecy
    for attempt in range(ATTEMPTS):
        current = read_project(store, layout, project)
        old = current.state if current.state is not None else ProjectState(project, ())
        new = change(old)
        if current.state is not None and current.etag is not None and new == old:
            return old, current.etag, False
        try:
            etag = store.write(
                key,
                render_project_json(new),
                content_type=JSON_CONTENT_TYPE,
                if_match=current.etag,
                if_absent=current.etag is None,
            )
        except ConflictError:
            _pause(rng, attempt)
            continue
        return new, etag, True
    raise _gave_up(store, key)


def sync_project_html(
    store: Store, layout: Layout, project: str, state: ProjectState, etag: str, *, changed: bool
) -> None:
    """Make the HTML page match the JSON page (``state`` as of ``etag``). Unchanged state: the HTML is
    read and rewritten only when it differs (a run killed between the two pages left it behind)."""
    html_key = layout.project_html(project)
    rendered = render_project_html(state)
    if not changed:
        found = store.read(html_key)
        if found is not None and found.data == rendered:
            return
    for _ in range(ATTEMPTS):
        store.write(html_key, rendered, content_type=HTML_CONTENT_TYPE)
        latest = read_project(store, layout, project)
        if latest.etag == etag or latest.state is None or latest.etag is None:
            return
        state, etag = latest.state, latest.etag
        rendered = render_project_html(state)
    raise _gave_up(store, html_key)


def add_to_root(store: Store, layout: Layout, projects: tuple[str, ...]) -> bool:
    """List ``projects`` on the root pages (JSON, then HTML); True when the root changed."""
    key = layout.root_json()
    rng = random.Random()  # noqa: S311 - jitter, not secrecy
    for attempt in range(ATTEMPTS):
        names, etag = read_root(store, layout)
        wanted = tuple(sorted(set(names) | set(projects)))
        if etag is not None and wanted == names:
            _sync_root_html(store, layout, names, etag, changed=False)
            return False
        try:
            new_etag = store.write(
                key,
                render_root_json(wanted),
                content_type=JSON_CONTENT_TYPE,
                if_match=etag,
                if_absent=etag is None,
            )
        except ConflictError:
            _pause(rng, attempt)
            continue
        _sync_root_html(store, layout, wanted, new_etag, changed=True)
        return True
    raise _gave_up(store, key)


def _sync_root_html(
    store: Store, layout: Layout, names: tuple[str, ...], etag: str, *, changed: bool
) -> None:
    html_key = layout.root_html()
    rendered = render_root_html(names)
    if not changed:
        found = store.read(html_key)
        if found is not None and found.data == rendered:
            return
    for _ in range(ATTEMPTS):
        store.write(html_key, rendered, content_type=HTML_CONTENT_TYPE)
        latest, latest_etag = read_root(store, layout)
        if latest_etag in (etag, None):
            return
        etag = str(latest_etag)
        rendered = render_root_html(latest)
    raise _gave_up(store, html_key)
