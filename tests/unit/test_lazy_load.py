"""Trampolines that dlopen an NVIDIA library are not its code (issue 8, item 8).

jax-cuda12-plugin's shared objects reach cuBLAS & co through XLA/TSL's lazy-loading stubs (Implib.so's
trampolines): ``cublasCreate_v2`` is a label of size 0 whose code is ``jmp *_cublas_tramp_table(%rip)``,
and the table is filled from the library dlopen'ed by soname at the first call. A gcc-built stub of
that shape must be reported as a run-time load of cuBLAS, while a real function with a cuBLAS name in
``.text`` stays static code.
"""

from __future__ import annotations

import json
import platform
import re
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import FindingKind, LazyLoad, Severity, WheelReport, analyse_wheel
from slimwheel.catalog.model import Catalog
from slimwheel.catalog.store import write_catalog
from slimwheel.cli import main
from slimwheel.elf import read_elf_file, scan_symbols
from slimwheel.wheel import Wheel
from tests.support.elfbuild import compile_shared, find_tool, strip_section_headers
from tests.support.wheels import make_wheel

MEMBER = "lazy/_stub.so"

# One shared object with:
# - XLA's cuBLAS stub: hidden (so local once linked) trampolines of size 0, one typed as a function
#   (as Implib.so writes them), one without a type, jumping through the hidden _cublas_tramp_table;
# - an Implib.so shim exported with IMPLIB_EXPORT_SHIMS (in .dynsym, size 0) and no named table;
# - a real cuBLAS-named function (sized, in .text, exported): code linked in;
# - a cuSPARSE-named constant: sized, but data in .rodata, not code.
STUB_C = r"""
__attribute__((visibility("hidden"))) void *_cublas_tramp_table[2];
__attribute__((visibility("hidden"))) void *cufft_slots[1];

#if defined(__x86_64__)
#define JUMP(table, offset) "    jmp *" #table "+" #offset "(%rip)\n"
#elif defined(__aarch64__)
#define JUMP(table, offset) \
    "    adrp x16, " #table "+" #offset "\n" \
    "    ldr x16, [x16, :lo12:" #table "+" #offset "]\n" \
    "    br x16\n"
#else
#error "trampolines are written for x86_64 and aarch64 only"
#endif

__asm__(
    "    .text\n"
    "    .p2align 4\n"
    "    .globl cublasCreate_v2\n"
    "    .hidden cublasCreate_v2\n"
    "    .type cublasCreate_v2, %function\n"
    "cublasCreate_v2:\n"
    JUMP(_cublas_tramp_table, 0)
    "    .p2align 4\n"
    "    .globl cublasDestroy_v2\n"
    "    .hidden cublasDestroy_v2\n"
    "cublasDestroy_v2:\n"
    JUMP(_cublas_tramp_table, 8)
    "    .p2align 4\n"
    "    .globl cufftPlan1d\n"
    "    .type cufftPlan1d, %function\n"
    "cufftPlan1d:\n"
    JUMP(cufft_slots, 0)
);

int cublasGemmEx(int m, int n, int k) {
    return m * n + k * (m - n);
}

const int cusparseVersionInfo[4] = {12, 5, 0, 0};
"""


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"trampolines are written for x86_64 and aarch64, not {platform.machine()}")
    if find_tool("gcc") is None:
        pytest.skip("building the stub needs gcc")
    return compile_shared(tmp_path_factory.mktemp("lazy") / "_stub.so", {"stub.c": STUB_C})


def _report(stub: Path, tmp_path: Path, data: bytes | None = None) -> WheelReport:
    files = {MEMBER: stub.read_bytes() if data is None else data}
    wheel = make_wheel(tmp_path, "lazy", "1.0", files, tag="cp311-cp311-linux_x86_64")
    with Wheel.open(wheel) as opened:
        return analyse_wheel(opened, Catalog(()))


def test_the_stub_has_the_shape_of_xlas(stub: Path) -> None:
    """The symbols are what the analysis sees in jax's plugin: size 0 in .text, and a table."""
    facts = read_elf_file(stub)
    assert facts.symtab is not None
    symbols = {s.name: s for s in facts.symtab}
    for name in ("cublasCreate_v2", "cublasDestroy_v2", "cufftPlan1d"):
        section = facts.section_of(symbols[name])
        assert symbols[name].size == 0
        assert section is not None
        assert section.name == ".text"
        assert section.executable
    assert symbols["cublasCreate_v2"].binding == "local"  # hidden, as XLA's trampolines
    assert symbols["cublasCreate_v2"].kind == "func"
    assert symbols["cublasDestroy_v2"].kind == "other"
    assert facts.in_executable_section(symbols["cublasGemmEx"]) is True
    assert symbols["cublasGemmEx"].size > 0
    assert facts.in_executable_section(symbols["_cublas_tramp_table"]) is False
    assert facts.in_executable_section(symbols["cusparseVersionInfo"]) is False
    assert "cufftPlan1d" in {s.name for s in facts.defined_symbols}


