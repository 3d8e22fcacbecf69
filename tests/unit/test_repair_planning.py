"""plan_repair on hand-built data: a sample catalog and wheel reports written out in full, no files.

Table-driven where the rule is a table (the CUDA major, the range merged across libraries, extras);
each case names the real wheel that taught it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace

import pytest
from packaging.specifiers import SpecifierSet

from slimwheel.analysis import (
    Confidence,
    ElfReport,
    IdentifiedRelease,
    NeededLibrary,
    Resolution,
    VendoredCopy,
    WheelReport,
)
from slimwheel.catalog.exports import SymbolFloor
from slimwheel.catalog.model import Catalog, CudaMajorSource, LibraryFile, Release, WheelFacts
from slimwheel.catalog.store import load_catalog
from slimwheel.names import NameStyle
from slimwheel.repair import EmbedRequest, RepairError, RepairOptions, RepairPlan, plan_repair

LINUX = "py3-none-manylinux_2_17_x86_64"


def _release(
    distribution: str, version: str, major: int, *paths: str, requires: tuple[str, ...] = ()
) -> Release:
    libraries = tuple(LibraryFile(p, 1, None, p.rsplit("/", 1)[1]) for p in paths)
    wheel = WheelFacts(
        f"{distribution.replace('-', '_')}-{version}-{LINUX}.whl",
        (LINUX.rsplit("-", maxsplit=1)[-1],),
        1,
        None,
        libraries,
    )
    return Release(distribution, version, major, CudaMajorSource.NAME_SUFFIX, requires, (wheel,))


CATALOG = Catalog(
    (
        _release("nvidia-cuda-runtime-cu11", "11.7.99", 11, "nvidia/cuda_runtime/lib/libcudart.so.11.0"),
        _release("nvidia-cuda-runtime-cu12", "12.4.127", 12, "nvidia/cuda_runtime/lib/libcudart.so.12"),
        _release("nvidia-cuda-runtime", "13.0.96", 13, "nvidia/cu13/lib/libcudart.so.13"),
        _release("nvidia-nvtx-cu11", "11.8.86", 11, "nvidia/nvtx/lib/libnvToolsExt.so.1"),
        _release("nvidia-nvtx-cu12", "12.8.90", 12, "nvidia/nvtx/lib/libnvToolsExt.so.1"),
        _release(
            "cutensor-cu12", "2.0.0", 12, "cutensor/lib/libcutensor.so.2", "cutensor/lib/libcutensorMg.so.2"
        ),
        _release(
            "cutensor-cu12", "2.7.0", 12, "cutensor/lib/libcutensor.so.2", "cutensor/lib/libcutensorMg.so.2"
        ),
        _release("cutensor-cu12", "2.8.0", 12, "cutensor/lib/libcutensor.so.2"),
        _release(
            "cutensor-cu12", "2.8.1", 12, "cutensor/lib/libcutensor.so.2", "cutensor/lib/libcutensorMg.so.2"
        ),
        _release("nvidia-cuda-nvrtc", "13.0.88", 13, "nvidia/cu13/lib/libnvrtc.so.13"),
        # cuSPARSELt moved folders: 0.7 in nvidia/cusparselt/lib, 0.8 in nvidia/cu13/lib.
        _release("nvidia-cusparselt-cu13", "0.7.1", 13, "nvidia/cusparselt/lib/libcusparseLt.so.0"),
        _release("nvidia-cusparselt-cu13", "0.8.0", 13, "nvidia/cu13/lib/libcusparseLt.so.0"),
        _release("nvidia-cuda-opencl-cu12", "12.4.127", 12, "nvidia/cuda_runtime/lib/libOpenCL.so.1"),
        _release("nvidia-cuda-opencl", "13.0.85", 13, "nvidia/cu13/lib/libOpenCL.so.1"),
        _release("nvidia-cudnn-cu12", "9.1.0.70", 12, "nvidia/cudnn/lib/libcudnn.so.9"),
        _release("nvidia-cudnn-cu12", "9.8.0.87", 12, "nvidia/cudnn/lib/libcudnn.so.9"),
    )
)


def _report(*sonames: str, path: str = "pkg/_ext.so") -> WheelReport:
    needed = tuple(NeededLibrary(s, Resolution.NVIDIA_WHEEL) for s in sonames)
    elf = ElfReport(path, 1, 1, needed=needed, installed_path=path, machine="x86_64")
    return WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0",
        ("manylinux_2_17_x86_64",), 1, (elf,), (), (), (), 1, "hand-built",
    )  # fmt: skip


def _plan(report: WheelReport, *requires: str, **options: object) -> RepairPlan:
    return plan_repair(
        report,
        CATALOG,
        requires_dist=requires,
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(**options),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("sonames", "requires", "cuda", "major"),
    [
        (("libcudart.so.12",), (), None, 12),  # one major ships it
        (("libcudart.so.11.0", "libnvToolsExt.so.1"), (), None, 11),  # the intersection decides
        (("libnvToolsExt.so.1",), ("nvidia-cuda-runtime-cu11==11.7.99",), None, 11),  # the wheel's word
        (("libnvToolsExt.so.1",), (), 12, 12),  # --cuda where both fit
    ],
)
def test_the_cuda_major(
    sonames: tuple[str, ...], requires: tuple[str, ...], cuda: int | None, major: int
) -> None:
    assert _plan(_report(*sonames), *requires, cuda_major=cuda).cuda_major == major


def test_a_library_the_same_in_every_major_takes_the_newest_and_says_so() -> None:
    """OpenMM 8.6.1's OpenCL plugins need only the ICD loader, which CUDA 12's and 13's wheels ship
    alike: repair asked for --cuda (exit 2) for a wheel built for no CUDA major, while check's advice
    named CUDA 13's. Where another library names the major, that one decides."""
    plan = _plan(_report("libOpenCL.so.1"))
    assert plan.cuda_major == 13
    assert [r.distribution for r in plan.requirements] == ["nvidia-cuda-opencl"]
    warning = plan.warnings[0]
    assert "CUDA 12 and 13 wheels ship the same library" in warning
    assert "linked to CUDA 13's (--cuda N picks another)" in warning
    assert _plan(_report("libOpenCL.so.1", "libcudart.so.12")).cuda_major == 12
    assert not any("same library" in w for w in _plan(_report("libOpenCL.so.1"), cuda_major=12).warnings)


@pytest.mark.parametrize(
    ("soname", "use_runpath", "search_path"),
    [
        # A RUNPATH into the provider's folder serves the file's own DT_NEEDED: left as it is.
        ("libcudart.so.13", False, None),
        # NVRTC loads libnvrtc-builtins by soname, which only the loader's DT_RPATH serves.
        ("libnvrtc.so.13", False, ("$ORIGIN/../nvidia/cu13/lib",)),
        ("libnvrtc.so.13", True, None),  # --runpath: the tag asked for
    ],
)
def test_a_runpath_stays_unless_a_library_it_serves_loads_another_by_soname(
    soname: str, use_runpath: bool, search_path: tuple[str, ...] | None
) -> None:
    """openmm-cuda-13 8.6.1's libOpenMMCUDA.so needs libnvrtc.so.13 through RUNPATH
    ``$ORIGIN/..:$ORIGIN/../../../nvidia/cu13/lib``; with nvidia-cuda-nvrtc 13.0.88 (its libnvrtc has no
    search path) and no toolkit on the loader's path, OpenMM's CUDA platform failed on an H200: "failed
    to open libnvrtc-builtins.so.13.0". As a DT_RPATH it ran."""
    report = _report(soname)
    (elf,) = report.elf_files
    report = replace(report, elf_files=(replace(elf, runpath=("$ORIGIN/../nvidia/cu13/lib",)),))
    plan = _plan(report, use_runpath=use_runpath)
    edits = {edit.path: edit for edit in plan.edits}
    assert (edits["pkg/_ext.so"].search_path if "pkg/_ext.so" in edits else None) == search_path
    if search_path is not None:
        assert not edits["pkg/_ext.so"].runpath
        assert edits["pkg/_ext.so"].reason == (
            "was a RUNPATH: libnvrtc.so.13 loads another library by soname, which only a DT_RPATH serves"
        )


