"""A regression corpus of real published wheels that vendor, link or load NVIDIA libraries.

Each entry pins one file by its exact name and the sha256 the index lists; :func:`fetch` downloads it
once through slimwheel's own index client (the index resolved the way pip resolves it) into
slimwheel's cache, where later runs find it without a request. No host is written here.
"""

from __future__ import annotations

import fcntl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slimwheel.index import Cache

__all__ = ["CORPUS", "VERIFY_LIMIT_MB", "CorpusWheel", "fetch"]

VERIFY_LIMIT_MB = 1500


@dataclass(frozen=True)
class CorpusWheel:
    project: str
    filename: str
    sha256: str
    size: int
    vendors: str  # what it bundles or links, for humans reading a failure
    # Roughly what `pip install` of the repaired wheel downloads: its own requirements plus the NVIDIA
    # wheels a repair would add. `slimwheel verify` is skipped above VERIFY_LIMIT_MB.
    install_mb: int
    # Every library it vendors is one NVIDIA's wheels provide, and it needs nothing else from outside:
    # repair must do it (exit 0), not merely refuse cleanly.
    must_repair: bool = False
    # What its maintainer would pass to repair and check: a torch extension counts on `import torch`
    # having loaded libc10.so and libtorch*.so (none of them has an RPATH into torch/lib). The output
    # is checked again with no flags: its manifest records what repair counted on.
    options: tuple[str, ...] = ()
    # What its maintainer would pass to repair only (the extras it puts libraries behind).
    repair_options: tuple[str, ...] = ()
    # The CUDA major repair's plan must choose (in its --json document, written or refused), where a
    # wrong one once ended the repair.
    cuda_major: int | None = None
    # The distributions repair must add as Requires-Dist, in its plan's order (None: not checked).
    adds: tuple[str, ...] | None = None
    # (distribution, version): the floor repair must give a requirement it adds (its linked version),
    # where that was proven on a GPU (the release below it does not load the repaired wheel), or where
    # the symbols the wheel imports cannot date it (TensorRT's C++ classes).
    floors: tuple[tuple[str, str], ...] = ()
    # The most bytes the repaired wheel may grow by (new metadata included), where an edit once grew
    # it by a copy of a big table (None: only the corpus-wide 1%).
    max_growth: int | None = None
    # The files repair's plan must edit (None: not checked), where a needless edit of a big library
    # was once planned.
    edits: tuple[str, ...] | None = None
    # The providers repair's plan must leave behind the wheel's extras (None: not checked), where the
    # author gated them and repair once made them hard requirements of every install.
    kept_optional: tuple[str, ...] | None = None
    # How many files repair's plan must drop (None: not checked), where a copy was once kept.
    drops: int | None = None
    # Why `slimwheel verify` cannot judge the repaired wheel on its own ("": it can).
    no_verify: str = ""
    # Why the repaired wheel fails verify for reasons of the package's, which the published wheel
    # fails for too ("": it passes alone): verified --against the published wheel, it must pass.
    verify_against: str = ""
    # Why pip cannot resolve the repaired wheel's install here, for the test of what a plain install
    # brings ("": it can): a requirement with no wheel, a Python other than the tests'.
    no_resolve: str = ""
    # What verify imports (--import), where the wheel ships modules that cannot be imported in a plain
    # install for reasons of their own (samples importing what the wheel does not require).
    verify_imports: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.filename.split("-", 2)[0] + "-" + self.filename.split("-", 2)[1]


