"""Publishing one wheel into a big index vs regenerating the whole index from a listing.

    python -m benchmarks.bench_publish [--projects 2000] [--files 25] [--store folder|s3]

Seeds an index of PROJECTS x FILES wheels (pages written directly by the renderers), then measures on
the same store: (1) ``publish`` of one new wheel (library calls, as the CLI makes them); (2) a full
regeneration from a listing, the way a scheduled job rebuilds an S3 index: list every file, read each
one's hash, write every page. Prints objects read and written, and wall time, for both.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

from slimwheel.publish import apply_publish, open_store, plan_publish, read_wheels
from slimwheel.publish.layout import Layout
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
from slimwheel.publish.store import StatsSnapshot, Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.wheels import make_wheel


def seed(store: Store, layout: Layout, template: Path, projects: int, files: int) -> None:
    data = template.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    names = []
    for p in range(projects):
        project = f"proj{p:05d}"
        names.append(project)
        entries = []
        for i in range(files):
            filename = f"proj{p:05d}-1.{i}-py3-none-any.whl"
            store.write(
                layout.file(project, filename), data, content_type="application/octet-stream", sha256=sha
            )
            store.write(
                layout.metadata(project, filename), b"Metadata-Version: 2.1\n", content_type="text/plain"
            )
            entries.append(FileEntry(filename, sha, len(data), "2026-01-01T00:00:00.000000Z", None, None))
        state = ProjectState(project, tuple(entries))
        store.write(layout.project_json(project), render_project_json(state), content_type=JSON_CONTENT_TYPE)
        store.write(layout.project_html(project), render_project_html(state), content_type=HTML_CONTENT_TYPE)
    store.write(layout.root_json(), render_root_json(tuple(names)), content_type=JSON_CONTENT_TYPE)
    store.write(layout.root_html(), render_root_html(tuple(names)), content_type=HTML_CONTENT_TYPE)


def regenerate(store: Store, layout: Layout) -> None:
    """Every page from a full listing, as a scheduled rebuild does."""
    prefix = layout.files_prefix()
    by_project: dict[str, list[FileEntry]] = {}
    for info in store.list(prefix):
        project, _, filename = info.key[len(prefix) :].partition("/")
        if filename.endswith(".metadata"):
            continue
        sha = store.sha256_of(info.key) or ""
        by_project.setdefault(project, []).append(FileEntry(filename, sha, info.size, "", None, None))
    for project, entries in sorted(by_project.items()):
        state = ProjectState(project, tuple(sorted(entries, key=lambda e: e.filename)))
        store.write(layout.project_json(project), render_project_json(state), content_type=JSON_CONTENT_TYPE)
        store.write(layout.project_html(project), render_project_html(state), content_type=HTML_CONTENT_TYPE)
    names = tuple(sorted(by_project))
    store.write(layout.root_json(), render_root_json(names), content_type=JSON_CONTENT_TYPE)
    store.write(layout.root_html(), render_root_html(names), content_type=HTML_CONTENT_TYPE)


def _delta(after: StatsSnapshot, before: StatsSnapshot) -> str:
    return (
        f"reads {after.reads - before.reads}, heads {after.heads - before.heads}, "
        f"writes {after.writes - before.writes}, lists {after.lists - before.lists}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=2000)
    parser.add_argument("--files", type=int, default=25)
    parser.add_argument("--store", choices=["folder", "s3"], default="folder")
    parser.add_argument("--dest", help="s3://BUCKET/PREFIX for --store s3 (AWS_ENDPOINT_URL: moto's server)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-publish-"))
    try:
        template = make_wheel(work, "template", "1.0", {"template/__init__.py": b"x = 1\n"})
        dest = args.dest if args.store == "s3" else str(work / "index")
        store = open_store(dest)
        layout = Layout("", store.pages_at_folder_keys)
        started = time.perf_counter()
        seed(store, layout, template, args.projects, args.files)
        print(
            f"seeded {args.projects * args.files} files in {args.projects} projects "
            f"({time.perf_counter() - started:.1f} s)"
        )
        new = make_wheel(work, "proj00007", "9.0", {"proj00007/__init__.py": b"x = 2\n"})
        before, started = store.stats.snapshot(), time.perf_counter()
        wheels = read_wheels([new])
        apply_publish(store, plan_publish(store, wheels), wheels)
        elapsed = time.perf_counter() - started
        print(f"publish one wheel:   {elapsed:8.3f} s  {_delta(store.stats.snapshot(), before)}")
        before, started = store.stats.snapshot(), time.perf_counter()
        regenerate(store, layout)
        elapsed = time.perf_counter() - started
        print(f"full regeneration:   {elapsed:8.3f} s  {_delta(store.stats.snapshot(), before)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
