"""What a provider's libraries need in turn, as the catalog carries it: stored (and older catalogs
without it still load), kept when a catalog learned from RECORD alone overlays it, looked up per CUDA
major and platform, and used by repair's plan for the manifest when the provider is not installed."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

from slimwheel.analysis import ElfReport, NeededLibrary, Resolution, WheelReport
from slimwheel.catalog.learn import DEFAULT_SEEDS, needed_targets
from slimwheel.catalog.model import Catalog, CudaMajorSource, LibraryFile, Release, WheelFacts
from slimwheel.catalog.store import catalog_to_dict, read_catalog, shipped_catalog_path, write_catalog
from slimwheel.platforms import Platform
from slimwheel.repair import plan_repair
from slimwheel.repair.environment import EnvironmentFacts

X86 = "manylinux_2_17_x86_64"
ARM = "manylinux_2_17_aarch64"
CUDSS_NEEDS = ("libcublas.so.13", "libnvrtc.so.13", "libm.so.6", "libc.so.6")


def _library(path: str, needed: tuple[str, ...] | None = None, sha: str | None = None) -> LibraryFile:
    return LibraryFile(path, 1, sha or f"{abs(hash(path)):064x}"[:64], path.rsplit("/", 1)[1], needed=needed)


def _release(
    distribution: str,
    version: str,
    major: int,
    libraries: tuple[LibraryFile, ...],
    *,
    tags: tuple[str, ...] = (X86,),
) -> Release:
    wheels = tuple(
        WheelFacts(
            f"{distribution.replace('-', '_')}-{version}-py3-none-{tag}.whl", (tag,), 1, None, libraries
        )
        for tag in tags
    )
    return Release(distribution, version, major, CudaMajorSource.NAME_SUFFIX, (), wheels)


def _catalog(*, needs: bool) -> Catalog:
    return Catalog(
        (
            _release(
                "nvidia-cudss-cu13",
                "1.0.0.35",
                13,
                (_library("nvidia/cu13/lib/libcudss.so.1", CUDSS_NEEDS if needs else None),),
            ),
            _release("nvidia-cudss-cu13", "0.7.1.6", 13, (_library("nvidia/cu13/lib/libcudss.so.0"),)),
            _release(
                "nvidia-cublas",
                "13.1.0.3",
                13,
                (
                    _library("nvidia/cu13/lib/libcublas.so.13", ("libcublasLt.so.13",) if needs else None),
                    _library("nvidia/cu13/lib/libcublasLt.so.13", ("libc.so.6",) if needs else None),
                ),
            ),
            _release(
                "nvidia-cuda-nvrtc",
                "13.0.88",
                13,
                (_library("nvidia/cu13/lib/libnvrtc.so.13", () if needs else None),),
            ),
        )
    )


def test_needs_round_trip_and_an_old_catalog_without_them_loads(tmp_path: Path) -> None:
    catalog = _catalog(needs=True)
    path = tmp_path / "catalog.json.gz"
    write_catalog(catalog, path)
    again = read_catalog(path)
    assert again.needed_by("libcudss.so.1") == CUDSS_NEEDS
    assert again.needed_by("libnvrtc.so.13") == ()  # read, and needs nothing: not the same as unknown
    # A catalog written before the field existed: same schema, no "needed" key anywhere.
    document = catalog_to_dict(_catalog(needs=False))
    assert "needed" not in json.dumps(document)
    old = tmp_path / "old.json.gz"
    old.write_bytes(gzip.compress(json.dumps(document).encode()))
    loaded = read_catalog(old)
    assert all(p.library.needed is None for p in loaded.iter_libraries())
    assert loaded.needed_by("libcudss.so.1") is None


def test_an_overlay_learned_from_record_alone_keeps_what_the_elf_said() -> None:
    shipped = _catalog(needs=True)
    shipped_cudss = shipped.release("nvidia-cudss-cu13", "1.0.0.35")
    assert shipped_cudss is not None
    library = replace(shipped_cudss.wheels[0].libraries[0], build_id="ab12", soname_confirmed=True)
    shipped = shipped.overlaid_by(
        Catalog((replace(shipped_cudss, wheels=(replace(shipped_cudss.wheels[0], libraries=(library,)),)),))
    )
    user = _catalog(needs=False)
    merged = shipped.overlaid_by(user)
    merged_library = merged.release("nvidia-cudss-cu13", "1.0.0.35").wheels[0].libraries[0]  # type: ignore[union-attr]
    assert merged_library.needed == CUDSS_NEEDS
    assert merged_library.build_id == "ab12"
    assert merged_library.soname_confirmed
    # A different file at the same path (another sha256) is not the file that was read.
    other = Catalog(
        tuple(
            replace(
                r,
                wheels=tuple(
                    replace(w, libraries=tuple(replace(lib, sha256="0" * 64) for lib in w.libraries))
                    for w in r.wheels
                ),
            )
            for r in user.releases
        )
    )
    assert shipped.overlaid_by(other).needed_by("libcudss.so.1") is None


def test_needed_by_prefers_the_platform_then_the_same_os_and_respects_the_major_and_folder() -> None:
    arm_only = Catalog(
        (
            _release(
                "nvidia-cudss-cu13",
                "1.0.0.35",
                13,
                (_library("nvidia/cu13/lib/libcudss.so.1", CUDSS_NEEDS),),
                tags=(ARM,),
            ),
            _release(
                "nvidia-cudss-cu12",
                "1.0.0.35",
                12,
                (_library("nvidia/cu12/lib/libcudss.so.1", ("libcublas.so.12",)),),
            ),
        )
    )
    x86 = Platform("linux", "x86_64")
    assert arm_only.needed_by("libcudss.so.1", cuda_major=13, platform=x86) == CUDSS_NEEDS  # same OS
    assert arm_only.needed_by("libcudss.so.1", cuda_major=12, platform=x86) == ("libcublas.so.12",)
    assert arm_only.needed_by("libcudss.so.1", cuda_major=13, platform=Platform("win", "amd64")) is None
    assert arm_only.needed_by("libcudss.so.1", folder="nvidia/cu13/lib", cuda_major=12) is None


def test_needed_targets_are_the_newest_release_of_each_library_file() -> None:
    catalog = _catalog(needs=False)
    cublas = catalog.release("nvidia-cublas", "13.1.0.3")
    assert cublas is not None
    newer = _release("nvidia-cublas", "13.2.0.1", 13, cublas.wheels[0].libraries)
    catalog = catalog.overlaid_by(Catalog((newer,)))
    targets = needed_targets(catalog)
    # cuBLAS: only its newest release (the older ships the same files); cuDSS: 1.0 for .so.1, and
    # 0.7, the newest that ships .so.0.
    assert sorted((r.distribution, r.version) for r, _ in targets) == [
        ("nvidia-cublas", "13.2.0.1"),
        ("nvidia-cuda-nvrtc", "13.0.88"),
        ("nvidia-cudss-cu13", "0.7.1.6"),
        ("nvidia-cudss-cu13", "1.0.0.35"),
    ]
    assert all("x86_64" in wheel.filename for _, wheel in targets)
    known = _catalog(needs=True)
    cudss_old = known.release("nvidia-cudss-cu13", "0.7.1.6")
    assert cudss_old is not None
    assert [(r.distribution, r.version) for r, _ in needed_targets(known)] == [
        ("nvidia-cudss-cu13", "0.7.1.6")
    ]
    read = replace(
        cudss_old,
        wheels=tuple(
            replace(w, libraries=tuple(replace(lib, needed=()) for lib in w.libraries))
            for w in cudss_old.wheels
        ),
    )
    assert needed_targets(known.overlaid_by(Catalog((read,)))) == []  # all known: nothing to read again


def test_cuda_11_libraries_outside_the_toolkit_are_seeded() -> None:
    for name in ("nvidia-cudnn-cu11", "nvidia-nccl-cu11", "cutensor-cu11"):
        assert name in DEFAULT_SEEDS


def _report() -> WheelReport:
    path = "pkg/_ext.so"
    elf = ElfReport(
        path,
        1,
        1,
        needed=(NeededLibrary("libcudss.so.1", Resolution.NVIDIA_WHEEL),),
        installed_path=path,
        machine="x86_64",
    )
    return WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0",
        ("manylinux_2_17_x86_64",), 1, (elf,), (), (), (), 1, "hand-built",
    )  # fmt: skip


def _manifest(
    catalog: Catalog, environment: EnvironmentFacts | None = None
) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    plan = plan_repair(
        _report(), catalog, requires_dist=(), dist_info="pkg-1.0.dist-info", environment=environment
    )
    return {lib.soname: lib.requires for lib in plan.manifest.libraries}, plan.unread_providers


def test_the_manifest_lists_a_providers_needs_from_the_catalog_when_it_is_not_installed() -> None:
    listed, unread = _manifest(_catalog(needs=True))
    assert unread == ()
    assert listed == {
        "libcudss.so.1": ("cublas", "nvrtc"),
        "libcublas.so.13": ("cublasLt",),
        "libcublasLt.so.13": (),
        "libnvrtc.so.13": (),
    }
    # Without the catalog's knowledge (an old catalog), as before: only what the wheel needs, and why.
    listed, unread = _manifest(_catalog(needs=False))
    assert listed == {"libcudss.so.1": ()}
    assert unread == ("nvidia-cudss-cu13",)


def test_an_installed_provider_speaks_before_the_catalog() -> None:
    installed = EnvironmentFacts(
        "here", {"nvidia-cudss-cu13": "1.0.0.35"}, {"nvidia/cu13/lib/libcudss.so.1": ("libnvrtc.so.13",)}
    )
    listed, unread = _manifest(_catalog(needs=True), installed)
    assert unread == ()
    assert listed["libcudss.so.1"] == ("nvrtc",)
    assert "libcublas.so.13" not in listed


def test_the_shipped_snapshot_knows_what_cudnn_and_cudss_need() -> None:
    shipped = read_catalog(shipped_catalog_path())
    assert shipped.needed_by("libcudss.so.1", cuda_major=13, platform=Platform("linux", "x86_64")) is not None
    ops = shipped.needed_by("libcudnn_ops.so.9", cuda_major=12, platform=Platform("linux", "aarch64"))
    assert ops is not None
    assert "libcudnn_graph.so.9" in ops
    assert {
        r.cuda_major
        for d in ("nvidia-cudnn-cu11", "nvidia-nccl-cu11", "cutensor-cu11")
        for r in shipped.releases_of(d)
    } == {11}


def test_the_shipped_snapshot_knows_libraries_outside_the_toolkit_for_cuda_12_and_13() -> None:
    """Seeded names reach the shipped snapshot: cuQuantum's (custatevec, cutensornet, cudensitymat),
    the multi-GPU libraries and nvImageCodec's, each for both CUDA majors, with what they need."""
    shipped = read_catalog(shipped_catalog_path())
    for soname in ("libcustatevec.so.1", "libcutensornet.so.2", "libcudensitymat.so.0", "libcublasmp.so.0"):
        providers = shipped.providers(soname=soname)
        assert {p.release.cuda_major for p in providers} >= {12, 13}, soname
        assert any(p.library.needed for p in providers), f"{soname}: what it needs was not read"
    for name in ("custatevec-cu13", "cudensitymat-cu12", "nvidia-nvimgcodec-cu13", "nvidia-cusolvermp-cu13"):
        assert name in DEFAULT_SEEDS