CORPUS: tuple[CorpusWheel, ...] = (
    CorpusWheel(
        project="tensorrt-rtx-cu13-bindings",
        filename="tensorrt_rtx_cu13_bindings-1.7.1.116-cp311-none-manylinux_2_28_x86_64.whl",
        sha256="6a4d2bf39a98b71238046b9a9dd22d0e6b146be90cd56ac09f1e068933e4e18d",
        size=1_232_170,
        vendors=(
            "TensorRT-RTX's Python bindings, linking libtensorrt_rtx.so.1 and its ONNX parser and requiring "
            "nothing: what they import (the factories createInferBuilder_INTERNAL...) 1.4.0.76 exports too, "
            "but the classes they call are 1.7.1.116's"
        ),
        install_mb=200,
        cuda_major=13,
        adds=("tensorrt-rtx-cu13-libs",),
        floors=(("tensorrt-rtx-cu13-libs", "1.7.1.116"),),
    ),
    CorpusWheel(
        project="nccl-extensions",
        filename="nccl_extensions-0.1.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        sha256="30d42d0218f46e394a21c5663f09ee9bb8a90caf4d69f0040e5a9eb2fef7b8ad",
        size=22_556_341,
        vendors=(
            "nothing vendored; nccl/ep/lib/cu12/ and cu13/ (and nccl/m2n/lib/) hold one build per CUDA "
            "major, each needing libnccl.so.2, which every major's NCCL wheel ships, with no RPATH to it; "
            "its extras cu12 and cu13 bring each major's NCCL"
        ),
        install_mb=600,
        repair_options=("--cuda", "12,13"),
        must_repair=True,
        adds=(),
        kept_optional=("nvidia-nccl-cu12", "nvidia-nccl-cu13"),
        edits=(
            "nccl/ep/lib/cu12/libnccl_ep.so",
            "nccl/ep/lib/cu13/libnccl_ep.so",
            "nccl/m2n/lib/cu12/libnccl_m2n.so",
            "nccl/m2n/lib/cu13/libnccl_m2n.so",
        ),
    ),
    CorpusWheel(
        project="cuda-cccl",
        filename="cuda_cccl-1.2.1-cp311-cp311-manylinux_2_26_x86_64.whl",
        sha256="c1b8293c1b9dedbc0b3877c1fbb8265db293c7945371791a3dc69ca99db4a541",
        size=7_133_453,
        vendors=(
            "nothing vendored; cuda/compute/cu12/ and cu13/ each hold an extension and "
            "libcccl.c.parallel.so, which needs its major's NVRTC and nvJitLink with no RPATH to them; its "
            "extras minimal-cu12 and minimal-cu13 bring each major's, through cuda-toolkit"
        ),
        install_mb=900,
        repair_options=("--cuda", "12,13"),
        must_repair=True,
        adds=(),
        kept_optional=(
            "nvidia-nvjitlink-cu12",
            "nvidia-cuda-nvrtc-cu12",
            "nvidia-nvjitlink",
            "nvidia-cuda-nvrtc",
        ),
        edits=(
            "cuda/compute/cu12/cccl/libcccl.c.parallel.so",
            "cuda/compute/cu13/cccl/libcccl.c.parallel.so",
        ),
    ),
    CorpusWheel(
        project="chidori-gpu",
        filename="chidori_gpu-0.1.5-py3-none-any.whl",
        sha256="7998209f1d3d0eb3ded5b2af2c5986bbd6ac9cb2950f58d41e36ea8ba25cbac0",
        size=843_835,
        vendors=(
            "a remote-CUDA client's one 231 kB library, defining cuBLAS's, cuDNN's, NVRTC's and the "
            "runtime's API, as libcublas.so.12/.13, libcublasLt.so.12/.13, libcudart.so.12/.13 (its own, "
            "not copies: repair had dropped them) and libcuda.so.1 (a bundled driver: refused); a 14 kB "
            "libnvidia-ml.so.1, dropped as the driver's; its worker program links cuDNN"
        ),
        install_mb=0,
        cuda_major=13,
        drops=1,
    ),
    CorpusWheel(
        project="NEURON-gpu",
        filename="NEURON_gpu-8.2.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="06b78a75ffaafd69c9c65625ab77e0ffc3c710d9db58bc434064fbd2096c5512",
        size=28_968_492,
        vendors=(
            "auditwheel's copy NEURON_gpu.libs/libcudart-4554289f.so.11.5.117, which its programs "
            "nrniv-core and mod2c_core need, beside NVHPC's OpenACC runtime; relative RPATH entries"
        ),
        install_mb=40,  # numpy and nvidia-cuda-runtime-cu11
        must_repair=True,
        cuda_major=11,
        adds=("nvidia-cuda-runtime-cu11",),
        drops=1,
        verify_against=(
            "three of its modules were built for another numpy than the one pip installs (numpy.dtype "
            "size changed), as published"
        ),
    ),
    CorpusWheel(
        project="torchvision",
        filename="torchvision-0.20.1-cp311-cp311-manylinux1_x86_64.whl",
        sha256="86f6523dee420000fe14c3527f6c8e0175139fda7d995b187f54a0b0ebec7eb6",
        size=7_241_222,
        vendors=(
            "renamed copies torchvision.libs/libcudart.41118559.so.12 and libnvjpeg.02b6d700.so.12 "
            "(plus libz, libpng, libjpeg, libwebp); a torch extension (RPATH $ORIGIN/../torch/lib)"
        ),
        install_mb=3500,  # torch==2.5.1 with its CUDA 12 NVIDIA wheels
        must_repair=True,
        options=("--preloaded", "torch"),
    ),
    CorpusWheel(
        project="torchvision",
        filename="torchvision-0.29.2-py3-none-manylinux_2_28_x86_64.whl",
        sha256="0875f7a23bd298813240f716c56df44ce72ddb45146589442a38edd0e1f59637",
        size=7_585_493,
        vendors=(
            "CUDA 13 and the stable ABI (py3-none): renamed copies torchvision.libs/libcudart.3eda8113.so.13 "
            "and libnvjpeg.4a0b5c81.so.13, NEEDED by image_stable.so; a torch extension"
        ),
        install_mb=4000,  # torch>=2.14 with its CUDA 13 NVIDIA wheels
        must_repair=True,
        options=("--preloaded", "torch"),
        cuda_major=13,
        adds=("nvidia-cuda-runtime", "nvidia-nvjpeg"),
    ),
    CorpusWheel(
        project="torchaudio",
        filename="torchaudio-2.5.1-cp311-cp311-manylinux1_x86_64.whl",
        sha256="7af3f7f92fd33bc9f036a60cdeda4cbeb6bccebd18eae89776dd1e8ed042672e",
        size=3_374_576,
        vendors=(
            "nothing vendored; a torch extension linking libcudart.so.12, libc10.so, libtorch*.so with no "
            "RPATH at all (torch maps them first)"
        ),
        install_mb=3500,  # torch==2.5.1 with its CUDA 12 NVIDIA wheels
    ),
    CorpusWheel(
        project="openmm",
        filename="openmm-8.6.1-cp311-cp311-manylinux_2_34_x86_64.whl",
        sha256="e0a6ec580be31d4afba35f290c27c069aaeea9a168b0cf959a0dac0df1d9fd5d",
        size=14_409_788,
        vendors=(
            "nothing vendored; OpenCL plugins in OpenMM.libs/lib/plugins need libOpenCL.so.1, the ICD "
            "loader, and nothing else of CUDA (repair once asked for --cuda: it was built for none)"
        ),
        install_mb=60,  # numpy and nvidia-cuda-opencl
        must_repair=True,
        cuda_major=13,  # the ICD loader is the same in every major's wheel: the newest
        adds=("nvidia-cuda-opencl",),
    ),
    CorpusWheel(
        project="openmm-cuda-13",
        filename="openmm_cuda_13-8.6.1-py3-none-manylinux_2_34_x86_64.whl",
        sha256="097007eb4b6846ebbd10bec9866edd3a6a708f0593660cc1c6260c1a514cec7c",
        size=2_289_482,
        vendors=(
            "nothing vendored; CUDA plugins for OpenMM.libs/lib/plugins: libOpenMMCUDA.so reaches cuFFT "
            "and NVRTC through RUNPATH $ORIGIN/..:$ORIGIN/../../../nvidia/cu13/lib (NVRTC 13.0.x then "
            "cannot load its builtins), the others have none; all need openmm's libOpenMM.so, which it "
            "does not require"
        ),
        install_mb=700,  # CUDA 13's runtime, NVCC, NVRTC, CUPTI and cuFFT wheels
        must_repair=True,
        options=("--preloaded", "openmm"),
        cuda_major=13,
        adds=(),
        edits=(
            "OpenMM.libs/lib/plugins/libOpenMMAmoebaCUDA.so",
            "OpenMM.libs/lib/plugins/libOpenMMDrudeCUDA.so",
            "OpenMM.libs/lib/plugins/libOpenMMRPMDCUDA.so",
            "OpenMM.libs/lib/plugins/libOpenMMCUDA.so",
        ),
        verify_against="its plugins load only in a process that imported openmm, which it does not require",
    ),
    CorpusWheel(
        project="cupy-cuda12x",
        filename="cupy_cuda12x-14.2.0-cp311-cp311-manylinux2014_x86_64.whl",
        sha256="5fe2366cc5c61a7ee4a527ce1e8951cb89092d0fb0b5830623cf114d1942c585",
        size=136_632_369,
        vendors="nothing vendored; CUDA libraries loaded at run time (cuda-pathfinder, a ctk extra)",
        install_mb=1900,  # eight CUDA 12 NVIDIA wheels (cuBLAS 580 MB, cuTENSOR 330, NCCL 290, ...)
        # CuPy loads cuTENSOR and NCCL only when asked to (cupy.cutensor, cupyx.distributed) and offers
        # no extra for them: its maintainer would not make 620 MB of them part of every install.
        repair_options=("--optional", "cutensor", "--optional", "nccl"),
        # Its extra 'ctk' names the others as components of cuda-toolkit: they stay behind it.
        adds=("cutensor-cu12", "nvidia-nccl-cu12"),
        kept_optional=(
            "nvidia-cublas-cu12",
            "nvidia-cufft-cu12",
            "nvidia-curand-cu12",
            "nvidia-cusolver-cu12",
            "nvidia-cusparse-cu12",
            "cutensor-cu12",
            "nvidia-nccl-cu12",
            "nvidia-cuda-nvrtc-cu12",
        ),
    ),
    CorpusWheel(
        project="onnxruntime-gpu",
        filename="onnxruntime_gpu-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="e26c475fe361b2015f45b4b824bd13f0bb20204e59b62814e6f0acd5f3d491a6",
        size=255_560_985,
        vendors=(
            "nothing vendored; libonnxruntime_providers_cuda.so links CUDA 13 libraries that only "
            "its `cuda`/`cudnn` extras require"
        ),
        install_mb=1100,  # cuBLAS 13 (420 MB), cuDNN 9 for CUDA 13 (520), cuRAND, cudart, numpy
        kept_optional=("nvidia-cublas", "nvidia-cuda-runtime", "nvidia-cudnn-cu13", "nvidia-curand"),
    ),
    CorpusWheel(
        project="jax-cuda12-plugin",
        filename="jax_cuda12_plugin-0.10.2-cp311-cp311-manylinux_2_27_x86_64.whl",
        sha256="76bbfece2f6effb4e8908eb8a5fbf1abbc1125de667683ec2ffba51c63dc57af",
        size=8_144_162,
        vendors=(
            "nothing vendored and no NVIDIA DT_NEEDED (dlopen); RPATH into nvidia/<lib>/lib at two depths; "
            "the NVIDIA wheels only in its `with-cuda` extra"
        ),
        install_mb=180,  # jax-cuda12-pjrt; it needs no NVIDIA library by DT_NEEDED
    ),
    CorpusWheel(
        project="cumm-cu126",
        filename="cumm_cu126-0.8.2-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="e1d8f5bb92ddde9b914376c58916434a6f8c615ca6783c9e0d447f6e64386192",
        size=27_551_617,
        vendors=(
            "auditwheel copies cumm_cu126.libs/libcudart-53d54daa.so.12.6.68, libnvrtc-a1f1e7d6.so.12.6.85 "
            "and libnvrtc-builtins-a1d5fce3.so.12.6.85"
        ),
        install_mb=130,  # NVRTC and cudart for CUDA 12, pccm, pybind11, fire, numpy, sympy
        must_repair=True,
    ),
    CorpusWheel(
        project="bitsandbytes",
        filename="bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl",
        sha256="55348a9a4a21bfd99cf8c7b32fe67b4030ae5c2a05738e03c1747f65fa6ec283",
        size=43_139_553,
        vendors=(
            "nothing vendored; one library per CUDA major (libbitsandbytes_cuda118.so ... cuda132.so, "
            "needing libcudart/libcublas(Lt) .so.11.0, .so.12 or .so.13), loaded by path at run time, "
            "plus ROCm and XPU builds"
        ),
        install_mb=3500,  # torch
    ),
    CorpusWheel(
        project="cumm-cu117",
        filename="cumm_cu117-0.6.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="d0a5dc14ea298e968c8cfc50e92947c78b23e6f5421fa336b200c19063235a7d",
        size=23_307_842,
        vendors=(
            "CUDA 11 auditwheel copies cumm_cu117.libs/libcudart-987eca32.so.11.7.99 (libcudart.so.11.0), "
            "libnvrtc-581f1f99.so.11.7.99 (libnvrtc.so.11.2) and libnvrtc-builtins-7237cb5d.so.11.7.99"
        ),
        install_mb=100,  # NVRTC and cudart for CUDA 11, numpy, sympy, pccm
        must_repair=True,
    ),
    CorpusWheel(
        project="cumm-cu116",
        filename="cumm_cu116-0.5.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="2115c021b8407ce2aa2322127b65644617e0a40050685b8d285b28d4ed8694a4",
        size=23_067_816,
        vendors=(
            "CUDA 11.6 auditwheel copies cumm_cu116.libs/libcudart-45da57e3.so.11.6.55, "
            "libnvrtc-4dd39364.so.11.6.124 and libnvrtc-builtins-fed02928.so.11.6.124, whose soname "
            "(libnvrtc-builtins.so.11.6) no wheel ships: CUDA 11's NVRTC wheels start at 11.7"
        ),
        install_mb=100,  # NVRTC and cudart for CUDA 11, numpy, sympy, pccm
        must_repair=True,
        adds=("nvidia-cuda-runtime-cu11", "nvidia-cuda-nvrtc-cu11"),
        drops=3,  # the builtins copy too: the NVRTC wheel loads its own
    ),
    CorpusWheel(
        project="ctranslate2",
        filename="ctranslate2-4.5.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="89db5b18dfc7f7bf84cafaf7cc36e885aafcaeac936977eefd3e4768fd7b2879",
        size=38_615_237,
        vendors=(
            "auditwheel copy ctranslate2.libs/libcudnn-74a4c495.so.9.1.0 (cuDNN 9's 123 KiB dispatcher, "
            "with the relative RPATH 'ctranslate2.libs'), needed by a 69 MiB libctranslate2 that deflates "
            "well: re-deflated at ISA-L's fast level it grew the wheel by 7%"
        ),
        install_mb=1100,  # cuDNN 9 for CUDA 12 (its cuBLAS and NVRTC come with it), numpy, pyyaml
        must_repair=True,
        cuda_major=12,
    ),
    CorpusWheel(
        project="ctranslate2",
        filename="ctranslate2-3.24.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="17f8a67684404a776cd2961ff98a6aa0b2fe0ec0488b58d903df3ae1cb6136f3",
        size=37_004_082,
        vendors=(
            "auditwheel copy ctranslate2.libs/libcudnn-f0ff4753.so.8.1.1 (cuDNN 8's dispatcher, without the "
            "libraries it loads), which CUDA 11 and CUDA 12 wheels both ship; only its classifiers "
            "('Environment :: GPU :: NVIDIA CUDA :: 11.0' ... '11.8') tell the major: repair refused it "
            "as ambiguous"
        ),
        install_mb=1200,  # cuDNN 8 for CUDA 11 with its cuBLAS, numpy, pyyaml
        must_repair=True,
        cuda_major=11,
        adds=("nvidia-cudnn-cu11",),
    ),
    CorpusWheel(
        project="pycolmap-cuda12",
        filename="pycolmap_cuda12-4.2.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="babc54a7d738a0f8daaf4cb33508052acd3f40e02529dee7647a613d9e74ab78",
        size=72_945_341,
        vendors=(
            "nothing NVIDIA's vendored; requires cuda-toolkit[cudart,curand] but its 174 MB _core has no "
            "RPATH into their folders. Its .dynstr (8 MB) ends the file, where auditwheel's patchelf put "
            "it: the longer RPATH once copied the whole table to an appended segment (+0.4 MiB, 0.6%)"
        ),
        install_mb=150,  # numpy and the CUDA runtime and cuRAND wheels
        must_repair=True,
        cuda_major=12,
        adds=(),
        max_growth=4096,
    ),
    CorpusWheel(
        project="cucim-cu12",
        filename="cucim_cu12-24.10.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="2d48763323b61e3340399fd9b9650d772a9fec6b6f54654c62292c3b7b971c0f",
        size=5_595_158,
        vendors=(
            "auditwheel copy cucim_cu12.libs/libcudart-16e8815a.so.12.5.82, needed by four files (the "
            "plugins cucim.kit.cumed@24.10.00.so and cuslide, whose names hold an '@'); cuslide links "
            "nvJPEG statically, which stays"
        ),
        install_mb=250,  # cupy-cuda12x, scipy, scikit-image, numpy and the CUDA runtime wheel
        must_repair=True,
        cuda_major=12,
        adds=("nvidia-cuda-runtime-cu12",),
    ),
    CorpusWheel(
        project="cupy-cuda102",
        filename="cupy_cuda102-12.3.0-cp311-cp311-manylinux2014_x86_64.whl",
        sha256="98a620184c03837e6b50a523c9c80899696c447cd11c82d8cd13763c56ba97a3",
        size=64_101_683,
        vendors=(
            "nothing vendored; CUDA 10.2's libcudart.so.10.2, libcublas.so.10, ... plus libcufft.so.10 and "
            "libcurand.so.10, sonames CUDA 11's cuFFT and cuRAND wheels ship too: it was planned onto "
            "CUDA 11 wheels. CUDA 10 has none: nothing is linked to a wheel (and the input fails check: "
            "its CUDA 10 libraries come from the host)"
        ),
        install_mb=200,
        cuda_major=10,
        adds=(),
    ),
    CorpusWheel(
        project="cupy-cuda11x",
        filename="cupy_cuda11x-12.3.0-cp311-cp311-manylinux2014_x86_64.whl",
        sha256="4173486906388c91a70f639003313b96e9449cb8a008137e8ac4bcd872bcf34c",
        size=89_879_647,
        vendors=(
            "nothing vendored; CUDA 11 DT_NEEDED (libcublas.so.11, libcudart.so.11.0, ...) plus "
            "libcudnn.so.8, libcutensor.so.1 and libnccl.so.2, which the catalog knows only from CUDA 12 "
            "wheels: it was refused as needing several CUDA majors (exit 2)"
        ),
        install_mb=1300,  # seven CUDA 11 NVIDIA wheels, fastrlock, numpy
        cuda_major=11,
    ),
    CorpusWheel(
        project="libucx-cu12",
        filename="libucx_cu12-1.22.0-py3-none-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        sha256="5cbbef0c140a0a158ae3486089af659b38822b2234cd3dc90ba40a5e6553402a",
        size=43_362_786,
        vendors=(
            "auditwheel copy libucx_cu12.libs/libcudart-256e6409.so.12.9.79; UCX's plugins "
            "(libucx/lib/ucx/libuct_cuda.so ...) need libuct.so.0 and libucs.so.0 with no RPATH to them: "
            "found because libuct loads them, and once a false 'not found' that refused the repair"
        ),
        install_mb=10,  # cudart for CUDA 12
        must_repair=True,
        cuda_major=12,
        adds=("nvidia-cuda-runtime-cu12",),
    ),
    CorpusWheel(
        project="pyopencl",
        filename="pyopencl-2026.1.4-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="31bed2c185b395ace1315afaf14bb60e4ce740ef8e6a74033de64d8984decd87",
        size=762_300,
        vendors=(
            "ocl-icd's libOpenCL.so.1 (pyopencl/.libs/libOpenCL-5519dec5.so.1.0.0), not NVIDIA's: the "
            "soname nvidia-cuda-opencl's Khronos loader has, which repair once dropped for it"
        ),
        install_mb=60,  # numpy, platformdirs, pytools
        must_repair=True,
        adds=(),
        edits=(),
    ),
    CorpusWheel(
        project="pennylane-lightning-gpu",
        filename="pennylane_lightning_gpu-0.45.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="8fa158507144efa9f4e7c202e583a677c034eea303b8710d3152aef2e400b680",
        size=924_889,
        vendors=(
            "nothing vendored; links libcustatevec.so.1 (custatevec-cu12, cuQuantum: installs in "
            "cuquantum/lib, which the catalog once did not know) and cuBLAS, cuSPARSE, cudart, nvJitLink; "
            "liblightning_gpu_catalyst.so has no RPATH to any of them"
        ),
        install_mb=1200,  # cuBLAS 12 (580 MB), cuSPARSE, custatevec, nvJitLink, pennylane, scipy-openblas32
        must_repair=True,
        cuda_major=12,
        adds=(),  # it requires each of them itself
        # lightning_gpu_ops lists every NVIDIA folder before scipy_openblas32's: rewritten for that once.
        edits=("pennylane_lightning/liblightning_gpu_catalyst.so",),
    ),
    CorpusWheel(
        project="qiskit-aer-gpu",
        filename="qiskit_aer_gpu-0.18.2-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="c07cc487f95f6d8f130a6e9a5b1dc75635f072a6f84d18a3dc66b187f0813bc8",
        size=20_486_303,
        vendors=(
            "auditwheel copies of OpenBLAS and gfortran only; links libcustatevec.so.1 and "
            "libcutensornet.so.2, which its requirement on the metapackage cuquantum-cu12<24.11.0,>=23.3.0 "
            "brings in: repair once added custatevec-cu12 and cutensornet-cu12 beside it"
        ),
        install_mb=1600,  # cuBLAS, cuSOLVER, cuSPARSE, cuTENSOR, cuStateVec, cuTensorNet for CUDA 12, qiskit
        must_repair=True,
        cuda_major=12,
        adds=(),
    ),
    CorpusWheel(
        project="nvmath-python",
        filename="nvmath_python-1.0.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="2e1074eef6de406a26fd8207254df65e78ab528594b58b31ca44f80c81130ab2",
        size=5_518_699,
        vendors=(
            "nothing vendored or linked (CUDA libraries loaded at run time through cuda-pathfinder); its "
            "extras cu12 and cu13 require CUDA 12 and CUDA 13 wheels (cuda-toolkit==13.* against "
            "nvidia-cudss-cu12's cuda-toolkit==12.*): taken as one install, a conflict, repair exited 2"
        ),
        install_mb=60,  # cuda-bindings, cuda-core, cuda-pathfinder, numpy
        must_repair=True,
        adds=(),
    ),
    CorpusWheel(
        project="libcuml-cu12",
        filename="libcuml_cu12-26.10.0-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="ba0265d814241532b45c26239bd2d557f5c83926dfeb610361787058d5f2c9d9",
        size=99_081_525,
        vendors=(
            "RAPIDS: nothing vendored; libcuml.so needs libcuvs.so, libraft.so, librmm.so, libkvikio.so "
            "(a requirement of a requirement) and more with no RPATH to them, as each RAPIDS package "
            "loads its libraries first; cuBLAS, cuFFT... come through cuda-toolkit[cublas,...]==12.*, "
            "beside which repair once added nvidia-cublas-cu12 and four more"
        ),
        install_mb=2500,  # libcuvs, libraft, the CUDA 12 math libraries
        must_repair=True,
        options=(
            *("--preloaded", "libcuvs-cu12", "--preloaded", "libraft-cu12", "--preloaded", "librmm-cu12"),
            *("--preloaded", "libkvikio-cu12", "--preloaded", "libnvforest-cu12"),
            *("--preloaded", "rapids-logger"),
        ),
        cuda_major=12,
        adds=(),
    ),
    CorpusWheel(
        project="vllm",
        filename="vllm-0.9.2-cp38-abi3-manylinux1_x86_64.whl",
        sha256="f3c5da29a286f4933b480a5b4749fab226564f35c96928eeef547f88d385cd34",
        size=383_350_132,
        vendors=(
            "a torch extension for the stable ABI (cp38-abi3): its extensions need libcudart.so.12 and "
            "torch's libc10.so and libtorch*.so, which torch 2.7 (no cp38 wheel) installs and loads "
            "first; once checked as for Python 3.8, none of its requirements could be read"
        ),
        install_mb=4000,  # torch and its CUDA wheels, xformers, ray...
        must_repair=True,
        options=("--preloaded", "torch"),
        adds=("nvidia-cuda-runtime-cu12",),
    ),
    CorpusWheel(
        project="cudf-cu12",
        filename="cudf_cu12-26.10.2-cp311-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        sha256="f25756930671c3e4c0fa802cc9c119d3187a7822ae59906a3ff1557612a13f4c",
        size=2_786_815,
        vendors=(
            "RAPIDS: nothing vendored; its extensions need libcudf.so, librmm.so and "
            "librapids_logger.so, which libcudf-cu12 and its own requirements (librmm-cu12, "
            "rapids-logger) install and load first; librmm-cu12's oldest release had no librmm.so"
        ),
        install_mb=2000,  # libcudf (670 MB), cupy, pyarrow, pandas, numba-cuda
        must_repair=True,
        options=(
            *("--preloaded", "libcudf-cu12", "--preloaded", "librmm-cu12"),
            *("--preloaded", "rapids-logger", "--preloaded", "libkvikio-cu12"),
        ),
        adds=(),
    ),
    CorpusWheel(
        project="transformer-engine-cu13",
        filename="transformer_engine_cu13-2.20.2-py3-none-manylinux_2_28_x86_64.whl",
        sha256="30063d3699e779cce63617c3458804f7a504ce8279f2749c98313db9daae273e",
        size=276_522_776,
        vendors=(
            "nothing vendored; libtransformer_engine.so links cuBLAS, cudart, cuDNN and NCCL from NVIDIA's "
            "wheels with no RPATH and no Requires-Dist; built against cuBLAS 13.2 and NCCL 2.29: with the "
            "first releases that ship the files as floors (13.0.0.19, 2.27.7) it did not load on an H200 "
            "(undefined symbol cublasLtGroupedMatrixLayoutInit_internal; ncclCommQueryProperties)"
        ),
        install_mb=2000,  # cuBLAS, cuDNN, NCCL, cudart
        must_repair=True,
        adds=("nvidia-cublas", "nvidia-cuda-runtime", "nvidia-cudnn-cu13", "nvidia-nccl-cu13"),
        floors=(("nvidia-cublas", "13.2.0.9"), ("nvidia-nccl-cu13", "2.29.2")),
    ),
    CorpusWheel(
        project="lmdeploy",
        filename="lmdeploy-0.18.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="e6790a25dcdb0345c160567fdf2ac604fec319389523a8b806834c9d92c8ffe1",
        size=106_690_261,
        vendors=(
            "nothing vendored; _turbomind (347 MB) has a RUNPATH into "
            "nvidia/{nccl,cuda_runtime,cublas,curand}/lib and requires those wheels: nothing to edit (it "
            "was once rewritten only to become an RPATH); libturbomind_nccl_stub.so defines weak NCCL "
            "stand-ins, no static NCCL"
        ),
        install_mb=4000,  # torch, ray, transformers, triton
        must_repair=True,
        adds=(),
        edits=(),
    ),
    CorpusWheel(
        project="vllm",
        filename="vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl",
        sha256="79ca4b3cd74aec08c4bf476bdf0cb15735b605ae5368526a2faae1e30f044ca2",
        size=239_039_932,
        vendors=(
            "nothing vendored; its extensions link CUDA 13's cudart (and one NVRTC) with no RPATH into "
            "nvidia/cu13/lib, counting on torch; its extra 'deepstream' happens to bring cudart through "
            "a metapackage, which once made repair leave cudart behind that extra"
        ),
        install_mb=4000,  # torch and its CUDA wheels
        must_repair=True,
        options=("--preloaded", "torch"),
        adds=("nvidia-cuda-runtime", "nvidia-cuda-nvrtc"),
        kept_optional=(),
    ),
    CorpusWheel(
        project="rapids-singlecell-cu13",
        filename="rapids_singlecell_cu13-0.18.1-cp312-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="9ffe440f59eac45464803d55766162ac32c5efc2b1f50d4f68d8bf63ef6bf699",
        size=21_985_662,
        vendors=(
            "nothing vendored; 46 extension modules link CUDA 13's cudart, cuBLAS, cuSOLVER and cuSPARSE "
            "with no RPATH and no requirement: only its extra 'rapids' installs them, through "
            "cupy-cuda13x[ctk] (cuda-toolkit's components), which repair once passed over, making the "
            "four wheels hard requirements of every install"
        ),
        install_mb=5000,  # with the extra 'rapids': cudf, cuml, cugraph, cuvs, cupy and the CUDA wheels
        must_repair=True,
        adds=("nvidia-cublas", "nvidia-cuda-runtime", "nvidia-cusolver", "nvidia-cusparse"),
        kept_optional=("nvidia-cublas", "nvidia-cuda-runtime", "nvidia-cusolver", "nvidia-cusparse"),
        no_verify="it needs Python 3.12, and its extra 'rapids' (RAPIDS, several GB) for its libraries",
        no_resolve="it needs Python 3.12, and its requirement docrep has no wheel",
    ),
    CorpusWheel(
        project="gpt4all",
        filename="gpt4all-2.8.2-py3-none-manylinux1_x86_64.whl",
        sha256="c61e977afa72475c076211fd9b59a88334fc0062615be8c2f7716363a21fbafa",
        size=121_614_072,
        vendors=(
            "nothing vendored; its two CUDA backends (100 MB each, loaded only when a CUDA device is "
            "chosen) link CUDA 11's cudart and cuBLAS with a RUNPATH into /usr/local/cuda-11.8, and the "
            "wheel requires their wheels only with its extra 'cuda': repair keeps the extra and reaches "
            "nvidia/{cublas,cuda_runtime}/lib (it once made both hard requirements of every install)"
        ),
        install_mb=600,  # with the extra 'cuda' (verify installs it): cuBLAS 11 (420 MB), cudart
        must_repair=True,
        adds=(),
        kept_optional=("nvidia-cublas-cu11", "nvidia-cuda-runtime-cu11"),
        edits=(
            "gpt4all/llmodel_DO_NOT_MODIFY/build/libllamamodel-mainline-cuda-avxonly.so",
            "gpt4all/llmodel_DO_NOT_MODIFY/build/libllamamodel-mainline-cuda.so",
        ),
    ),
    CorpusWheel(
        project="cuda-quantum-cu12",
        filename="cuda_quantum_cu12-0.16.0.post1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="bac26c07f346841922efd1b6b59a37b95ecce960dd07c7f017775a1dd32dd8d4",
        size=92_019_983,
        vendors=(
            "nothing vendored; requires cuQuantum's, cuBLAS's and cuRAND's wheels, but its simulator "
            "plugins in site-packages/lib have no RPATH into them (found only once Python preloads them): "
            "repair sets RPATHs into cuquantum/lib, cutensor/lib (cutensornet's own requirement) and "
            "nvidia/*/lib"
        ),
        install_mb=2500,  # cuQuantum, cuTENSOR, cuBLAS, cuSOLVER, cuSPARSE, cupy, scipy
        must_repair=True,
        adds=(),
    ),
    CorpusWheel(
        project="cudaq-qec-cu12",
        filename="cudaq_qec_cu12-0.8.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="080abface811604c4d3d68f3eef784d8ef463253f835fa1e91cbc9f861769188",
        size=17_445_965,
        vendors=(
            "nothing vendored; its files need libcudart.so.12, which no requirement of its own brings, and "
            "its TensorRT decoder plugin libnvinfer.so.10, which only its extras 'trt-decoder' and 'all' "
            "install (tensorrt-cu12, sdists only): repair refused it as 'only TensorRT on the host'"
        ),
        install_mb=3000,  # cuda-quantum-cu12, cuquantum-python-cu12 with cuQuantum, cupy, cuBLAS...
        must_repair=True,
        cuda_major=12,
        adds=("nvidia-cuda-runtime-cu12",),
    ),
    CorpusWheel(
        project="nixl-cu12",
        filename="nixl_cu12-1.5.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="341d0dfa499f941c054614252f1d8047d1380e33f29c87707372ff5ec7d3779a",
        size=68_631_568,
        vendors=(
            "192 ELF files: ~100 auditwheel-grafted abseil libraries with RPATH $ORIGIN, each needing "
            "dozens of the others (check once walked every path through them: over 10 minutes, 3 GB), "
            "UCX and plugins that need libssl, DOCA, libfabric from the host: repair refuses, as the "
            "input fails check too"
        ),
        install_mb=1500,
    ),
    CorpusWheel(
        project="faiss-gpu-cu12",
        filename="faiss_gpu_cu12-1.14.1.post1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="87e630faed349ba71e6c10e8340e93edf406bf22b42e08f097d7d3d64e16d0cb",
        size=48_386_908,
        vendors=(
            "nothing NVIDIA vendored (OpenBLAS, libgomp, libgfortran); faiss/_swigfaiss.so and "
            "faiss_gpu_cu12.libs/libfaiss-*.so need cudart, cuBLAS and cuBLASLt with no RPATH into "
            "NVIDIA's wheels: its import opens what faiss/_preload_library.json names first (check once "
            "called that 4 errors); repair sets the RPATHs"
        ),
        install_mb=700,  # nvidia-cublas-cu12 and nvidia-cuda-runtime-cu12, numpy
        must_repair=True,
        cuda_major=12,
        adds=(),
        edits=("faiss/_swigfaiss.so", "faiss_gpu_cu12.libs/libfaiss-6b43fd57.so"),
    ),
    CorpusWheel(
        project="cucim-cu13",
        filename="cucim_cu13-26.10.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="0c64c88772e0c8aa92eacc9b6bdbc4a22626d998cfb0fa06e87a298d2b457ee8",
        size=16_716_831,
        vendors=(
            "nothing NVIDIA vendored (cuslide links nvJPEG statically, which stays); libcucim.so.26 has "
            "RUNPATH ':::::::' and the extension module '$ORIGIN:/__w/cucim/cucim/install/lib:': empty "
            "entries, which repair once left and so refused the wheel; it now drops them"
        ),
        # cupy-cuda13x[ctk]'s CUDA 13 wheels, nvImageCodec, scikit-image, scipy (verify passed here by
        # hand: five NVIDIA libraries mapped from nvidia/cu13/lib)
        install_mb=1600,
        must_repair=True,
        adds=(),
        edits=("cucim/clara/_cucim.cpython-311-x86_64-linux-gnu.so", "cucim/clara/libcucim.so.26"),
    ),
    CorpusWheel(
        project="pynvvideocodec",
        filename="pynvvideocodec-2.2.4-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="fa19da4df068341863c651ae72c1a29557bfd3b68f2e8297ccbce7c391d148d6",
        size=26_873_180,
        vendors=(
            "an auditwheel copy of cudart 12.3 in a folder named 'pynvvideocodec.' (sic), NEEDED by both "
            "of its extension modules (PyNvVideoCodec_121 and _130); FFmpeg's libavformat and libavutil"
        ),
        install_mb=10,  # nvidia-cuda-runtime-cu12
        must_repair=True,
        cuda_major=12,
        adds=("nvidia-cuda-runtime-cu12",),
        # Its samples import torch and pycuda, which it does not require; its package turns the
        # driver's ImportError into its own (verify reads the exceptions it was raised from).
        verify_imports=("PyNvVideoCodec",),
    ),
    CorpusWheel(
        project="nvidia-pytriton",
        filename="nvidia_pytriton-0.7.0-py3-none-manylinux_2_35_x86_64.whl",
        sha256="21f063ff93bb426d0c06b7a55e7eb9efcfe62c0dddd9a908e9877e18710128df",
        size=55_369_373,
        vendors=(
            "an auditwheel copy nvidia_pytriton.libs/libcudart-09529672.so.12.6.77, NEEDED by tritonserver, "
            "libtritonserver and the Python backend stubs; 40 other grafted libraries. It requires itself "
            "under an extra, and learning that name once made its copy pass for one of NVIDIA's originals"
        ),
        install_mb=150,  # tritonclient[grpc,http], grpcio, numpy, nvidia-cuda-runtime-cu12
        must_repair=True,
        # The Python backend stubs link the libpython of each Python they serve, from the host.
        options=tuple(
            arg for minor in (8, 9, 10, 11, 12) for arg in ("--exclude", f"libpython3.{minor}.so.1.0")
        ),
        cuda_major=12,
        adds=("nvidia-cuda-runtime-cu12",),
    ),
    CorpusWheel(
        project="triton",
        filename="triton-3.9.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="1622118a038b0c6e16fa4a0305da62c8b3c15904ee1cc4d4e65846a25969e41e",
        size=285_777_556,
        vendors=(
            "CUPTI 12.8 and 13.3 (backends/nvidia/lib/cupti and cupti-blackwell), seven libraries each, "
            "libcupti three times (libcupti.so, .so.12 or .so.13, and the toolkit's .so.2025.1.1 or "
            ".so.2026.2.0), which nothing links: its profiler loads them by path. Once that last name "
            "made repair keep one copy under --force, and dropping them added no requirement"
        ),
        install_mb=330,  # nvidia-cuda-cupti-cu12 and nvidia-cuda-cupti
        must_repair=True,
        repair_options=("--force",),
        adds=("nvidia-cuda-cupti", "nvidia-cuda-cupti-cu12"),
        drops=14,
    ),
    CorpusWheel(
        project="cuopt-cu12",
        filename="cuopt_cu12-26.10.0-cp311-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        sha256="3d5855630f8268d78f056961363072fbc087ea2a7b594a16ac246f5146276111",
        size=2_091_221,
        vendors=(
            "RAPIDS: nothing vendored; its extensions need libcuopt_client.so, libcuopt_mathopt.so and "
            "libcuopt_routing.so, which only libcuopt-cu12's own requirements install (libcuopt-client, "
            "...): they came after the 8th of the 40 requirements in turn and were never read, so "
            "check could not say who installs them; and cuBLAS, cuSPARSE and nvJitLink with no RPATH"
        ),
        install_mb=3000,  # cudf, cupy with the CUDA 12 math libraries, libcuopt-*
        must_repair=True,
        options=(
            *("--preloaded", "libcuopt-client", "--preloaded", "libcuopt-mathopt-cu12"),
            *("--preloaded", "libcuopt-routing-cu12", "--preloaded", "librmm-cu12"),
            *("--preloaded", "rapids-logger"),
        ),
        cuda_major=12,
    ),
    CorpusWheel(
        project="legate",
        filename="legate-26.6.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256="74fc878835fcb2e5371799c087b41308931042171c626b390c5689199af3d695",
        size=87_388_017,
        vendors=(
            "cuFile as auditwheel names it, legate.libs/libcufile-1ecaf17d.so.1.15.1: the file "
            "libcufile.so.1.15.1, soname libcufile.so.0 (not .so.1, as the name suggests), NEEDED by HDF5's "
            "GDS driver; NCCL from nvidia-nccl-cu13, which liblegate.so's RPATH does not reach"
        ),
        install_mb=450,  # nvidia-nccl-cu13, nvidia-cufile, nvidia-cuda-runtime, numpy, h5py
        must_repair=True,
        cuda_major=13,
        adds=("nvidia-cuda-runtime", "nvidia-cufile"),
        drops=1,
    ),
    CorpusWheel(
        project="torchao",
        filename="torchao-0.18.0-cp310-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        sha256="6540b148e40ba81cbd4de86392225a076a1591146e9cebb099b3b234ba9feebe",
        size=3_372_585,
        vendors=(
            "a torch extension for CUDA 13 (_C_cutlass_90a, _C_mxfp8) that needs libcudart.so.13 with no "
            "RPATH and no requirement of torch or the runtime: torch's import loads both"
        ),
        install_mb=3000,  # torch 2.11 with its CUDA 13 NVIDIA wheels
        must_repair=True,
        options=("--preloaded", "torch"),
        cuda_major=13,
        adds=("nvidia-cuda-runtime",),
    ),
    CorpusWheel(
        project="jammi-ai-native-cu12",
        filename="jammi_ai_native_cu12-0.54.0-cp39-abi3-manylinux_2_28_x86_64.whl",
        sha256="7eef85cbfe9d55d1579cf1548e525699300b65582bfe6bdba88dac80dd25c84a",
        size=69_665_899,
        vendors=(
            "nothing vendored; a Rust extension requiring nvidia-*-cu12==12.6.* and "
            "nvidia-nccl-cu12==2.23.4.*, "
            "whose dynamic symbols list 30 NCCL functions newer than 2.23 (ncclCommShrink) that no "
            "relocation uses: repair refused it (exit 2), taking 2.30.3 for NCCL's floor, and 12.0.1.189, "
            "the oldest cuBLAS exporting what it imports, as at odds with ==12.6.*"
        ),
        install_mb=1500,  # cuBLAS, cuRAND, NVRTC and cudart 12.6, NCCL 2.23
        must_repair=True,
        cuda_major=12,
        adds=(),
    ),
    CorpusWheel(
        project="jammi-server-cu12",
        filename="jammi_server_cu12-0.54.0-py3-none-manylinux_2_28_x86_64.whl",
        sha256="70230498bb742d4b346ffe3d83412fb27725377f3e83006b351b4f056d92d569",
        size=72_486_839,
        vendors=(
            "nothing vendored; one program (jammi_server/bin/jammi-server, no RPATH) linking six CUDA 12 "
            "libraries, which its entry point runs with LD_LIBRARY_PATH set: repair gives it an RPATH to "
            "each; verify loaded no program and failed that repair ('libcudart.so.12 is not mapped after "
            "import'), and it now traces the program, which finds each in its wheel"
        ),
        install_mb=1500,  # cuBLAS, cuRAND, NVRTC and cudart 12.6, NCCL 2.23 (jammi-ai-native-cu12's)
        must_repair=True,
        cuda_major=12,
        adds=(),
        edits=("jammi_server/bin/jammi-server",),
    ),
    CorpusWheel(
        project="sipppy-backend-cuda",
        filename="sipppy_backend_cuda-0.1.4-cp310-abi3-manylinux_2_28_x86_64.whl",
        sha256="d658388c003dfa32cf8280163bfd9432ad141d2a3428070b64c5eae9dd462838",
        size=138_290_916,
        vendors=(
            "nothing vendored; a Rust extension of 166 MB linked by lld, which leaves no spare DT_NULL in "
            ".dynamic, needing libcublas.so.13 and libcudart.so.13 with no RPATH and no requirement: the "
            "new RPATH went to patchelf (325 MB peak)"
        ),
        install_mb=800,  # cuBLAS 13 and cudart 13
        must_repair=True,
        cuda_major=13,
        adds=("nvidia-cublas", "nvidia-cuda-runtime"),
        edits=("sipp_backend_cuda/_native.abi3.so",),
        max_growth=32 << 10,
    ),
    CorpusWheel(
        project="polars-fastembed-cuda",
        filename="polars_fastembed_cuda-0.1.17-py3-none-manylinux_2_17_x86_64.whl",
        sha256="7293ae99cdf6a366a89febf79ef4f31580d784f22721a4952962a48093adbd8b",
        size=40_270_391,
        vendors=(
            "onnxruntime 1.23 and its CUDA provider, sstripped (no section headers), the provider needing "
            "cuBLAS, cudart, cuDNN and cuFFT 12 with no RPATH and no requirement: patchelf refuses such "
            "a file, and repair exited 2"
        ),
        install_mb=1400,  # cuBLAS, cuDNN, cuFFT and cudart 12
        must_repair=True,
        cuda_major=12,
        adds=("nvidia-cublas-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12", "nvidia-cufft-cu12"),
        edits=("polars_fastembed_cuda/libs/libonnxruntime_providers_cuda.so",),
        no_verify=(
            "its libraries need glibc 2.38 (GLIBC_2.38 symbol versions), though it is tagged manylinux_2_17; "
            "this machine has 2.36"
        ),
    ),
    CorpusWheel(
        project="gbgpu-cuda11x",
        filename="gbgpu_cuda11x-1.2.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="a64c0ac6eef601d09686456bd84f8c9bfe6c35aa1789dd6f0504121eeb0cc040",
        size=322_022,
        vendors=(
            "auditwheel's copy of cudart 11.8; its extension needs cuBLAS, cuBLASLt and cuSPARSE 11 and "
            "imports nothing from them (over-linked): --drop-unused-needed removes those entries, so "
            "nvidia-cublas-cu11 and nvidia-cusparse-cu11 are not required"
        ),
        install_mb=400,  # cupy-cuda11x, numba, scipy, matplotlib, h5py; cudart 11
        must_repair=True,
        repair_options=("--drop-unused-needed",),
        cuda_major=11,
        adds=("nvidia-cuda-runtime-cu11",),
    ),
    CorpusWheel(
        project="tensorrt-lean-cu13-bindings",
        filename="tensorrt_lean_cu13_bindings-11.4.0.106-cp311-none-manylinux_2_28_x86_64.whl",
        sha256="539faf8524d7e8c5d893857d97d170ef3636f3e71262aafa670797f740e9086a",
        size=806_771,
        vendors=(
            "nothing: its extension links libnvinfer_lean.so.11 and it requires no wheel that ships it "
            "(NVIDIA's metapackage tensorrt-lean-cu13 brings tensorrt-lean-cu13-libs beside it); repair "
            "once refused it as needing TensorRT installed on the host"
        ),
        install_mb=45,  # tensorrt-lean-cu13-libs
        must_repair=True,
        cuda_major=13,
        adds=("tensorrt-lean-cu13-libs",),
    ),
    CorpusWheel(
        project="nvfuser-cu118-torch24",
        filename=(
            "nvfuser_cu118_torch24-0.2.9.dev20240808-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64."
            "manylinux_2_28_x86_64.whl"
        ),
        sha256="92e88206463b365ee90887c8c11ead4b8c2ba61ef5906a98c51f9fa2a63a4a18",
        size=9_647_912,
        vendors=(
            "nothing: requires nvidia-cuda-cupti-cu11 with no range, which admits 11.7.101, and its files "
            "need libcupti.so.11.8, which 11.8.87 ships first; repair narrows the range"
        ),
        install_mb=3000,  # torch 2.4 with its CUDA 11.8 wheels
        must_repair=True,
        options=("--preloaded", "torch"),
        cuda_major=11,
        adds=("nvidia-cuda-cupti-cu11",),
        no_verify="a CPython 3.10 wheel, and it needs torch 2.4, which it does not require",
        no_resolve="a CPython 3.10 wheel",
    ),
)


