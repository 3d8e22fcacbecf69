"""NVIDIA library knowledge: the driver's libraries, what the host provides, and which library's API a
symbol name belongs to.
"""

from __future__ import annotations

import re

from slimwheel.names import NameStyle, parse_library_file_name
from slimwheel.policy import host_sonames

__all__ = ["DRIVER_LIBRARY_NAMES", "api_library_of", "is_driver_library", "is_system_library"]


# The driver's user-space libraries: they come with the host's driver and never from a wheel.
DRIVER_LIBRARY_NAMES = frozenset(
    {
        "cuda",
        "nvidia-ml",
        "nvcuvid",
        "nvidia-encode",
        "nvidia-ptxjitcompiler",
        "nvidia-nvvm",
        "nvidia-opticalflow",
    }
)
_LOADER = re.compile(r"^ld-linux.*\.so\.\d+$|^ld64\.so\.\d+$")
# API symbol prefixes of NVIDIA's libraries: a defined symbol with one of these means the library's
# code is linked in. The longest prefix wins (cublasLt before cublas).
# The APIs are camelCase (cudssCreate, ncclCommInitRank) but NVSHMEM's (nvshmem_malloc): a user's own
# cudss_helper is not cuDSS code.
_API_PREFIX_BODY = (
    r"(cublasLt|cublasXt|cublas|cudss|cudnn|cufftXt|cufft|curand|cusparseLt|cusparse|cusolverMg|"
    r"cusolverDn|cusolverSp|cusolverRf|cusolver|cutensor|nccl|nvrtc|nvJitLink|cupti|npp|nvjpeg|cuda)(?=[A-Z])"
    r"|(nvshmemx|nvshmem)(?=_)"
)
_API_PREFIX = re.compile(rf"^(?:{_API_PREFIX_BODY})")
_PREFIX_LIBRARY = {
    "cublasXt": "cublas", "cufftXt": "cufft", "cusolverMg": "cusolverMg", "cusolverDn": "cusolver",
    "cusolverSp": "cusolver", "cusolverRf": "cusolver", "nvshmemx": "nvshmem", "cuda": "cudart",
}  # fmt: skip


def api_library_of(symbol: str) -> str | None:
    """The NVIDIA library whose API a symbol name belongs to (``cublasLtMatmul`` -> ``cublasLt``)."""
    match = _API_PREFIX.match(symbol)
    if match is None:
        return None
    prefix = match[1] or match[2]
    return _PREFIX_LIBRARY.get(prefix, prefix)


def is_driver_library(soname: str) -> bool:
    parsed = parse_library_file_name(soname)
    return (
        parsed is not None and parsed.stem in DRIVER_LIBRARY_NAMES and parsed.style is not NameStyle.WINDOWS
    )


def is_system_library(soname: str, glibc: tuple[int, int] | None = None) -> bool:
    """The manylinux whitelist (auditwheel's policy) for the wheel's level ``glibc`` (None: any
    level), or a dynamic loader: what the host provides."""
    return soname in host_sonames(glibc) or bool(_LOADER.match(soname))
