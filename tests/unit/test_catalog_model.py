from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.catalog.learn import (
    infer_cuda_major,
    libraries_from_record,
    toolkit_pins,
    unknown_nvidia_requirements,
)
from slimwheel.catalog.model import Catalog, CudaMajorSource
from slimwheel.catalog.store import catalog_from_dict, load_catalog, read_catalog, write_catalog
from slimwheel.errors import CatalogError
from slimwheel.platforms import Platform
from tests.support.catalogs import release, sample_catalog

X86 = Platform("linux", "x86_64")
WIN = Platform("win", "amd64")


def test_a_soname_alone_does_not_tell_the_cuda_major() -> None:
    catalog = sample_catalog()
    both = {p.distribution for p in catalog.providers(soname="libcusparse.so.12")}
    assert both == {"nvidia-cusparse", "nvidia-cusparse-cu12"}
    cu13 = catalog.providers(soname="libcusparse.so.12", cuda_major=13, platform=X86)
    assert [p.library.path for p in cu13] == ["nvidia/cu13/lib/libcusparse.so.12"]


def test_providers_newest_first_per_platform() -> None:
    catalog = sample_catalog()
    linux = catalog.providers(name="cudss", cuda_major=13, platform=X86)
    assert [(p.version, p.library.path) for p in linux] == [
        ("1.0.0.35", "nvidia/cu13/lib/libcudss.so.1"),
        ("0.7.1.6", "nvidia/cu13/lib/libcudss.so.0"),
    ]
    windows = catalog.providers(name="cudss", cuda_major=13, platform=WIN)
    assert [p.library.path for p in windows] == ["nvidia/cu13/bin/cudss64_1.dll"]


def test_safe_range_ends_where_the_soname_changes() -> None:
    catalog = sample_catalog()
    old = catalog.safe_range("nvidia-cudss-cu12", "0.7.1.6", "cudss")
    assert old is not None
    assert old.specifier == ">=0.7.1.6,<1.0.0.35"
    assert "libcudss.so.1" in old.upper_reason
    new = catalog.safe_range("nvidia-cudss-cu13", "1.0.0.35", "cudss")
    assert new is not None
    assert new.requirement == "nvidia-cudss-cu13>=1.0.0.35,<2"
    assert (new.soname, new.folder) == ("libcudss.so.1", "nvidia/cu13/lib")


def test_safe_range_ends_at_a_cuda_major_change() -> None:
    catalog = Catalog(
        (
            release("nvidia-cusparse", "12.5.0.1", 12, ("nvidia/cusparse/lib/libcusparse.so.12",)),
            release("nvidia-cusparse", "12.6.3.3", 13, ("nvidia/cu13/lib/libcusparse.so.12",)),
        )
    )
    safe = catalog.safe_range("nvidia-cusparse", "12.5.0.1", "cusparse")
    assert safe is not None
    assert safe.specifier == ">=12.5.0.1,<12.6.3.3"


def test_a_release_that_lacks_the_library_for_a_while_is_left_out_of_the_range() -> None:
    """cutensor-cu12 2.8.0 dropped libcutensorMg.so.2 and 2.8.1 shipped it again, as before."""
    both = ("cutensor/lib/libcutensor.so.2", "cutensor/lib/libcutensorMg.so.2")
    gap = Catalog(
        (
            release("cutensor-cu12", "2.0.0", 12, both),
            release("cutensor-cu12", "2.8.0", 12, both[:1]),
            release("cutensor-cu12", "2.8.1", 12, both),
        )
    )
    safe = gap.safe_range("cutensor-cu12", "2.0.0", "cutensorMg")
    assert safe is not None
    assert safe.specifier == ">=2.0.0,!=2.8.0,<3"
    assert (safe.upper_reason, safe.skipped_reason) == (
        "next major version",
        "2.8.0 left out: it drops libcutensorMg.so.2",
    )
    untouched = gap.safe_range("cutensor-cu12", "2.0.0", "cutensor")
    assert untouched is not None
    assert untouched.specifier == ">=2.0.0,<3"
    # Not restored below the next major: the range ends at the drop, as it always did.
    for later in ((), (release("cutensor-cu12", "3.0.0", 12, both),)):
        dropped = Catalog((*gap.releases[:2], *later)).safe_range("cutensor-cu12", "2.0.0", "cutensorMg")
        assert dropped is not None
        assert (dropped.specifier, dropped.upper_reason) == (">=2.0.0,<2.8.0", "2.8.0 drops it")


