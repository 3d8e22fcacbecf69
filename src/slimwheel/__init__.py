"""slimwheel: link CUDA Python packages against NVIDIA's pip wheels instead of bundling them.

``import slimwheel`` stays cheap: submodules are imported by the commands that need them.
"""

from slimwheel._version import __version__

__all__ = ["__version__"]
