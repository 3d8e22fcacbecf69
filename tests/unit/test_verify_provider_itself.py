"""verify judges where each NVIDIA library was mapped from: a copy inside the verified wheel is a
vendored copy, unless the verified wheel is itself that library's provider (found on a real
published wheel: verifying nvidia-nvimgcodec-cu12 flagged its own libnvimgcodec)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.catalog.model import Catalog
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