def test_a_library_both_an_optional_and_a_required_one_need_is_required() -> None:
    """cuBLAS stays behind the extra 'gpu' and needs cuBLASLt; cuDSS, always required, needs it too:
    a plain install loads cuBLASLt, so the manifest must not call it optional."""
    files = tuple(
        ElfReport(
            path,
            1,
            1,
            needed=(NeededLibrary(soname, Resolution.NVIDIA_WHEEL),),
            installed_path=path,
            machine="x86_64",
        )
        for path, soname in (("pkg/_blas.so", "libcublas.so.13"), ("pkg/_solve.so", "libcudss.so.1"))
    )
    report = WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0",
        ("manylinux_2_17_x86_64",), 1, files, (), (), (), 1, "hand-built",
    )  # fmt: skip
    installed = EnvironmentFacts(
        "here",
        {"nvidia-cublas": "13.1.0.3", "nvidia-cudss-cu13": "1.0.0.35"},
        {
            "nvidia/cu13/lib/libcublas.so.13": ("libcublasLt.so.13",),
            "nvidia/cu13/lib/libcudss.so.1": ("libcublasLt.so.13",),
            "nvidia/cu13/lib/libcublasLt.so.13": (),
        },
    )
    plan = plan_repair(
        report,
        _catalog(needs=True),
        requires_dist=('nvidia-cublas>=13; extra == "gpu"', "nvidia-cudss-cu13>=1"),
        dist_info="pkg-1.0.dist-info",
        environment=installed,
    )
    optional = {library.soname: library.optional for library in plan.manifest.libraries}
    assert optional == {"libcublas.so.13": True, "libcudss.so.1": False, "libcublasLt.so.13": False}
