"""Finish a wheel scikit-build-core built: rename it, add the framework requirements, repair it.

``rename_wheel`` writes the wheel anew under another distribution name (metadata ``Name``, the
``.dist-info`` and ``.data`` folders, the file name) with ``Requires-Dist`` lines added, members
copied as stored and RECORD rebuilt by ``WheelWriter``: no text substitution on METADATA, which a
project name inside a description or another header would defeat.

``finish_wheel`` then hands it to ``repair_wheel`` (the library call behind ``slimwheel repair``)
with the versions the build recorded as linked (``slimwheel-linked.json``): Requires-Dist ranges
from those versions, the manifest, the embedded loader when asked, the manylinux tag through
auditwheel with the NVIDIA sonames excluded, and ``check`` on the result, or no wheel at all.

A framework extension (``_cudss_torch.so`` needing ``libc10.so``) needs libraries that the
framework's own wheel installs and the extension's run requirement (``torch==2.13.*``) brings: they
are neither bundled nor unresolved. Their files are read from the framework distributions installed
in the build environment (the release the build compiled against), given to ``check`` as the files
of that requirement, and their sonames are excluded from auditwheel, which runs here first for a
wheel that needs it (``repair_wheel`` excludes only the NVIDIA sonames).
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name

from slimwheel.errors import SlimwheelError
from slimwheel.metadata import metadata_with

if TYPE_CHECKING:
    from slimwheel.catalog.model import Catalog
    from slimwheel.dist_files import ReleaseFiles

__all__ = [
    "FinishError",
    "finish_wheel",
    "framework_files",
    "metapackage_wheel",
    "rename_wheel",
    "wheel_name",
]

_RECORD_FILES = frozenset({"RECORD", "RECORD.jws", "RECORD.p7s"})


class FinishError(SlimwheelError):
    """The built wheel could not be finished (renamed, required, repaired)."""


def wheel_name(distribution: str) -> str:
    """The distribution name as wheel file names and ``.dist-info`` folders spell it."""
    return canonicalize_name(distribution).replace("-", "_")


def rename_wheel(
    source: Path,
    out_dir: Path,
    *,
    name: str | None,
    requires: Sequence[str] = (),
    extras: Sequence[tuple[str, Sequence[str]]] = (),
) -> Path:
    """``source`` written into ``out_dir`` as distribution ``name`` (None: kept) with ``requires``
    (and ``extras``: (extra, requirements)) added."""
    from slimwheel.wheel import Wheel, WheelWriter, date_time_from_environment

    with Wheel.open(source) as wheel:
        old_dist_info = wheel.dist_info
        old_stem = old_dist_info[: -len(".dist-info")]
        version = old_stem.rpartition("-")[2]
        new_stem = f"{wheel_name(name)}-{version}" if name is not None else old_stem
        tags = source.name[: -len(".whl")].split("-")[-3:]
        target = out_dir / f"{new_stem}-{'-'.join(tags)}.whl"
        renames = {
            f"{old_stem}.dist-info/": f"{new_stem}.dist-info/",
            f"{old_stem}.data/": f"{new_stem}.data/",
        }
        records = {entry.path: entry for entry in wheel.record()}
        newest = max((m.date_time for m in wheel.members), default=(1980, 1, 1, 0, 0, 0))
        out_dir.mkdir(parents=True, exist_ok=True)
        with WheelWriter(target, date_time=date_time_from_environment(os.environ) or newest) as writer:
            for member in wheel.members:
                if member.is_dir:
                    continue
                prefix = next((p for p in renames if member.name.startswith(p)), None)
                if member.name.startswith(f"{old_stem}.dist-info/") and member.name.rpartition("/")[2] in (
                    _RECORD_FILES
                ):
                    continue  # RECORD is rebuilt; a signature of the old one means nothing now
                if member.name == f"{old_stem}.dist-info/METADATA":
                    data = metadata_with(
                        wheel.read_member(member.name), name=name, requires=requires, extras=extras
                    )
                    writer.add_bytes(f"{new_stem}.dist-info/METADATA", data, mode=member.unix_mode or 0o644)
                elif prefix is not None and renames[prefix] != prefix:
                    renamed = renames[prefix] + member.name[len(prefix) :]
                    writer.add_bytes(renamed, wheel.read_member(member.name), mode=member.unix_mode or 0o644)
                else:
                    writer.copy_raw(wheel, member.name, record=records.get(member.name))
            writer.close(f"{new_stem}.dist-info/RECORD")
    return target


def framework_files(distributions: Sequence[str]) -> tuple[ReleaseFiles, ...]:
    """The shared library files each installed distribution's RECORD lists (``torch/lib/libc10.so``)."""
    from packaging.utils import canonicalize_name

    from slimwheel.dist_files import ReleaseFiles, is_library_path

    found = []
    for name in distributions:
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError as exc:
            raise FinishError(f"framework distribution {name} is not installed for the build") from exc
        files = sorted({str(f) for f in distribution.files or () if is_library_path(str(f))})
        canonical = canonicalize_name(name)
        version = distribution.version
        found.append(ReleaseFiles(canonical, version, f"{canonical}-{version} (installed)", tuple(files)))
    return tuple(found)


