"""``build-backend = "slimwheel.build"``: PEP 517 hooks that delegate to scikit-build-core and pick,
per build, the CUDA major, the NVIDIA wheels and the framework extensions (see
``slimwheel.build.backend`` and ``slimwheel.build.settings``).

Also home of ``slimwheel.build.locate``, which CMake's ``slimwheel_link_nvidia`` runs at configure time
through the build interpreter. Only the error classes are imported here: ``python -m
slimwheel.build.locate`` imports this package first and must stay cheap (no scikit-build-core).
A hook's :class:`~slimwheel.errors.SlimwheelError` ends the hook's process with its one line, which is
what pip shows as the hook's output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import ParamSpec, TypeVar

from slimwheel.errors import SlimwheelError

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Config = Mapping[str, "str | list[str]"] | None


def _one_line(hook: Callable[_P, _R]) -> Callable[_P, _R]:
    @functools.wraps(hook)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return hook(*args, **kwargs)
        except SlimwheelError as error:
            # The frontend runs each hook in its own process and shows what it wrote: one line.
            raise SystemExit(f"slimwheel: {error}") from None

    return run


@_one_line
def get_requires_for_build_wheel(config_settings: _Config = None) -> list[str]:
    from slimwheel.build import backend

    return backend.get_requires_for_build_wheel(config_settings)


@_one_line
def get_requires_for_build_editable(config_settings: _Config = None) -> list[str]:
    from slimwheel.build import backend

    return backend.get_requires_for_build_editable(config_settings)


@_one_line
def get_requires_for_build_sdist(config_settings: _Config = None) -> list[str]:
    from slimwheel.build import backend

    return backend.get_requires_for_build_sdist(config_settings)


@_one_line
def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: _Config = None) -> str:
    from slimwheel.build import backend

    return backend.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


@_one_line
def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: _Config = None) -> str:
    from slimwheel.build import backend

    return backend.prepare_metadata_for_build_editable(metadata_directory, config_settings)


@_one_line
def build_wheel(
    wheel_directory: str, config_settings: _Config = None, metadata_directory: str | None = None
) -> str:
    from slimwheel.build import backend

    return backend.build_wheel(wheel_directory, config_settings, metadata_directory)


@_one_line
def build_editable(
    wheel_directory: str, config_settings: _Config = None, metadata_directory: str | None = None
) -> str:
    from slimwheel.build import backend

    return backend.build_editable(wheel_directory, config_settings, metadata_directory)


@_one_line
def build_sdist(sdist_directory: str, config_settings: _Config = None) -> str:
    from slimwheel.build import backend

    return backend.build_sdist(sdist_directory, config_settings)
