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
        ("libtensorflow_framework.so.2", "tensorflow"),
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