def _audit_first(wheel: Path, scratch: Path, frameworks: Sequence[ReleaseFiles], catalog: Catalog) -> Path:
    """auditwheel on a ``linux_*`` wheel with the NVIDIA sonames and the frameworks' excluded; the
    wheel itself when it needs no auditwheel."""
    from slimwheel.analysis import analyse_wheel
    from slimwheel.repair.auditwheel import needs_auditwheel, run_auditwheel, sonames_to_exclude
    from slimwheel.wheel import Wheel

    with Wheel.open(wheel) as opened:
        report = analyse_wheel(opened, catalog)
    if not needs_auditwheel(report):
        return wheel
    theirs = {path.rsplit("/", 1)[-1] for release in frameworks for path in release.files}
    needed = {needed.soname for elf in report.elf_files for needed in elf.needed}
    excluded = sorted({*sonames_to_exclude(report), *(needed & theirs)})
    return run_auditwheel(wheel, scratch, excluded).wheel


def finish_wheel(
    wheel: Path,
    out_dir: Path,
    linked: Mapping[str, Any],
    *,
    cuda_major: int,
    embed_loader: bool,
    frameworks: Sequence[str] = (),
) -> Path:
    """``repair_wheel`` on the built wheel with the versions the build linked; the path written.

    ``frameworks``: the distributions of the selected frameworks (``torch``), installed here, whose
    libraries the wheel's extensions may need through their run requirement."""
    from slimwheel._scratch import scratch_folder
    from slimwheel.catalog.store import load_catalog
    from slimwheel.dist_files import StaticDistFiles
    from slimwheel.repair import RepairOptions
    from slimwheel.repair.pipeline import repair_wheel
    from slimwheel.repair.plan import versions_by_name

    if not _holds_elf(wheel):  # nothing linked, nothing to repair (repair refuses such a wheel)
        return _copied(wheel, out_dir)
    libraries = list(linked.get("libraries", []))
    catalog = load_catalog()
    unknown = sorted(
        {e["distribution"] for e in libraries if catalog.release(e["distribution"], e["version"]) is None}
    )
    if unknown:
        # A release newer than the shipped catalog: learned from the index pip itself uses.
        from slimwheel.catalog.learn import learn_on_demand
        from slimwheel.index import Cache, IndexClient, resolve_index_settings

        with IndexClient(resolve_index_settings(), cache=Cache.default()) as client:
            catalog = learn_on_demand(catalog, unknown, client)
    linked_versions = versions_by_name((entry["name"], entry["version"]) for entry in libraries)
    options = RepairOptions(cuda_major=cuda_major, linked_versions=linked_versions)
    releases = framework_files(frameworks)
    with scratch_folder("slimwheel-finish-") as scratch:
        audited = _audit_first(wheel, scratch, releases, catalog) if releases else wheel
        outcome = repair_wheel(
            audited,
            out_dir,
            catalog,
            options=options,
            embed=() if embed_loader else None,
            # check: the framework's files as its requirement installs them (torch/lib), and loaded
            # first, as the package's Python imports the framework before its extension.
            dist_files=StaticDistFiles({r.distribution: [r] for r in releases}) if releases else None,
            preloaded=tuple(r.distribution for r in releases),
        )
    if outcome.output is None or not outcome.ok:
        raise FinishError(f"repair wrote no passing wheel for {wheel.name}")
    return outcome.output


def _holds_elf(wheel: Path) -> bool:
    """Whether a member of ``wheel`` is an ELF file (by its first bytes, nothing else inflated)."""
    from slimwheel.analysis.inspect import starts_like_elf
    from slimwheel.wheel import Wheel

    with Wheel.open(wheel) as opened:
        return any(not member.is_dir and starts_like_elf(opened, member) for member in opened.members)


def _copied(wheel: Path, out_dir: Path) -> Path:
    """``wheel`` copied into ``out_dir`` under a temporary name, then renamed: the path written."""
    import shutil

    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / wheel.name
    temporary = out_dir / f".{wheel.name}.{os.getpid()}.part"
    try:
        shutil.copyfile(wheel, temporary)
        temporary.replace(target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


def metapackage_wheel(
    out_dir: Path,
    project: Mapping[str, Any],
    *,
    name: str,
    requires: Sequence[str],
    extras: Sequence[tuple[str, Sequence[str]]],
) -> Path:
    """A pure wheel (``py3-none-any``) of metadata only: ``name`` at ``[project]`` version, with
    ``requires`` and ``extras``; no CMake, no files of the project (those are the other
    distributions')."""
    from slimwheel.wheel import WheelWriter, date_time_from_environment

    version = project.get("version")
    if not isinstance(version, str):
        raise FinishError("a metapackage needs a static [project] version (the others are pinned to it)")
    headers = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if isinstance(project.get("description"), str):
        headers.append(f"Summary: {project['description']}")
    if isinstance(project.get("requires-python"), str):
        headers.append(f"Requires-Python: {project['requires-python']}")
    metadata = metadata_with(
        ("\n".join(headers) + "\n").encode(), name=None, requires=requires, extras=extras
    )
    stem = f"{wheel_name(name)}-{version}"
    wheel_file = b"Wheel-Version: 1.0\nGenerator: slimwheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{stem}-py3-none-any.whl"
    with WheelWriter(target, date_time=date_time_from_environment(os.environ)) as writer:
        writer.add_bytes(f"{stem}.dist-info/METADATA", metadata, mode=0o644)
        writer.add_bytes(f"{stem}.dist-info/WHEEL", wheel_file, mode=0o644)
        writer.close(f"{stem}.dist-info/RECORD")
    return target
