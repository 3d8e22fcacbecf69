"""Library names and version numbers as the loader needs them: soname stems, the override variable,
CUDA majors read off names and folders, version comparison, and the pip command a message offers.

Standard library only (``re`` comes with ``dataclasses`` anyway), no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CUDA_MAJOR_IS_LIBRARY_MAJOR",
    "LibraryName",
    "at_least",
    "file_matches",
    "major_from_distribution",
    "major_from_folder",
    "major_from_soname",
    "mapped_stem",
    "normalize_distribution",
    "override_variable",
    "parse_library",
    "soname_version",
    "suggested_distribution",
    "version_tuple",
]

# Pattern strings, compiled on first use through re's own cache: compiling them all at import would
# cost the loader's start a millisecond for names most processes never parse.
_VERSION = r"[0-9]+(?:\.[0-9]+)*"
_PLAIN = rf"^lib(?P<stem>.+?)\.so(?:\.(?P<version>{_VERSION}))?$"
# The other names a copy of a library is mapped under (see slimwheel.names): auditwheel's hashed copy
# (SONAME rewritten) and a renamed copy that keeps its SONAME.
_AUDITWHEEL = rf"^lib(?P<stem>.+?)-[0-9a-f]{{8}}\.so(?:\.{_VERSION})?$"
_RENAMED = rf"^lib(?P<stem>.+?)\.[0-9a-f]{{8}}\.so(?:\.{_VERSION})?$"
_DIST_SUFFIX = r"(?i)[-_.]cu(?P<major>[0-9]+)$"
# nvidia/cu13/lib (CUDA 13 wheels' shared folder), /usr/local/cuda-12.8/lib64, .../cuda12/...
_FOLDER_MAJOR = r"^(?:cu|cuda-?)(?P<major>[0-9]+)(?:\.[0-9]+)*$"


@dataclass(frozen=True)
class LibraryName:
    """What ``load`` was asked for: a soname stem (``cudss``), or an exact soname (``libcudss.so.1``)."""

    stem: str
    soname: str | None = None

    def __str__(self) -> str:
        return self.soname or self.stem


def parse_library(lib: str) -> LibraryName:
    """``"cudss"`` -> stem; ``"libcudss.so.1"`` -> that exact soname (stem ``cudss``).

    A path is refused: the loader never dlopens a name it did not find itself (the per-library
    override variable is how a user names a file).
    """
    if not lib or "/" in lib or "\0" in lib:
        raise ValueError(f"expected a soname stem or an exact soname, not {lib!r}")
    if ".so" in lib:
        match = re.match(_PLAIN, lib)
        if match is None:
            raise ValueError(f"{lib!r} is not a soname (lib<stem>.so[.N])")
        return LibraryName(match["stem"], lib)
    return LibraryName(lib, None)


def soname_version(filename: str, stem: str) -> tuple[int, ...] | None:
    """The version in ``lib<stem>.so.<N>`` as a tuple (``()`` for an unversioned name), else None."""
    match = re.match(_PLAIN, filename)
    if match is None or match["stem"] != stem:
        return None
    return version_tuple(match["version"]) if match["version"] else ()


def file_matches(filename: str, name: LibraryName) -> bool:
    if name.soname is not None:
        return filename == name.soname
    return soname_version(filename, name.stem) is not None


def mapped_stem(filename: str) -> str | None:
    """The stem of a mapped file, whatever copy style it is (plain, auditwheel, renamed)."""
    for pattern in (_AUDITWHEEL, _RENAMED, _PLAIN):
        match = re.match(pattern, filename)
        if match:
            return match["stem"]
    return None


def override_variable(stem: str) -> str:
    """``cudss`` -> ``SLIMWHEEL_CUDSS_PATH``; ``nvrtc-builtins`` -> ``SLIMWHEEL_NVRTC_BUILTINS_PATH``."""
    return "SLIMWHEEL_" + re.sub(r"[^A-Za-z0-9]", "_", stem).upper() + "_PATH"


def normalize_distribution(name: str) -> str:
    """PEP 503 normalization, the form a requirement and a pip command use."""
    return re.sub(r"[-_.]+", "-", name).lower()


def major_from_distribution(name: str) -> int | None:
    match = re.search(_DIST_SUFFIX, name)
    return int(match["major"]) if match else None


# Libraries whose own major is the CUDA major, and so is their soname's (libcudart.so.13 is CUDA 13,
# libcudart.so.11.0 CUDA 11). Not cuFFT, cuSPARSE, cuRAND...: libcufft.so.12 ships with CUDA 13.
CUDA_MAJOR_IS_LIBRARY_MAJOR = frozenset(
    {"cudart", "nvrtc", "nvrtc-builtins", "cublas", "cublasLt", "nvJitLink"}
)


def major_from_soname(soname: str) -> int | None:
    match = re.match(_PLAIN, soname)
    if match is None or match["stem"] not in CUDA_MAJOR_IS_LIBRARY_MAJOR or not match["version"]:
        return None
    return version_tuple(match["version"])[0]


def major_from_folder(path: str) -> int | None:
    """The CUDA major a folder names (``nvidia/cu13/lib``, ``/usr/local/cuda-12.8/lib64``), innermost
    first."""
    for part in reversed(path.split("/")[:-1]):
        match = re.match(_FOLDER_MAJOR, part)
        if match:
            return int(match["major"])
    return None


def version_tuple(text: str) -> tuple[int, ...]:
    """``"1.0.0.35"`` -> ``(1, 0, 0, 35)``; stops at the first part that is not a number
    (``"13.0.post1"`` -> ``(13, 0)``), so a local or pre-release tag never breaks a comparison."""
    parts: list[int] = []
    for part in text.strip().split("."):
        digits = re.match(r"[0-9]+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.end() != len(part):
            break
    return tuple(parts)


def at_least(version: str, floor: str, *, prefix: bool = False) -> bool:
    """``version >= floor``, missing parts counted as 0.

    ``prefix`` compares only as many parts as the shorter of the two has: a library's own version
    (cuDSS 1.0.0) against a distribution version (1.0.0.35), or the reverse; both name the same
    release in NVIDIA's numbering, where the library version is the distribution version's prefix.
    """
    have, want = version_tuple(version), version_tuple(floor)
    if prefix:
        length = min(len(have), len(want))
        have, want = have[:length], want[:length]
    width = max(len(have), len(want))
    return have + (0,) * (width - len(have)) >= want + (0,) * (width - len(want))


# Only for the pip command a message suggests when neither the manifest nor the caller named a
# requirement: NVIDIA's naming convention (CUDA 13 toolkit wheels dropped the -cu suffix, the
# libraries outside the toolkit kept it). The catalog knows the real names; the loader cannot import it.
_TOOLKIT = {
    "cublas": "cublas",
    "cublasLt": "cublas",
    "cudart": "cuda-runtime",
    "nvrtc": "cuda-nvrtc",
    "nvrtc-builtins": "cuda-nvrtc",
    "cufft": "cufft",
    "curand": "curand",
    "cusolver": "cusolver",
    "cusparse": "cusparse",
    "nvJitLink": "nvjitlink",
    "cupti": "cuda-cupti",
}
_OUTSIDE_TOOLKIT = {"cudss": "cudss", "cudnn": "cudnn", "nccl": "nccl", "cusparseLt": "cusparselt"}


def suggested_distribution(stem: str, major: int) -> str | None:
    if stem in _TOOLKIT:
        base = f"nvidia-{_TOOLKIT[stem]}"
        return base if major >= 13 else f"{base}-cu{major}"
    # cuDSS's layers and cuDNN's sub-libraries (cudss_commlayer_nccl, cudnn_graph) ship with their parent.
    family = _OUTSIDE_TOOLKIT.get(stem) or _OUTSIDE_TOOLKIT.get(stem.split("_", 1)[0])
    return f"nvidia-{family}-cu{major}" if family else None
