"""The ELF zoo: small gcc-built stand-ins for NVIDIA libraries and the extensions that use them.

Every file is a real shared object, edited the way real wheels are (auditwheel's hashed copies,
renamed copies, empty RUNPATH entries, removed section headers). ``elf_zoo`` builds them once per
test session (once per xdist worker) in a couple of seconds.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.elfbuild import (
    add_section,
    compile_object,
    compile_shared,
    find_tool,
    gcc_supports,
    patchelf,
    strip_section_headers,
    swap_byte_order,
    truncate_copy,
)

__all__ = [
    "AUDITWHEEL_NAME",
    "CUDSS_EXPORTS",
    "CUDSS_VERSION_STRING",
    "FATBIN_SIZE",
    "RELFATBIN_SIZE",
    "RENAMED_NAME",
    "ElfZoo",
    "build_elf_zoo",
    "elf_zoo",
]

CUDSS_VERSION_STRING = "cuDSS version 1.0.0"
CUDSS_EXPORTS = ("cudssCreate", "cudssDestroy", "cudssGetProperty", "cudssExecute", "cudssSetStream")
# Data and thread-local exports, so symbol kinds other than "func" are covered.
CUDSS_DATA_EXPORTS = ("cudssBuildInfo", "cudssLastStatus")
AUDITWHEEL_NAME = "libcudss-1a2b3c4d.so.1.0.0"
RENAMED_NAME = "libcudss.8f0e2a1b.so.1"
FATBIN_SIZE = 64 * 1024
RELFATBIN_SIZE = 4 * 1024
# No big-endian x86 exists: the byte-swapped copies claim these machines.
EM_PPC = 20
EM_PPC64 = 21

CUBLAS_C = """\
/* Stand-in for libcublas.so.13: one handle counter. */
static int cublas_handles;

int cublasCreate_v2(void **handle) {
    cublas_handles++;
    *handle = &cublas_handles;
    return 0;
}

int cublasDestroy_v2(void *handle) {
    (void)handle;
    cublas_handles--;
    return 0;
}
"""

CUDSS_C = f"""\
/* Stand-in for libcudss.so.1: NVIDIA's exported names, no solver. Needs no libc (-m32 -nostdlib). */
extern int cublasCreate_v2(void **handle);

/* NVIDIA libraries carry a version banner in .rodata; "used" keeps it at -O1. */
__attribute__((used)) static const char cudss_banner[] = "{CUDSS_VERSION_STRING}";

struct cudss_context {{ int phase; void *blas; void *stream; }};
static struct cudss_context cudss_default;

const char cudssBuildInfo[] = "fake cudss for slimwheel tests";
__thread int cudssLastStatus;

int cudssCreate(void **handle) {{
    int status = cublasCreate_v2(&cudss_default.blas);
    cudssLastStatus = status;
    if (status != 0) return status;
    *handle = &cudss_default;
    return 0;
}}

int cudssDestroy(void *handle) {{
    (void)handle;
    return 0;
}}

/* libraryPropertyType: 0 major, 1 minor, 2 patch level. */
int cudssGetProperty(int type, int *value) {{
    switch (type) {{
    case 0: *value = 1; return 0;
    case 1: *value = 0; return 0;
    case 2: *value = 0; return 0;
    default: return 3;
    }}
}}

int cudssExecute(void *handle, int phase, void *config, void *data, void *matrix, void *x, void *b) {{
    (void)config; (void)data; (void)matrix; (void)x; (void)b;
    ((struct cudss_context *)handle)->phase = phase;
    return 0;
}}

__attribute__((weak)) int cudssSetStream(void *handle, void *stream) {{
    ((struct cudss_context *)handle)->stream = stream;
    return 0;
}}
"""

SOLVER_C = """\
/* A Python extension module that uses cuDSS (PyInit_<name> is all that makes it one by name). */
extern int cudssGetProperty(int type, int *value);

int solver_cudss_version(void) {
    int major = -1, minor = -1, patch = -1;
    cudssGetProperty(0, &major);
    cudssGetProperty(1, &minor);
    cudssGetProperty(2, &patch);
    return major * 10000 + minor * 100 + patch;
}

