"""Inflating a wheel's biggest member: ISA-L on one thread (what repair uses) against rapidgzip's
parallel inflate, on this machine's cores, in one run.

    scripts/run-bench benchmarks/bench_parallel_inflate.py WHEEL [--repeat 3] [--threads 1 2 4]

Issue 11 asks repair to stay within 3x of ``cp`` when it edits a 1 GB library; one inflate of that
library alone is past it on two cores. rapidgzip decodes one deflate stream on several cores (it finds
block starts by trial decoding), so it is the way a repair could inflate faster than ISA-L, where the
cores are there. It is not one of slimwheel's dependencies: ``pip install rapidgzip`` to measure it
(without it, only ISA-L is timed). A member is a raw deflate stream; rapidgzip reads gzip, so the
stream is framed with a gzip header and trailer (its CRC-32 and size from the central directory), in
memory, outside the timing. Each figure is the median wall time of ``--repeat`` runs, each reading
the whole content in 4 MiB pieces; the content's length is checked against the central directory.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import struct
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

_PIECE = 4 << 20
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no name, no time, unknown OS


def _biggest_member(wheel: Path) -> tuple[zipfile.ZipInfo, bytes]:
    """The member with the most compressed bytes, and those bytes (its raw deflate stream)."""
    with zipfile.ZipFile(wheel) as archive:
        info = max(archive.infolist(), key=lambda i: i.compress_size)
    if info.compress_type != zipfile.ZIP_DEFLATED:
        sys.exit(f"{wheel.name}: {info.filename} is not deflated")
    with wheel.open("rb") as stream:
        stream.seek(info.header_offset)
        header = stream.read(30)
        name_length, extra_length = struct.unpack_from("<HH", header, 26)
        stream.seek(info.header_offset + 30 + name_length + extra_length)
        return info, stream.read(info.compress_size)


def _isal(stream: bytes) -> int:
    from isal import isal_zlib

    inflater = isal_zlib.decompressobj(-15)
    total = 0
    view = memoryview(stream)
    for start in range(0, len(stream), _PIECE):
        total += len(inflater.decompress(view[start : start + _PIECE]))
    return total + len(inflater.flush())


def _rapidgzip(framed: bytes, threads: int) -> int:
    import rapidgzip  # type: ignore[import-not-found]  # optional: measured where installed

    total = 0
    with rapidgzip.RapidgzipFile(io.BytesIO(framed), parallelization=threads) as reader:
        while piece := reader.read(_PIECE):
            total += len(piece)
    return total


def _median(run: Callable[[], int], repeat: int, expected: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        length = run()
        times.append(time.perf_counter() - started)
        if length != expected:
            sys.exit(f"inflated {length} bytes, the central directory says {expected}")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    info, stream = _biggest_member(args.wheel)
    print(
        f"{args.wheel.name}: {info.filename}, {info.compress_size / 2**20:.0f} MiB deflated, "
        f"{info.file_size / 2**20:.0f} MiB of content; {os.cpu_count()} cores"
    )
    isal = _median(lambda: _isal(stream), args.repeat, info.file_size)
    print(f"| inflate | wall (median of {args.repeat}) | MiB/s of content | / ISA-L |\n|---|---|---|---|")
    print(f"| ISA-L, 1 thread | {isal:.2f} s | {info.file_size / 2**20 / isal:.0f} | 1.00 |")
    try:
        import rapidgzip  # noqa: F401
    except ImportError:
        print("rapidgzip is not installed: pip install rapidgzip to measure it")
        return 0
    framed = _GZIP_HEADER + stream + struct.pack("<II", info.CRC, info.file_size & 0xFFFFFFFF)
    for threads in args.threads:

        def parallel(threads: int = threads) -> int:
            return _rapidgzip(framed, threads)

        took = _median(parallel, args.repeat, info.file_size)
        speed = info.file_size / 2**20 / took
        label = f"rapidgzip, {threads} thread{'s' * (threads > 1)}"
        print(f"| {label} | {took:.2f} s | {speed:.0f} | {took / isal:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