# Published wheels too big for the test run (downloads of hundreds of MB, minutes of repair): the
# benchmarks measure them (benchmarks/bench_repair.py --real).
BENCH_ONLY: tuple[CorpusWheel, ...] = (
    CorpusWheel(
        project="torch",
        filename="torch-1.13.1-cp311-cp311-manylinux1_x86_64.whl",
        sha256="22128502fd8f5b25ac1cd849ecb64a418382ae81dd4ce2b5cebaa09ab15b0d9b",
        size=887_431_784,
        vendors=(
            "auditwheel-renamed copies torch/lib/libcudart-e409450e.so.11.0 and libnvToolsExt-847d78f2.so.1, "
            "NEEDED by libtorch_cuda_cu.so (763 MB; its .dynstr moved to the end by an earlier patchelf), "
            "libtorch_cpu.so (551 MB) and others; cuBLAS, cuDNN, NVRTC, cudart already from NVIDIA's wheels"
        ),
        install_mb=2600,
        must_repair=True,
    ),
    CorpusWheel(
        project="torch",
        filename="torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl",
        sha256="e617b1d0abaf6ced02dbb9486803abfef0d581609b09641b34fa315c9c40766d",
        size=619_895_009,
        vendors=(
            "nothing: requires NVIDIA's cu11 wheels, and libtorch_cuda.so (626 MB) and the rest reach them "
            "by an RPATH that lists them before $ORIGIN (left as it is: the order changes no lookup); "
            "nvfuser_tests and nvfuser/_C.so name /usr/local/cuda/lib64 and get the NVIDIA folders"
        ),
        install_mb=2600,
        must_repair=True,
    ),
    CorpusWheel(
        project="tensorflow",
        filename="tensorflow-2.15.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="bb0edd69103c154245c5f209f0507355cc68ba7e4de350084bc31edc562478e4",
        size=475_258_663,
        vendors=(
            "nothing to repair (its CUDA libraries are dlopen'ed from NVIDIA's wheels, an optional extra; "
            "NCCL linked statically); benchmarks/bench_edit_memory.py forces an edit of "
            "libtensorflow_cc.so.2 (978 MB) whose 47 MB .dynstr must move"
        ),
        install_mb=1500,
    ),
    CorpusWheel(
        project="libcuopt-routing-cu12",
        filename="libcuopt_routing_cu12-26.10.0-py3-none-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        sha256="5c00edf663ddd5c359a740d69c1506709009c2ff24afbef5938f3f83a2887a71",
        size=262_181_873,
        vendors=(
            "nothing vendored; libcuopt_routing.so (311 MiB of device code) reaches cuBLAS, cuSPARSE and "
            "nvJitLink through an RPATH that names its own folder three ways and nvidia/cudss/lib, where no "
            "cuDSS wheel installs, and lists its NVIDIA folders before libcuopt_client's: left as it is"
        ),
        install_mb=1500,
    ),
    CorpusWheel(
        project="mxnet-cu112",
        filename="mxnet_cu112-1.9.1-py3-none-manylinux2014_x86_64.whl",
        sha256="70137a60eef49241b1137231bbd6bdeedbb0eca83e136f864ead36998814bfe5",
        size=499_364_355,
        vendors=(
            "links cuDNN 8, cuBLAS, cuFFT, cuRAND, cuSOLVER, NCCL, NVRTC, nvToolsExt and cudart 11 from the "
            "system (nothing vendored); libmxnet.so (850 MB) gets an RPATH that does not fit in place, so "
            "its 26 MB .dynstr moves to an appended segment; libgomp.so.1 is expected from the system"
        ),
        install_mb=3000,
        options=("--allow-broken",),
    ),
    CorpusWheel(
        project="transformer-engine-cu12",
        filename="transformer_engine_cu12-2.20.2-py3-none-manylinux_2_28_x86_64.whl",
        sha256="7e745539686166790cb9fe2133e7c187edf6fe8627c7f7d46597888299c3f4cf",
        size=729_046_361,
        vendors=(
            "nothing vendored; libtransformer_engine.so (1,029 MB of content) links cuBLAS, cudart, cuDNN "
            "and NCCL with no RPATH and no Requires-Dist: the issue's case of a 1 GB library that must be "
            "edited (an RPATH set, which does not fit in place)"
        ),
        install_mb=3000,
        must_repair=True,
    ),
    CorpusWheel(
        project="libcuvs-cu12",
        filename="libcuvs_cu12-26.10.0-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256="3fc62c551bfc8d9995bf47718bd6afcc11b277b8fd70059ee8ec7a082d56dd79",
        size=393_156_415,
        vendors=(
            "RAPIDS: nothing vendored; libcuvs.so (544 MB) needs libnvrtc.so.12, which its RPATH into "
            "nvidia/*/lib does not reach: repair adds nvidia/cuda_nvrtc/lib (cuda-toolkit[...]==12.* "
            "brings it). Requires librmm-cu12, libkvikio-cu12 and rapids-logger, which Python loads first"
        ),
        install_mb=3000,
        must_repair=True,
        options=(
            *("--preloaded", "librmm-cu12", "--preloaded", "libkvikio-cu12", "--preloaded", "rapids-logger"),
        ),
    ),
)