def test_a_library_no_wheel_ships_for_the_platform_is_left_alone_without_a_major() -> None:
    """OpenMM 8.6.1 for aarch64: no NVIDIA wheel ships libOpenCL.so.1 there, so no major is chosen;
    the note said 'for CUDA None on manylinux_aarch64'."""
    report = replace(
        _report("libOpenCL.so.1"),
        filename="pkg-1.0-cp311-cp311-manylinux_2_17_aarch64.whl",
        platform_tags=("manylinux_2_17_aarch64",),
    )
    plan = _plan(report)
    assert (plan.cuda_major, plan.requirements) == (None, ())
    assert plan.left_alone == ("libOpenCL.so.1: no NVIDIA wheel provides it for manylinux_aarch64",)


@pytest.mark.parametrize(
    ("cusparselt", "edited"),
    [
        ("nvidia-cusparselt-cu13==0.8.0", False),  # only nvidia/cu13/lib can hold libcusparseLt.so.0
        ("nvidia-cusparselt-cu13>=0.7,<1", True),  # either folder may: their order decides
    ],
)
def test_the_order_of_nvidia_folders_is_judged_by_the_releases_that_can_be_installed(
    cusparselt: str, edited: bool
) -> None:
    """torch 2.11.0 lists nvidia/cusparselt/lib before nvidia/cu13/lib and $ORIGIN last, and pins
    nvidia-cusparselt-cu13==0.8.0, which installs into nvidia/cu13/lib. Counting every release, both
    folders could hold libcusparseLt.so.0, so repair rewrote 8 libraries (500 MB) to reorder them."""
    path = "torch/lib/libtorch_cuda.so"
    rpath = ("$ORIGIN/../../nvidia/cusparselt/lib", "$ORIGIN/../../nvidia/cu13/lib", "$ORIGIN")
    report = _report("libcusparseLt.so.0", "libcudart.so.13", path=path)
    (elf,) = report.elf_files
    report = replace(report, elf_files=(replace(elf, rpath=rpath),))
    plan = _plan(report, cusparselt, "nvidia-cuda-runtime==13.0.96")
    assert bool(plan.edits) is edited


@pytest.mark.parametrize(
    ("sonames", "options", "message"),
    [
        (("libnvToolsExt.so.1",), {}, "CUDA 11 and 12 wheels all provide"),
        (("libcudart.so.12",), {"cuda_major": 13}, "--cuda 13 does not fit the wheel"),
        (("libcudart.so.11.0", "libcudart.so.13"), {}, "several CUDA majors"),  # bitsandbytes
    ],
)
def test_a_major_that_cannot_be_chosen_is_refused(
    sonames: tuple[str, ...], options: dict[str, object], message: str
) -> None:
    with pytest.raises(RepairError, match=message):
        _plan(_report(*sonames), **options)


def test_files_in_folders_named_for_several_majors_are_refused_with_the_way_out() -> None:
    """nccl-extensions 0.1.0 ships nccl/ep/lib/cu12/libnccl_ep.so and nccl/ep/lib/cu13/libnccl_ep.so,
    each needing libnccl.so.2, and loads the one that fits: repair asked for --cuda, which would link
    the other build to the wrong major's NCCL. It says the folders name several majors, and that
    --exclude leaves the library to what the user installs."""
    one = _report("libnvToolsExt.so.1", path="pkg/lib/cu11/libext.so")
    other = replace(one.elf_files[0], path="pkg/lib/cu12/libext.so", installed_path="pkg/lib/cu12/libext.so")
    report = replace(one, elf_files=(*one.elf_files, other))
    with pytest.raises(RepairError) as raised:
        _plan(report)
    assert str(raised.value) == (
        "the wheel's files are built for several CUDA majors, as their folders say (pkg/lib/cu11 (CUDA 11), "
        "pkg/lib/cu12 (CUDA 12)), and CUDA 11 and 12 wheels all provide libnvToolsExt.so.1: no one "
        "major's wheels serve them all (--cuda 11,12 links each file to its folder's major's wheels, each "
        "major's requirements behind an extra; --exclude nvToolsExt leaves them to what the user installs; "
        "--cuda N links every file to one major's)"
    )
    assert _plan(report, cuda_major=12).cuda_major == 12


@pytest.mark.parametrize(
    ("classifiers", "major"),
    [
        # ctranslate2 3.24.0 vendors libcudnn.so.8 (CUDA 11 and 12 wheels ship it) and claims 11.0-11.8.
        (("Environment :: GPU :: NVIDIA CUDA :: 11.2", "Environment :: GPU :: NVIDIA CUDA :: 11.8"), 11),
        (("Environment :: GPU :: NVIDIA CUDA :: 12",), 12),
        (("Environment :: GPU :: NVIDIA CUDA :: 11.8", "Environment :: GPU :: NVIDIA CUDA :: 12.4"), None),
        (("Environment :: GPU :: NVIDIA CUDA",), None),  # no version: no word
        (("Environment :: GPU :: NVIDIA CUDA :: 13.0",), None),  # no CUDA 13 wheel ships it
    ],
)
def test_the_classifiers_tell_the_major_where_the_libraries_do_not(
    classifiers: tuple[str, ...], major: int | None
) -> None:
    def plan() -> RepairPlan:
        return plan_repair(
            _report("libnvToolsExt.so.1"),
            CATALOG,
            requires_dist=(),
            dist_info="pkg-1.0.dist-info",
            classifiers=classifiers,
        )

    if major is None:
        with pytest.raises(RepairError, match="CUDA 11 and 12 wheels all provide"):
            plan()
    else:
        assert plan().cuda_major == major


def test_a_library_the_catalog_knows_for_no_other_major_does_not_rule_that_major_out() -> None:
    """cupy-cuda11x 12.3.0 links libcublas.so.11 and libcudnn.so.8; the catalog learns CUDA 11's
    toolkit wheels but not nvidia-cudnn-cu11, so cuDNN's silence about CUDA 11 is no answer: CUDA 11
    it is, and cuDNN is left alone (it was refused as needing "several CUDA majors", exit 2)."""
    plan = _plan(_report("libcudart.so.11.0", "libcudnn.so.9"))
    assert plan.cuda_major == 11
    assert [r.distribution for r in plan.requirements] == ["nvidia-cuda-runtime-cu11"]
    assert any("libcudnn.so.9: no NVIDIA wheel provides it for CUDA 11" in note for note in plan.left_alone)


def test_one_range_for_every_library_of_a_distribution() -> None:
    """cupy needs libcutensor.so.2 and libcutensorMg.so.2; 2.8.0 dropped the second, 2.8.1 restored it."""
    plan = _plan(_report("libcutensor.so.2", "libcutensorMg.so.2"), linked_versions={"cutensor": ("2.0.0",)})
    (added,) = plan.requirements
    assert added.requirement.split(";")[0] == "cutensor-cu12>=2.0.0,!=2.8.0,<3"
    assert added.range_reason.endswith("; 2.8.0 left out: it drops libcutensorMg.so.2")
    assert added.library == "cutensor, cutensorMg"
    assert plan.kept_requirements == ()


_RTX_LIB = "tensorrt_rtx_libs/libtensorrt_rtx.so.1"
_RTX_CATALOG = Catalog(
    (
        *CATALOG.releases,
        _release("tensorrt-rtx-cu13-libs", "1.4.0.76", 13, _RTX_LIB),
        _release("tensorrt-rtx-cu13-libs", "1.7.1.116", 13, _RTX_LIB),
    )
)


