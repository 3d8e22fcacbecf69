"""Library names and version numbers as the loader needs them: soname stems, the override variable,
CUDA majors read off names and folders, version comparison, and the pip command a message offers.

Standard library only, no I/O, and no ``re``: importing it (with ``enum`` and ``functools``) would
cost every process that imports the loader several milliseconds, for names a few string methods parse.
"""

from __future__ import annotations

from ._record import Record

__all__ = [
    "CUDA_MAJOR_IS_LIBRARY_MAJOR",
    "LibraryName",
    "at_least",
    "file_matches",
    "is_library_file_name",
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

_HEX = frozenset("0123456789abcdef")


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _is_version(text: str) -> bool:
    """``13``, ``1.0.0``: dot-separated ASCII numbers."""
    return all(_is_number(part) for part in text.split("."))


def _split_so(name: str, hashed: str = "") -> tuple[str, str | None] | None:
    """``lib<stem>[<hashed><8 hex>].so[.<version>]`` -> (stem, version or None), the shortest stem
    that fits (as a non-greedy pattern would); ``hashed`` is ``-`` for auditwheel's copies, ``.``
    for renamed ones, empty for a plain name."""
    if not name.startswith("lib"):
        return None
    tag = 9 if hashed else 0  # the separator and eight hex digits before ".so"
    position = name.find(".so", 4 + tag)
    while position != -1:
        rest = name[position + 3 :]
        if not rest or (rest[0] == "." and _is_version(rest[1:])):
            stem_end = position - tag
            if not hashed or (name[stem_end] == hashed and _HEX.issuperset(name[stem_end + 1 : position])):
                return name[3:stem_end], rest[1:] or None
        position = name.find(".so", position + 1)
    return None


class LibraryName(Record):
    """What ``load`` was asked for: a soname stem (``cudss``), or an exact soname (``libcudss.so.1``)."""

    __slots__ = ("soname", "stem")
    stem: str
    soname: str | None

    def __init__(self, stem: str, soname: str | None = None) -> None:
        self._set(stem=stem, soname=soname)

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
        parts = _split_so(lib)
        if parts is None:
            raise ValueError(f"{lib!r} is not a soname (lib<stem>.so[.N])")
        return LibraryName(parts[0], lib)
    return LibraryName(lib, None)


def soname_version(filename: str, stem: str) -> tuple[int, ...] | None:
    """The version in ``lib<stem>.so.<N>`` as a tuple (``()`` for an unversioned name), else None."""
    parts = _split_so(filename)
    if parts is None or parts[0] != stem:
        return None
    return version_tuple(parts[1]) if parts[1] else ()


def is_library_file_name(filename: str) -> bool:
    """``lib<stem>.so`` or ``lib<stem>.so.<N>``, the names a linker and a RECORD give libraries."""
    return _split_so(filename) is not None


def file_matches(filename: str, name: LibraryName) -> bool:
    if name.soname is not None:
        return filename == name.soname
    return soname_version(filename, name.stem) is not None


def mapped_stem(filename: str) -> str | None:
    """The stem of a mapped file, whatever copy style it is (auditwheel's hashed copy with its SONAME
    rewritten, a renamed copy that kept its SONAME, a plain name; see slimwheel.names)."""
    for hashed in ("-", ".", ""):
        parts = _split_so(filename, hashed)
        if parts is not None:
            return parts[0]
    return None


def override_variable(stem: str) -> str:
    """``cudss`` -> ``SLIMWHEEL_CUDSS_PATH``; ``nvrtc-builtins`` -> ``SLIMWHEEL_NVRTC_BUILTINS_PATH``."""
    return "SLIMWHEEL_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in stem).upper() + "_PATH"


def normalize_distribution(name: str) -> str:
    """PEP 503 normalization, the form a requirement and a pip command use."""
    return "-".join(part for part in name.lower().replace("_", "-").replace(".", "-").split("-") if part)


def major_from_distribution(name: str) -> int | None:
    """``nvidia-cudss-cu13`` -> 13 (a ``[-_.]cuN`` suffix, any case)."""
    head, _, major = name.lower().rpartition("cu")
    if head[-1:] in ("-", "_", ".") and _is_number(major):
        return int(major)
    return None


# Libraries whose own major is the CUDA major, and so is their soname's (libcudart.so.13 is CUDA 13,
# libcudart.so.11.0 CUDA 11). Not cuFFT, cuSPARSE, cuRAND...: libcufft.so.12 ships with CUDA 13.
CUDA_MAJOR_IS_LIBRARY_MAJOR = frozenset(
    {"cudart", "nvrtc", "nvrtc-builtins", "cublas", "cublasLt", "nvJitLink"}
)


def major_from_soname(soname: str) -> int | None:
    parts = _split_so(soname)
    if parts is None or parts[0] not in CUDA_MAJOR_IS_LIBRARY_MAJOR or not parts[1]:
        return None
    return version_tuple(parts[1])[0]


def major_from_folder(path: str) -> int | None:
    """The CUDA major a folder names (``nvidia/cu13/lib``, ``/usr/local/cuda-12.8/lib64``), innermost
    first."""
    for part in reversed(path.split("/")[:-1]):
        for prefix in ("cuda-", "cuda", "cu"):
            if part.startswith(prefix):
                version = part[len(prefix) :]
                if version and _is_version(version):
                    return int(version.split(".")[0])
                break
    return None


def version_tuple(text: str) -> tuple[int, ...]:
    """``"1.0.0.35"`` -> ``(1, 0, 0, 35)``; stops at the first part that is not a number
    (``"13.0.post1"`` -> ``(13, 0)``), so a local or pre-release tag never breaks a comparison."""
    parts: list[int] = []
    for part in text.strip().split("."):
        end = 0
        while end < len(part) and "0" <= part[end] <= "9":
            end += 1
        if end == 0:
            break
        parts.append(int(part[:end]))
        if end != len(part):
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
