"""`slimwheel show` against `auditwheel show` on the same big wheels, side by side in one run.

    scripts/run-bench benchmarks/bench_show.py [WHEEL...] [--repeat 3]

Without arguments it measures real NVIDIA and PyTorch wheels over 500 MB: the ones on this machine's
disk if present, else downloaded once through the index (as pip resolves it) into the cache.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from benchmarks._measure import median_of

DEFAULT_WHEELS = (
    ("nvidia-cudnn-cu13", "nvidia_cudnn_cu13-9.24.0.43-py3-none-manylinux_2_27_x86_64.whl"),
    ("torch", "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"),
)


def _default_wheels() -> list[Path]:
    from slimwheel.index import Cache, IndexClient, resolve_index_settings

    wheels = []
    with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
        for project, filename in DEFAULT_WHEELS:
            (file,) = [f for f in client.project(project).files if f.filename == filename]
            wheels.append(client.download(file))
    return wheels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    wheels = args.wheels or _default_wheels()
    bindir = Path(sys.executable).parent
    slimwheel = shutil.which("slimwheel", path=str(bindir)) or "slimwheel"
    auditwheel = shutil.which("auditwheel", path=str(bindir)) or "auditwheel"
    print(f"median of {args.repeat} runs; peak RSS is the largest seen")
    header = (
        "| wheel | size | slimwheel show | auditwheel show | speed-up | peak RSS slimwheel / auditwheel |"
    )
    print(header)
    print("|---|---|---|---|---|---|")
    for wheel in wheels:
        ours = median_of([slimwheel, "show", "--json", str(wheel)], args.repeat)
        theirs = median_of([auditwheel, "show", str(wheel)], args.repeat)
        size = wheel.stat().st_size / 2**20
        print(
            f"| {wheel.name} | {size:.0f} MiB | {ours.seconds:.2f} s | {theirs.seconds:.2f} s "
            f"| {theirs.seconds / ours.seconds:.1f}x "
            f"| {ours.peak_rss_mib:.0f} / {theirs.peak_rss_mib:.0f} MiB |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
