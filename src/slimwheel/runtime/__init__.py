"""Load NVIDIA's libraries from their pip wheels at run time, once per process, with checks.

    from slimwheel.runtime import load, preload
    preload("mypkg")              # every library mypkg's slimwheel.json lists, in load order
    cudss = load("cudss", cuda=13, min_version="1.0.0")
    cudss.path, cudss.distribution, cudss.version, cudss.library_version, cudss.how

Standard library only, and cheap to import: a package calls this from its ``__init__`` before its
extension module loads. Nothing outside the standard library is imported, not even
``importlib.metadata`` (installed distributions are read from their ``RECORD`` files directly), nor
``dataclasses``, ``enum``, ``re`` or ``typing`` (see ``_record``). Its modules import one another
relatively and nothing else of slimwheel, so ``repair --embed-loader`` can copy the package into
another project as it is.

Where a library is looked for, in order:

1. ``SLIMWHEEL_<STEM>_PATH`` (``SLIMWHEEL_CUDSS_PATH=/opt/cudss/lib/libcudss.so.1``, or a folder).
2. The copy this process already has mapped, reused rather than loaded twice.
3. The policy's sources: ``"wheel-first"`` (installed distributions' RECORD across ``sys.path``,
   then ``$CONDA_PREFIX/lib``, ``$CUDA_HOME``/``$CUDA_PATH`` ``lib64`` and ``lib``, then the system
   loader's folders), ``"system-first"`` (the same with wheels last), or ``"wheel-only"``.

One CUDA major per process: the first load whose major is known fixes it; before that, a CUDA library
the process already has mapped does (``libcudart.so.12`` that torch loaded, or another package's
embedded copy of this loader). Linux (glibc) only:
libraries are loaded with ``dlopen(absolute path, RTLD_GLOBAL)``; nothing relative to the current
directory is ever searched.
"""

# Annotations stay strings (tuple[...], int | None): a copy embedded by ``repair --embed-loader`` runs
# on the repaired package's Python, which may be older than slimwheel's own minimum (3.8 works).
from __future__ import annotations

from ._index import InstalledFile, WheelIndex
from ._loader import find, load, preload
from ._model import (
    Candidate,
    Considered,
    Loaded,
    MappedLibrary,
    Policy,
    Rejection,
    Search,
    SearchedPlace,
    Source,
)
from ._names import override_variable
from ._process import REGISTRY, ProcessRegistry, mapped_libraries
from .errors import (
    CudaMajorConflictError,
    LibraryConflictError,
    LibraryLoadError,
    LibraryNotFoundError,
    LibraryVersionError,
    ManifestNotFoundError,
    RuntimeLoadError,
)

__all__ = [
    "REGISTRY",
    "Candidate",
    "Considered",
    "CudaMajorConflictError",
    "InstalledFile",
    "LibraryConflictError",
    "LibraryLoadError",
    "LibraryNotFoundError",
    "LibraryVersionError",
    "Loaded",
    "ManifestNotFoundError",
    "MappedLibrary",
    "Policy",
    "ProcessRegistry",
    "Rejection",
    "RuntimeLoadError",
    "Search",
    "SearchedPlace",
    "Source",
    "WheelIndex",
    "find",
    "load",
    "loaded_libraries",
    "mapped_libraries",
    "override_variable",
    "preload",
    "process_cuda_major",
]


def loaded_libraries() -> tuple[Loaded, ...]:
    """What ``load`` and ``preload`` returned in this process, in order."""
    return REGISTRY.loaded()


def process_cuda_major() -> int | None:
    """The CUDA major this process uses: the one a load fixed, else that of a CUDA library already
    mapped (``libcudart.so.12`` loaded by torch, say); None when neither says."""
    return REGISTRY.process_major()[0]
