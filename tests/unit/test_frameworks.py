"""slimwheel.frameworks: which framework's import loads a soname."""

from __future__ import annotations

import pytest

from slimwheel.frameworks import framework_of


@pytest.mark.parametrize(
    ("soname", "distribution"),
    [
        ("libtorch.so", "torch"),
        ("libtorch_cpu.so", "torch"),
        ("libtorch_cuda.so", "torch"),
        ("libtorch_python.so", "torch"),
        ("libc10.so", "torch"),
        ("libc10_cuda.so", "torch"),
        ("libshm.so", "torch"),
        # torch-tensorrt 2.14's torchtrtc; torch 1.13's split CUDA library.
        ("libtorch_nvshmem.so", "torch"),
        ("libcaffe2_nvrtc.so", "torch"),
        ("libtorch_cuda_cu.so", "torch"),
        ("libtensorflow_framework.so.2", "tensorflow"),
        # openmm-cuda-12 8.6.1's plugins, which openmm's libOpenMM.so loads.
        ("libOpenMM.so", "openmm"),
        ("libOpenMMAmoeba.so", "openmm"),
        ("libOpenMMCUDA.so", None),  # the plugin's own
        ("libtensorflow_cc.so.2", "tensorflow"),
        # Not a framework's: torchvision's own library, a versioned name torch never ships, NVIDIA's.
        ("libtorchvision.so", None),
        ("libtorch.so.1", None),
        ("libc10d.so", None),
        ("libcudart.so.12", None),
        ("libgomp.so.1", None),
    ],
)
def test_framework_of(soname: str, distribution: str | None) -> None:
    framework = framework_of(soname)
    assert (framework.distribution if framework else None) == distribution
