"""Wheel + Catalog -> WheelReport: what a wheel bundles, links statically, needs, and what it costs.

Reading happens once per ELF member (through a seekable window or a spooled temp file, so memory does
not grow with the wheel); everything after that is plain data.

The work is split by concept: :mod:`~slimwheel.analysis.model` (the report's data),
:mod:`~slimwheel.analysis.inspect` (reading members), :mod:`~slimwheel.analysis.vendored` (vendored
copies and their releases), :mod:`~slimwheel.analysis.static` (static NVIDIA code and run-time loads),
:mod:`~slimwheel.analysis.libraries` (NVIDIA library knowledge) and :mod:`~slimwheel.analysis.wheel`
(:func:`analyse_wheel`, which puts them together). This package re-exports the public API.
"""

from __future__ import annotations

from slimwheel.analysis.inspect import PARALLEL_BYTES, InspectionCache
from slimwheel.analysis.libraries import (
    DRIVER_LIBRARY_NAMES,
    LOADED_BY_ITS_LIBRARY,
    LOADS_BY_SONAME,
    SAME_IN_EVERY_MAJOR,
    api_library_of,
    driver_soname,
    is_driver_library,
    is_system_library,
    provided_by_driver,
    runtime_majors,
)
from slimwheel.analysis.model import (
    Confidence,
    ElfReport,
    IdentifiedRelease,
    LazyLoad,
    NeededLibrary,
    Resolution,
    StaticCode,
    VendoredCopy,
    WheelReport,
)
from slimwheel.analysis.vendored import named_like_copies
from slimwheel.analysis.wheel import analyse_wheel
from slimwheel.findings import Finding, FindingKind, Severity
from slimwheel.ldso import rpath_problems

__all__ = [
    "DRIVER_LIBRARY_NAMES",
    "LOADED_BY_ITS_LIBRARY",
    "LOADS_BY_SONAME",
    "PARALLEL_BYTES",
    "SAME_IN_EVERY_MAJOR",
    "Confidence",
    "ElfReport",
    "Finding",
    "FindingKind",
    "IdentifiedRelease",
    "InspectionCache",
    "LazyLoad",
    "NeededLibrary",
    "Resolution",
    "Severity",
    "StaticCode",
    "VendoredCopy",
    "WheelReport",
    "analyse_wheel",
    "api_library_of",
    "driver_soname",
    "is_driver_library",
    "is_system_library",
    "named_like_copies",
    "provided_by_driver",
    "rpath_problems",
    "runtime_majors",
]
