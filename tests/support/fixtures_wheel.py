"""Wheel fixtures and builders for damaged or hostile wheels: real zip files on disk, no mocks.

``make_wheel`` (tests/support/wheels.py) builds a correct wheel; the helpers here then break it the way
real files break: members added behind RECORD's back, bytes patched or cut out, RECORD edited.
"""

from __future__ import annotations

import io
import random
import shutil
import struct
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.wheels import make_wheel

__all__ = [
    "BIG_STORED_MEMBER",
    "CUDA_WHEEL_NAME",
    "CUDA_WHEEL_TAG",
    "CUDA_WHEEL_VERSION",
    "CountingFile",
    "RawMember",
    "add_raw_members",
    "big_stored_wheel",
    "compressible_bytes",
    "cuda_wheel",
    "cuda_wheel_contents",
    "cut_bytes",
    "data_offset",
    "make_mixed_wheel",
    "patch_bytes",
    "patch_central_directory",
    "pseudo_random_bytes",
    "raw_member_data",
    "rewrite_wheel",
]

CUDA_WHEEL_NAME = "nvidia-cudss-cu13"
CUDA_WHEEL_VERSION = "1.0.0.35"
CUDA_WHEEL_TAG = "py3-none-manylinux_2_17_x86_64"
_DATA = "nvidia_cudss_cu13-1.0.0.35.data"
BIG_STORED_MEMBER = "nvidia/cu13/lib/libbig.so.1"


@dataclass(frozen=True)
class RawMember:
    """A zip entry written exactly as given: the name is not cleaned, RECORD is not updated."""

    name: str
    data: bytes = b""
    compress_type: int = zipfile.ZIP_DEFLATED
    external_attr: int = 0o644 << 16


class CountingFile(io.FileIO):
    """A real file that counts the bytes read through it (to prove what opening a wheel reads)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data or b"")
        return data or b""

    def readall(self) -> bytes:
        data = super().readall()
        self.bytes_read += len(data)
        return data

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        count = super().readinto(buffer) or 0
        self.bytes_read += count
        return count


def pseudo_random_bytes(size: int, seed: int = 0) -> bytes:
    """Incompressible but reproducible content, so a deflated member stays as big as it claims."""
    return random.Random(seed).randbytes(size)


_SIXTEEN_SYMBOLS = bytes(b"\x00\x00\x00\x00ABCDEFGHabcdxyz."[i % 16] for i in range(256))


def compressible_bytes(size: int, seed: int = 0) -> bytes:
    """Reproducible content that deflates to about half its size (16 symbols, one a quarter of the
    time), so inflating it does real Huffman and match decoding rather than copying stored blocks."""
    return random.Random(seed).randbytes(size).translate(_SIXTEEN_SYMBOLS)


def add_raw_members(path: Path, members: Sequence[RawMember]) -> Path:
    """Append entries to an existing zip without touching RECORD (duplicates allowed)."""
    with warnings.catch_warnings(), zipfile.ZipFile(path, "a") as archive:
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns on duplicate names
        for member in members:
            info = zipfile.ZipInfo(member.name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = member.compress_type
            info.external_attr = member.external_attr
            info.create_system = 3  # Unix, so external_attr's high bits are a mode
            archive.writestr(info, member.data)
    return path


def rewrite_wheel(
    path: Path,
    *,
    replace: Mapping[str, bytes | None] | None = None,
    compression: Mapping[str, int] | None = None,
) -> Path:
    """Rewrite a zip in place: ``replace`` gives members new content (None drops them) without
    updating RECORD; ``compression`` sets a member's method. Entry order and attributes are kept."""
    replace = replace or {}
    compression = compression or {}
    rewritten = path.with_suffix(".rewriting")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rewritten, "w") as target:
        for info in source.infolist():
            content = replace.get(info.filename, source.read(info))
            if content is None:
                continue
            copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            copy.external_attr = info.external_attr
            copy.create_system = info.create_system
            copy.compress_type = compression.get(info.filename, info.compress_type)
            target.writestr(copy, content)
    rewritten.replace(path)
    return path


def patch_bytes(path: Path, old: bytes, new: bytes) -> Path:
    """Replace every occurrence of ``old`` with the same-length ``new`` (names in headers, say)."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new))
    return path


def cut_bytes(path: Path, start: int, length: int) -> Path:
    """Remove ``length`` bytes at ``start``, leaving what follows (the central directory) intact."""
    data = path.read_bytes()
    path.write_bytes(data[:start] + data[start + length :])
    return path


def data_offset(path: Path, member: str) -> int:
    """Where a member's data starts in the file, from its local header."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    with path.open("rb") as file:
        file.seek(info.header_offset + 26)
        header = file.read(4)
    name_length = int.from_bytes(header[:2], "little")
    extra_length = int.from_bytes(header[2:], "little")
    return info.header_offset + 30 + name_length + extra_length


