"""The sdist of one distribution of a tree: what ``build_sdist`` makes of scikit-build-core's sdist when
a distribution is chosen (``-C slimwheel.distribution=torch``).

``pip install cudss_solver_torch-0.1.0.tar.gz`` must build that distribution where it lands (against
the torch installed there with ``--no-build-isolation``, or the one pip installs for an isolated
build), so the sdist carries the choice: its top folder and file name use the distribution's name,
its ``PKG-INFO`` says ``Name: cudss-solver-torch`` (and, being metadata of a build that adds
requirements, ``Dynamic: Requires-Dist`` where the metadata version has ``Dynamic``), and its
``pyproject.toml`` gets ``distribution = "torch"`` in ``[tool.slimwheel]``, plus ``cuda = <major>``
when the name has ``{major}`` in it (``cudss-solver-cu{major}``: the file name promises that major).

Members are copied as they are (modes, times, order); only those two files are rewritten, the
pyproject as text (one line inserted after the ``[tool.slimwheel]`` header, the keys it replaces
taken out of that table) and read back as TOML to be sure it says what was meant.
"""

from __future__ import annotations

import gzip
import importlib
import io
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

from slimwheel.build.finish import wheel_name
from slimwheel.build.settings import BuildSettingsError
from slimwheel.metadata import metadata_with

__all__ = ["pin_distribution", "rename_sdist"]

_HEADER = re.compile(r"^\s*\[\s*tool\s*\.\s*slimwheel\s*\]\s*(#.*)?$")
_TABLE = re.compile(r"^\s*\[")


def pin_distribution(text: str, key: str, cuda: int | None) -> str:
    """``pyproject.toml`` text whose ``[tool.slimwheel]`` says ``distribution = "<key>"`` (and
    ``cuda = <cuda>``); every other line kept."""
    pinned = {"distribution": f'"{key}"', **({"cuda": str(cuda)} if cuda is not None else {})}
    newline = "\r\n" if "\r\n" in text else "\n"
    added = [f"{name} = {value}{newline}" for name, value in pinned.items()]
    note = f"# written by slimwheel's build_sdist: this sdist builds distribution {key!r}{newline}"
    lines = text.splitlines(keepends=True)
    header = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if header is None:
        # Only subtables ([tool.slimwheel.distributions.*]) so far: TOML lets the table follow them.
        ending = "" if not lines or lines[-1].endswith("\n") else newline
        result = text + ending + newline + "[tool.slimwheel]" + newline + note + "".join(added)
    else:
        end = next((i for i in range(header + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
        replaced = re.compile(rf"^\s*({'|'.join(map(re.escape, pinned))})\s*=")
        body = [line for line in lines[header + 1 : end] if not replaced.match(line)]
        result = "".join([*lines[: header + 1], note, *added, *body, *lines[end:]])
    try:
        table = _toml().loads(result).get("tool", {}).get("slimwheel", {})
    except ValueError:  # tomllib.TOMLDecodeError: [tool.slimwheel] was written another way
        table = {}
    if any(str(table.get(name)) != value.strip('"') for name, value in pinned.items()):
        raise BuildSettingsError(f"pyproject.toml: cannot write distribution = {key!r} into [tool.slimwheel]")
    return result


def rename_sdist(source: Path, out_dir: Path, *, name: str, key: str, cuda: int | None) -> Path:
    """``source`` (``<project>-<version>.tar.gz``) written into ``out_dir`` as the sdist of
    distribution ``name`` that builds ``[tool.slimwheel.distributions.<key>]``."""
    old_stem = source.name.removesuffix(".tar.gz")
    version = old_stem.rpartition("-")[2]
    new_stem = f"{wheel_name(name)}-{version}"
    target = out_dir / f"{new_stem}.tar.gz"
    with tarfile.open(source, "r:gz") as archive:
        members = archive.getmembers()
        mtime = max((m.mtime for m in members), default=0)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as out:
            for member in members:
                head, _slash, rest = member.name.partition("/")
                if head != old_stem:
                    raise BuildSettingsError(f"{source.name}: {member.name} is outside {old_stem}/")
                info = _copy_info(member, f"{new_stem}/{rest}" if rest else new_stem)
                data = archive.extractfile(member) if member.isfile() else None
                if data is None:
                    out.addfile(info)
                    continue
                content = data.read()
                if rest == "PKG-INFO":
                    content = _pkg_info(content, name)
                elif rest == "pyproject.toml":
                    content = pin_distribution(content.decode(), key, cuda).encode()
                info.size = len(content)
                out.addfile(info, io.BytesIO(content))
    out_dir.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle, gzip.GzipFile(fileobj=handle, mode="wb", mtime=mtime) as gz:
        gz.write(buffer.getvalue())
    return target


def _copy_info(member: tarfile.TarInfo, name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    for field in ("mode", "mtime", "type", "linkname", "uid", "gid", "uname", "gname", "size"):
        setattr(info, field, getattr(member, field))
    return info


def _pkg_info(content: bytes, name: str) -> bytes:
    renamed = metadata_with(content, name=name, requires=())
    version = re.search(rb"^Metadata-Version:\s*(\d+)\.(\d+)", renamed, re.MULTILINE | re.IGNORECASE)
    has_dynamic = version is not None and (int(version[1]), int(version[2])) >= (2, 2)
    if not has_dynamic or re.search(rb"^Dynamic:\s*Requires-Dist\s*$", renamed, re.MULTILINE | re.IGNORECASE):
        return renamed
    # The build adds Requires-Dist (the NVIDIA wheels it linked, the framework minor, the core):
    # metadata 2.2 says a field that is not Dynamic must be the same in every wheel built from here.
    newline = b"\r\n" if b"\r\n" in renamed else b"\n"
    head, separator, body = renamed.partition(newline + newline)
    dynamic = newline + b"Dynamic: Requires-Dist"
    return head.rstrip(newline) + dynamic + (separator + body if separator else newline)


def _toml() -> Any:
    # As settings.load_pyproject: tomllib on 3.11+, else the tomli scikit-build-core depends on.
    return importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
