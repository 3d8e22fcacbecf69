"""verify --lowest pins: markers and extras read with the one rule (slimwheel.requirements)."""

from __future__ import annotations

from slimwheel.catalog.model import Catalog, CudaMajorSource, Release
from slimwheel.platforms import Platform
from slimwheel.requirements import marker_environment
from slimwheel.verify import lowest_pins


def _release(name: str, version: str, *requires: str) -> Release:
    return Release(name, version, 13, CudaMajorSource.NAME_SUFFIX, tuple(requires), ())


CATALOG = Catalog(
    (
        _release("nvidia-a", "1.0", 'nvidia-b>=2; extra == "x"', 'nvidia-c; sys_platform == "win32"'),
        _release("nvidia-a", "1.1"),
        _release("nvidia-b", "1.0"),
        _release("nvidia-b", "2.0"),
        _release("nvidia-b", "2.1"),
        _release("nvidia-c", "1.0"),
        _release("nvidia-d", "1.0"),
    )
)


def test_lowest_pins_follow_extras_and_the_targets_markers() -> None:
    linux = marker_environment(Platform("linux", "x86_64"), "3.11")
    pins = lowest_pins(["nvidia-a[x]>=1.0", 'nvidia-d; extra == "opt"'], CATALOG, linux)
    assert [(p.distribution, p.version) for p in pins] == [("nvidia-a", "1.0"), ("nvidia-b", "2.0")]


def test_an_extra_the_requirement_does_not_ask_for_brings_nothing() -> None:
    linux = marker_environment(Platform("linux", "x86_64"), "3.11")
    pins = lowest_pins(["nvidia-a>=1.0"], CATALOG, linux)
    assert [(p.distribution, p.version) for p in pins] == [("nvidia-a", "1.0")]


def test_the_targets_platform_decides_platform_markers() -> None:
    windows = marker_environment(Platform("win", "amd64"), "3.11")
    pins = lowest_pins(["nvidia-a>=1.0"], CATALOG, windows)
    assert [(p.distribution, p.version) for p in pins] == [("nvidia-a", "1.0"), ("nvidia-c", "1.0")]
