"""verify judges where each NVIDIA library was mapped from: a copy inside the verified wheel is a
vendored copy, unless the verified wheel is itself that library's provider (found on a real
published wheel: verifying nvidia-nvimgcodec-cu12 flagged its own libnvimgcodec)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.catalog.model import Catalog
from slimwheel.manifest import Manifest, ManifestLibrary
from slimwheel.verify import _judge, _WheelFacts
from tests.support.catalogs import release, sample_catalog

SITE = "/venv/lib/python3.12/site-packages"
LIBCUDSS = f"{SITE}/nvidia/cu13/lib/libcudss.so.1"


@pytest.mark.parametrize(
    ("verified", "owner", "ok"),
    [
        ("nvidia-cudss-cu13", "nvidia-cudss-cu13", True),  # the provider verified: its own copy
        ("solver", "nvidia-cudss-cu13", True),  # a package that requires the provider
        ("solver", "solver", False),  # a package that vendors it: a copy inside the wheel
    ],
)
def test_a_providers_own_library_is_where_it_belongs(verified: str, owner: str, ok: bool) -> None:
    facts = _WheelFacts(verified, "1.0", (), (), None, frozenset())
    libraries, problems, _unjudged = _judge(
        [LIBCUDSS], facts, [], sample_catalog(), {str(Path(LIBCUDSS)): owner}
    )
    assert [library.ok for library in libraries] == [ok]
    assert bool(problems) is not ok


def test_the_wheels_own_build_of_a_library_others_make_too_is_its_own() -> None:
    """pyopencl vendors ocl-icd's ``libOpenCL.so.1``, which repair keeps (nothing shows it is
    nvidia-cuda-opencl's): mapped from the wheel, it is the wheel's library, not a stray copy. A copy
    of a library only NVIDIA builds, mapped from the wheel, still is."""
    catalog = Catalog(
        (
            release("nvidia-cuda-opencl", "13.0.85", 13, ("nvidia/cu13/lib/libOpenCL.so.1",)),
            release("nvidia-cuda-runtime", "13.0.96", 13, ("nvidia/cu13/lib/libcudart.so.13",)),
        )
    )
    loader = f"{SITE}/pyopencl/.libs/libOpenCL-5519dec5.so.1.0.0"
    runtime = f"{SITE}/pyopencl/.libs/libcudart-1a2b3c4d.so.13"
    facts = _WheelFacts("pyopencl", "2026.1.4", (), (), None, frozenset())
    owners = {loader: "pyopencl", runtime: "pyopencl"}
    libraries, problems, _unjudged = _judge([loader, runtime], facts, [], catalog, owners)
    assert [(library.name, library.ok) for library in libraries] == [("cudart", False)]
    assert [problem.kind for problem in problems] == ["outside-provider"]


def test_a_build_of_another_cuda_major_a_framework_loads_is_judged_by_its_own_providers() -> None:
    """acellera-openmmtorch-cu12 1.10 links NVRTC 12 (its manifest: nvidia-cuda-nvrtc-cu12); the
    newest torch, which it requires, loads NVRTC 13 from nvidia-cuda-nvrtc. verify failed it: NVRTC 13
    "not from nvidia-cuda-nvrtc-cu12", and libnvrtc "mapped twice". Two majors are two libraries; each
    is judged by its own providers, and one major from two paths is still mapped twice."""
    catalog = Catalog(
        (
            release("nvidia-cuda-nvrtc-cu12", "12.9.86", 12, ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12",)),
            release("nvidia-cuda-nvrtc", "13.0.88", 13, ("nvidia/cu13/lib/libnvrtc.so.13",)),
        )
    )
    library = ManifestLibrary(
        name="nvrtc",
        soname="libnvrtc.so.12",
        distribution="nvidia-cuda-nvrtc-cu12",
        requirement="nvidia-cuda-nvrtc-cu12>=12.0.76,<13",
        folder="nvidia/cuda_nvrtc/lib",
        needed_by=("plugin/libplugin.so",),
    )
    manifest = Manifest(cuda_major=12, libraries=(library,), generator="test")
    facts = _WheelFacts("plugin", "1.0", (), (), manifest, frozenset({"libnvrtc.so.12"}))
    own = f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
    framework = f"{SITE}/nvidia/cu13/lib/libnvrtc.so.13"
    owners = {own: "nvidia-cuda-nvrtc-cu12", framework: "nvidia-cuda-nvrtc"}
    libraries, problems, _unjudged = _judge([own, framework], facts, ["plugin"], catalog, owners)
    assert [(library.soname, library.expected, library.ok) for library in libraries] == [
        ("libnvrtc.so.12", ("nvidia-cuda-nvrtc-cu12",), True),
        ("libnvrtc.so.13", ("nvidia-cuda-nvrtc",), True),
    ]
    assert problems == []
    stray = f"{SITE}/plugin.libs/libnvrtc-1a2b3c4d.so.12.9.86"
    owners[stray] = "plugin"
    _libraries, problems, _unjudged = _judge([own, framework, stray], facts, ["plugin"], catalog, owners)
    assert sorted(problem.kind for problem in problems) == ["mapped-twice", "outside-provider"]