@pytest.mark.parametrize(
    ("distribution", "version", "soname", "provider", "linked", "undated"),
    [
        # NVIDIA's bindings, released with the libraries at one version: the wheel's own is the floor.
        (
            "tensorrt-rtx-cu13-bindings",
            "1.7.1.116",
            "libtensorrt_rtx.so.1",
            "tensorrt-rtx-cu13-libs",
            "1.7.1.116",
            False,
        ),
        # Another package: the floor read from symbols stands, with a word that it cannot date C++ classes.
        (
            "tensorrt-rtx-cu13-bindings",
            "1.5.0",
            "libtensorrt_rtx.so.1",
            "tensorrt-rtx-cu13-libs",
            "1.4.0.76",
            True,
        ),
        # cuDNN's API is C functions, which the symbols do date: its floor stands without a word, even
        # where the wheel's version is a cuDNN release.
        ("pkg", "9.8.0.87", "libcudnn.so.9", "nvidia-cudnn-cu12", "9.1.0.70", False),
    ],
)
def test_the_floor_of_a_library_whose_api_is_cpp_classes_behind_factory_functions(
    distribution: str, version: str, soname: str, provider: str, linked: str, undated: bool
) -> None:
    """tensorrt-rtx-cu13-bindings 1.7.1.116 imports only TensorRT-RTX's factories
    (createInferBuilder_INTERNAL...), which its 1.4 release exports too: the methods of the classes
    they return, called through vtables, are what a 1.7 build needs."""
    report = replace(_report(soname), distribution=distribution, version=version)
    floors = {provider: SymbolFloor(provider, _RELEASE_FLOOR[provider], 8)}
    plan = plan_repair(
        report, _RTX_CATALOG, requires_dist=(), dist_info=f"{distribution}-{version}.dist-info", floors=floors
    )
    (added,) = plan.requirements
    assert added.requirement.split(";")[0].startswith(f"{provider}>={linked},<")
    words = [w for w in plan.warnings if "C++ classes" in w]
    assert bool(words) is undated
    if undated:
        assert words[0].startswith(f"{provider}>={linked}: TensorRT-RTX's API is C++ classes")
        assert "--linked-version tensorrt_rtx=VERSION" in words[0]
    # The bindings' own version says why, and the first pass asks for no symbols to be read for it.
    own = "the wheel's own version" in added.version_source
    assert own is (linked == version)
    first_pass = plan_repair(
        report, _RTX_CATALOG, requires_dist=(), dist_info=f"{distribution}-{version}.dist-info"
    )
    assert bool(first_pass.assumed_floors) is (not own)


_RELEASE_FLOOR = {"tensorrt-rtx-cu13-libs": "1.4.0.76", "nvidia-cudnn-cu12": "9.1.0.70"}


CUDNN_EXTRA = 'nvidia-cudnn-cu12>=9.8; extra == "cudnn"'


def _vendored_cudnn() -> WheelReport:
    """An extension that links a copy of cuDNN in pkg.libs/, which a plain install loads."""
    copy_path = "pkg.libs/libcudnn.so.9"
    needed = (NeededLibrary("libcudnn.so.9", Resolution.VENDORED, (copy_path,)),)
    files = (
        ElfReport("pkg/_ext.so", 1, 1, needed=needed, installed_path="pkg/_ext.so", machine="x86_64"),
        ElfReport(copy_path, 1, 1, soname="libcudnn.so.9", installed_path=copy_path, machine="x86_64"),
    )
    copy = VendoredCopy(copy_path, "cudnn", "libcudnn.so.9", NameStyle.PLAIN, 1, 1, None, ("pkg/_ext.so",))
    return WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0",
        ("manylinux_2_17_x86_64",), 1, files, (copy,), (), (), 1, "hand-built",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("vendored", "requires", "keep_optional", "added", "made_hard", "optional"),
    [
        # Nothing of it vendored: a plain install never loaded it, so the author's extra stands.
        (False, (CUDNN_EXTRA,), False, None, False, True),
        (False, (CUDNN_EXTRA,), True, None, False, True),
        # A dropped copy served a plain install: its provider is made hard, in the author's range.
        (True, (CUDNN_EXTRA,), False, "nvidia-cudnn-cu12>=9.8,<10", True, False),
        (True, (CUDNN_EXTRA,), True, None, False, False),  # the copy is kept
        # The author's range already bounds it: written once, not '>=9.8,<10,~=9.8'.
        (True, ('nvidia-cudnn-cu12~=9.8; extra == "cudnn"',), False, "nvidia-cudnn-cu12~=9.8", True, False),
        (False, ("nvidia-cudnn-cu12>=9.8",), False, None, False, False),  # already always required: kept
    ],
)
def test_extras(
    vendored: bool,
    requires: tuple[str, ...],
    keep_optional: bool,
    added: str | None,
    made_hard: bool,
    optional: bool,
) -> None:
    report = _vendored_cudnn() if vendored else _report("libcudnn.so.9")
    plan = _plan(report, *requires, keep_extras_optional=keep_optional)
    assert [r.requirement.split(";")[0] for r in plan.requirements] == ([added] if added else [])
    assert bool(plan.made_hard) is made_hard
    assert bool(plan.kept_optional) is optional
    cudnn = [library for library in plan.manifest.libraries if library.name == "cudnn"]
    listed = not (vendored and keep_optional)  # a copy kept serves it: nothing to list
    assert [library.optional for library in cudnn] == ([optional] if listed else [])
    if optional:  # the author's line is the manifest's, and the RPATH reaches the provider
        assert cudnn[0].requirement == requires[0]
        (edit,) = plan.edits
        assert edit.search_path == ("$ORIGIN/../nvidia/cudnn/lib",)


def _with_copies(linked: bool) -> WheelReport:
    """An extension and cuTENSOR's two libraries as copies in pkg.libs/: the extension links
    libcutensor.so.2 (``linked``) or nothing; libcutensorMg.so.2 is linked by nobody."""
    main, multi = "pkg.libs/libcutensor.so.2", "pkg.libs/libcutensorMg.so.2"
    needed = (NeededLibrary("libcutensor.so.2", Resolution.VENDORED, (main,)),) if linked else ()
    files = [
        ElfReport("pkg/_ext.so", 1, 1, needed=needed, installed_path="pkg/_ext.so", machine="x86_64"),
        ElfReport(main, 1, 1, soname="libcutensor.so.2", installed_path=main, machine="x86_64"),
        ElfReport(multi, 1, 1, soname="libcutensorMg.so.2", installed_path=multi, machine="x86_64"),
    ]
    copies = (
        VendoredCopy(
            main,
            "cutensor",
            "libcutensor.so.2",
            NameStyle.PLAIN,
            1,
            1,
            None,
            ("pkg/_ext.so",) if linked else (),
        ),
        VendoredCopy(multi, "cutensorMg", "libcutensorMg.so.2", NameStyle.PLAIN, 1, 1, None, ()),
    )
    return WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0",
        ("manylinux_2_17_x86_64",), 1, tuple(files), copies, (), (), 1, "hand-built",
    )  # fmt: skip


def test_a_copy_nobody_links_goes_with_a_linked_library_of_its_distribution() -> None:
    """cuTENSOR's own library loads libcutensorMg once the wheel requires cutensor-cu12."""
    plan = _plan(_with_copies(linked=True))
    assert plan.drop == ("pkg.libs/libcutensor.so.2", "pkg.libs/libcutensorMg.so.2")
    assert [r.distribution for r in plan.requirements] == ["cutensor-cu12"]