def test_scan_symbols_keeps_the_section_index(stub: Path) -> None:
    facts = read_elf_file(stub)
    assert facts.symtab is not None
    with stub.open("rb") as stream:
        scanned = scan_symbols(stream, facts, pattern=re.compile(rb"_?cu"))
    assert scanned == tuple(s for s in facts.symtab if s.name.startswith(("cu", "_cu")))
    assert all(s.section is not None for s in scanned)


def test_trampolines_are_a_run_time_load_not_static_code(stub: Path, tmp_path: Path) -> None:
    report = _report(stub, tmp_path)
    # The sized function in .text is still cuBLAS code linked in; the trampolines are not.
    (code,) = report.static
    assert code.library == "cublas"
    assert code.symbols == 1  # cublasGemmEx only
    assert code.symbol_bytes > 0
    assert code.exported
    assert report.lazy_loads == (
        LazyLoad(MEMBER, "cublas", symbols=2, exported=False, tramp_table="_cublas_tramp_table"),
        LazyLoad(MEMBER, "cufft", symbols=1, exported=True, tramp_table=None),
    )
    kinds = {(f.kind, f.severity) for f in report.findings}
    assert kinds == {
        (FindingKind.STATIC_NVIDIA, Severity.WARNING),
        (FindingKind.DLOPEN_NVIDIA, Severity.INFO),
    }
    messages = [f.message for f in report.findings if f.kind is FindingKind.DLOPEN_NVIDIA]
    assert messages == [
        "loads cublas at run time (dlopen): 2 trampolines through _cublas_tramp_table, not cublas code",
        "loads cufft at run time (dlopen): 1 trampoline, exported, not cufft code",
    ]
    (static_finding,) = [f for f in report.findings if f.kind is FindingKind.STATIC_NVIDIA]
    assert static_finding.message.startswith("contains cublas code statically (1 API symbols of ")
    # cusparseVersionInfo is data: no cuSPARSE code, no cuSPARSE load.
    assert not any("cusparse" in f.message for f in report.findings)


def test_without_section_headers_the_symbol_type_decides(stub: Path, tmp_path: Path) -> None:
    """An sstrip'ed file has only .dynsym, and no sections to tell code from data."""
    stripped = strip_section_headers(stub, tmp_path / "stripped" / "_stub.so")
    report = _report(stub, tmp_path, stripped.read_bytes())
    assert [(c.library, c.symbols, c.exported) for c in report.static] == [("cublas", 1, True)]
    assert report.lazy_loads == (LazyLoad(MEMBER, "cufft", symbols=1, exported=True),)


