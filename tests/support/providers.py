"""Fake NVIDIA provider wheels around gcc-built libraries, laid out as NVIDIA's real ones are."""

from __future__ import annotations

import random
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.elfbuild import compile_shared
from tests.support.fixtures_elf import ElfZoo
from tests.support.wheels import make_wheel

__all__ = ["ProviderWheels", "build_provider_wheels"]

CU13_REQUIRES = (
    "cuda-toolkit[cublas,nvrtc]==13.*",
    "nvidia-cublas==13.*",
)


@dataclass(frozen=True)
class ProviderWheels:
    directory: Path
    cudss_cu13: Path
    cudss_cu13_old: Path
    cudss_cu12: Path
    cudss_cu12_windows: Path
    cublas: Path
    nvrtc: Path
    toolkit: Path

    @property
    def all(self) -> tuple[Path, ...]:
        return tuple(sorted(self.directory.glob("*.whl")))


def build_provider_wheels(zoo: ElfZoo, directory: Path) -> ProviderWheels:
    """cuDSS for CUDA 12 and 13 (0.7 with ``libcudss.so.0``, 1.0 with ``.so.1``), cuBLAS, NVRTC and
    cuda-toolkit, enough for pip to resolve cuDSS 1.0's requirements from a test index."""
    directory.mkdir(parents=True, exist_ok=True)
    cudss = zoo.libcudss.read_bytes()
    cublas = zoo.libcublas.read_bytes()
    linux = "py3-none-manylinux_2_17_x86_64.manylinux_2_17_aarch64"
    cudss_cu13 = make_wheel(
        directory,
        "nvidia-cudss-cu13",
        "1.0.0.35",
        {
            "nvidia/cu13/lib/libcudss.so.1": cudss,
            "nvidia/cu13/include/cudss.h": b"/* cudss */\n",
            # Stored, incompressible bulk, as NVIDIA's big members are: lazy reads must skip it.
            "nvidia/cu13/lib/libcudss_static.a": random.Random(13).randbytes(2 << 20),
        },
        tag=linux,
        requires=CU13_REQUIRES,
        compression=zipfile.ZIP_STORED,
    )
    cudss_cu13_old = make_wheel(
        directory, "nvidia-cudss-cu13", "0.7.1.6", {"nvidia/cu13/lib/libcudss.so.0": cudss}, tag=linux
    )
    cudss_cu12 = make_wheel(
        directory, "nvidia-cudss-cu12", "1.0.0.35", {"nvidia/cu12/lib/libcudss.so.1": cudss}, tag=linux
    )
    cudss_cu12_windows = make_wheel(
        directory,
        "nvidia-cudss-cu12",
        "1.0.0.35",
        {"nvidia/cu12/bin/cudss64_1.dll": b"MZ not really a DLL"},
        tag="py3-none-win_amd64",
    )
    cublas_wheel = make_wheel(
        directory,
        "nvidia-cublas",
        "13.1.0.3",
        {"nvidia/cu13/lib/libcublas.so.13": cublas},
        tag="py3-none-manylinux_2_27_x86_64.manylinux_2_27_aarch64",
    )
    libnvrtc = compile_shared(
        directory / ".build" / "libnvrtc.so.13",
        {"nvrtc.c": "int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }\n"},
        soname="libnvrtc.so.13",
        version_nodes={"libnvrtc.so.13": ["nvrtc*"]},
    )
    nvrtc = make_wheel(
        directory,
        "nvidia-cuda-nvrtc",
        "13.0.88",
        {"nvidia/cu13/lib/libnvrtc.so.13": libnvrtc.read_bytes()},
        tag="py3-none-manylinux_2_17_x86_64.manylinux_2_17_aarch64",
    )
    shutil.rmtree(directory / ".build")
    toolkit = make_wheel(
        directory,
        "cuda-toolkit",
        "13.0.2",
        {},
        tag="py2.py3-none-any",
        requires=(
            "nvidia-cublas==13.1.0.3.*; extra == 'cublas'",
            "nvidia-cuda-nvrtc==13.0.88.*; extra == 'nvrtc'",
        ),
        metadata_extra=(("Provides-Extra", "cublas"), ("Provides-Extra", "nvrtc")),
    )
    return ProviderWheels(
        directory, cudss_cu13, cudss_cu13_old, cudss_cu12, cudss_cu12_windows, cublas_wheel, nvrtc, toolkit
    )