def test_identify_by_sha256() -> None:
    catalog = sample_catalog()
    target = catalog.providers(name="cudss", cuda_major=13, platform=X86)[0]
    assert target.library.sha256
    found = catalog.by_sha256(target.library.sha256)
    assert [(p.distribution, p.version) for p in found] == [("nvidia-cudss-cu13", "1.0.0.35")]


def test_overlay_replaces_same_versions_and_adds_new_ones() -> None:
    base = sample_catalog()
    newer = Catalog(
        (release("nvidia-cudss-cu13", "1.1.0.1", 13, ("nvidia/cu13/lib/libcudss.so.1",)),), origin="user"
    )
    merged = base.overlaid_by(newer)
    assert merged.providers(name="cudss", cuda_major=13, platform=X86)[0].version == "1.1.0.1"
    assert len(merged.releases) == len(base.releases) + 1
    assert merged.origin == "sample + user"


def test_store_roundtrip_and_precedence(tmp_path: Path) -> None:
    catalog = sample_catalog()
    user = tmp_path / "user.json.gz"
    write_catalog(catalog, user)
    first = user.read_bytes()
    write_catalog(catalog, user)
    assert user.read_bytes() == first  # reproducible
    again = read_catalog(user)
    assert set(again.releases) == set(catalog.releases)
    extra = tmp_path / "extra.json.gz"
    write_catalog(
        Catalog((release("nvidia-cudss-cu13", "1.0.0.35", 13, ("nvidia/cu13/lib/libcudss.so.9",)),)), extra
    )
    loaded = load_catalog(extra, use_shipped=False, environ={"SLIMWHEEL_CATALOG": str(user)})
    assert loaded.release("nvidia-cudss-cu13", "1.0.0.35") is not None
    paths = [lib.path for w in loaded.release("nvidia-cudss-cu13", "1.0.0.35").wheels for lib in w.libraries]  # type: ignore[union-attr]
    assert "nvidia/cu13/lib/libcudss.so.9" in paths  # --catalog wins over the user's copy


def test_unreadable_catalog_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CatalogError, match="unreadable catalog"):
        read_catalog(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"schema": "other/1"}')
    with pytest.raises(CatalogError, match="not a slimwheel catalog"):
        read_catalog(wrong)


@pytest.mark.parametrize(
    ("name", "version", "requires", "classifiers", "paths", "expected"),
    [
        ("nvidia-cudss-cu13", "1.0.0.35", (), (), (), (13, CudaMajorSource.NAME_SUFFIX)),
        (
            "nvidia-cudss",
            "1.0.0.35",
            ("cuda-toolkit[cublas]==13.*",),
            (),
            (),
            (13, CudaMajorSource.TOOLKIT_REQUIREMENT),
        ),
        (
            "nvidia-x",
            "1.0",
            (),
            ("Environment :: GPU :: NVIDIA CUDA :: 12",),
            (),
            (12, CudaMajorSource.CLASSIFIER),
        ),
        ("nvidia-cusparse", "12.6.3.3", (), (), (), (13, CudaMajorSource.TOOLKIT_PIN)),
        (
            "nvidia-cublas",
            "13.1.0.3",
            (),
            (),
            ("nvidia/cu13/lib/libcublas.so.13",),
            (13, CudaMajorSource.FOLDER),
        ),
        ("nvidia-y", "1.0", (), (), ("nvidia/y/lib/liby.so.1",), (None, CudaMajorSource.UNKNOWN)),
    ],
)
def test_cuda_major_inference(
    name: str,
    version: str,
    requires: tuple[str, ...],
    classifiers: tuple[str, ...],
    paths: tuple[str, ...],
    expected: tuple[int | None, CudaMajorSource],
) -> None:
    pins, _ = toolkit_pins("13.0.2", ["nvidia-cusparse==12.6.3.3.*; extra == 'cusparse'"])
    found = infer_cuda_major(
        name, version=version, requires_dist=requires, classifiers=classifiers, library_paths=paths, pins=pins
    )
    assert found == expected


def test_libraries_from_record_skip_static_archives_and_headers() -> None:
    rows = [
        ("nvidia/cu13/lib/libcudss.so.1", 10, "aa"),
        ("nvidia/cu13/lib/libcudss_static.a", 10, "bb"),
        ("nvidia/cu13/include/cudss.h", 10, "cc"),
        ("nvidia/cu13/bin/cudss64_1.dll", 10, "dd"),
    ]
    libraries = libraries_from_record(rows)
    assert [lib.path for lib in libraries] == [
        "nvidia/cu13/bin/cudss64_1.dll",
        "nvidia/cu13/lib/libcudss.so.1",
    ]
    assert all(not lib.soname_confirmed for lib in libraries)


