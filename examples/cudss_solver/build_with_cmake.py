"""Build the ``cudss_solver`` example with scikit-build-core + ``include(slimwheel)``, then repair it.

    python examples/cudss_solver/build_wheel.py -o DIR [--no-build-isolation] [--python PY]
                                                [--find-links DIR] [--keep-fat DIR] [--json]

1. ``pip wheel`` the example (``pyproject.toml`` + ``CMakeLists.txt``): pip installs
   ``build-system.requires`` (scikit-build-core, slimwheel, ``nvidia-cudss-cu13``,
   ``cuda-toolkit[cudart,crt]``) into an isolated environment, or, with ``--no-build-isolation``,
   builds with what ``--python``'s environment has. CMake's ``slimwheel_link_nvidia`` links the
   wheels' ``libcudss.so.1`` and ``libcudart.so.13`` with their headers and RPATH
   ``$ORIGIN/../nvidia/cu13/lib``; no system CUDA toolkit is used. The build tree is kept in a scratch
   folder (``--config-settings=build-dir``) so that its ``slimwheel-linked.json`` can be read.
2. ``repair_wheel`` (the library call behind ``slimwheel repair``) adds the Requires-Dist lines and
   the manifest from the versions the build linked, and proves the result with ``check``.

slimwheel itself must be installable by pip for an isolated build: ``--find-links DIR`` names a
folder with a slimwheel wheel (``pip wheel --no-deps -w DIR .`` in slimwheel's checkout). pip's own
configuration and cache are used as they are; ``PIP_CONSTRAINT`` pins the NVIDIA wheels if needed.
``--json`` prints what was built, linked and written as one document.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LINK_RECORD = "slimwheel-linked.json"


class BuildError(Exception):
    """The build cannot go on; the message says why."""


@dataclass(frozen=True)
class BuildResult:
    fat_wheel: str  # as scikit-build-core wrote it (linux_x86_64, no Requires-Dist on NVIDIA wheels)
    wheel: str  # repaired
    size: int
    build_seconds: float
    repair_seconds: float
    isolated: bool
    linked: dict[str, Any]  # the build tree's slimwheel-linked.json
    requires_dist: tuple[str, ...]


def pip_wheel(
    out_dir: Path,
    build_dir: Path,
    *,
    isolated: bool,
    python: str | None,
    find_links: tuple[str, ...],
) -> Path:
    command = [sys.executable, "-m", "pip"]
    if python:
        command += ["--python", python]
    command += [
        "--disable-pip-version-check",
        "wheel",
        "--no-deps",
        "-w",
        str(out_dir),
        f"--config-settings=build-dir={build_dir}",
    ]
    if not isolated:
        command.append("--no-build-isolation")
    for folder in find_links:
        command += ["--find-links", folder]
    command.append(str(HERE))
    process = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    if process.returncode != 0:
        raise BuildError(
            f"pip wheel failed ({process.returncode}):\n{process.stdout[-4000:]}\n{process.stderr}"
        )
    wheels = sorted(out_dir.glob("cudss_solver-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"pip wheel wrote {[w.name for w in wheels]} to {out_dir}")
    return wheels[0]


def repair(fat: Path, out_dir: Path, linked: dict[str, Any]) -> Path:
    from slimwheel.catalog.learn import learn_on_demand
    from slimwheel.catalog.store import load_catalog
    from slimwheel.index import Cache, IndexClient, resolve_index_settings
    from slimwheel.repair import RepairOptions
    from slimwheel.repair.pipeline import repair_wheel

    catalog = load_catalog()
    unknown = sorted(
        {
            entry["distribution"]
            for entry in linked["libraries"]
            if catalog.release(entry["distribution"], entry["version"]) is None
        }
    )
    if unknown:  # a release newer than the shipped snapshot: learned from the index pip uses
        with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
            catalog = learn_on_demand(catalog, unknown, client)
    options = RepairOptions(
        cuda_major=linked["cuda_major"],
        linked_versions={entry["name"]: entry["version"] for entry in linked["libraries"]},
    )
    outcome = repair_wheel(fat, out_dir, catalog, options=options)
    if outcome.output is None or not outcome.ok:
        raise BuildError(f"repair did not write a passing wheel for {fat.name}")
    return outcome.output


def build(
    out_dir: Path,
    *,
    isolated: bool = True,
    python: str | None = None,
    find_links: tuple[str, ...] = (),
    keep_fat: Path | None = None,
) -> BuildResult:
    from slimwheel.wheel import Wheel

    with tempfile.TemporaryDirectory(prefix="cudss-solver-build-") as scratch:
        work = Path(scratch)
        started = time.monotonic()
        fat = pip_wheel(
            work / "dist", work / "build", isolated=isolated, python=python, find_links=find_links
        )
        built = time.monotonic()
        record = work / "build" / LINK_RECORD
        if not record.is_file():
            raise BuildError(
                f"the build wrote no {LINK_RECORD}: did CMakeLists.txt call slimwheel_link_nvidia?"
            )
        linked: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
        if keep_fat is not None:
            keep_fat.mkdir(parents=True, exist_ok=True)
            (keep_fat / fat.name).write_bytes(fat.read_bytes())
            (keep_fat / LINK_RECORD).write_text(json.dumps(linked, indent=2) + "\n", encoding="utf-8")
        wheel = repair(fat, out_dir, linked)
        repaired = time.monotonic()
    with Wheel.open(wheel) as opened:
        requires = tuple(opened.requires_dist())
    return BuildResult(
        fat_wheel=str(keep_fat / fat.name) if keep_fat is not None else fat.name,
        wheel=str(wheel),
        size=wheel.stat().st_size,
        build_seconds=round(built - started, 2),
        repair_seconds=round(repaired - built, 2),
        isolated=isolated,
        linked=linked,
        requires_dist=requires,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "-o", "--out-dir", type=Path, default=Path("dist"), help="where the repaired wheel goes"
    )
    parser.add_argument("--no-build-isolation", action="store_true", help="build with --python's packages")
    parser.add_argument("--python", help="the interpreter pip builds for (default: this one)")
    parser.add_argument("--find-links", action="append", default=[], help="a folder with a slimwheel wheel")
    parser.add_argument(
        "--keep-fat", type=Path, help="also keep the unrepaired wheel and the link record here"
    )
    parser.add_argument("--json", action="store_true", help="print what was built as JSON")
    args = parser.parse_args(argv)
    try:
        result = build(
            args.out_dir,
            isolated=not args.no_build_isolation,
            python=args.python or os.environ.get("CUDSS_SOLVER_PYTHON"),
            find_links=tuple(args.find_links),
            keep_fat=args.keep_fat,
        )
    except BuildError as error:
        sys.stderr.write(f"build_wheel.py: error: {error}\n")
        return 1
    if args.json:
        sys.stdout.write(json.dumps(asdict(result), indent=2) + "\n")
    else:
        linked = ", ".join(
            f"{e['soname']} ({e['distribution']} {e['version']})" for e in result.linked["libraries"]
        )
        sys.stdout.write(
            f"wrote {result.wheel} ({result.size} bytes; built in {result.build_seconds} s, repaired in "
            f"{result.repair_seconds} s) linking {linked}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
