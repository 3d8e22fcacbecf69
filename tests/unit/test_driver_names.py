"""The driver's libraries by name: which names the host's driver answers, and its soname for a copy."""

from __future__ import annotations

import pytest

from slimwheel.analysis import driver_soname, is_driver_library, provided_by_driver


@pytest.mark.parametrize(
    ("name", "driver", "host", "soname"),
    [
        ("libcuda.so.1", True, True, "libcuda.so.1"),
        ("libcuda.so", True, True, "libcuda.so.1"),
        ("libcuda-f27223c5.so.580.95.05", True, False, "libcuda.so.1"),  # auditwheel's graft
        ("libnvidia-ml-9933cfe9.so.580.95.05", True, False, "libnvidia-ml.so.1"),
        ("libnvidia-ml.so.1", True, True, "libnvidia-ml.so.1"),
        ("libnvcuvid.so.1", True, True, "libnvcuvid.so.1"),
        ("libnvidia-nvvm.so.4", True, True, "libnvidia-nvvm.so.4"),
        ("libcudart.so.13", False, False, None),
        ("libcudadebugger.so.1", False, False, None),
        ("nvcuda.dll", False, False, None),
    ],
)
def test_driver_names(name: str, driver: bool, host: bool, soname: str | None) -> None:
    assert is_driver_library(name) is driver
    assert provided_by_driver(name) is host
    assert driver_soname(name) == soname
