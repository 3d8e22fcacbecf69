"""The run-time loader's pure helpers: library names, versions, CUDA majors, pip suggestions."""

from __future__ import annotations

import re

import pytest

from slimwheel.runtime import Policy, Source, override_variable
from slimwheel.runtime._names import (
    LibraryName,
    at_least,
    file_matches,
    is_library_file_name,
    major_from_distribution,
    major_from_folder,
    major_from_soname,
    mapped_stem,
    parse_library,
    soname_version,
    suggested_distribution,
    version_tuple,
)


@pytest.mark.parametrize(
    ("lib", "stem", "soname"),
    [
        ("cudss", "cudss", None),
        ("cublasLt", "cublasLt", None),
        ("nvrtc-builtins", "nvrtc-builtins", None),
        ("libcudss.so.1", "cudss", "libcudss.so.1"),
        ("libnvrtc-builtins.so.13.0", "nvrtc-builtins", "libnvrtc-builtins.so.13.0"),
        ("libcudss_commlayer_nccl.so.1", "cudss_commlayer_nccl", "libcudss_commlayer_nccl.so.1"),
    ],
)
def test_parse_library(lib: str, stem: str, soname: str | None) -> None:
    assert parse_library(lib) == LibraryName(stem, soname)


@pytest.mark.parametrize("lib", ["", "/usr/lib/libcudss.so.1", "./libcudss.so.1", "cudss.so.1", "a\0b"])
def test_paths_and_malformed_names_are_refused(lib: str) -> None:
    with pytest.raises(ValueError, match="soname"):
        parse_library(lib)


def test_stem_matching_is_exact() -> None:
    cudss = LibraryName("cudss")
    assert file_matches("libcudss.so.1", cudss)
    assert file_matches("libcudss.so.0", cudss)
    # cuDSS's add-on layers are other libraries: a request for "cudss" never picks them.
    assert not file_matches("libcudss_commlayer_nccl.so.1", cudss)
    assert not file_matches("libcudss_mtlayer_gomp.so.1", cudss)
    assert not file_matches("libcudss.so.1.txt", cudss)
    assert soname_version("libnvrtc-builtins.so.13.0", "nvrtc-builtins") == (13, 0)
    assert soname_version("libcudss.so", "cudss") == ()
    assert soname_version("libcublasLt.so.13", "cublas") is None


def test_override_variable_names() -> None:
    assert override_variable("cudss") == "SLIMWHEEL_CUDSS_PATH"
    assert override_variable("cublasLt") == "SLIMWHEEL_CUBLASLT_PATH"
    assert override_variable("nvrtc-builtins") == "SLIMWHEEL_NVRTC_BUILTINS_PATH"


def test_versions_compare_numerically_and_by_prefix() -> None:
    assert version_tuple("1.0.0.35") == (1, 0, 0, 35)
    assert version_tuple("13.0.post1") == (13, 0)
    assert version_tuple("2.27.3+local") == (2, 27, 3)
    assert at_least("1.10", "1.9")
    assert at_least("1.0", "1.0.0")
    assert not at_least("1.0.0", "1.0.0.35")
    # The library's own version names the same release as the distribution version it prefixes.
    assert at_least("1.0.0", "1.0.0.35", prefix=True)
    assert at_least("1.0.0.35", "1.0.0", prefix=True)
    assert not at_least("0.7.1.6", "1.0", prefix=True)


def test_cuda_major_from_names_and_folders() -> None:
    assert major_from_distribution("nvidia-cudss-cu13") == 13
    assert major_from_distribution("nvidia_cudnn_cu12") == 12
    assert major_from_distribution("nvidia-cublas") is None
    assert major_from_folder("/venv/site-packages/nvidia/cu13/lib/libcublas.so.13") == 13
    assert major_from_folder("/usr/local/cuda-12.8/lib64/libcudart.so.12") == 12
    # libcusparse.so.12 ships for CUDA 12 and 13: a folder without a major says nothing.
    assert major_from_folder("/venv/site-packages/nvidia/cusparse/lib/libcusparse.so.12") is None
    # Nor does its soname; cudart's, NVRTC's, cuBLAS's and nvJitLink's do.
    assert major_from_soname("libcusparse.so.12") is None
    assert major_from_soname("libcudart.so.13") == 13
    assert major_from_soname("libcudart.so.11.0") == 11
    assert major_from_soname("libcublasLt.so.12") == 12
    assert major_from_soname("libnvrtc-builtins.so.13.0") == 13


