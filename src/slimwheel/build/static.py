"""``static-fallback``: which of a build's libraries have no NVIDIA wheel for its target, and what then.

A target is the build's CUDA major on this machine's platform. A library has no wheel there when the
catalog plans none for it (``slimwheel plan``: "none: link statically here"; cuDSS for CUDA 11) and no
installed distribution ships it for that major either (a release newer than the catalog). Libraries
the catalog does not know at all are left to the locator, whose message names them better.

Without ``static-fallback`` such a library ends the build with one line before pip is asked for a
wheel that does not exist. With it, the library is linked from ``lib<name>_static.a`` out of an
installed wheel (NVIDIA's wheels ship few: the runtime's ``libcudart_static.a``; none of cuDSS's
1.0.0.35 wheels ships ``libcudss_static.a``), or the build ends with one line saying neither exists.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Sequence

from slimwheel.build.settings import BuildSettings, BuildSettingsError

__all__ = ["check_archives", "static_libraries", "this_platform_key", "wheelless_libraries"]


def this_platform_key() -> str:
    """``manylinux_x86_64`` for this machine, as ``slimwheel plan`` names targets."""
    machine = platform.machine().lower()
    if sys.platform == "win32":
        return "win_amd64" if machine in ("amd64", "x86_64") else f"win_{machine}"
    return f"manylinux_{machine}"


def wheelless_libraries(
    libraries: Sequence[str], major: int, platform_key: str | None = None
) -> tuple[str, ...]:
    """Those of ``libraries`` with no NVIDIA wheel for CUDA ``major`` on ``platform_key`` (default:
    this machine), by the catalog and the installed distributions."""
    from slimwheel.build.locate import installed_library_majors
    from slimwheel.catalog.store import load_catalog
    from slimwheel.names import LibrarySpec
    from slimwheel.platforms import parse_platform
    from slimwheel.targets import Target, plan_targets

    if not libraries:
        return ()
    catalog = load_catalog()
    known = catalog.library_names
    asked = [LibrarySpec(name) for name in libraries if name in known]
    target = Target(major, parse_platform(platform_key or this_platform_key()))
    (plan,) = plan_targets(catalog, asked, [target])
    return tuple(name for name in plan.missing if not ({major, None} & installed_library_majors(name)))


def static_libraries(settings: BuildSettings, platform_key: str | None = None) -> tuple[str, ...]:
    """The libraries this build links statically: the wheelless ones, when ``static-fallback`` allows;
    without it a wheelless library is one line (:class:`BuildSettingsError`)."""
    missing = wheelless_libraries(settings.libraries, settings.cuda, platform_key)
    if missing and not settings.static_fallback:
        names = ", ".join(missing)
        raise BuildSettingsError(
            f"{names}: no NVIDIA wheel for CUDA {settings.cuda} on {platform_key or this_platform_key()} "
            f"(slimwheel plan: none): build for another of cuda-majors, or set static-fallback = true "
            "to link a static archive instead"
        )
    return missing


def check_archives(
    settings: BuildSettings, static: Sequence[str], platform_key: str | None = None
) -> list[str]:
    """One build-log line per statically linked library, saying where its archive comes from; a
    library with neither a wheel nor an archive is one line (:class:`BuildSettingsError`)."""
    from slimwheel.build.locate import LocateError, locate

    lines = []
    where = f"CUDA {settings.cuda} on {platform_key or this_platform_key()}"
    for name in static:
        try:
            (found,) = locate([name], cuda=settings.cuda, static=[name]).libraries
        except LocateError as exc:
            raise BuildSettingsError(
                f"{name}: no NVIDIA wheel for {where} and no installed wheel ships lib{name}_static.a: "
                f"nothing to link it from (static-fallback); build for another of cuda-majors"
            ) from exc
        lines.append(
            f"slimwheel: {name}: no NVIDIA wheel for {where}: linked statically from {found.path} "
            f"({found.distribution} {found.version}); no Requires-Dist for it (static-fallback)"
        )
    return lines
