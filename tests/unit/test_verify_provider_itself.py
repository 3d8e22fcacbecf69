"""verify judges where each NVIDIA library was mapped from: a copy inside the verified wheel is a
vendored copy, unless the verified wheel is itself that library's provider (found on a real
published wheel: verifying nvidia-nvimgcodec-cu12 flagged its own libnvimgcodec)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.verify import _judge, _WheelFacts
from tests.support.catalogs import sample_catalog

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
    libraries, problems = _judge([LIBCUDSS], facts, [], sample_catalog(), {str(Path(LIBCUDSS)): owner})
    assert [library.ok for library in libraries] == [ok]
    assert bool(problems) is not ok
