"""Bytes fetched to learn a remote wheel's contents, METADATA and RECORD, against the wheel's size.

    scripts/run-bench benchmarks/bench_lazy_fetch.py [PROJECT==VERSION ...]

Talks to the index as pip resolves it, with no cache at all.
"""

from __future__ import annotations

import argparse
import sys

DEFAULT = ("nvidia-cudss-cu12==1.0.0.35", "nvidia-cudss-cu13==1.0.0.35", "nvidia-cublas-cu12==12.9.1.4")


def main() -> int:
    from slimwheel.index import IndexClient, resolve_index_settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="*", default=list(DEFAULT))
    args = parser.parse_args()
    print("| wheel | size | requests | bytes fetched | share of the wheel |")
    print("|---|---|---|---|---|")
    # No cache: a downloaded copy would be read from disk instead of over the network.
    with IndexClient(resolve_index_settings(), cache=None) as client:
        for text in args.projects:
            project, version = text.split("==")
            files = [
                f for f in client.project(project).files if f.version == version and "x86_64" in f.filename
            ]
            file = files[0]
            before = client.stats.snapshot()
            with client.open_wheel(file) as wheel:
                members = len(wheel.members)
                wheel.metadata_bytes()
                wheel.record()
            spent = client.stats.snapshot() - before
            size = file.size or wheel.file_size
            print(
                f"| {file.filename} ({members} members) | {size / 2**20:.0f} MiB | {spent.requests} "
                f"| {spent.bytes_received / 1024:.1f} KiB | {100 * spent.bytes_received / size:.4f}% |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
