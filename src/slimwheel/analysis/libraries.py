"""NVIDIA library knowledge: the driver's libraries, what the host provides, and which library's API a
symbol name belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from slimwheel.names import NameStyle, parse_library_file_name
from slimwheel.policy import host_sonames

__all__ = [
    "ALSO_BUILT_BY_OTHERS",
    "DRIVER_API",
    "DRIVER_LIBRARY_NAMES",
    "LOADED_BY_ITS_LIBRARY",
    "LOADS_BY_SONAME",
    "SAME_IN_EVERY_MAJOR",
    "STATIC_ONLY",
    "VERSIONED_IN_EVERY_BUILD",
    "LoadBySoname",
    "NvidiaProduct",
    "api_library_of",
    "driver_api",
    "driver_soname",
    "is_driver_library",
    "is_dynamic_loader",
    "is_system_library",
    "nvidia_product_of",
    "other_makers_of",
    "provided_by_driver",
    "runtime_majors",
    "unbound_nvidia_needs",
]


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
# The API functions of the driver's libraries, by soname stem: what a wheel's file imports from one of
# them (unversioned, as the driver defines none), and what verify's stand-in for it exports on a
# machine without the driver (``slimwheel.elf.stub``). The CUDA driver API's are cuInit, cuMemAlloc_v2...
# (cuBLAS's, cublasCreate_v2, are not: the letter after "cu" is a capital).
DRIVER_API: dict[str, re.Pattern[str]] = {
    "cuda": re.compile(r"cu[A-Z]\w*"),
    "nvidia-ml": re.compile(r"nvml[A-Z]\w*"),
    "nvcuvid": re.compile(r"cuvid[A-Z]\w*"),
    "nvidia-encode": re.compile(r"NvEncodeAPI\w*"),
}


def driver_api(soname: str) -> re.Pattern[str] | None:
    """The names of the API functions of driver library ``soname``, where ``DRIVER_API`` knows them."""
    parsed = parse_library_file_name(soname)
    if parsed is None or parsed.style is NameStyle.WINDOWS or not is_driver_library(soname):
        return None
    return DRIVER_API.get(parsed.stem)


# Libraries whose ABI is their own, the same whichever CUDA major's wheel ships them: the Khronos
# OpenCL ICD loader (nvidia-cuda-opencl, nvidia-cuda-opencl-cu12, CUDA 11's runtime wheel), which
# OpenMM 8.6's OpenCL plugins need with nothing of CUDA. Alone, they tell no CUDA major.
SAME_IN_EVERY_MAJOR = frozenset({"OpenCL"})
# Libraries NVIDIA's wheels ship under a soname other projects build too, by soname stem: who else does.
# A wheel's copy of one is NVIDIA's only where its bytes, its build-id or its file version say so; the
# soname alone says nothing. pyopencl 2026.1.4 vendors ocl-icd's libOpenCL.so.1, whose settings
# (OCL_ICD_DEFAULT_PLATFORM, OCL_ICD_PLATFORM_SORT) the Khronos loader in nvidia-cuda-opencl does not
# read; nvidia-libcal-cu12 ships a build of OpenUCX's UCC and its plugins.
ALSO_BUILT_BY_OTHERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"OpenCL"), "an OpenCL ICD loader, which ocl-icd and Khronos's project build too"),
    (re.compile(r"ucc(_\w+)?"), "OpenUCX's UCC (or one of its plugins)"),
)


def other_makers_of(stem: str) -> str | None:
    """Who else builds the library of soname stem ``stem`` (``OpenCL``, ``ucc_tl_ucp``), or None for
    a library only NVIDIA builds."""
    return next((who for pattern, who in ALSO_BUILT_BY_OTHERS if pattern.fullmatch(stem)), None)


@dataclass(frozen=True)
class LoadBySoname:
    """An NVIDIA library that loads another of its wheel by soname at run time (``dlopen``), shipped in
    some releases with no search path of its own: glibc then finds the other only through the
    DT_RPATH of the objects that loaded it (a DT_RUNPATH serves a file's own DT_NEEDED only), or a
    toolkit on the loader's path."""

    soname: str
    loads: str  # what it loads
    distribution: str
    releases: str  # a specifier: the releases that ship it with no search path


# nvidia-cuda-nvrtc 13.0.48 and 13.0.88 ship libnvrtc.so.13 with neither RPATH nor RUNPATH (CUDA 11's and
# 12's, and 13.1.80 on: $ORIGIN). On an H200 with no toolkit on the loader's path, openmm-cuda-13 8.6.1
# (RUNPATH into nvidia/cu13/lib) failed to compile its kernels: "failed to open libnvrtc-builtins.so.13.0".
LOADS_BY_SONAME = {
    load.soname: load
    for load in (LoadBySoname("libnvrtc.so.13", "libnvrtc-builtins.so.13.*", "nvidia-cuda-nvrtc", "<13.1"),)
}
# Libraries another of their release loads itself by soname, by soname stem: NVRTC dlopens the builtins
# of its own release (``libnvrtc-builtins.so.12.8`` for NVRTC 12.8). A file that needs the builtins
# directly, binding no version of them, is linked to them for nothing, and that need holds it to one
# minor release: cumm-cu126 0.8.2's extension needs ``libnvrtc-builtins.so.12.6``, which only NVRTC
# 12.6's wheels ship, so its requirement stopped at 12.8 and shut out a torch that pins NVRTC 12.8.
LOADED_BY_ITS_LIBRARY = {"nvrtc-builtins": "nvrtc"}
_LOADER = re.compile(r"^ld-linux.*\.so\.\d+$|^ld64\.so\.\d+$")
# API symbol prefixes of NVIDIA's libraries: a defined symbol with one of these means the library's
# code is linked in. The longest prefix wins (cublasLt before cublas).
# The APIs are camelCase (cudssCreate, ncclCommInitRank) but NVSHMEM's (nvshmem_malloc): a user's own
# cudss_helper is not cuDSS code.
_API_PREFIX_BODY = (
    r"(cublasLt|cublasXt|cublas|cudss|cudnn|cufftXt|cufft|curand|cusparseLt|cusparse|cusolverMg|"
    r"cusolverDn|cusolverSp|cusolverRf|cusolver|cutensor|nccl|nvrtc|nvJitLink|nvPTXCompiler|cupti|npp|nvjpeg|"
    r"cuda)(?=[A-Z])"
    r"|(nvshmemx|nvshmem)(?=_)"
)
_API_PREFIX = re.compile(rf"^(?:{_API_PREFIX_BODY})")
# Libraries NVIDIA ships only as static archives (no wheel has a shared one), by API prefix, with the
# archive: nvidia-nvptxcompiler holds libnvptxcompiler_static.a alone; ptxcompiler-cu11 links it in.
STATIC_ONLY = {"nvPTXCompiler": "libnvptxcompiler_static.a"}
# Libraries whose every build, shared or static, carries its version string in .rodata: NCCL's init.cc,
# which holds ncclCommInitRank, prints VERSION_STRING ("NCCL version 2.21.5+cuda12.4"). A file that
# defines their API with no such string implements that API itself, as MSCCL++'s mscclpp_nccl.so in
# sgl-kernel does (it dlopens the real NCCL from a path it is given): none of the library's code is in it.
VERSIONED_IN_EVERY_BUILD = frozenset({"nccl"})
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
    """One of the driver's libraries, however named: ``libcuda.so.1``, or a copy auditwheel grafted
    (``libcuda-f27223c5.so.580.95.05``)."""
    parsed = parse_library_file_name(soname)
    return (
        parsed is not None and parsed.stem in DRIVER_LIBRARY_NAMES and parsed.style is not NameStyle.WINDOWS
    )


# The soname under which the host's driver installs each of its libraries (it installs
# libcuda.so.<driver version> and the link libcuda.so.1), by stem.
_DRIVER_SONAMES = {
    "cuda": "libcuda.so.1",
    "nvidia-ml": "libnvidia-ml.so.1",
    "nvcuvid": "libnvcuvid.so.1",
    "nvidia-encode": "libnvidia-encode.so.1",
    "nvidia-ptxjitcompiler": "libnvidia-ptxjitcompiler.so.1",
    "nvidia-nvvm": "libnvidia-nvvm.so.4",
    "nvidia-opticalflow": "libnvidia-opticalflow.so.1",
}


def driver_soname(name: str) -> str | None:
    """The soname the host's driver provides for the driver library ``name`` names, however named:
    ``libcuda-f27223c5.so.580.95.05`` (gwatch-cu128 0.0.3's grafted copy) -> ``libcuda.so.1``."""
    parsed = parse_library_file_name(name)
    if parsed is None or parsed.style is NameStyle.WINDOWS:
        return None
    return _DRIVER_SONAMES.get(parsed.stem)


def provided_by_driver(soname: str) -> bool:
    """A DT_NEEDED the host's driver answers: one of its libraries under a name it installs, not a
    private copy's (a consumer of auditwheel's ``libcuda-f27223c5.so.580.95.05`` finds no such file on
    any host once the copy is gone)."""
    parsed = parse_library_file_name(soname)
    return is_driver_library(soname) and parsed is not None and parsed.style is NameStyle.PLAIN


def is_system_library(soname: str, glibc: tuple[int, int] | None = None) -> bool:
    """The manylinux whitelist (auditwheel's policy) for the wheel's level ``glibc`` (None: any
    level), or a dynamic loader: what the host provides."""
    return soname in host_sonames(glibc) or is_dynamic_loader(soname)


# Libraries whose soname's first number is the CUDA major they come with (libcudart.so.10.2,
# libcudart.so.11.0, libnvrtc.so.11.2, libcublas.so.12); cuFFT's or cuRAND's are not (libcufft.so.10
# is in CUDA 10 and 11), nor cuDNN's or NCCL's (their own versions).
_RUNTIME_STEMS = frozenset({"cudart", "nvrtc", "cublas", "cublasLt"})


def runtime_majors(sonames: Iterable[str]) -> set[int]:
    """The CUDA majors that the runtime libraries among ``sonames`` name (``libcudart.so.10.2``: 10)."""
    found = set()
    for soname in sonames:
        parsed = parse_library_file_name(soname)
        if parsed and parsed.style is NameStyle.PLAIN and parsed.stem in _RUNTIME_STEMS and parsed.version:
            found.add(int(parsed.version.split(".")[0]))
    return found


def is_dynamic_loader(soname: str) -> bool:
    """glibc's dynamic loader (``ld-linux-x86-64.so.2``): in every process, needed or not."""
    return bool(_LOADER.match(soname))


@dataclass(frozen=True)
class NvidiaProduct:
    """An NVIDIA library family by the name its users know, and the pip distribution that ships it."""

    name: str  # "TensorRT"
    # "tensorrt-cu<major>-libs": <major> stands for the CUDA major the wheel is built for.
    distribution: str
    sdist_only: bool = False  # the public index serves its libraries only as sdists (no wheel to learn)
    # ``slimwheel catalog update`` learns it without being named (cuda-toolkit's extras and the seeds).
    seeded: bool = True
    # Its API is C++ classes a file reaches through a few factory functions (TensorRT's
    # createInferBuilder_INTERNAL, getPluginRegistry): what a file imports cannot tell the release it was
    # built against, whose newer methods an older release lacks.
    classes_behind_factories: bool = False

    def distributed_as(self, distributions: Iterable[str]) -> str | None:
        """The first of ``distributions`` (canonical names) that is one of the product's pip
        distributions, of any CUDA major: tensorrt, tensorrt-cu12 and tensorrt-cu12-libs are TensorRT's."""
        own = _DISTRIBUTION_MAJOR.sub("", self.distribution.replace("<major>", ""))
        return next((name for name in distributions if _DISTRIBUTION_MAJOR.sub("", name) == own), None)


# What a product's distribution names add to its family name: the CUDA major, then "-libs".
_DISTRIBUTION_MAJOR = re.compile(r"(-cu\d*)?(-libs)?$")


# Sonames NVIDIA ships in pip distributions, by soname stem, so that a library the catalog does not
# list is still called NVIDIA's (TensorRT's libnvinfer.so.10 is not "some unknown library"). Checked in
# order: cuQuantum's cutensornet before cuTENSOR's cutensor.
_PRODUCTS: tuple[tuple[re.Pattern[str], NvidiaProduct], ...] = tuple(
    (re.compile(pattern), product)
    for pattern, product in (
        # TensorRT's lean and dispatch runtimes have wheels of their own, where the full one is an sdist.
        (
            r"nvinfer_lean",
            NvidiaProduct(
                "TensorRT lean runtime", "tensorrt-lean-cu<major>-libs", classes_behind_factories=True
            ),
        ),
        (
            r"nvinfer_dispatch",
            NvidiaProduct(
                "TensorRT dispatch runtime", "tensorrt-dispatch-cu<major>-libs", classes_behind_factories=True
            ),
        ),
        (
            r"nvinfer(_.+)?|nvonnxparser|nvparsers",
            NvidiaProduct(
                "TensorRT", "tensorrt-cu<major>-libs", sdist_only=True, classes_behind_factories=True
            ),
        ),
        (
            r"tensorrt(_onnxparser)?_rtx",
            NvidiaProduct("TensorRT-RTX", "tensorrt-rtx-cu<major>-libs", classes_behind_factories=True),
        ),
        (
            r"custatevec|cutensornet|cudensitymat",
            NvidiaProduct("cuQuantum", "cuquantum-cu<major>", seeded=False),
        ),
        (r"cutensor(Mg)?", NvidiaProduct("cuTENSOR", "cutensor-cu<major>")),
        (r"nvshmem(_.+)?", NvidiaProduct("NVSHMEM", "nvidia-nvshmem-cu<major>")),
        (r"cusparseLt", NvidiaProduct("cuSPARSELt", "nvidia-cusparselt-cu<major>")),
        (r"nvcomp(_.+)?", NvidiaProduct("nvCOMP", "nvidia-nvcomp-cu<major>", seeded=False)),
        (r"cudnn(_.+)?", NvidiaProduct("cuDNN", "nvidia-cudnn-cu<major>")),
        (r"cudss(_.+)?", NvidiaProduct("cuDSS", "nvidia-cudss-cu<major>")),
        (r"nccl", NvidiaProduct("NCCL", "nvidia-nccl-cu<major>")),
        (r"nvimgcodec(_.+)?", NvidiaProduct("nvImageCodec", "nvidia-nvimgcodec-cu<major>", seeded=False)),
        (r"nvjpeg2k", NvidiaProduct("nvJPEG2000", "nvidia-nvjpeg2k-cu<major>", seeded=False)),
        (r"nvtiff", NvidiaProduct("nvTIFF", "nvidia-nvtiff-cu<major>", seeded=False)),
        (r"cufftMp", NvidiaProduct("cuFFTMp", "nvidia-cufftmp-cu<major>", seeded=False)),
        (r"cublasmp", NvidiaProduct("cuBLASMp", "nvidia-cublasmp-cu<major>", seeded=False)),
        (
            r"cudart|cublas(Lt)?|cufftw?|curand|cusolver(Mg)?|cusparse|nvrtc(-builtins)?|nvJitLink|cupti|"
            r"nvToolsExt|nvperf_(host|target)|npp[a-z]*|nvjpeg|nvfatbin|cufile(_rdma)?|cudla|nvblas",
            NvidiaProduct("CUDA toolkit", "the cuda-toolkit extra that ships it (cuda-toolkit[cublas], ...)"),
        ),
    )
)  # fmt: skip


def nvidia_product_of(soname: str) -> NvidiaProduct | None:
    """The NVIDIA family a soname belongs to (``libnvinfer.so.10`` -> TensorRT), whether or not a
    catalog lists its wheels; None for a name NVIDIA's pip wheels are not known to ship."""
    parsed = parse_library_file_name(soname)
    if parsed is None or parsed.style is NameStyle.WINDOWS:
        return None
    for pattern, product in _PRODUCTS:
        if pattern.fullmatch(parsed.stem):
            return product
    return None


def unbound_nvidia_needs(needed: Iterable[str], bound: Iterable[str]) -> tuple[str, ...]:
    """The NVIDIA libraries among the DT_NEEDED ``needed`` of which no version is bound (``bound``: the
    files the version needs name): a file that imports nothing without a version but Python's imports
    nothing from them (see ``analysis.wheel._unused_needed``)."""
    versioned = set(bound)
    return tuple(soname for soname in needed if soname not in versioned and nvidia_product_of(soname))
