"""NVIDIA code linked into a file (static code, with the version strings it carries) and NVIDIA
libraries a file loads at run time through trampolines (lazy loads).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import BinaryIO

from slimwheel.analysis.libraries import _API_PREFIX_BODY, VERSIONED_IN_EVERY_BUILD, api_library_of
from slimwheel.analysis.model import LazyLoad, StaticCode, _ElfMember
from slimwheel.elf import ElfFacts, Symbol, read_section
from slimwheel.names import parse_library_file_name

__all__: list[str] = []


# Implib.so's table of resolved addresses, which its trampolines jump through: ``_<suffix>_tramp_table``
# where the suffix is XLA's library name (``_cublas_tramp_table``) or Implib.so's default, the file
# name (``_libcublasLt_so_12_tramp_table``). Only NVIDIA's libraries are picked up; ``cuda`` is the
# driver (XLA's stub for libcuda.so.1), ``cudart`` the runtime.
_TRAMP_TABLE_TEXT = (
    r"_(?:lib)?(cublasLt|cublas|cudart|cuda|cudss|cudnn|cufft|curand|cusparseLt|cusparse|cusolverMg|"
    r"cusolver|cutensor|nccl|nvrtc|nvJitLink|cupti|npp[a-z]*|nvjpeg|nvshmem|nvml)"
    r"(?:_so(?:_[0-9]+)*)?_tramp_table$"
)
_TRAMP_TABLE = re.compile(_TRAMP_TABLE_TEXT)
# A function-local static of an API-named function, as g++ mangles it: ``_ZZ15cublasCreate_v2E8func_ptr``
# is ``func_ptr`` in ``cublasCreate_v2`` (the length prefix names the function).
_LOCAL_STATIC_TEXT = rf"_ZZ[0-9]+(?:{_API_PREFIX_BODY})"
_LOCAL_STATIC = re.compile(r"_ZZ([0-9]+)(.+)")
# The local static in which TensorFlow's (and XLA's, before Implib.so) CUDA stubs keep what dlsym gave:
# ``cublasCreate_v2`` does ``static auto func_ptr = LoadSymbol<FuncPtr>("cublasCreate_v2")`` from the
# library its DSO loader dlopen'ed by a name built at run time, then calls it. A function that keeps
# one forwards; it is not the library's code.
_FORWARDED_POINTER = "func_ptr"
# What analysis scans the symbol tables for: API names, trampoline tables and API functions' statics.
_SCAN_PATTERN_BYTES = re.compile(
    rf"^(?:{_API_PREFIX_BODY}|{_TRAMP_TABLE_TEXT}|{_LOCAL_STATIC_TEXT})".encode()
)
# Sections that are executable but hold the linker's stubs for DT_NEEDED calls, never a library's code.
_PLT_SECTIONS = frozenset({".plt", ".plt.sec", ".plt.got", ".plt.bnd", ".iplt"})
# NVTX is left out on purpose: NVTX 3 is header-only, so its symbols in a binary are expected.
_VERSION_STRING = re.compile(
    rb"(cuBLAS(?:Lt)?|cuDSS|cuDNN|NCCL|cuSPARSE(?:Lt)?|cuFFT|cuRAND|cuSOLVER|cuTENSOR|nvJitLink|NVRTC)"
    rb"[ A-Za-z]{0,16}?(?:version|Version|VERSION)?[ :v]{1,3}(\d+\.\d+(?:\.\d+){0,2})"
)
# The file names of NVIDIA's libraries (``libnvrtc.so``, ``libnvrtc.so.12``, ``libcudnn_ops.so.9``,
# ``libnppc.so``): a file that defines a library's API and names its file is a shim that dlopens it
# (tilelang's ``libstub_nvrtc.so``: each nvrtcX forwards to the pointer dlsym gave). NVIDIA's static
# archives name no file of their own library (static cudart names ``libcuda.so.1``, static NVRTC
# ``libnvrtc-builtins.so``, which this does not match).
_LIBRARY_FILE_NAME = re.compile(
    rb"lib(cublasLt|cublas|cudss|cudnn|cufft|curand|cusparseLt|cusparse|cusolverMg|cusolver|cutensor|"
    rb"nccl|nvrtc|nvJitLink|cupti|nvjpeg|cudart|npp|nvshmem)[a-z_]*\.so\b"
)
_RODATA_SCAN_LIMIT = 64 * 1024 * 1024
# Strings only a library's own code holds, by library: where its symbols were stripped (hidden, and no
# .symtab), they still tell that its code is linked in. A static cudart keeps its error strings and the
# name of its shared-memory files (desilofhe-cu130 1.17.0: nvcc's default static link, stripped).
CODE_MARKERS: dict[str, tuple[bytes, ...]] = {
    "cudart": (b"startup failure in cuda runtime\0", b"/cudart.shm.%"),
}
_MARKED = "code:"  # how a marker's library is written among the .rodata strings


_RODATA_PIECE = 1 << 20  # .rodata is scanned this much at a time: a 60 MB one is never copied whole
_VERSION_OVERLAP = 256  # longer than any version string: a string the cut splits is in the next piece


def _scan_rodata(stream: BinaryIO, facts: ElfFacts, name: str) -> tuple[str, ...]:
    """The NVIDIA version strings in ``.rodata`` (``"cuDNN 8.9.2"``), the NVIDIA library file names
    it holds, as ``lib<library>.so`` (``"libnvrtc.so"``), and the libraries whose ``CODE_MARKERS`` it
    holds, as ``code:<library>``."""
    section = facts.section(".rodata")
    if section is None or section.size == 0:
        return ()
    size = min(section.size, _RODATA_SCAN_LIMIT)
    found: set[str] = set()
    start = 0
    while start < size:
        length = min(_RODATA_PIECE + _VERSION_OVERLAP, size - start)
        piece = read_section(stream, replace(section, offset=section.offset + start, size=length), path=name)
        # Matches starting in the overlap are left to the next piece, which holds them whole.
        cut = length if start + length >= size else length - _VERSION_OVERLAP
        found.update(
            f"{m[1].decode()} {m[2].decode()}" for m in _VERSION_STRING.finditer(piece) if m.start() < cut
        )
        found.update(f"lib{m[1].decode()}.so" for m in _LIBRARY_FILE_NAME.finditer(piece) if m.start() < cut)
        found.update(
            f"{_MARKED}{library}"
            for library, markers in CODE_MARKERS.items()
            if any(piece.find(marker, 0, cut + len(marker) - 1) >= 0 for marker in markers)
        )
        start += cut
    return tuple(sorted(found))


# The most bytes a function that only returns a constant takes on x86-64 (``movabs rax, imm64; ret``;
# ``xor eax, eax; ret`` is 3, ``mov eax, imm32; ret`` 6) or aarch64 (``mov w0, #imm; ret``: 8).
# cupy-cuda102 12.3.0 defines 12 cudart and 40 cuSOLVER functions of 3-6 bytes each (fallbacks for
# APIs its CUDA lacks), which were reported as static NVIDIA code that "cannot be unlinked, only
# rebuilt". A library all of whose API-named functions are that small is not linked in: a real one has
# bigger functions (one computing from its arguments is 14 bytes already).
_STUB_BYTES = 11
# The most API names a file that links the library may define as its own code and still not hold the
# library's code (see _static_code).
_HEADER_WRAPPERS = 4


def _fallbacks(symbols: Iterable[Symbol]) -> bool:
    """Whether a library's API-named functions are stand-ins rather than its code: each only returns
    a constant (``_STUB_BYTES``), or each is a weak definition, which the real library's global one
    overrides when it is loaded (lmdeploy 0.18's ``libturbomind_nccl_stub.so``: seven weak ``ncclX``
    that report the missing symbol and abort, 16 bytes each). A static link of NVIDIA's archives
    defines their API as global functions."""
    functions = list(symbols)
    return max(f.size for f in functions) <= _STUB_BYTES or all(f.binding == "weak" for f in functions)


def _in_code_section(facts: ElfFacts, symbol: Symbol) -> bool | None:
    """Whether ``symbol`` is in a section of machine code other than the linker's PLT stubs (None
    when the file cannot tell: no section headers)."""
    executable = facts.in_executable_section(symbol)
    if not executable:
        return executable
    section = facts.section_of(symbol)
    return section is not None and section.name not in _PLT_SECTIONS


def _is_code(facts: ElfFacts, symbol: Symbol) -> bool:
    """Whether ``symbol`` is code linked into the file: bytes (a nonzero size) in a section of code.
    Without section headers, its type decides."""
    if symbol.size == 0:
        return False
    in_code = _in_code_section(facts, symbol)
    return symbol.kind == "func" if in_code is None else in_code


def _is_trampoline(facts: ElfFacts, symbol: Symbol) -> bool:
    """Whether ``symbol`` is a shim that jumps into a library loaded at run time: a label of size 0
    in a section of code (Implib.so's trampolines have no ``.size``; hand-written ones no type)."""
    if symbol.size != 0 or symbol.kind not in ("func", "other"):
        return False
    in_code = _in_code_section(facts, symbol)
    return symbol.kind == "func" if in_code is None else in_code


def _pointer_keeper(name: str) -> str | None:
    """The function a local static named ``_FORWARDED_POINTER`` belongs to:
    ``_ZZ15cublasCreate_v2E8func_ptr`` gives ``cublasCreate_v2``; None for any other symbol."""
    match = _LOCAL_STATIC.fullmatch(name)
    if match is None:
        return None
    length = int(match[1])
    function, rest = match[2][:length], match[2][length:]
    return function if rest == f"E{len(_FORWARDED_POINTER)}{_FORWARDED_POINTER}" else None


def _tramp_table_library(name: str) -> str | None:
    """The library an Implib.so table is for: ``_cublas_tramp_table`` and
    ``_libcublasLt_so_12_tramp_table`` give ``cublas`` and ``cublasLt``."""
    match = _TRAMP_TABLE.match(name)
    return match[1] if match else None


@dataclass
class _ApiSymbols:
    """A file's API-named symbols, sorted by what they are, by library."""

    code: dict[str, dict[str, Symbol]] = field(default_factory=dict)  # sized, in a section of code
    shims: dict[str, dict[str, Symbol]] = field(default_factory=dict)  # trampolines, then forwarders
    tables: dict[str, str] = field(default_factory=dict)  # Implib.so's ``_<lib>_tramp_table``
    exported_code: set[str] = field(default_factory=set)
    hidden_code: set[str] = field(default_factory=set)  # in .symtab only
    exported_shims: set[str] = field(default_factory=set)
    keepers: set[str] = field(default_factory=set)  # functions with a local ``_FORWARDED_POINTER``


def _api_symbols(item: _ElfMember, facts: ElfFacts) -> _ApiSymbols:
    """``item``'s scanned symbols, sorted (see :func:`_static_code`)."""
    found = _ApiSymbols(keepers={k for symbol in item.internal_api if (k := _pointer_keeper(symbol.name))})
    exported_names = {symbol.name for symbol in item.exported_api}
    for symbols, exported in ((item.exported_api, True), (item.internal_api, False)):
        for symbol in symbols:
            if symbol.name.startswith("_ZZ"):
                continue  # a local static (see keepers), neither code nor a trampoline
            table_library = _tramp_table_library(symbol.name)
            if table_library is not None:
                found.tables.setdefault(table_library, symbol.name)
                continue
            library = api_library_of(symbol.name)
            if library is None:
                continue
            if _is_code(facts, symbol):
                found.code.setdefault(library, {}).setdefault(symbol.name, symbol)
                if exported:
                    found.exported_code.add(library)
                elif symbol.name not in exported_names:  # .symtab lists the exported ones too
                    found.hidden_code.add(library)
            elif _is_trampoline(facts, symbol):
                found.shims.setdefault(library, {}).setdefault(symbol.name, symbol)
                if exported:
                    found.exported_shims.add(library)
    return found


def _static_code(
    item: _ElfMember, own_names: Iterable[str], *, strings_read: bool
) -> tuple[list[StaticCode], list[LazyLoad]]:
    """NVIDIA code linked into ``item``, and NVIDIA libraries it loads at run time, by library.
    ``own_names``: the soname stems whose API is the file's own (its own; in one of NVIDIA's wheels,
    every library that wheel ships: CUPTI's ``libcheckpoint.so`` defines ``cuptiCheckpointSave``).
    ``strings_read``: whether analysis scanned ``.rodata`` for version strings (``show --no-strings``
    does not), without which the API of a library in ``VERSIONED_IN_EVERY_BUILD`` is taken as its code.

    An API-named symbol counts as the library's code only when it has bytes in a section of code
    (:func:`_is_code`); one of size 0 there is a trampoline (:func:`_is_trampoline`), which, like a
    ``_<lib>_tramp_table`` symbol, means the library is dlopen'ed at run time. Other API-named
    symbols (data, absolute ones) tell neither.
    """
    facts = item.facts
    if facts is None:
        return [], []
    api = _api_symbols(item, facts)
    code, shims = api.code, api.shims
    names = tuple(own_names)

    def own(library: str) -> bool:  # a library's own API is neither static code nor a run-time load
        return any(name.startswith(library) for name in names)  # cublasLt's API is cublas's too

    named = {s.removeprefix("lib").removesuffix(".so") for s in item.rodata_strings if s.startswith("lib")}
    linked = {parsed.stem for soname in facts.needed if (parsed := parse_library_file_name(soname))}
    static = []
    forwarded: dict[str, str] = {}  # library -> the file name a shim dlopens
    pointers: dict[str, str] = {}  # library -> the local static its forwarding functions keep
    for library in sorted(code):
        if own(library):
            continue
        matched = code[library]
        # Stand-ins for the library (fallbacks), or exported definitions of a library the file also
        # links: wrappers that interpose on it (torch-memory-saver's LD_PRELOAD hooks define cudaMalloc
        # and cudaFree and reach libcudart.so.12's through dlsym); a static link never leaves the
        # library in DT_NEEDED. Neither is the library's code.
        # Nor are a few hidden functions of a library the file links: wrappers the library's headers
        # define inline under its API's names (mistralrs-cuda 0.3.2: two local cudaLaunchKernel of 84
        # bytes beside its NEEDED libcudart; a static cudart defines hundreds).
        if (
            _fallbacks(matched.values())
            or (library in linked and library not in api.hidden_code)
            or (library in linked and len(matched) <= _HEADER_WRAPPERS)
        ):
            continue
        # Most of its API-named functions keeping dlsym's answer (TensorFlow 2.11's 438 cuBLAS
        # functions, each with its func_ptr): forwarders, whatever name the library is dlopen'ed by.
        # gcc's split-off parts and clones (``cublasCreate_v2.cold``, ``.part.0``, ``.isra.0``) are
        # counted with the function they belong to, here and in the counts reported.
        functions = {name: symbol for name, symbol in matched.items() if "." not in name}
        keeping = 2 * len(api.keepers.intersection(functions)) > len(functions)
        if library in named or keeping:
            if library in named:
                forwarded[library] = f"lib{library}.so"
            if keeping:
                pointers[library] = _FORWARDED_POINTER
            shims.setdefault(library, {}).update(functions)
            if library in api.exported_code:
                api.exported_shims.add(library)
            continue
        strings = _version_strings(item, library)
        if library in VERSIONED_IN_EVERY_BUILD and not strings and strings_read and _rodata_read_whole(facts):
            continue  # the API implemented by another (MSCCL++'s NCCL interface), not the library's code
        static.append(
            StaticCode(
                path=item.member.name,
                library=library,
                symbols=len({name.split(".", 1)[0] for name in matched}),
                symbol_bytes=sum(s.size for s in matched.values()),  # the split-off parts' too
                exported=library in api.exported_code,
                version_strings=strings,
            )
        )
    known = {*code, *shims, *api.tables, *linked}
    static += [found for found in _stripped_code(item, known) if not own(found.library)]
    loaded = [
        LazyLoad(
            path=item.member.name,
            library=library,
            symbols=len(shims.get(library, ())),
            exported=library in api.exported_shims,
            tramp_table=api.tables.get(library),
            file_name=forwarded.get(library),
            pointer=pointers.get(library),
        )
        for library in sorted(set(shims) | set(api.tables))
        if not own(library)
    ]
    return static, loaded


def _stripped_code(item: _ElfMember, known: set[str]) -> list[StaticCode]:
    """The libraries whose ``CODE_MARKERS`` the file's ``.rodata`` holds and that nothing else
    accounts for (``known``: their symbols, a shim, DT_NEEDED): their code is there, its symbols
    stripped."""
    marked = {s.removeprefix(_MARKED) for s in item.rodata_strings if s.startswith(_MARKED)}
    return [
        StaticCode(
            item.member.name, library, 0, 0, exported=False, version_strings=_version_strings(item, library)
        )
        for library in sorted(marked - known)
    ]


def _version_strings(item: _ElfMember, library: str) -> tuple[str, ...]:
    """The version strings of ``library`` in the file's ``.rodata`` (``"NCCL 2.21.5"``)."""
    versions = (s for s in item.rodata_strings if not s.startswith(("lib", _MARKED)))
    return tuple(s for s in versions if s.lower().startswith(library.lower()[:4]))


def _rodata_read_whole(facts: ElfFacts) -> bool:
    """Whether ``_scan_rodata`` read all of the file's ``.rodata`` (it stops at a limit)."""
    section = facts.section(".rodata")
    return section is not None and section.size <= _RODATA_SCAN_LIMIT


def _lazy_load_message(load: LazyLoad) -> str:
    kind = "forwarding function" if load.file_name or load.pointer else "trampoline"
    count = f"{load.symbols} {kind}{'' if load.symbols == 1 else 's'}" if load.symbols else f"{kind}s"
    table = f" through {load.tramp_table}" if load.tramp_table else ""
    kept = f" keeping what dlsym gave in a local {load.pointer}" if load.pointer else ""
    exported = ", exported" if load.exported else ""
    how = f"dlopen of {load.file_name}" if load.file_name else "dlopen"
    found = f"{count}{table}{kept}{exported}"
    return f"loads {load.library} at run time ({how}): {found}, not {load.library} code"