def test_mapped_stem_sees_every_copy_style() -> None:
    assert mapped_stem("libcudss.so.1") == "cudss"
    assert mapped_stem("libcudss-1a2b3c4d.so.1.0.0") == "cudss"  # auditwheel
    assert mapped_stem("libcudart.41118559.so.12") == "cudart"  # renamed, SONAME kept
    assert mapped_stem("python3.11") is None


def test_suggested_distributions_follow_nvidia_naming() -> None:
    assert suggested_distribution("cudss", 13) == "nvidia-cudss-cu13"
    assert suggested_distribution("cudss_commlayer_nccl", 12) == "nvidia-cudss-cu12"
    assert suggested_distribution("cublasLt", 13) == "nvidia-cublas"
    assert suggested_distribution("cudart", 12) == "nvidia-cuda-runtime-cu12"
    assert suggested_distribution("nvrtc-builtins", 13) == "nvidia-cuda-nvrtc"
    assert suggested_distribution("cudnn_graph", 13) == "nvidia-cudnn-cu13"
    assert suggested_distribution("z", 13) is None


def test_policies_order_sources() -> None:
    assert Policy("wheel-first").order[0] is Source.WHEEL
    assert Policy("system-first").order[-1] is Source.WHEEL
    assert Policy("wheel-only").order == (Source.WHEEL,)
    with pytest.raises(ValueError, match="Policy"):
        Policy("newest")


# The patterns the loader used before it dropped re (kept here as the oracle): lib<stem>.so[.N], and the
# two copy styles with eight hex digits before ".so".
_VERSION = r"[0-9]+(?:\.[0-9]+)*"
_ORACLE = {
    "plain": re.compile(rf"^lib(?P<stem>.+?)\.so(?:\.(?P<version>{_VERSION}))?$"),
    "auditwheel": re.compile(rf"^lib(?P<stem>.+?)-[0-9a-f]{{8}}\.so(?:\.{_VERSION})?$"),
    "renamed": re.compile(rf"^lib(?P<stem>.+?)\.[0-9a-f]{{8}}\.so(?:\.{_VERSION})?$"),
}
_TRICKY = [
    "libcudss.so.1", "libcudss.so", "libcudss.so.", "libcudss.so.1.", "libcudss.so..1", "lib.so.1",
    "libx.so.1a", "libnvrtc-builtins.so.13.0", "libcudss-1a2b3c4d.so.1.0.0", "libcudss.8f0e2a1b.so.1",
    "libcudss-1A2B3C4D.so.1", "libfoo.so.bar.so.2", "libfoo.so.1.so", "libfoo-abcdef01.so", "lib-abcdef01.so",
    "libab.abcdef0.so", "libfoo.so.\u0661", "libfoo.so.1.2.3.4.5", "libcuda.so.580.65.06", "mylib.so",
    "libfoo.sox", "libfoo.so.so",
]  # fmt: skip


def _catalog_file_names() -> list[str]:
    from slimwheel.catalog.store import load_catalog

    catalog = load_catalog()
    names = {provider.library.filename for provider in catalog.iter_libraries()}
    return sorted(name for name in names if ".so" in name)  # not the Windows DLLs


@pytest.mark.parametrize("source", ["tricky", "catalog"])
def test_string_parsers_agree_with_the_patterns(source: str) -> None:
    names = _TRICKY if source == "tricky" else _catalog_file_names()
    assert len(names) > 20
    for name in names:
        plain = _ORACLE["plain"].match(name)
        expected = None if plain is None else LibraryName(plain["stem"], name)
        try:
            got: LibraryName | None = parse_library(name)
        except ValueError:
            got = None
        assert got == expected, name
        assert is_library_file_name(name) == (plain is not None), name
        styles = [_ORACLE[style].match(name) for style in ("auditwheel", "renamed", "plain")]
        first = next((m["stem"] for m in styles if m), None)
        assert mapped_stem(name) == first, name