def test_a_copy_nobody_links_stays_unless_forced() -> None:
    """Loaded by dlopen from a path the package builds (triton's cupti): dropping it breaks the load,
    and check cannot see it."""
    plan = _plan(_with_copies(linked=False))
    assert plan.drop == ()
    assert set(plan.kept_copies) == {"pkg.libs/libcutensor.so.2", "pkg.libs/libcutensorMg.so.2"}
    assert plan.left_alone == (
        "pkg.libs/: libcutensor.so.2, libcutensorMg.so.2: kept: nothing in the wheel links them, so they "
        "are loaded at run time (dlopen), maybe from a path the package's code builds, which repair "
        "cannot redirect (--force drops them)",
    )
    forced = _plan(_with_copies(linked=False), force=True)
    assert forced.drop == ("pkg.libs/libcutensor.so.2", "pkg.libs/libcutensorMg.so.2")
    # What served them comes in their place, loaded when the package asks: preload leaves them out.
    assert [r.distribution for r in forced.requirements] == ["cutensor-cu12"]
    assert {(m.soname, m.optional, m.needed_by) for m in forced.manifest.libraries} == {
        ("libcutensor.so.2", True, ()),
        ("libcutensorMg.so.2", True, ()),
    }
    assert "dropped (--force), though nothing in the wheel links them" in forced.warnings[0]


def test_a_copy_of_another_majors_release_stays_when_the_repair_is_for_one_major() -> None:
    """triton 3.9.0 with --cuda 13 --force: its CUPTI 12 folder kept ``libcupti.so.12``, which no CUDA
    13 wheel ships, but lost ``libnvperf_host.so``, whose soname CUDA 13's CUPTI wheel ships too: not
    the build CUPTI 12 loads beside it. Here the OpenCL ICD loader, the same soname in both majors."""
    copy_path, ext = "pkg.libs/libOpenCL.so.1", "pkg/_ext.so"
    needed = (NeededLibrary("libOpenCL.so.1", Resolution.VENDORED, (copy_path,)),)
    identified = IdentifiedRelease(
        "nvidia-cuda-opencl-cu12", "12.4.127", 12, Confidence.EXACT, "nvidia/cuda_runtime/lib/libOpenCL.so.1"
    )
    report = WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0", ("manylinux_2_17_x86_64",), 1,
        (
            ElfReport(ext, 1, 1, needed=needed, installed_path=ext, machine="x86_64"),
            ElfReport(copy_path, 1, 1, soname="libOpenCL.so.1", installed_path=copy_path, machine="x86_64"),
        ),
        (VendoredCopy(copy_path, "OpenCL", "libOpenCL.so.1", NameStyle.PLAIN, 1, 1, identified, (ext,)),),
        (), (), 1, "hand-built",
    )  # fmt: skip
    mine = _plan(report)  # the copy names the major: its own wheel replaces it
    assert (mine.cuda_major, mine.drop) == (12, (copy_path,))
    assert [r.distribution for r in mine.requirements] == ["nvidia-cuda-opencl-cu12"]
    other = _plan(report, cuda_major=13, force=True)
    assert other.drop == ()
    assert other.left_alone == (
        f"{copy_path}: kept: it is CUDA 12's (nvidia-cuda-opencl-cu12 12.4.127, exact), and this repair "
        "is for CUDA 13",
    )
    # A copy known by its soname alone tells no major: CUDA 13's wheel replaces it.
    by_soname = replace(identified, confidence=Confidence.BY_SONAME)
    copies = (replace(report.vendored[0], identified=by_soname),)
    assert _plan(replace(report, vendored=copies), cuda_major=13).drop == (copy_path,)


_CUQUANTUM = Catalog(
    (
        *CATALOG.releases,
        _release("custatevec-cu12", "1.5.0", 12, "cuquantum/lib/libcustatevec.so.1"),
        _release("custatevec-cu12", "1.7.0", 12, "cuquantum/lib/libcustatevec.so.1"),
        # the metapackage: no library of its own, each release pins the libraries' releases
        _release("cuquantum-cu12", "23.10.0", 12, requires=("custatevec-cu12 ==1.5.0",)),
        _release("cuquantum-cu12", "24.11.0", 12, requires=("custatevec-cu12==1.7.0",)),
        _release("cuquantum-cu12", "25.3.0", 12, requires=('custatevec-cu12==1.8.0; extra == "full"',)),
        # libcuml-cu12 requires cuda-toolkit[cublas,...]==12.*: the toolkit brings each library only
        # through the extra of its name
        _release(
            "cuda-toolkit",
            "12.9.1",
            12,
            requires=(
                'custatevec-cu12==1.7.0; extra == "statevec"',
                'statevec-bundle==1.0; extra == "deep"',
                'statevec-bundle>=1.0; extra == "partial"',
            ),
        ),
        # A level further down (cuda-toolkit[cusolver] -> nvidia-cusolver-cu12 -> nvidia-nvjitlink-cu12,
        # which libcugraph-cu12 26.10 needs): bundle 1.0 brings custatevec, 2.0 no longer does.
        _release("statevec-bundle", "1.0", 12, requires=("custatevec-cu12>=1.5",)),
        _release("statevec-bundle", "2.0", 12),
    )
)


@pytest.mark.parametrize(
    ("requires", "added", "kept"),
    [
        # qiskit-aer-gpu 0.18.2 requires cuquantum-cu12<24.11.0,>=23.3.0 and links libcustatevec.so.1
        (("cuquantum-cu12<24.11.0,>=23.3.0",), [], ("cuquantum-cu12<24.11.0,>=23.3.0",)),
        (("cuquantum-cu12>=23.3.0,<25",), [], ("cuquantum-cu12>=23.3.0,<25",)),
        # a release it allows (25.3.0) brings custatevec only with an extra: not counted on
        (("cuquantum-cu12>=23.3.0",), ["custatevec-cu12"], ()),
        ((), ["custatevec-cu12"], ()),
        (("cuda-toolkit[statevec]==12.*",), [], ("cuda-toolkit[statevec]==12.*",)),
        (("cuda-toolkit[other]==12.*",), ["custatevec-cu12"], ()),
        (("cuda-toolkit[deep]==12.*",), [], ("cuda-toolkit[deep]==12.*",)),
        (("cuda-toolkit[partial]==12.*",), ["custatevec-cu12"], ()),  # not statevec-bundle 2.0
    ],
)
def test_a_metapackage_the_wheel_requires_brings_the_library(
    requires: tuple[str, ...], added: list[str], kept: tuple[str, ...]
) -> None:
    plan = plan_repair(
        _report("libcustatevec.so.1"),
        _CUQUANTUM,
        requires_dist=requires,
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(linked_versions={"custatevec": ("1.5.0",)}),
    )
    assert [r.distribution for r in plan.requirements] == added
    assert plan.kept_requirements == kept
    (library,) = plan.manifest.libraries
    assert (library.distribution, library.folder) == ("custatevec-cu12", "cuquantum/lib")


def test_a_requirement_kept_for_two_reasons_is_listed_once() -> None:
    """cuda-quantum-cu12 0.16.0 requires cutensornet-cu12, which ships libcutensornet.so.2 and brings
    cuTENSOR in: its line is kept for both, and was listed twice."""
    catalog = Catalog(
        (
            *CATALOG.releases,
            _release(
                "cutensornet-cu12",
                "2.13.0",
                12,
                "cuquantum/lib/libcutensornet.so.2",
                requires=("cutensor-cu12>=2.0.0",),
            ),
        )
    )
    plan = plan_repair(
        _report("libcutensornet.so.2", "libcutensor.so.2"),
        catalog,
        requires_dist=("cutensornet-cu12~=2.13.0",),
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(linked_versions={"cutensornet": ("2.13.0",), "cutensor": ("2.0.0",)}),
    )
    assert plan.requirements == ()
    assert plan.kept_requirements == ("cutensornet-cu12~=2.13.0",)


