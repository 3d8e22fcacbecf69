"""``slimwheel catalog update|show|query``: learn and inspect what NVIDIA's wheels provide."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from slimwheel.cli._common import add_catalog_argument, human_size, load_catalog_from_args, output_of
from slimwheel.cli._index import add_index_arguments, open_index_client

HELP = "learn (update) or inspect the catalog of NVIDIA's wheels"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    update = sub.add_parser("update", help="learn releases from the index into the user's catalog")
    update.add_argument(
        "distributions",
        nargs="*",
        metavar="DIST",
        help="only these (default: cuda-toolkit's extras and the seeds)",
    )
    update.add_argument(
        "--output",
        "-o",
        type=Path,
        metavar="FILE",
        help="write here (default: the user's catalog, in slimwheel's folder under the user's data folder)",
    )
    update.add_argument("--pre", action="store_true", help="include pre-releases and dev releases")
    update.add_argument(
        "--no-follow", action="store_true", help="do not follow Requires-Dist to more NVIDIA wheels"
    )
    update.add_argument(
        "--fresh", action="store_true", help="re-read every wheel instead of updating incrementally"
    )
    update.add_argument(
        "--needed",
        action="store_true",
        help="also read the DT_NEEDED of the newest release's libraries of each distribution (what a "
        "provider needs in turn, for repair's manifest): reads those library members whole, several GB",
    )
    update.add_argument("--workers", type=int, default=16, help="concurrent requests (default 16)")
    update.add_argument(
        "--dry-run", action="store_true", help="learn from the index, write nothing: say what it would add"
    )
    update.add_argument("--json", action="store_true", help="print a slimwheel.catalog/1 summary")
    add_index_arguments(update)
    add_catalog_argument(update)

    show = sub.add_parser("show", help="summarise the catalog in use")
    show.add_argument("--json", action="store_true")
    add_catalog_argument(show)

    query = sub.add_parser("query", help="who provides a library, and which versions are safe to depend on")
    query.add_argument("library", help="a soname (libcudss.so.1) or a soname stem (cudss)")
    query.add_argument("--cuda", type=int, help="CUDA major")
    query.add_argument("--platform", help="e.g. manylinux_x86_64, win_amd64")
    query.add_argument("--json", action="store_true")
    add_catalog_argument(query)


def run(args: argparse.Namespace) -> int:
    if args.action == "update":
        return _update(args)
    if args.action == "show":
        return _show(args)
    return _query(args)


def _update(args: argparse.Namespace) -> int:
    from slimwheel.catalog.learn import learn_catalog
    from slimwheel.catalog.store import load_catalog, user_catalog_path, write_catalog
    from slimwheel.report import dump_report

    out = output_of(args)
    previous = None if args.fresh else load_catalog(args.catalog)
    output = args.output or user_catalog_path()
    skipped: list[str] = []
    with open_index_client(args) as client, out.progress().step("reading NVIDIA's wheels") as advance:

        def progress(message: str, done: int, total: int) -> None:  # noqa: ARG001
            if message.startswith("skipped "):
                skipped.append(message.removeprefix("skipped "))
            advance(done)

        learned = learn_catalog(
            client,
            args.distributions,
            previous=previous,
            follow_toolkit=not args.distributions,
            follow_requirements=not args.no_follow,
            include_prereleases=args.pre,
            max_workers=max(1, args.workers),
            refresh=args.refresh,
            read_needed=args.needed,
            progress=progress,
        )
    if not args.dry_run:
        write_catalog(learned, output)
    for line in skipped:
        out.warn(
            f"not learned: {line}", fix="run `slimwheel catalog update` again later; what was read is kept"
        )
    known = {release.key for release in previous.releases} if previous is not None else set()
    added = sorted(f"{name}=={version}" for name, version in {r.key for r in learned.releases} - known)
    summary = {**_summary(learned), "new_releases": added}
    if args.json:
        written = None if args.dry_run else str(output)
        print(dump_report("catalog", {"dry_run": args.dry_run, "written": written, **summary}), file=out.out)
        return 0
    new = (
        f"{len(added)} new: {', '.join(added[:8])}{' ...' if len(added) > 8 else ''}" if added else "none new"
    )
    where = f"nothing written (dry run; {output} stays as it is)" if args.dry_run else f"into {output}"
    print(
        f"learned {summary['releases']} releases of {summary['distributions']} distributions "
        f"({summary['libraries']} library files; {new}) {where}",
        file=out.out,
    )
    return 0


def _summary(catalog: Any) -> dict[str, Any]:
    return {
        "origin": catalog.origin,
        "generated": catalog.generated,
        "distributions": len(catalog.distributions),
        "releases": len(catalog.releases),
        "libraries": sum(1 for _ in catalog.iter_libraries()),
        "libraries_with_needs": sum(1 for p in catalog.iter_libraries() if p.library.needed is not None),
        "cuda_majors": list(catalog.cuda_majors()),
    }


def _show(args: argparse.Namespace) -> int:
    from slimwheel.report import dump_report

    catalog = load_catalog_from_args(args)
    if args.json:
        per_distribution = {
            name: [r.version for r in catalog.releases_of(name)] for name in catalog.distributions
        }
        print(dump_report("catalog", {**_summary(catalog), "versions": per_distribution}))
        return 0
    out = output_of(args)
    table = out.table(
        f"catalog: {catalog.origin} (generated {catalog.generated})",
        ("distribution", "CUDA", "releases", "newest", "libraries in newest"),
    )
    for name in catalog.distributions:
        releases = catalog.releases_of(name)
        if not releases:
            continue
        newest = releases[-1]
        libraries = sorted({lib.path for wheel in newest.wheels for lib in wheel.libraries})
        majors = sorted({str(r.cuda_major) for r in releases if r.cuda_major is not None})
        table.add_row(name, ",".join(majors), str(len(releases)), newest.version, "\n".join(libraries[:6]))
    out.console().print(table)
    return 0


def _query(args: argparse.Namespace) -> int:
    from slimwheel.names import parse_library_file_name
    from slimwheel.platforms import parse_platform
    from slimwheel.report import dump_report

    catalog = load_catalog_from_args(args)
    platform = parse_platform(args.platform) if args.platform else None
    parsed = parse_library_file_name(args.library)
    by_soname = parsed is not None and parsed.version is not None
    providers = catalog.providers(
        soname=args.library if by_soname else None,
        name=None if by_soname else args.library,
        cuda_major=args.cuda,
        platform=platform,
    )
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for provider in providers:
        key = (provider.distribution, provider.library.path)
        if key in seen:
            continue
        seen.add(key)
        safe = catalog.safe_range(
            provider.distribution, provider.version, provider.library.name, platform=platform
        )
        rows.append(
            {
                "distribution": provider.distribution,
                "newest": provider.version,
                "cuda": provider.release.cuda_major,
                "path": provider.library.path,
                "soname": provider.library.soname,
                "size": provider.library.size,
                "safe_range": _first_release_range(catalog, provider, platform) if safe else None,
            }
        )
    if args.json:
        print(dump_report("catalog-query", {"library": args.library, "providers": rows}))
        return 0 if rows else 1
    out = output_of(args)
    if not rows:
        out.error(f"no NVIDIA wheel in the catalog ships {args.library}")
        return 1
    table = out.table(
        f"providers of {args.library}",
        ("distribution", "CUDA", "newest", "path", "size", "same soname and folder"),
    )
    for row in rows:
        table.add_row(
            row["distribution"],
            str(row["cuda"]),
            row["newest"],
            row["path"],
            human_size(row["size"]),
            row["safe_range"] or "",
        )
    out.console().print(table)
    return 0


def _first_release_range(catalog: Any, provider: Any, platform: Any) -> str | None:
    """The whole span of releases that ship this file: from the first one with it, up to the change."""
    releases = catalog.releases_of(provider.distribution)
    first = next(
        (
            r
            for r in releases
            if not r.parsed_version.is_prerelease
            and any(lib.path == provider.library.path for w in r.wheels for lib in w.libraries)
        ),
        None,
    )
    if first is None:
        return None
    safe = catalog.safe_range(provider.distribution, first.version, provider.library.name, platform=platform)
    return safe.specifier if safe else None