void *PyInit_MODULE(void) { return 0; }
"""

LIBCUDA_C = """\
/* Stand-in for the driver's libcuda.so.1 (never shipped in wheels). */
int cuInit(unsigned int flags) { (void)flags; return 0; }
int cuDriverGetVersion(int *version) { *version = 13000; return 0; }
"""

CUSPARSELT_C = "int cusparseLtInit(void *handle) { (void)handle; return 0; }\n"
RELATIVE_C = "int relative_rpath_probe(void) { return 1; }\n"


@dataclass(frozen=True)
class ElfZoo:
    """Paths of the built files (under ``root``) and what each one has:

    - libcublas: nvidia/cublas/lib/libcublas.so.13; SONAME and version node libcublas.so.13.
    - libcudss: nvidia/cudss/lib/libcudss.so.1; SONAME and version node libcudss.so.1, needs
      libcublas.so.13 (+ ld.so for TLS), RPATH ``$ORIGIN:$ORIGIN/../../cublas/lib``.
    - ext_dynamic: solver/_solver.so; needs libcudss.so.1 (verneed File and Name libcudss.so.1),
      RUNPATH ``$ORIGIN/../nvidia/cudss/lib``; calls cudssGetProperty.
    - ext_static: static/_static_solver.so; the cudss code compiled in (unversioned exports and
      .symtab entries), .nv_fatbin (FATBIN_SIZE) and __nv_relfatbin (RELFATBIN_SIZE), the
      CUDSS_VERSION_STRING in .rodata; needs libcublas.so.13.
    - auditwheel_copy: auditwheel/solver.libs/libcudss-1a2b3c4d.so.1.0.0; SONAME = file name,
      RPATH ``$ORIGIN``, version node still libcudss.so.1.
    - ext_auditwheel: auditwheel/solver/_solver.so; needs the hashed name (verneed File the hashed
      name, Name libcudss.so.1), RUNPATH ``$ORIGIN/../solver.libs``.
    - renamed_copy: renamed/solver.libs/libcudss.8f0e2a1b.so.1; SONAME libcudss.so.1 kept.
    - ext_renamed: renamed/solver/_solver.so; needs the renamed name (verneed File too).
    - empty_runpath: misc/libcusparseLt.so.0; RUNPATH ``$ORIGIN:`` (trailing empty entry).
    - relative_rpath: misc/librelative.so.1; RPATH ``lib/../x``.
    - libcuda: driver/libcuda.so.1; SONAME libcuda.so.1, no version nodes.
    - relocatable: objects/cudss.o; the cudss code as an object file (ET_REL: .symtab, no dynamic).
    - stripped_sections: stripped/libcudss.so.1; libcudss without section headers, cut after its
      last segment (what sstrip does).
    - not_elf: misc/libfoo.so, a text file. truncated / truncated_tiny: broken/libcudss.so.1.half
      and broken/libcudss.so.1.100, the first half and the first 100 bytes of libcudss.
    - big_endian: bigendian/libcudss.so.1; libcudss byte-swapped, e_machine EM_PPC64.
    - lib32, libcublas32: m32/cudss/lib/libcudss.so.1 and m32/cublas/lib/libcublas.so.13, the same
      pair built with ``gcc -m32 -nostdlib`` and DT_HASH instead of DT_GNU_HASH.
    - stripped_sections32: m32/stripped/libcudss.so.1; lib32 without section headers.
    - big_endian32: bigendian/libcudss32.so.1; lib32 byte-swapped, e_machine EM_PPC.

    The 32-bit fields are None where gcc cannot link 32-bit objects.
    """

    root: Path
    libcublas: Path
    libcudss: Path
    ext_dynamic: Path
    ext_static: Path
    auditwheel_copy: Path
    ext_auditwheel: Path
    renamed_copy: Path
    ext_renamed: Path
    empty_runpath: Path
    relative_rpath: Path
    libcuda: Path
    relocatable: Path
    stripped_sections: Path
    not_elf: Path
    truncated: Path
    truncated_tiny: Path
    big_endian: Path
    lib32: Path | None
    libcublas32: Path | None
    stripped_sections32: Path | None
    big_endian32: Path | None


def _build_cudss_pair(out: Path, work: Path, *, flags: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """libcublas.so.13 in out/cublas/lib and libcudss.so.1 in out/cudss/lib, versioned like NVIDIA's."""
    libcublas = compile_shared(
        out / "cublas/lib/libcublas.so.13",
        {"cublas.c": CUBLAS_C},
        soname="libcublas.so.13",
        version_nodes={"libcublas.so.13": ["cublasCreate_v2", "cublasDestroy_v2"]},
        flags=flags,
        work=work / "cublas",
    )
    libcudss = compile_shared(
        out / "cudss/lib/libcudss.so.1",
        {"cudss.c": CUDSS_C},
        soname="libcudss.so.1",
        version_nodes={"libcudss.so.1": [*CUDSS_EXPORTS, *CUDSS_DATA_EXPORTS]},
        link=[libcublas],
        rpath="$ORIGIN:$ORIGIN/../../cublas/lib",
        flags=flags,
        work=work / "cudss",
    )
    return libcublas, libcudss


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def build_elf_zoo(directory: Path) -> ElfZoo:
    root = directory / "zoo"
    work = directory / "build"
    libcublas, libcudss = _build_cudss_pair(root / "nvidia", work)

    ext_dynamic = compile_shared(
        root / "solver/_solver.so",
        {"solver.c": SOLVER_C.replace("MODULE", "_solver")},
        link=[libcudss],
        rpath="$ORIGIN/../nvidia/cudss/lib",
        new_dtags=True,
        rpath_link=[libcublas.parent],
        work=work / "solver",
    )
    ext_static = compile_shared(
        root / "static/_static_solver.so",
        {"solver.c": SOLVER_C.replace("MODULE", "_static_solver"), "cudss.c": CUDSS_C},
        link=[libcublas],
        rpath="$ORIGIN/../nvidia/cublas/lib",
        new_dtags=True,
        work=work / "static",
    )
    add_section(ext_static, ".nv_fatbin", bytes(range(256)) * (FATBIN_SIZE // 256))
    add_section(ext_static, "__nv_relfatbin", b"\xba" * RELFATBIN_SIZE)

    # auditwheel: hashed copy whose SONAME is its file name; the consumer needs that name.
    auditwheel_copy = _copy(libcudss, root / "auditwheel/solver.libs" / AUDITWHEEL_NAME)
    patchelf(auditwheel_copy, "--set-soname", AUDITWHEEL_NAME)
    patchelf(auditwheel_copy, "--force-rpath", "--set-rpath", "$ORIGIN")
    ext_auditwheel = _copy(ext_dynamic, root / "auditwheel/solver/_solver.so")
    patchelf(ext_auditwheel, "--replace-needed", "libcudss.so.1", AUDITWHEEL_NAME)
    patchelf(ext_auditwheel, "--set-rpath", "$ORIGIN/../solver.libs")

    # torchvision style: renamed copy that keeps its SONAME.
    renamed_copy = _copy(libcudss, root / "renamed/solver.libs" / RENAMED_NAME)
    ext_renamed = _copy(ext_dynamic, root / "renamed/solver/_solver.so")
    patchelf(ext_renamed, "--replace-needed", "libcudss.so.1", RENAMED_NAME)
    patchelf(ext_renamed, "--set-rpath", "$ORIGIN/../solver.libs")

    empty_runpath = compile_shared(
        root / "misc/libcusparseLt.so.0",
        {"cusparselt.c": CUSPARSELT_C},
        soname="libcusparseLt.so.0",
        rpath="$ORIGIN:",
        new_dtags=True,
        work=work / "cusparselt",
    )
    relative_rpath = compile_shared(
        root / "misc/librelative.so.1",
        {"relative.c": RELATIVE_C},
        soname="librelative.so.1",
        rpath="lib/../x",
        work=work / "relative",
    )
    libcuda = compile_shared(
        root / "driver/libcuda.so.1", {"cuda.c": LIBCUDA_C}, soname="libcuda.so.1", work=work / "cuda"
    )
    relocatable = compile_object(root / "objects/cudss.o", "cudss.c", CUDSS_C, work=work / "objects")
    stripped = strip_section_headers(libcudss, root / "stripped/libcudss.so.1")
    not_elf = root / "misc/libfoo.so"
    not_elf.write_text("INPUT(libfoo.so.1)\n")  # a linker script, as some distributions ship
    truncated = truncate_copy(libcudss, root / "broken/libcudss.so.1.half", libcudss.stat().st_size // 2)
    truncated_tiny = truncate_copy(libcudss, root / "broken/libcudss.so.1.100", 100)
    big_endian = swap_byte_order(libcudss, root / "bigendian/libcudss.so.1", machine=EM_PPC64)

    lib32 = libcublas32 = stripped32 = big_endian32 = None
    flags32 = ("-m32", "-nostdlib", "-Wl,--hash-style=sysv")
    if gcc_supports(work / "probe32", *flags32):
        libcublas32, lib32 = _build_cudss_pair(root / "m32", work / "m32", flags=flags32)
        stripped32 = strip_section_headers(lib32, root / "m32/stripped/libcudss.so.1")
        big_endian32 = swap_byte_order(lib32, root / "bigendian/libcudss32.so.1", machine=EM_PPC)

    return ElfZoo(
        root=root,
        libcublas=libcublas,
        libcudss=libcudss,
        ext_dynamic=ext_dynamic,
        ext_static=ext_static,
        auditwheel_copy=auditwheel_copy,
        ext_auditwheel=ext_auditwheel,
        renamed_copy=renamed_copy,
        ext_renamed=ext_renamed,
        empty_runpath=empty_runpath,
        relative_rpath=relative_rpath,
        libcuda=libcuda,
        relocatable=relocatable,
        stripped_sections=stripped,
        not_elf=not_elf,
        truncated=truncated,
        truncated_tiny=truncated_tiny,
        big_endian=big_endian,
        lib32=lib32,
        libcublas32=libcublas32,
        stripped_sections32=stripped32,
        big_endian32=big_endian32,
    )


@pytest.fixture(scope="session")
def elf_zoo(tmp_path_factory: pytest.TempPathFactory) -> ElfZoo:
    """The zoo, built once per session (each xdist worker builds its own)."""
    missing = [tool for tool in ("gcc", "patchelf", "objcopy") if find_tool(tool) is None]
    if missing:
        pytest.skip(f"building the ELF zoo needs {', '.join(missing)}")
    return build_elf_zoo(tmp_path_factory.mktemp("elf"))
