"""Copies outside wheels: conda's ``lib``, ``$CUDA_HOME``/``$CUDA_PATH``, and what the system loader
would find (``LD_LIBRARY_PATH``, ``/etc/ld.so.cache``, the default folders).

The system loader's search is repeated here, rather than left to a bare ``dlopen(soname)``, so that
a candidate has a path before anything is loaded (its CUDA major and architecture are checked
first, and doctor can show it), and so that an empty or relative ``LD_LIBRARY_PATH`` entry, which
glibc reads as the current directory, is never searched.
"""

# os.path, not pathlib: importing pathlib costs the loader a few milliseconds at every start.
# ruff: noqa: PTH113, PTH117, PTH118, PTH119, PTH123, PTH208

from __future__ import annotations

import os
import struct
import sys

from ._names import LibraryName, file_matches

# Annotations only: collections.abc would import collections at every start of a process.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from io import BufferedReader

__all__ = [
    "LD_CACHE",
    "conda_folders",
    "cuda_home_folders",
    "default_folders",
    "elf_identity",
    "files_in",
    "ld_cache_entries",
    "ld_library_path",
    "read_soname",
    "soname_files",
]

LD_CACHE = "/etc/ld.so.cache"
_CACHE_MAGIC = b"glibc-ld.so.cache1.1"
_CACHE_HEADER = struct.Struct("=II4xI12x")  # nlibs, len_strings, (flags, padding), extension offset
_CACHE_ENTRY = struct.Struct("=iIIIQ")  # flags, key, value, osversion, hwcap
_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_STRTAB, _DT_SONAME = 0, 5, 14


def conda_folders(environ: Mapping[str, str]) -> list[str]:
    prefix = environ.get("CONDA_PREFIX", "")
    return [os.path.join(prefix, "lib")] if prefix and os.path.isabs(prefix) else []


def cuda_home_folders(environ: Mapping[str, str]) -> list[str]:
    folders: list[str] = []
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = environ.get(variable, "")
        if not home or not os.path.isabs(home):
            continue
        for sub in ("lib64", "lib"):
            folder = os.path.join(home, sub)
            if folder not in folders:
                folders.append(folder)
    return folders


