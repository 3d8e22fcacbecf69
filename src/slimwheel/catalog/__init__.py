"""What NVIDIA's pip wheels provide, learned from the index: model, snapshot store, learning."""

from slimwheel.catalog.model import (
    Catalog,
    CudaMajorSource,
    LibraryFile,
    LibraryProvider,
    Release,
    SafeRange,
    WheelFacts,
)

__all__ = [
    "Catalog",
    "CudaMajorSource",
    "LibraryFile",
    "LibraryProvider",
    "Release",
    "SafeRange",
    "WheelFacts",
]