def test_private_copies_are_no_library_a_wheel_provides() -> None:
    """nvidia-pytriton 0.7.0 grafts libgmp-6d289461.so.10.4.1 into nvidia_pytriton.libs/: learned as a
    provider, it made cuda-quantum-cu13's own lib/libgmp.so.10 'a vendored NVIDIA library'. nvCOMP
    5.2.0.10 ships its library only so. Left out when learned, and when an older catalog is read."""
    rows = [
        ("nvidia_pytriton.libs/libgmp-6d289461.so.10.4.1", 10, "aa"),
        ("nvidia_pytriton.libs/libcudart.41118559.so.12", 10, "bb"),
        ("pytriton/tritonserver/lib/libtritonserver.so", 10, "cc"),
    ]
    assert [lib.path for lib in libraries_from_record(rows)] == [
        "pytriton/tritonserver/lib/libtritonserver.so"
    ]
    written = {
        "schema": "slimwheel.catalog/1",
        "releases": [
            {
                "distribution": "nvidia-pytriton",
                "version": "0.7.0",
                "wheels": [
                    {
                        "filename": "nvidia_pytriton-0.7.0-py3-none-manylinux_2_35_x86_64.whl",
                        "libs": [{"path": p, "soname": p.rsplit("/", 1)[1]} for p, _, _ in rows],
                    }
                ],
            }
        ],
    }
    catalog = catalog_from_dict(written, origin="an older user catalog")
    assert catalog.providers(name="gmp") == ()
    assert [p.library.path for p in catalog.providers(name="tritonserver")] == [rows[2][0]]


def test_safe_range_passes_over_a_release_with_no_wheel_for_the_platform() -> None:
    # nvidia-cudnn-cu11 8.9.5.29 is a Windows wheel only: on Linux, pip goes from 8.9.4.25 to 8.9.5.30.
    linux = ("nvidia/cudnn/lib/libcudnn.so.8",)
    catalog = Catalog(
        (
            release(
                "nvidia-cudnn-cu11", "8.9.4.25", 11, linux, windows_paths=("nvidia/cudnn/bin/cudnn64_8.dll",)
            ),
            release(
                "nvidia-cudnn-cu11",
                "8.9.5.29",
                11,
                (),
                linux_tags=(),
                windows_paths=("nvidia/cudnn/bin/cudnn64_8.dll",),
            ),
            release("nvidia-cudnn-cu11", "8.9.6.50", 11, linux),
            release("nvidia-cudnn-cu11", "9.0.0.312", 11, ("nvidia/cudnn/lib/libcudnn.so.9",)),
        )
    )
    for platform in (X86, None):
        safe = catalog.safe_range("nvidia-cudnn-cu11", "8.9.4.25", "cudnn", platform=platform)
        assert safe is not None
        assert safe.specifier == ">=8.9.4.25,<9.0.0.312"
    # On Windows the Windows-only release counts like any other (and 9.0.0.312, Linux only, not).
    windows = catalog.safe_range("nvidia-cudnn-cu11", "8.9.4.25", "cudnn", platform=WIN)
    assert windows is not None
    assert windows.specifier == ">=8.9.4.25,<9"


def test_the_nvidia_distributions_to_learn_are_those_the_catalog_lacks_and_never_the_wheels_own() -> None:
    """nvidia-pytriton 0.7.0 requires itself under an extra (``nvidia-pytriton[test]; extra ==
    "dev"``). Learnt, its name made it one of NVIDIA's providers, and its vendored cudart an original."""
    requires = [
        "numpy<2.0.0,>=1.21",
        'nvidia-pytriton[test]; extra == "dev"',
        'nvidia-cudnn-cu11==8.*; extra == "cu11"',
        "nvidia-cublas",  # the sample catalog knows it
        "Nvidia_Cudnn_CU11>=8",  # the same name, spelt otherwise
    ]
    found = unknown_nvidia_requirements(sample_catalog(), "nvidia-pytriton", requires)
    assert found == ("nvidia-cudnn-cu11",)
    assert unknown_nvidia_requirements(sample_catalog(), "Nvidia_PyTriton", requires) == found
    assert unknown_nvidia_requirements(sample_catalog(), "other", requires) == (
        "nvidia-cudnn-cu11",
        "nvidia-pytriton",
    )