@pytest.mark.parametrize(
    ("sonames", "requires", "added", "optional"),
    [
        # vLLM: its extensions need cudart, which its extra 'deepstream' happens to bring as a dependency
        # of another package; they need no provider the author gates, so the extra says nothing of them.
        (("libcustatevec.so.1",), ('cuquantum-cu12==24.11.0; extra == "sim"',), ["custatevec-cu12"], []),
        # CuPy 14: its extra 'ctk' asks cuda-toolkit for the component by name: the author's choice.
        (("libcustatevec.so.1",), ('cuda-toolkit[statevec]==12.*; extra == "sim"',), [], ["custatevec-cu12"]),
        (("libcustatevec.so.1",), ('cuda-toolkit[other]==12.*; extra == "sim"',), ["custatevec-cu12"], []),
        # ONNX Runtime: the file needing cuBLAS (brought by its 'cudnn' extra through cuDNN) also needs
        # libraries the author gates directly: a file loaded only on request, all of it optional.
        (
            ("libcustatevec.so.1", "libcudnn.so.9"),
            ('cuquantum-cu12==24.11.0; extra == "sim"', 'nvidia-cudnn-cu12>=9.8; extra == "cudnn"'),
            [],
            ["custatevec-cu12", "nvidia-cudnn-cu12"],
        ),
    ],
)
def test_an_extra_that_brings_a_provider_through_a_metapackage_makes_it_optional_only_for_gated_files(
    sonames: tuple[str, ...], requires: tuple[str, ...], added: list[str], optional: list[str]
) -> None:
    plan = plan_repair(
        _report(*sonames),
        _CUQUANTUM,
        requires_dist=requires,
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(linked_versions={"custatevec": ("1.7.0",), "cudnn": ("9.8.0.87",)}),
    )
    assert [r.distribution for r in plan.requirements] == added
    assert sorted(line.split(":")[0] for line in plan.kept_optional) == optional


def test_requirements_of_two_extras_need_not_agree_but_those_of_one_extra_must() -> None:
    """nvmath-python 1.0.0's extras cu12 and cu13 pull in CUDA 12 and CUDA 13 wheels: no one installs
    both, so that is no conflict (repair exited 2 on it); one extra at odds with itself, or with an
    extra of the same package it names (``pkg[a]``), still is."""
    report = _report("libcudart.so.12")
    fine = _plan(
        report,
        'nvidia-cudnn-cu12==9.1.0.70; extra == "a"',
        'nvidia-cudnn-cu12==9.8.0.87; extra == "b"',
    )
    assert not [w for w in fine.warnings if "satisfies" in w]
    for extra_lines in (
        ['nvidia-cudnn-cu12==9.1.0.70; extra == "c"', 'nvidia-cudnn-cu12>=9.8; extra == "c"'],
        [
            'nvidia-cudnn-cu12==9.1.0.70; extra == "a"',
            'pkg[a]; extra == "c"',
            'nvidia-cudnn-cu12>=9.8; extra == "c"',
        ],
    ):
        with pytest.raises(
            RepairError, match="with the extra 'c': no release of nvidia-cudnn-cu12 satisfies"
        ):
            _plan(report, *extra_lines)


@pytest.mark.parametrize(
    ("requires", "linked", "kept"),
    [
        # jammi-ai-native-cu12 0.54: ``==12.6.*`` above the floor, the first release shipping the library
        ("nvidia-cudnn-cu12==9.8.*", {}, True),
        ("nvidia-cudnn-cu12>9.1.0.70", {}, True),
        ("nvidia-cudnn-cu12==9.9.*", {}, False),  # no release the range allows ships it
        ("nvidia-cudnn-cu12<9.1", {}, False),  # only releases below the floor
        ("nvidia-cudnn-cu12==9.8.*", {"cudnn": ("9.1.0.70",)}, False),  # the version linked, not a floor
    ],
)
def test_a_range_the_wheel_asks_for_holds_if_it_allows_a_release_at_or_above_a_floor(
    requires: str, linked: dict[str, tuple[str, ...]], kept: bool
) -> None:
    report = _report("libcudnn.so.9")
    if not kept:
        with pytest.raises(
            RepairError, match=r"the wheel requires nvidia-cudnn-cu12.* but was linked against"
        ):
            _plan(report, requires, linked_versions=linked)
        return
    plan = _plan(report, requires, linked_versions=linked)
    assert plan.requirements == ()
    assert plan.kept_requirements == (requires,)


@pytest.mark.parametrize(
    ("requires", "narrowed"),
    [
        ("cutensor-cu12", "2.8.0"),  # admits 2.8.0, which ships no libcutensorMg.so.2
        ("cutensor-cu12>=2.0,!=2.8.0", None),  # every release it admits ships both
        ("cutensor-cu12==2.7.*", None),
    ],
)
def test_a_range_the_wheel_asks_for_that_admits_a_release_without_the_library_is_narrowed(
    requires: str, narrowed: str | None
) -> None:
    """nvfuser-cu118-torch24 requires ``nvidia-cuda-cupti-cu11``, which admits 11.7.101, and its files
    need ``libcupti.so.11.8``, which 11.8.87 ships first: repair kept the line, check found the library
    missing with 11.7.101, and nothing was written. The range stays, and a line within it that admits
    only releases shipping the libraries is added beside it (pip intersects the two)."""
    plan = _plan(_report("libcutensor.so.2", "libcutensorMg.so.2"), requires)
    if narrowed is None:
        assert (plan.narrowed, plan.requirements, plan.kept_requirements) == ((), (), (requires,))
        return
    (note,) = plan.narrowed
    assert f"which admits cutensor-cu12 {narrowed}, whose wheel ships no libcutensorMg.so.2: " in note
    (added,) = plan.requirements
    specifier = SpecifierSet(added.requirement.split(";")[0].removeprefix("cutensor-cu12"))
    admitted = [v for v in ("2.0.0", "2.7.0", "2.8.0", "2.8.1") if specifier.contains(v)]
    assert admitted == ["2.0.0", "2.7.0", "2.8.1"], specifier
    assert plan.kept_requirements == ()


@pytest.mark.parametrize(("gated", "kept"), [("cutensor-cu12==2.7.*", True), ("cutensor-cu12==2.9.*", False)])
def test_a_range_behind_an_extra_made_hard_holds_if_it_allows_a_release_at_or_above_a_floor(
    gated: str, kept: bool
) -> None:
    """A dropped copy makes the extra's requirement hard, merged with the floor's range (2.0.0, the
    first release shipping both libraries, up to 2.8.0, which drops one)."""
    report = _with_copies(linked=True)
    if not kept:
        with pytest.raises(RepairError, match=re.escape("the wheel asks for cutensor-cu12==2.9.*")):
            _plan(report, f'{gated}; extra == "gpu"')
        return
    (added,) = _plan(report, f'{gated}; extra == "gpu"').requirements
    assert added.requirement.startswith("cutensor-cu12==2.7.*")


@pytest.mark.parametrize(
    ("filename", "marker", "added"),
    [
        ("pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", 'python_version < "3.12"', False),
        ("pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", 'python_version >= "3.12"', True),
        ("pkg-1.0-cp313-cp313-manylinux_2_17_x86_64.whl", 'python_version < "3.12"', True),
    ],
)
def test_the_wheels_requirements_are_read_for_the_python_it_is_built_for(
    filename: str, marker: str, added: bool
) -> None:
    """As check reads them (``python_of_tags``): a cp311 wheel's requirement limited to Pythons before
    3.12 is in force for it, and repair adds none of its own; for a cp313 wheel it is not."""
    report = replace(_report("libcudart.so.12"), filename=filename)
    plan = _plan(report, f"nvidia-cuda-runtime-cu12>=12.4; {marker}")
    assert [r.distribution for r in plan.requirements] == (["nvidia-cuda-runtime-cu12"] if added else [])


