from __future__ import annotations

import pytest

from slimwheel.analysis import api_library_of


@pytest.mark.parametrize(
    ("symbol", "library"),
    [
        ("cudssCreate", "cudss"),
        ("cublasLtMatmul", "cublasLt"),
        ("cublasCreate_v2", "cublas"),
        ("cublasXtCreate", "cublas"),
        ("ncclAllReduce", "nccl"),
        ("cudaMalloc", "cudart"),
        ("cusolverDnCreate", "cusolver"),
        ("nvshmem_malloc", "nvshmem"),
        ("nvshmemx_init_attr", "nvshmem"),
        ("cudss_status_name", None),  # a user's helper, not cuDSS's API
        ("cudaq", None),
        ("cublas", None),
        ("my_cudssCreate", None),
        ("nvshmemInit", None),
    ],
)
def test_api_library_of(symbol: str, library: str | None) -> None:
    assert api_library_of(symbol) == library