def fetch(entry: CorpusWheel) -> Path:
    """The wheel in slimwheel's cache, downloaded (and checked against the pinned sha256) when absent."""
    from slimwheel.index import Cache

    cache = Cache.default()
    cached = cache.cached_file(entry.filename, sha256=entry.sha256, url="")
    if cached is not None:
        return cached
    # One download per file across pytest-xdist's workers: a second one, renamed over the first's
    # file, would change it under a repair reading it (and fail "repair modified its input").
    lock_path = Path(tempfile.gettempdir()) / f"slimwheel-corpus-{entry.sha256[:16]}.lock"
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = cache.cached_file(entry.filename, sha256=entry.sha256, url="")
        return cached if cached is not None else _download(entry, cache)


def _download(entry: CorpusWheel, cache: Cache) -> Path:
    from slimwheel.index import IndexClient, resolve_index_settings

    with IndexClient(resolve_index_settings(), cache=cache) as client:
        matches = [file for file in client.project(entry.project).files if file.filename == entry.filename]
        if not matches:
            raise LookupError(f"{entry.filename} is not listed for {entry.project} by the configured indexes")
        listed = [file for file in matches if file.sha256 == entry.sha256]
        if not listed:
            raise LookupError(
                f"{entry.filename}: the index lists sha256 {matches[0].sha256}, pinned {entry.sha256}"
            )
        return client.download(listed[0])