_CUDA10 = Catalog(
    (
        *CATALOG.releases,
        _release("nvidia-cufft-cu11", "10.9.0.58", 11, "nvidia/cufft/lib/libcufft.so.10"),
    )
)


def _several_majors() -> WheelReport:
    """bitsandbytes: one library per CUDA major, the one torch's CUDA asks for loaded at run time."""
    elves = tuple(
        ElfReport(
            f"pkg/libpkg_cuda{major}.so", 1, 1,
            needed=(NeededLibrary(soname, Resolution.NVIDIA_WHEEL),),
            installed_path=f"pkg/libpkg_cuda{major}.so", machine="x86_64",
        )
        for major, soname in (("118", "libcudart.so.11.0"), ("128", "libcudart.so.12"))
    )  # fmt: skip
    return replace(_report(), elf_files=elves)


def test_a_wheel_built_for_several_majors_is_repaired_for_the_one_cuda_names() -> None:
    with pytest.raises(RepairError, match="libraries of several CUDA majors") as raised:
        _plan(_several_majors())
    assert (raised.value.hint or "").startswith("--cuda 11,12 links each file to its own major's wheels")
    assert "--cuda N repairs one major, the files of the others left alone" in (raised.value.hint or "")
    plan = _plan(_several_majors(), cuda_major=12)
    assert [r.distribution for r in plan.requirements] == ["nvidia-cuda-runtime-cu12"]
    # The other major's soname is left to the host by that soname alone (check then warns of it), as
    # --exclude libcudart.so.11.0 would: cudart itself, libcudart.so.12, is still repaired.
    assert plan.left_to_host == ("libcudart.so.11.0",)
    (word,) = [w for w in plan.warnings if "several CUDA majors" in w]
    assert word.startswith("libcudart.so.11.0: no CUDA 12 wheel ships them")
    assert "pkg/libpkg_cuda118.so loads only where" in word
    assert _plan(_several_majors(), cuda_major=11).left_to_host == ("libcudart.so.12",)
    # A major the wheel is not built for is refused, naming those it is; no --force needed otherwise.
    with pytest.raises(RepairError, match="--cuda 13 does not fit the wheel") as wrong:
        _plan(_several_majors(), cuda_major=13)
    assert (wrong.value.hint or "").startswith("pass --cuda 11 or --cuda 12;")
    assert "leaves the files that need them alone" in (wrong.value.hint or "")


def test_a_wheel_built_for_several_majors_is_repaired_for_them_all_each_behind_its_extra() -> None:
    """--cuda 11,12: each file is linked to its own major's wheels, and each major's requirements go
    behind an extra of its own, so that one install brings one major's libraries (cuda-cccl 1.2.1,
    bitsandbytes 0.50.2)."""
    plan = _plan(_several_majors(), cuda_majors=(11, 12))
    assert (plan.cuda_major, plan.cuda_majors) == (None, (11, 12))
    assert [(r.distribution, r.extra) for r in plan.requirements] == [
        ("nvidia-cuda-runtime-cu11", "cu11"),
        ("nvidia-cuda-runtime-cu12", "cu12"),
    ]
    assert plan.requirements[0].requirement.endswith('and extra == "cu11"')
    assert plan.new_extras == ("cu11", "cu12")
    searched = {edit.path: edit.search_path for edit in plan.edits}
    assert searched == {
        "pkg/libpkg_cuda118.so": ("$ORIGIN/../nvidia/cuda_runtime/lib",),
        "pkg/libpkg_cuda128.so": ("$ORIGIN/../nvidia/cuda_runtime/lib",),
    }
    assert plan.manifest.cuda_major is None
    assert [(lib.soname, lib.distribution) for lib in plan.manifest.libraries] == [
        ("libcudart.so.11.0", "nvidia-cuda-runtime-cu11"),
        ("libcudart.so.12", "nvidia-cuda-runtime-cu12"),
    ]
    assert plan.left_to_host == ()
    assert not any("several CUDA majors" in w for w in plan.warnings)


def test_several_majors_take_the_extras_the_wheel_names_for_them() -> None:
    requires = ('numpy; extra == "cuda12"', 'numpy; extra == "test-cuda12"')
    plan = _plan(_several_majors(), *requires, cuda_majors=(11, 12))
    assert [r.extra for r in plan.requirements] == ["cu11", "cuda12"]


def test_several_majors_take_a_linked_version_each() -> None:
    """--linked-version cudart=11.7.99 --linked-version cudart=12.4.127 with --cuda 11,12: each version
    goes to the major it is a release of (the second had replaced the first)."""
    linked = {"cudart": ("11.7.99", "12.4.127")}
    plan = _plan(_several_majors(), cuda_majors=(11, 12), linked_versions=linked)
    assert [(r.distribution, r.linked_version, r.version_source) for r in plan.requirements] == [
        ("nvidia-cuda-runtime-cu11", "11.7.99", "--linked-version"),
        ("nvidia-cuda-runtime-cu12", "12.4.127", "--linked-version"),
    ]
    # A repair of one major links one version: two are refused, not one of them taken.
    with pytest.raises(RepairError, match=r"gives cudart 2 versions \(11.7.99, 12.4.127\)") as two:
        _plan(_several_majors(), cuda_major=12, linked_versions=linked)
    assert "--cuda 12,13" in (two.value.hint or "")
    # A version of no major asked is refused, where it had been dropped without a word.
    with pytest.raises(RepairError, match=r"cudart=13.0.96 is no release .* for CUDA 11 or CUDA 12"):
        _plan(_several_majors(), cuda_majors=(11, 12), linked_versions={"cudart": ("13.0.96",)})


def test_several_majors_by_the_folders_their_files_lie_in() -> None:
    """nccl-extensions 0.1.0: lib/cu11/ and lib/cu12/ each need a soname both majors' wheels ship, which
    no one major serves; --cuda 11,12 links each to its own folder's major."""
    one = _report("libnvToolsExt.so.1", path="pkg/lib/cu11/libext.so")
    other = replace(one.elf_files[0], path="pkg/lib/cu12/libext.so", installed_path="pkg/lib/cu12/libext.so")
    plan = _plan(replace(one, elf_files=(*one.elf_files, other)), cuda_majors=(11, 12))
    assert [(r.distribution, r.extra) for r in plan.requirements] == [
        ("nvidia-nvtx-cu11", "cu11"),
        ("nvidia-nvtx-cu12", "cu12"),
    ]
    assert {edit.path for edit in plan.edits} == {"pkg/lib/cu11/libext.so", "pkg/lib/cu12/libext.so"}
    # Both majors' NVTX wheels install nvidia/nvtx/lib/libnvToolsExt.so.1: the extras exclude each other.
    (word,) = [w for w in plan.warnings if "one or the other" in w]
    assert word.startswith("the extras 'cu11' and 'cu12' are one or the other: nvidia-nvtx-cu11 and ")
    assert "(nvidia/nvtx/lib/libnvToolsExt.so.1)" in word
    assert not [w for w in _plan(_several_majors(), cuda_majors=(11, 12)).warnings if "one or the other" in w]


def test_a_folder_build_of_a_major_left_out_is_linked_to_the_first_ones_and_says_so() -> None:
    """lib/cu11/, lib/cu12/ and lib/cu13/ builds, repaired with --cuda 12,13: the CUDA 11 build, whose
    libraries CUDA 12's wheels also ship, is planned with CUDA 12's files, and a warning says so."""
    one = _report("libOpenCL.so.1", path="pkg/lib/cu12/libext.so")
    builds = (
        one.elf_files[0],
        replace(one.elf_files[0], path="pkg/lib/cu13/libext.so", installed_path="pkg/lib/cu13/libext.so"),
        replace(one.elf_files[0], path="pkg/lib/cu11/libext.so", installed_path="pkg/lib/cu11/libext.so",
                needed=(NeededLibrary("libnvToolsExt.so.1", Resolution.NVIDIA_WHEEL),)),
    )  # fmt: skip
    plan = _plan(replace(one, elf_files=builds), cuda_majors=(12, 13))
    assert ("nvidia-nvtx-cu12", "cu12") in [(r.distribution, r.extra) for r in plan.requirements]
    (word,) = [w for w in plan.warnings if "leaves out" in w]
    assert word.startswith("pkg/lib/cu11/libext.so: built for CUDA 11 (as its folder says)")
    assert word.endswith("--cuda 11,12,13 links each to its own major's")
    assert not [w for w in _plan(replace(one, elf_files=builds), cuda_majors=(11, 12, 13)).warnings
                if "leaves out" in w]  # fmt: skip


