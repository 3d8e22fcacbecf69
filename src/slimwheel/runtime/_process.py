"""This process: what it has mapped, dlopen and friends through ctypes, the libraries' own version
calls, and the one registry of process-wide facts the loader keeps.
"""

# os.path, not pathlib: importing pathlib costs the loader a few milliseconds at every start.
# ruff: noqa: PTH117, PTH121, PTH123

from __future__ import annotations

import _ctypes
import _thread
import ctypes
import os

from ._model import Loaded, MappedLibrary
from ._names import CUDA_MAJOR_IS_LIBRARY_MAJOR, mapped_stem, version_tuple

# Annotations only: collections.abc would import collections at every start of a process.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "REGISTRY",
    "ProcessRegistry",
    "already_loaded",
    "handle_path",
    "library_version",
    "mapped_libraries",
    "open_library",
    "unload",
]

_RTLD_DI_LINKMAP = 2


def mapped_libraries(stem: str | None = None) -> tuple[MappedLibrary, ...]:
    """Shared library files mapped in this process, in the order ``/proc/self/maps`` first shows
    them; with ``stem``, only copies of that library (auditwheel's and renamed copies included)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return ()
    seen: dict[str, MappedLibrary] = {}
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue
        path = fields[5]
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        name = path.rsplit("/", 1)[-1]
        if ".so" not in name or path in seen:
            continue
        found = mapped_stem(name)
        if stem is None or found == stem:
            seen[path] = MappedLibrary(path, found)
    return tuple(seen.values())


class _LinkMap(ctypes.Structure):
    # glibc's struct link_map starts with these public fields (<link.h>).
    _fields_ = (
        ("l_addr", ctypes.c_void_p),
        ("l_name", ctypes.c_char_p),
        ("l_ld", ctypes.c_void_p),
        ("l_next", ctypes.c_void_p),
        ("l_prev", ctypes.c_void_p),
    )


def _dlinfo() -> Callable[..., int] | None:
    for library in (None, "libdl.so.2"):  # libc since glibc 2.34, libdl before
        try:
            function: Callable[..., int] = ctypes.CDLL(library).dlinfo
        except (OSError, AttributeError):
            continue
        return function
    return None


def handle_path(handle: ctypes.CDLL) -> str | None:
    """The file a handle refers to, as the loader opened it (``link_map.l_name``)."""
    dlinfo = _dlinfo()
    if dlinfo is None:
        return None
    pointer = ctypes.POINTER(_LinkMap)()
    if dlinfo(ctypes.c_void_p(handle._handle), _RTLD_DI_LINKMAP, ctypes.byref(pointer)) != 0 or not pointer:
        return None
    name = pointer.contents.l_name
    if not name:
        return None
    path = os.fsdecode(name)
    # torch opens its libraries as torch/lib/../../nvidia/cu13/lib/...: show the plain path when it
    # is the same file (a symlinked folder would make the textual form point elsewhere).
    plain = os.path.normpath(path)
    try:
        return plain if plain == path or os.path.samefile(plain, path) else path
    except OSError:
        return path


def already_loaded(soname: str) -> tuple[ctypes.CDLL, str] | None:
    """The copy of ``soname`` this process already has (glibc matches loaded objects by their
    DT_SONAME, so a renamed file that kept its SONAME counts): its handle and path, else None.

    ``RTLD_NOLOAD`` maps nothing; without ``RTLD_GLOBAL`` it leaves the copy's scope as it was.
    """
    try:
        handle = ctypes.CDLL(soname, mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    path = handle_path(handle)
    if path is None:  # no dlinfo (not glibc): the mapped file of that name
        path = next((m.path for m in mapped_libraries() if m.path.rsplit("/", 1)[-1] == soname), soname)
    return handle, path


def open_library(path: str) -> ctypes.CDLL:
    """dlopen by absolute path, global: a later dlopen of the soname (a package's DT_NEEDED) reuses it."""
    if not os.path.isabs(path):
        raise ValueError(f"refusing to dlopen a relative path: {path!r}")
    return ctypes.CDLL(path, mode=os.RTLD_GLOBAL)


def unload(handle: ctypes.CDLL) -> None:
    """dlclose a copy this call loaded and then rejected (too old, wrong CUDA major), so the
    process does not keep a library it was not asked for."""
    try:
        _ctypes.dlclose(handle._handle)
    except OSError:
        return


def _property_version(function: Callable[..., int]) -> str | None:
    # libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
    parts = []
    for kind in (0, 1, 2):
        value = ctypes.c_int(-1)
        if function(kind, ctypes.byref(value)) != 0:
            return None
        parts.append(str(value.value))
    return ".".join(parts)


def _cudart_version(function: Callable[..., int]) -> str | None:
    value = ctypes.c_int(0)
    if function(ctypes.byref(value)) != 0:
        return None
    return f"{value.value // 1000}.{value.value % 1000 // 10}"  # 13000 -> 13.0, 12080 -> 12.8


def _major_minor_version(function: Callable[..., int]) -> str | None:
    major, minor = ctypes.c_int(-1), ctypes.c_int(-1)
    if function(ctypes.byref(major), ctypes.byref(minor)) != 0:
        return None
    return f"{major.value}.{minor.value}"


def _cudnn_version(function: Callable[..., int]) -> str | None:
    value = int(function())
    if value >= 90000:  # cuDNN 9: major*10000 + minor*100 + patch (91400 -> 9.14.0)
        return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
    return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"  # cuDNN 8: 8907 -> 8.9.7


def _nccl_version(function: Callable[..., int]) -> str | None:
    value = ctypes.c_int(0)
    if function(ctypes.byref(value)) != 0:
        return None
    code = value.value
    if code >= 10000:  # NCCL >= 2.9: major*10000 + minor*100 + patch (22703 -> 2.27.3)
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


# stem -> (exported function, how to read it). Each call is pure: no device, no initialization.
_VERSION_CALLS: dict[str, tuple[str, Callable[[Callable[..., int]], str | None]]] = {
    "cudss": ("cudssGetProperty", _property_version),
    "cublas": ("cublasGetProperty", _property_version),
    "cublasLt": ("cublasLtGetProperty", _property_version),
    "cusparse": ("cusparseGetProperty", _property_version),
    "cufft": ("cufftGetProperty", _property_version),
    "curand": ("curandGetProperty", _property_version),
    "cusolver": ("cusolverGetProperty", _property_version),
    "cudart": ("cudaRuntimeGetVersion", _cudart_version),
    "nvrtc": ("nvrtcVersion", _major_minor_version),
    "nvJitLink": ("nvJitLinkVersion", _major_minor_version),
    "cudnn": ("cudnnGetVersion", _cudnn_version),
    "nccl": ("ncclGetVersion", _nccl_version),
}


def library_version(stem: str, handle: ctypes.CDLL) -> str | None:
    """The library's own version through its API, or None when it offers none (or the call fails)."""
    call = _VERSION_CALLS.get(stem)
    if call is None:
        return None
    name, read = call
    try:
        function = getattr(handle, name)
    except AttributeError:
        return None
    if read is _cudnn_version:
        function.restype = ctypes.c_size_t
    try:
        return read(function)
    except (OSError, ValueError):
        return None


def library_cuda_major(stem: str, version: str | None) -> int | None:
    if version is None or stem not in CUDA_MAJOR_IS_LIBRARY_MAJOR:
        return None
    parts = version_tuple(version)
    return parts[0] if parts else None


class ProcessRegistry:
    """The only process-wide state the loader keeps: the CUDA major this process uses (and the file
    that fixed it), and what ``load`` returned, by soname. A lock makes ``load`` and ``preload``
    atomic across threads. ``reset`` is for tests: it forgets, it does not unload anything.
    """

    def __init__(self) -> None:
        self.lock = _thread.RLock()
        self.cuda_major: int | None = None
        self.cuda_major_path: str | None = None
        self._loaded: dict[str, Loaded] = {}

    def reset(self) -> None:
        with self.lock:
            self.cuda_major = None
            self.cuda_major_path = None
            self._loaded = {}

    def loaded(self) -> tuple[Loaded, ...]:
        return tuple(self._loaded.values())

    def lookup(self, soname: str | None, stem: str) -> Loaded | None:
        if soname is not None:
            return self._loaded.get(soname)
        matches = [item for item in self._loaded.values() if mapped_stem(item.soname) == stem]
        return matches[-1] if matches else None

    def process_major(self) -> tuple[int | None, str | None]:
        """The CUDA major this process uses and the file that says so: the one a load fixed, else a
        library already mapped whose soname carries the CUDA major (``libcudart.so.12`` that torch, an
        extension's DT_NEEDED, or another package's embedded copy of this loader brought in)."""
        if self.cuda_major is not None:
            return self.cuda_major, self.cuda_major_path
        for mapped in mapped_libraries():
            if mapped.stem in CUDA_MAJOR_IS_LIBRARY_MAJOR:
                filename = mapped.path.rsplit("/", 1)[-1]
                version = version_tuple(filename.rsplit(".so.", 1)[1]) if ".so." in filename else ()
                if version:
                    return version[0], mapped.path
        return None, None

    def record(self, loaded: Loaded, *, fixes_major: bool) -> None:
        self._loaded[loaded.soname] = loaded
        if fixes_major and self.cuda_major is None and loaded.cuda_major is not None:
            self.cuda_major = loaded.cuda_major
            self.cuda_major_path = loaded.path


REGISTRY = ProcessRegistry()
