"""Build real wheel files from dicts (as pypa/installer's tests do), with a correct RECORD."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["make_wheel", "record_hash"]


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def make_wheel(
    directory: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    *,
    tag: str = "py3-none-any",
    requires: Iterable[str] = (),
    metadata_extra: Iterable[tuple[str, str]] = (),
    compression: int = zipfile.ZIP_DEFLATED,
    filename: str | None = None,
) -> Path:
    """Write ``<name>-<version>-<tag>.whl`` into ``directory`` and return its path.

    ``files`` maps archive paths to contents; the dist-info files are added. Members are written in
    sorted order with a fixed timestamp, so the same input gives the same bytes.
    """
    dist = name.replace("-", "_")
    dist_info = f"{dist}-{version}.dist-info"
    metadata_lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata_lines += [f"Requires-Dist: {req}" for req in requires]
    metadata_lines += [f"{key}: {value}" for key, value in metadata_extra]
    purelib = "true" if tag.endswith("-none-any") else "false"
    wheel_lines = ["Wheel-Version: 1.0", "Generator: slimwheel-tests", f"Root-Is-Purelib: {purelib}"]
    interpreters, abis, platforms = tag.split("-")
    for interpreter in interpreters.split("."):
        for abi in abis.split("."):
            wheel_lines += [f"Tag: {interpreter}-{abi}-{platform}" for platform in platforms.split(".")]
    contents = dict(files)
    contents[f"{dist_info}/METADATA"] = ("\n".join(metadata_lines) + "\n").encode()
    contents[f"{dist_info}/WHEEL"] = ("\n".join(wheel_lines) + "\n").encode()
    record_lines = [f"{path},{record_hash(data)},{len(data)}" for path, data in sorted(contents.items())]
    record_lines.append(f"{dist_info}/RECORD,,")
    contents[f"{dist_info}/RECORD"] = ("\n".join(record_lines) + "\n").encode()
    path = directory / (filename or f"{dist}-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for member in sorted(contents):
            info = zipfile.ZipInfo(member, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = compression
            info.external_attr = 0o644 << 16
            archive.writestr(info, contents[member])
    return path


def many_files_wheel(directory: Path, count: int) -> Path:
    """A wheel of ``count`` one-byte modules (stored) and its dist-info: for what grows with members."""
    files = {f"many/module_{i:05d}.py": b"x" for i in range(count)}
    return make_wheel(directory, "many", "1.0", files, compression=zipfile.ZIP_STORED)