@pytest.mark.parametrize(
    ("report", "majors", "message"),
    [
        (_report("libcudart.so.12"), (12, 13), "not built for several CUDA majors"),
        (_several_majors(), (12, 13), "built for CUDA 11 and 12, not for CUDA 13"),
    ],
)
def test_several_majors_the_wheel_is_not_built_for_are_refused(
    report: WheelReport, majors: tuple[int, ...], message: str
) -> None:
    with pytest.raises(RepairError, match=message):
        _plan(report, cuda_majors=majors)


def test_several_majors_and_an_embedded_loader_are_refused() -> None:
    """The call --embed-loader adds at import cannot know the major the package will use."""
    with pytest.raises(RepairError, match="--embed-loader with several CUDA majors") as raised:
        plan_repair(
            _several_majors(),
            CATALOG,
            requires_dist=(),
            dist_info="pkg-1.0.dist-info",
            options=RepairOptions(cuda_majors=(11, 12)),
            embed=EmbedRequest("pkg", (), {}, ()),
        )
    assert "preload(DIST, cuda=N)" in (raised.value.hint or "")


def test_a_file_of_no_major_gets_the_folders_of_every_major() -> None:
    """A file that needs a library every major's wheels ship, in no folder naming a major, beside
    files built for one major each: one install brings one major's folder, so it searches both."""
    common = ElfReport(
        "pkg/libcommon.so", 1, 1,
        needed=(NeededLibrary("libOpenCL.so.1", Resolution.NVIDIA_WHEEL),),
        installed_path="pkg/libcommon.so", machine="x86_64",
    )  # fmt: skip
    builds = tuple(
        replace(common, path=f"pkg/libpkg_cuda{major}.so", installed_path=f"pkg/libpkg_cuda{major}.so",
                needed=(NeededLibrary(soname, Resolution.NVIDIA_WHEEL),))
        for major, soname in (("128", "libcudart.so.12"), ("130", "libcudart.so.13"))
    )  # fmt: skip
    plan = _plan(replace(_report(), elf_files=(*builds, common)), cuda_majors=(12, 13))
    (edit,) = [e for e in plan.edits if e.path == "pkg/libcommon.so"]
    assert edit.search_path == ("$ORIGIN/../nvidia/cuda_runtime/lib", "$ORIGIN/../nvidia/cu13/lib")
    opencl = [(r.distribution, r.extra) for r in plan.requirements if "opencl" in r.distribution]
    assert opencl == [("nvidia-cuda-opencl-cu12", "cu12"), ("nvidia-cuda-opencl", "cu13")]


def test_exclude_takes_one_soname_or_every_soname_of_a_library() -> None:
    one = _plan(_several_majors(), exclude=frozenset({"libcudart.so.11.0"}))
    assert [r.distribution for r in one.requirements] == ["nvidia-cuda-runtime-cu12"]
    assert one.left_to_host == ("libcudart.so.11.0",)
    excluded = _plan(_report("libcudart.so.12"), exclude=frozenset({"libcudart.so.11.0"}))
    assert [r.distribution for r in excluded.requirements] == ["nvidia-cuda-runtime-cu12"]
    assert _plan(_report("libcudart.so.12"), exclude=frozenset({"cudart"})).requirements == ()


def _cuda10_report() -> WheelReport:
    """cupy-cuda102 12.3.0's shape: CUDA 10.2's runtime, which no NVIDIA wheel ships, and cuFFT's
    ``libcufft.so.10``, which CUDA 10.2 and CUDA 11's cuFFT wheels both name so."""
    needed = (
        NeededLibrary("libcudart.so.10.2", Resolution.UNRESOLVED),
        NeededLibrary("libcufft.so.10", Resolution.NVIDIA_WHEEL),
    )
    elf = ElfReport("cupy/_ext.so", 1, 1, needed=needed, installed_path="cupy/_ext.so", machine="x86_64")
    return replace(_report(), elf_files=(elf,))


def test_the_runtime_a_wheel_links_names_its_cuda_major() -> None:
    """A CUDA 10.2 build is not moved onto CUDA 11's wheels because one of its sonames lives on there:
    CUDA 10 has no NVIDIA wheels, so nothing is linked to one and nothing is required."""
    plan = plan_repair(
        _cuda10_report(), _CUDA10, requires_dist=(), dist_info="pkg-1.0.dist-info", options=RepairOptions()
    )
    assert plan.cuda_major == 10
    assert (plan.requirements, plan.edits, plan.drop) == ((), (), ())
    assert any("libcufft.so.10: no NVIDIA wheel provides it for CUDA 10" in note for note in plan.left_alone)


def test_a_cuda_the_linked_runtime_contradicts_is_refused_unless_forced() -> None:
    with pytest.raises(RepairError, match="its files link CUDA 10's runtime libraries"):
        plan_repair(
            _cuda10_report(),
            _CUDA10,
            requires_dist=(),
            dist_info="pkg-1.0.dist-info",
            options=RepairOptions(cuda_major=11),
        )
    forced = plan_repair(
        _cuda10_report(),
        _CUDA10,
        requires_dist=(),
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(cuda_major=11, force=True),
    )
    assert [r.distribution for r in forced.requirements] == ["nvidia-cufft-cu11"]


@pytest.mark.parametrize(
    ("requires", "added"),
    [
        # libcugraph-cu12 26.10: cuda-toolkit[cusolver] pins nvidia-cusolver-cu12, which requires
        # nvidia-nvjitlink-cu12 in every CUDA 12 release the shipped catalog knows.
        (("cuda-toolkit[cublas,curand,cusolver,cusparse]==12.*",), []),
        (("cuda-toolkit[cublas]==12.*",), ["nvidia-nvjitlink-cu12"]),  # cuBLAS needs no nvJitLink
    ],
)
def test_the_shipped_catalog_knows_what_cuda_toolkit_brings_a_level_down(
    requires: tuple[str, ...], added: list[str]
) -> None:
    plan = plan_repair(
        _report("libnvJitLink.so.12"),
        load_catalog(None, use_user=False, environ={}),  # the snapshot alone: no machine's own catalog
        requires_dist=requires,
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(linked_versions={"nvJitLink": ("12.4.127",)}),
    )
    assert [r.distribution for r in plan.requirements] == added


