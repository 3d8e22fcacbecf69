"""Frameworks whose libraries extension modules link against, loaded by importing the framework first.

A PyTorch extension (fbgemm-gpu, sgl-kernel, flash-attn) has ``libtorch.so`` and ``libc10.so`` in
its DT_NEEDED and no RPATH to them: ``import torch`` has loaded them from ``torch/lib`` before the
extension is, and glibc reuses a loaded library of that soname. Many such wheels do not even require
torch (each matches a torch build the user picks). check cannot see that load unless told
(``--preloaded torch``); this table lets it say so when it meets one of these sonames that nothing in
the install ships. Data, not code: a framework is added by a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Framework", "framework_of"]


@dataclass(frozen=True)
class Framework:
    """A distribution whose import loads the libraries that match ``sonames`` from ``folder``."""

    distribution: str  # what --preloaded names, and what pip installs
    folder: str  # where its wheel installs them, inside site-packages
    sonames: re.Pattern[str]


_FRAMEWORKS = (
    Framework(
        "torch",
        "torch/lib",
        re.compile(
            r"lib(?:torch(?:_cpu|_cuda|_cuda_cpp|_cuda_cu|_cuda_linalg|_hip|_python|_global_deps|_nvshmem)?"
            r"|c10(?:_cuda|_hip)?|shm|caffe2_nvrtc)\.so"
        ),
    ),
    Framework("tensorflow", "tensorflow", re.compile(r"libtensorflow_(?:framework|cc)\.so(?:\.\d+)*")),
    # OpenMM's platform plugins (openmm-cuda-12's OpenMM.libs/lib/plugins/libOpenMMCUDA.so) require
    # no openmm: `import openmm` loads libOpenMM.so, which loads them.
    Framework("openmm", "OpenMM.libs/lib", re.compile(r"libOpenMM(?:Amoeba|Drude|RPMD)?\.so")),
)


def framework_of(soname: str) -> Framework | None:
    """The framework whose import loads a library of this soname, if it is one of theirs."""
    return next((framework for framework in _FRAMEWORKS if framework.sonames.fullmatch(soname)), None)