def ld_library_path(environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Absolute ``LD_LIBRARY_PATH`` entries, and the ones skipped (empty or relative entries mean
    the current directory to glibc)."""
    used: list[str] = []
    skipped: list[str] = []
    for entry in environ.get("LD_LIBRARY_PATH", "").split(":") if environ.get("LD_LIBRARY_PATH") else ():
        (used if entry and os.path.isabs(entry) else skipped).append(entry)
    return used, skipped


def default_folders() -> list[str]:
    """glibc's trusted folders: the multiarch ones (Debian) and the 64-bit and plain ones."""
    multiarch = getattr(sys.implementation, "_multiarch", None)
    folders = [f"/lib/{multiarch}", f"/usr/lib/{multiarch}"] if multiarch else []
    return [*folders, "/lib64", "/usr/lib64", "/lib", "/usr/lib"]


def files_in(folder: str, name: LibraryName) -> list[str]:
    """Files in ``folder`` that are the wanted library (absolute paths)."""
    if name.soname is not None:
        path = os.path.join(folder, name.soname)
        return [path] if os.path.isfile(path) else []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [
        os.path.join(folder, n)
        for n in names
        if file_matches(n, name) and os.path.isfile(os.path.join(folder, n))
    ]


def ld_cache_entries(path: str = LD_CACHE) -> Iterator[tuple[str, str]]:
    """(file name, path) pairs from glibc's ``ld.so.cache`` (the "new" format, glibc >= 2.32 writes
    only it; older files carry it after the old table). Entries for other architectures are left to
    the caller's ELF check, as the loader does with its hwcap bits."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError:
        return
    start = data.find(_CACHE_MAGIC)
    if start < 0 or len(data) < start + len(_CACHE_MAGIC) + _CACHE_HEADER.size:
        return
    count, _strings, _extension = _CACHE_HEADER.unpack_from(data, start + len(_CACHE_MAGIC))
    offset = start + len(_CACHE_MAGIC) + _CACHE_HEADER.size
    for index in range(count):
        at = offset + index * _CACHE_ENTRY.size
        if at + _CACHE_ENTRY.size > len(data):
            return
        _flags, key, value, _os, _hwcap = _CACHE_ENTRY.unpack_from(data, at)
        # String offsets count from the start of the new-format header.
        yield _cstring(data, start + key), _cstring(data, start + value)


def _cstring(data: bytes, at: int) -> str:
    end = data.find(b"\0", at)
    return data[at : end if end >= 0 else len(data)].decode("utf-8", "surrogateescape")


def elf_identity(path: str) -> tuple[bytes, int] | None:
    """(class and byte order, e_machine) of an ELF file; None if it is not one. A file whose identity
    differs from the interpreter's cannot be loaded here (a 32-bit copy, another architecture)."""
    try:
        with open(path, "rb") as stream:
            header = stream.read(20)
    except OSError:
        return None
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    order = "<" if header[5] == 1 else ">"
    (machine,) = struct.unpack_from(f"{order}H", header, 18)
    return header[4:6], int(machine)


def read_soname(path: str) -> str | None:
    """A shared object's DT_SONAME, read through its program headers (a few small reads, even for a
    170 MB library); None when it has none or is not ELF. Outside wheels a file's name is often not
    its soname (``libz.so.1.2.13`` is ``libz.so.1``)."""
    try:
        with open(path, "rb") as stream:
            layout = _segments(stream)
            if layout is None:
                return None
            loads, (offset, size), dyn = layout
            stream.seek(offset)
            entries = stream.read(size)
            tags: dict[int, int] = {}
            for at in range(0, len(entries) - dyn.size + 1, dyn.size):
                tag, value = dyn.unpack_from(entries, at)
                if tag == _DT_NULL:
                    break
                tags.setdefault(tag, value)
            strtab, soname = tags.get(_DT_STRTAB), tags.get(_DT_SONAME)
            if strtab is None or soname is None:
                return None
            for vaddr, start, filesz in loads:  # DT_STRTAB is an address: find its file offset
                if vaddr <= strtab < vaddr + filesz:
                    stream.seek(start + strtab - vaddr + soname)
                    return stream.read(256).split(b"\0", 1)[0].decode("utf-8", "surrogateescape") or None
    except (OSError, struct.error):
        return None
    return None


def _segments(
    stream: BufferedReader,
) -> tuple[list[tuple[int, int, int]], tuple[int, int], struct.Struct] | None:
    """PT_LOAD segments (vaddr, offset, filesz), PT_DYNAMIC (offset, filesz) and the Dyn layout."""
    header = stream.read(64)
    if len(header) < 52 or header[:4] != b"\x7fELF":
        return None
    wide, order = header[4] == 2, "<" if header[5] == 1 else ">"
    if wide:
        (phoff,) = struct.unpack_from(f"{order}Q", header, 0x20)
        phentsize, phnum = struct.unpack_from(f"{order}HH", header, 0x36)
        phdr, dyn = struct.Struct(f"{order}IIQQQQQQ"), struct.Struct(f"{order}qQ")
        fields = (0, 2, 3, 5)  # p_type, p_offset, p_vaddr, p_filesz
    else:
        (phoff,) = struct.unpack_from(f"{order}I", header, 0x1C)
        phentsize, phnum = struct.unpack_from(f"{order}HH", header, 0x2A)
        phdr, dyn = struct.Struct(f"{order}IIIIIIII"), struct.Struct(f"{order}iI")
        fields = (0, 1, 2, 4)
    stream.seek(phoff)
    table = stream.read(phentsize * phnum)
    loads: list[tuple[int, int, int]] = []
    dynamic: tuple[int, int] | None = None
    for index in range(min(phnum, len(table) // max(phentsize, 1))):
        values = phdr.unpack_from(table, index * phentsize)
        kind, offset, vaddr, filesz = (values[i] for i in fields)
        if kind == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif kind == _PT_DYNAMIC:
            dynamic = (offset, filesz)
    return None if dynamic is None else (loads, dynamic, dyn)


def soname_files(paths: list[str]) -> list[tuple[str, str]]:
    """(path, soname) for files found in folders, one per real file, in the order given: of the
    names pointing at one file (``libz.so``, ``libz.so.1``, ``libz.so.1.2.13``), the one spelling
    its soname, as the loader would open it."""
    chosen: dict[str, tuple[str, str]] = {}
    for path in paths:
        real = os.path.realpath(path)
        soname = read_soname(path) or os.path.basename(path)
        previous = chosen.get(real)
        if previous is None or (os.path.basename(path) == soname and os.path.basename(previous[0]) != soname):
            chosen[real] = (path, soname)
    return list(chosen.values())