@pytest.mark.parametrize(
    ("path", "optional", "hinted"),
    [
        ("pkg/libs/cutensor.cpython-311-x86_64-linux-gnu.so", {}, True),  # CuPy's binding
        ("pkg/libs/_cutensor.abi3.so", {}, True),
        ("pkg/_core.cpython-311-x86_64-linux-gnu.so", {}, False),  # the package's core needs it
        ("pkg/libs/cutensor.cpython-311-x86_64-linux-gnu.so", {"cutensor": "cutensor"}, False),  # gated
    ],
)
def test_a_library_only_a_binding_named_for_it_needs_gets_a_word_on_optional(
    path: str, optional: dict[str, str], hinted: bool
) -> None:
    """CuPy's cupy_backends/cuda/libs/cutensor is the only file that needs libcutensor.so.2, and
    CuPy imports it only for cupy.cutensor: repair makes cutensor-cu12 a requirement of every install
    (it cannot see the import), and says that --optional cutensor would put it behind an extra."""
    elf = ElfReport(
        path,
        1,
        1,
        needed=(NeededLibrary("libcutensor.so.2", Resolution.NVIDIA_WHEEL),),
        installed_path=path,
        machine="x86_64",
        extension_module=True,
    )
    report = replace(_report(), elf_files=(elf,))
    plan = _plan(report, optional=optional)
    words = [w for w in plan.warnings if "named for it" in w]
    if not hinted:
        assert words == []
        return
    assert words == [
        f"cutensor-cu12 is now required by every install, though only {path} (named for it) needs "
        "libcutensor.so.2: if the package imports that only on request, as CuPy does its NCCL and "
        "cuTENSOR bindings, --optional cutensor puts cutensor-cu12 behind an extra"
    ]


_NVRTC = Catalog(
    (
        *CATALOG.releases,
        _release(
            "nvidia-cuda-nvrtc-cu12",
            "12.6.85",
            12,
            "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.6",
        ),
        _release(
            "nvidia-cuda-nvrtc-cu12",
            "12.8.93",
            12,
            "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8",
        ),
    )
)


@pytest.mark.parametrize(
    ("sonames", "bound", "removed", "upper"),
    [
        # cumm-cu126 0.8.2: NVRTC and its builtins, nothing of them bound: the builtins' entry goes.
        (("libnvrtc.so.12", "libnvrtc-builtins.so.12.6"), False, ("libnvrtc-builtins.so.12.6",), "<13"),
        # A version of them bound: the file uses them, the need stays and holds the range to 12.6.
        (("libnvrtc.so.12", "libnvrtc-builtins.so.12.6"), True, (), "<12.8.93"),
        # Without NVRTC beside them nothing else would load them: left as they are.
        (("libnvrtc-builtins.so.12.6",), False, (), "<12.8.93"),
    ],
)
def test_a_need_of_nvrtcs_builtins_beside_nvrtc_binding_nothing_of_them_goes(
    sonames: tuple[str, ...], bound: bool, removed: tuple[str, ...], upper: str
) -> None:
    report = _report(*sonames)
    if bound:
        (elf,) = report.elf_files
        versions = (("libnvrtc-builtins.so.12.6", ("libnvrtc-builtins.so.12.6",)),)
        report = replace(report, elf_files=(replace(elf, version_needs=versions),))
    plan = plan_repair(
        report,
        _NVRTC,
        requires_dist=(),
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(linked_versions={"nvrtc": ("12.6.85",), "nvrtc-builtins": ("12.6.85",)}),
    )
    (requirement,) = plan.requirements
    assert requirement.requirement.startswith(f"nvidia-cuda-nvrtc-cu12>=12.6.85,{upper}")
    (edit,) = plan.edits
    assert edit.remove_needed == removed


def _vendored_nvrtc(*, with_nvrtc: bool, bound: bool) -> WheelReport:
    """An extension that links auditwheel-style copies of NVRTC 12.5 and its builtins, which no
    wheel ships (the catalog's NVRTC 12 wheels carry the builtins of 12.6 and 12.8)."""
    copies = {"nvrtc": "libnvrtc.so.12", "nvrtc-builtins": "libnvrtc-builtins.so.12.5"}
    if not with_nvrtc:
        del copies["nvrtc"]
    paths = {name: f"pkg.libs/lib{name}-0123abcd.so.12.5.82" for name in copies}
    needed = tuple(
        NeededLibrary(posixpath.basename(paths[name]), Resolution.VENDORED, (paths[name],)) for name in copies
    )
    versions = ((needed[-1].soname, ("libnvrtc-builtins.so.12.5",)),) if bound else ()
    extension = ElfReport(
        "pkg/_ext.so", 1, 1, needed=needed, installed_path="pkg/_ext.so", machine="x86_64",
        version_needs=versions,
    )  # fmt: skip
    files = (
        extension,
        *(ElfReport(path, 1, 1, installed_path=path, machine="x86_64") for path in paths.values()),
    )
    vendored = tuple(
        VendoredCopy(paths[name], name, soname, NameStyle.AUDITWHEEL, 1, 1, None, ("pkg/_ext.so",))
        for name, soname in copies.items()
    )
    return WheelReport(
        "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "pkg", "1.0",
        ("manylinux_2_17_x86_64",), 1, files, vendored, (), (), 1, "hand-built",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("with_nvrtc", "bound", "dropped"),
    [
        # cumm-cu116 0.5.3: NVRTC's copy goes to its wheel, whose NVRTC loads its own builtins; the
        # builtins' copy, which no wheel ships, goes with its need.
        (True, False, True),
        (True, True, False),  # a version of them bound: the file uses them, the copy stays
        (False, False, False),  # no NVRTC beside them: nothing else would load them
    ],
)
def test_a_builtins_copy_no_wheel_ships_goes_with_the_nvrtc_copy_a_wheel_replaces(
    with_nvrtc: bool, bound: bool, dropped: bool
) -> None:
    report = _vendored_nvrtc(with_nvrtc=with_nvrtc, bound=bound)
    builtins = report.vendored[-1].path
    plan = plan_repair(
        report,
        _NVRTC,
        requires_dist=(),
        dist_info="pkg-1.0.dist-info",
        options=RepairOptions(linked_versions={"nvrtc": ("12.6.85",)}),
    )
    assert (builtins in plan.drop) is dropped
    assert (builtins in plan.manifest.unreplaced_copies) is not dropped
    kept = [note for note in plan.left_alone if note.startswith(f"{builtins}: kept: no NVIDIA wheel ships")]
    assert bool(kept) is not dropped
    removed = [need for edit in plan.edits for need in edit.remove_needed]
    assert removed == (["libnvrtc-builtins-0123abcd.so.12.5.82"] if dropped else [])


@pytest.mark.parametrize(
    ("distribution", "major"),
    [
        ("bagua-cuda117", 11),  # links only NCCL (CUDA 11, 12 and 13 wheels ship libnccl.so.2)
        # bagua-cuda102: a major NVIDIA builds no wheel for decides, as a linked runtime's does, and
        # nothing is linked to another major's wheels (it asked for --cuda)
        ("bagua-cuda102", 10),
        ("pkg-cu12", 12),
        ("pkg-cuda12x", 12),
        ("pkg-cuda-11-1", 11),
        ("pkg-cu130", None),  # no CUDA 13 wheel ships it: the name is no reason to pick it
        ("pkg", None),
        ("pkg-cu11-cu12", None),  # two majors: no word
    ],
)
def test_the_distributions_name_tells_the_major_where_nothing_else_does(
    distribution: str, major: int | None
) -> None:
    report = replace(_report("libnvToolsExt.so.1"), distribution=distribution)
    if major is None:
        with pytest.raises(RepairError, match="CUDA 11 and 12 wheels all provide") as raised:
            _plan(report)
        # A name that says a major none of those is (tensorrt-dispatch-cu11-bindings 10.13 needs a
        # soname the catalog knows in CUDA 12 and 13 wheels only) is said, with the way out.
        named = "the wheel's name says CUDA 13, of which no wheel the catalog knows ships it"
        assert (named in str(raised.value)) is (distribution == "pkg-cu130")
        assert ("--exclude nvToolsExt" in (raised.value.hint or "")) is (distribution == "pkg-cu130")
    else:
        assert _plan(report).cuda_major == major
    # Any other word comes first: the classifiers', as the wheel's requirements'.
    claimed = plan_repair(
        report,
        CATALOG,
        requires_dist=(),
        dist_info="pkg-1.0.dist-info",
        classifiers=("Environment :: GPU :: NVIDIA CUDA :: 12.4",),
    )
    assert claimed.cuda_major == 12
