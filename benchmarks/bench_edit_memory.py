"""Peak memory of repair's edit of a published wheel's biggest library when its ``.dynstr`` must move.

    scripts/run-bench benchmarks/bench_edit_memory.py [--project tensorflow] [--member PATH]

No published wheel in the corpus needs an edit of TensorFlow's size, so one is forced: the wheel
(tests/support/corpus.py BENCH_ONLY, fetched into slimwheel's cache) is analysed as repair analyses
it (saving the tables an edit reads, hashing each member), then repair's apply writes it with one
edit of ``--member``: its search path plus twenty more folders, which does not fit where the old one
was, so its ``.dynstr`` moves to an appended segment (47 MB in TensorFlow 2.15.1's
``libtensorflow_cc.so.2``, a 978 MB library). The analysis and the write run in a child process,
measured as bench_repair measures (benchmarks/_measure.py: wall time, the tree's peak resident set).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from benchmarks._measure import measure

DEFAULT_MEMBER = {"tensorflow": "tensorflow/libtensorflow_cc.so.2"}


def _edit_once(wheel_path: Path, name: str) -> None:
    """The child's work: analyse as repair does, then apply one edit that moves ``name``'s .dynstr."""
    from slimwheel.analysis import InspectionCache, analyse_wheel
    from slimwheel.catalog.store import load_catalog
    from slimwheel.repair.apply import AnalysedContent, apply_plan
    from slimwheel.repair.plan import ElfEdit, plan_repair
    from slimwheel.wheel import Wheel

    catalog = load_catalog(None)
    with tempfile.TemporaryDirectory() as scratch:
        tables = Path(scratch) / "tables"
        tables.mkdir()
        cache = InspectionCache(tables, hashes_content=True)
        with Wheel.open(wheel_path) as wheel:
            report = analyse_wheel(wheel, catalog, cache=cache)
            requires = wheel.requires_dist()
            plan = plan_repair(report, catalog, requires_dist=requires, dist_info=wheel.dist_info)
            member = wheel.member(name)
            (elf,) = [e for e in report.elf_files if e.path == name]
            longer = (*elf.runpath, *elf.rpath, *(f"$ORIGIN/../nvidia/extra{i}/lib" for i in range(20)))
            plan = dataclasses.replace(plan, edits=(ElfEdit(name, (), longer, bool(elf.runpath)),))
            saved = cache.saved_tables(member)
            analysed = AnalysedContent(wheel.identity, cache.content_digests(wheel))
            known = {name: cache.known_tables(member)}
        apply_plan(
            wheel_path,
            plan,
            Path(scratch) / "out",
            tables=known,
            saved={name: saved} if saved is not None else {},
            analysed=analysed,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="tensorflow", help="a BENCH_ONLY or corpus project")
    parser.add_argument("--member", help="the library to edit (default: the project's biggest known one)")
    parser.add_argument("--child", nargs=2, metavar=("WHEEL", "MEMBER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _edit_once(Path(args.child[0]), args.child[1])
        return 0
    from tests.support.corpus import BENCH_ONLY, CORPUS, fetch

    (entry,) = [e for e in (*CORPUS, *BENCH_ONLY) if e.project == args.project][:1]
    member = args.member or DEFAULT_MEMBER[args.project]
    wheel = fetch(entry)
    taken = measure([sys.executable, "-m", "benchmarks.bench_edit_memory", "--child", str(wheel), member])
    if taken.returncode != 0:
        print(f"the edit failed (exit {taken.returncode})", file=sys.stderr)
        return 1
    print("| wheel | library | wall time | peak RSS, tree | one process |")
    print("|---|---|---|---|---|")
    print(
        f"| {wheel.name} | {member} | {taken.seconds:.2f} s | {taken.tree_rss_mib:.0f} MiB "
        f"| {taken.peak_rss_mib:.0f} MiB |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