def test_show_json_and_text(
    stub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(tmp_path / "no-user-catalog.json.gz"))
    catalog = tmp_path / "catalog.json.gz"
    write_catalog(Catalog(()), catalog)
    wheel = make_wheel(tmp_path, "lazy", "1.0", {MEMBER: stub.read_bytes()}, tag="cp311-cp311-linux_x86_64")

    assert main(["show", str(wheel), "--catalog", str(catalog), "--json"]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert document["schema"] == "slimwheel.show/1"
    (shown,) = document["wheels"]
    assert [code["library"] for code in shown["static"]] == ["cublas"]
    assert shown["lazy_loads"] == [
        {
            "path": MEMBER,
            "library": "cublas",
            "symbols": 2,
            "exported": False,
            "tramp_table": "_cublas_tramp_table",
            "file_name": None,
            "pointer": None,
        },
        {
            "path": MEMBER,
            "library": "cufft",
            "symbols": 1,
            "exported": True,
            "tramp_table": None,
            "file_name": None,
            "pointer": None,
        },
    ]
    dlopen = [f for f in shown["findings"] if f["kind"] == "dlopen-nvidia"]
    assert [(f["severity"], f["path"]) for f in dlopen] == [("info", MEMBER), ("info", MEMBER)]

    assert main(["show", str(wheel), "--catalog", str(catalog)]) == 0
    text = capsys.readouterr().out
    assert "loads cublas at run time (dlopen)" in text
    assert "loads cufft at run time (dlopen)" in text


# TensorFlow 2.11's CUDA stubs (libtensorflow_framework.so.2 defines and exports 438 cuBLAS functions
# this way): each API-named function keeps what dlsym gave in a function-local static ``func_ptr``,
# from a library whose file name is built at run time, so no "libcublas.so" string tells it. gcc
# splits the unlikely path into ``cublasCreate_v2.cold``, as in TensorFlow's build. Beside it, real
# code under cuSPARSE's names, one function with a local static of its own.
FORWARDERS_CC = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

namespace {
void *LibraryHandle() {
  static void *handle = [] {
    char name[64];
    snprintf(name, sizeof name, "lib%s.so.%d", "cublas", 11);
    return dlopen(name, RTLD_LAZY);
  }();
  return handle;
}

template <typename T> T LoadSymbol(const char *symbol) {
  void *handle = LibraryHandle();
  return handle ? reinterpret_cast<T>(dlsym(handle, symbol)) : nullptr;
}

__attribute__((noreturn, cold)) void Missing(const char *symbol) {
  fprintf(stderr, "%s not found\n", symbol);
  abort();
}
}  // namespace

extern "C" {
int cublasCreate_v2(void **handle) {
  using FuncPtr = int (*)(void **);
  static auto func_ptr = LoadSymbol<FuncPtr>("cublasCreate_v2");
  if (__builtin_expect(!func_ptr, 0)) Missing("cublasCreate_v2");
  return func_ptr(handle);
}

int cublasDestroy_v2(void *handle) {
  using FuncPtr = int (*)(void *);
  static auto func_ptr = LoadSymbol<FuncPtr>("cublasDestroy_v2");
  if (__builtin_expect(!func_ptr, 0)) Missing("cublasDestroy_v2");
  return func_ptr(handle);
}

int cusparseCreate(void **handle) {
  static int calls = 0;
  *handle = &calls;
  return ++calls;
}

int cusparseDestroy(void *handle) { return handle == nullptr ? 3 : (int)(long)handle & 0x7f; }
}
"""


@pytest.fixture(scope="module")
def forwarders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if find_tool("gcc") is None:
        pytest.skip("building the stubs needs gcc")
    return compile_shared(
        tmp_path_factory.mktemp("forwarders") / "_stub.so",
        {"stub.cc": FORWARDERS_CC},
        flags=["-freorder-blocks-and-partition"],
    )


def test_forwarders_have_the_shape_of_tensorflows(forwarders: Path) -> None:
    facts = read_elf_file(forwarders)
    assert facts.symtab is not None
    names = {s.name for s in facts.symtab}
    assert {"_ZZ15cublasCreate_v2E8func_ptr", "_ZZ16cublasDestroy_v2E8func_ptr"} <= names
    assert {"cublasCreate_v2.cold", "cublasDestroy_v2.cold", "_ZZ14cusparseCreateE5calls"} <= names
    assert b"libcublas.so" not in forwarders.read_bytes()  # the name is built at run time


def test_functions_keeping_dlsyms_answer_forward_and_are_not_code(forwarders: Path, tmp_path: Path) -> None:
    report = _report(forwarders, tmp_path)
    assert report.lazy_loads == (LazyLoad(MEMBER, "cublas", symbols=2, exported=True, pointer="func_ptr"),)
    (code,) = report.static
    assert (code.library, code.symbols) == ("cusparse", 2)  # a local static of its own is not func_ptr
    messages = [f.message for f in report.findings if f.kind is FindingKind.DLOPEN_NVIDIA]
    assert messages == [
        "loads cublas at run time (dlopen): 2 forwarding functions keeping what dlsym gave in a local "
        "func_ptr, exported, not cublas code"
    ]
    assert not any("cublas code statically" in f.message for f in report.findings)


def test_one_forwarder_among_real_code_is_still_code(forwarders: Path, tmp_path: Path) -> None:
    """Most of a library's functions must keep a func_ptr: one does not make a static link a load."""
    source = FORWARDERS_CC.replace(
        'extern "C" {',
        'extern "C" {\nint cublasGetVersion_v2(int *v) { return *v = 11; }\n'
        "int cublasSetStream_v2(void *h, void *s) { return h == s; }\n",
        1,
    )
    built = compile_shared(
        tmp_path / "mixed" / "_stub.so", {"stub.cc": source}, flags=["-freorder-blocks-and-partition"]
    )
    assert {"cublasCreate_v2.cold", "cublasDestroy_v2.cold"} <= {
        s.name for s in read_elf_file(built).symtab or ()
    }
    report = _report(built, tmp_path)
    # Four functions, their .cold parts counted with them (in bytes, not as functions of their own).
    assert sorted((c.library, c.symbols) for c in report.static) == [("cublas", 4), ("cusparse", 2)]
    assert report.lazy_loads == ()