def raw_member_data(path: Path, member: str) -> bytes:
    """A member's bytes as stored in the archive (raw deflate data for a deflated member)."""
    with zipfile.ZipFile(path) as archive:
        compress_size = archive.getinfo(member).compress_size
    with path.open("rb") as file:
        file.seek(data_offset(path, member))
        return file.read(compress_size)


_CENTRAL_MAGIC = b"PK\x01\x02"
_CENTRAL_FIELDS = {"crc": 16, "compress_size": 20, "file_size": 24}  # offsets in a central record
_LOCAL_FIELDS = {"crc": 14, "compress_size": 18, "file_size": 22}  # offsets in a local header


def patch_central_directory(path: Path, member: str, **fields: int) -> Path:
    """Overwrite ``crc``, ``compress_size`` or ``file_size`` of one (non-zip64) member in its central
    directory record and its local header, leaving its data alone: a member whose data disagrees with
    what the archive says about it."""
    with zipfile.ZipFile(path) as archive:
        position = archive.start_dir
        header_offset = archive.getinfo(member).header_offset
    data = bytearray(path.read_bytes())
    while data[position : position + 4] == _CENTRAL_MAGIC:
        name_length, extra_length, comment_length = struct.unpack_from("<3H", data, position + 28)
        if data[position + 46 : position + 46 + name_length].decode() == member:
            break
        position += 46 + name_length + extra_length + comment_length
    else:
        raise AssertionError(f"no central directory record for {member}")
    for field, value in fields.items():
        struct.pack_into("<I", data, position + _CENTRAL_FIELDS[field], value)
        struct.pack_into("<I", data, header_offset + _LOCAL_FIELDS[field], value)
    path.write_bytes(bytes(data))
    return path


def make_mixed_wheel(
    directory: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    *,
    stored: Sequence[str],
    tag: str = "py3-none-any",
    requires: Sequence[str] = (),
) -> Path:
    """A wheel whose members are deflated except those named in ``stored``."""
    path = make_wheel(directory, name, version, files, tag=tag, requires=requires)
    return rewrite_wheel(path, compression=dict.fromkeys(stored, zipfile.ZIP_STORED))


def cuda_wheel_contents() -> dict[str, bytes]:
    """What ``cuda_wheel`` holds besides dist-info: a stored and a deflated library over 1 MB, plus
    members under each kind of .data scheme."""
    return {
        "nvidia/__init__.py": b"",
        "nvidia/cu13/__init__.py": b"",
        "nvidia/cu13/include/cudss.h": b"#define CUDSS_VERSION 1000\n" * 40,
        "nvidia/cu13/lib/libcudss.so.0": pseudo_random_bytes(1_500_000, seed=1),
        f"{_DATA}/platlib/nvidia/cu13/lib/libcudss_mtlayer_gomp.so.0": pseudo_random_bytes(1_200_000, seed=2),
        f"{_DATA}/purelib/nvidia_cudss_extra/__init__.py": b"VERSION = '1.0'\n",
        f"{_DATA}/scripts/cudss-info": b"#!/bin/sh\necho cudss\n",
    }


@pytest.fixture(scope="session")
def _pristine_cuda_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mixed_wheel(
        tmp_path_factory.mktemp("cuda-wheel"),
        CUDA_WHEEL_NAME,
        CUDA_WHEEL_VERSION,
        cuda_wheel_contents(),
        stored=["nvidia/cu13/lib/libcudss.so.0"],
        tag=CUDA_WHEEL_TAG,
        requires=["nvidia-cublas-cu13>=13.0", 'nvidia-cuda-runtime-cu13; platform_system == "Linux"'],
    )


@pytest.fixture
def cuda_wheel(_pristine_cuda_wheel: Path, tmp_path: Path) -> Path:
    """A fresh copy (safe to damage) of nvidia_cudss_cu13-1.0.0.35-py3-none-manylinux_2_17_x86_64.whl:
    ``libcudss.so.0`` stored (1.5 MB), the platlib ``libcudss_mtlayer_gomp.so.0`` deflated (1.2 MB)."""
    copy = tmp_path / _pristine_cuda_wheel.name
    shutil.copyfile(_pristine_cuda_wheel, copy)
    return copy


@pytest.fixture(scope="session")
def big_stored_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel with a 20 MB stored member (``BIG_STORED_MEMBER``); read-only, shared by the session."""
    return make_mixed_wheel(
        tmp_path_factory.mktemp("big-wheel"),
        "big-lib",
        "2.0",
        {BIG_STORED_MEMBER: bytes(20 * 1024 * 1024), "big_lib/__init__.py": b""},
        stored=[BIG_STORED_MEMBER],
        tag="py3-none-manylinux_2_28_x86_64",
    )
