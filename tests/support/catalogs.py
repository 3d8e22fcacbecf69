"""Small catalogs written as data, shaped like NVIDIA's real releases, for testing pure logic."""

from __future__ import annotations

import hashlib

from slimwheel.catalog.model import Catalog, CudaMajorSource, LibraryFile, Release, WheelFacts

__all__ = ["fake_sha256", "release", "sample_catalog"]

LINUX_17 = ("manylinux_2_17_x86_64", "manylinux_2_17_aarch64")
LINUX_27 = ("manylinux_2_27_x86_64", "manylinux_2_27_aarch64")


def fake_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def release(
    distribution: str,
    version: str,
    cuda: int,
    linux_paths: tuple[str, ...],
    *,
    windows_paths: tuple[str, ...] = (),
    linux_tags: tuple[str, ...] = LINUX_17,
    requires: tuple[str, ...] = (),
    source: CudaMajorSource = CudaMajorSource.NAME_SUFFIX,
) -> Release:
    dist = distribution.replace("-", "_")
    wheels = []
    for tag in linux_tags:
        libraries = tuple(
            LibraryFile(
                path, 1000, fake_sha256(f"{distribution}{version}{tag}{path}"), path.rsplit("/", 1)[-1]
            )
            for path in linux_paths
        )
        wheels.append(WheelFacts(f"{dist}-{version}-py3-none-{tag}.whl", (tag,), 5000, None, libraries))
    if windows_paths:
        libraries = tuple(LibraryFile(p, 1000, None, p.rsplit("/", 1)[-1]) for p in windows_paths)
        wheels.append(
            WheelFacts(f"{dist}-{version}-py3-none-win_amd64.whl", ("win_amd64",), 5000, None, libraries)
        )
    return Release(distribution, version, cuda, source, requires, tuple(wheels))


def sample_catalog() -> Catalog:
    cu13_requires = ("nvidia-cublas==13.*", "nvidia-cuda-nvrtc==13.*")
    return Catalog(
        (
            release("nvidia-cudss-cu12", "0.7.1.6", 12, ("nvidia/cu12/lib/libcudss.so.0",),
                    windows_paths=("nvidia/cu12/bin/cudss64_0.dll",)),
            release("nvidia-cudss-cu12", "1.0.0.35", 12, ("nvidia/cu12/lib/libcudss.so.1",),
                    windows_paths=("nvidia/cu12/bin/cudss64_1.dll",)),
            release("nvidia-cudss-cu13", "0.7.1.6", 13, ("nvidia/cu13/lib/libcudss.so.0",)),
            release("nvidia-cudss-cu13", "1.0.0.35", 13, ("nvidia/cu13/lib/libcudss.so.1",),
                    windows_paths=("nvidia/cu13/bin/cudss64_1.dll",), requires=cu13_requires),
            release("nvidia-cublas", "13.1.0.3", 13,
                    ("nvidia/cu13/lib/libcublas.so.13", "nvidia/cu13/lib/libcublasLt.so.13"),
                    linux_tags=LINUX_27, source=CudaMajorSource.FOLDER),
            release("nvidia-cuda-nvrtc", "13.0.88", 13, ("nvidia/cu13/lib/libnvrtc.so.13",),
                    source=CudaMajorSource.FOLDER),
            release("nvidia-cusparse", "12.6.3.3", 13, ("nvidia/cu13/lib/libcusparse.so.12",),
                    source=CudaMajorSource.TOOLKIT_PIN),
            release("nvidia-cusparse-cu12", "12.5.10.65", 12, ("nvidia/cusparse/lib/libcusparse.so.12",)),
        ),
        origin="sample",
    )  # fmt: skip
