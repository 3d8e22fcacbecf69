"""The PEP 517 hooks behind ``build-backend = "slimwheel.build"``: scikit-build-core builds, slimwheel
decides what to build and finishes what was built.

Per build, the settings (``slimwheel.build.settings``) give the CUDA major, the NVIDIA libraries, the
framework extensions and the name. Then:

- ``get_requires_for_build_*``: scikit-build-core's own list, plus the NVIDIA wheels for that major
  with their headers' companions (nvcc's parts only when there are ``.cu`` sources) and the selected
  frameworks' build requirements (``slimwheel.build.requires``).
- ``build_wheel``: the same list is checked against the build environment first (pip does not ask
  for it under ``--no-build-isolation``), one line naming what is missing and the pip command. Then
  scikit-build-core builds with ``SLIMWHEEL_CUDA_MAJOR``, the frameworks' CMake options and
  ``SLIMWHEEL_LINK_RECORD`` defined, and the wheel is finished (``slimwheel.build.finish``): renamed
  with the name suffix, the frameworks' run requirements added for the versions built against
  (``torch==2.11.*``), repaired from the link record, checked.
- ``prepare_metadata_for_build_wheel``: the Requires-Dist lines come from what the build linked, so
  the metadata is taken from a finished build, kept for the ``build_wheel`` call that follows (pip
  resolves the dependencies from this metadata: it must be the wheel's own).
- A chosen distribution (``[tool.slimwheel.distributions.<name>]``) names the wheel, adds its
  Requires-Dist and extras, and may fix the frameworks, CMake defines, install components and Python
  packages of its build; a metapackage is written without CMake. ``build_sdist`` with one chosen
  writes that distribution's sdist, which builds it where it lands (``slimwheel.build.sdist``).

Configuration settings other than ``slimwheel.*`` pass to scikit-build-core as they are.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import shutil
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from slimwheel.build.settings import (
    CONFIG_PREFIX,
    BuildSettings,
    BuildSettingsError,
    Distribution,
    read_settings,
)
from slimwheel.errors import SlimwheelError

__all__ = [
    "BUILT_FOLDER",
    "MissingBuildRequirementsError",
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "scikit_build_settings",
]

ConfigSettings = Mapping[str, "str | list[str]"]
# Inside the metadata folder: the finished wheel prepare_metadata_for_build_wheel built, for build_wheel.
BUILT_FOLDER = ".slimwheel-built"


class MissingBuildRequirementsError(SlimwheelError):
    """The build environment lacks what this build needs (a build without isolation)."""


def _scikit_build() -> Any:
    # Imported per call: `python -m slimwheel.build.locate` (CMake's configure step) must not pay for it.
    return importlib.import_module("scikit_build_core.build")


def _settings(config_settings: ConfigSettings | None) -> BuildSettings:
    return read_settings(Path.cwd(), config_settings)


def scikit_build_settings(
    config_settings: ConfigSettings | None,
    settings: BuildSettings,
    link_record: Path | None,
    static: tuple[str, ...] = (),
) -> dict[str, str | list[str]]:
    """scikit-build-core's config settings: ours taken out, the CUDA major, the frameworks' CMake
    options, the libraries to link statically and the link record's path defined, then the chosen
    distribution's defines, install components and packages (what the caller gave wins)."""
    passed: dict[str, str | list[str]] = {
        k: v for k, v in (config_settings or {}).items() if not k.startswith(CONFIG_PREFIX)
    }
    defines = {"SLIMWHEEL_CUDA_MAJOR": str(settings.cuda)}
    if link_record is not None:
        defines["SLIMWHEEL_LINK_RECORD"] = str(link_record)
    if static:
        defines["SLIMWHEEL_STATIC_LIBRARIES"] = ";".join(static)
    for framework in settings.declared:
        chosen = framework.name in settings.frameworks
        if framework.cmake_option:
            defines[framework.cmake_option] = "ON" if chosen else "OFF"
        if chosen:
            defines.update(framework.cmake_defines)
    distribution = settings.distribution
    if distribution is not None:
        defines.update(distribution.cmake_defines)
    for name, value in defines.items():
        passed.setdefault(f"cmake.define.{name}", value)
    if distribution is not None and distribution.install_components is not None:
        passed.setdefault("install.components", list(distribution.install_components))
    if distribution is not None and distribution.packages is not None:
        passed.setdefault("wheel.packages", list(distribution.packages))
    return passed


def _plain(config_settings: ConfigSettings | None) -> dict[str, str | list[str]]:
    return {k: v for k, v in (config_settings or {}).items() if not k.startswith(CONFIG_PREFIX)}


# -- requirements ------------------------------------------------------------------------------------


def _requires(config_settings: ConfigSettings | None, *, editable: bool) -> list[str]:
    from slimwheel.build.requires import build_requirements, has_cuda_sources
    from slimwheel.build.static import static_libraries

    settings = _settings(config_settings)
    if settings.distribution is not None and settings.distribution.metapackage:
        return []  # written by slimwheel itself: no CMake, no compiler, no NVIDIA wheel
    hook = "get_requires_for_build_editable" if editable else "get_requires_for_build_wheel"
    theirs: list[str] = getattr(_scikit_build(), hook)(scikit_build_settings(config_settings, settings, None))
    static = static_libraries(settings)
    ours = build_requirements(settings, cuda_sources=has_cuda_sources(Path.cwd()), static=static)
    return list(dict.fromkeys([*theirs, *ours]))


def get_requires_for_build_wheel(config_settings: ConfigSettings | None = None) -> list[str]:
    return _requires(config_settings, editable=False)


def get_requires_for_build_editable(config_settings: ConfigSettings | None = None) -> list[str]:
    return _requires(config_settings, editable=True)


def get_requires_for_build_sdist(config_settings: ConfigSettings | None = None) -> list[str]:
    requires: list[str] = _scikit_build().get_requires_for_build_sdist(_plain(config_settings))
    return requires


def _check_installed(settings: BuildSettings, static: tuple[str, ...]) -> None:
    from slimwheel.build.requires import build_requirements, has_cuda_sources, missing_requirements

    needed = build_requirements(settings, cuda_sources=has_cuda_sources(Path.cwd()), static=static)
    missing = missing_requirements(needed)
    if missing:
        what = "; ".join(f"{m.requirement} ({m.reason})" for m in missing)
        command = " ".join(f"'{m.requirement}'" for m in missing)
        raise MissingBuildRequirementsError(
            f"this build ({settings.describe()}) needs what {sys.executable} does not have: {what}; "
            f"add it with: {sys.executable} -m pip install {command} (or build with build isolation)"
        )


# -- wheels -----------------------------------------------------------------------------------------


def _record_path(config_settings: ConfigSettings | None, scratch: Path) -> Path:
    """Where CMake records what it linked: in the build folder when one is fixed (the example's
    ``-C build-dir=`` readers find it there), else in the scratch folder."""
    from slimwheel.build.locate import LINK_RECORD_NAME
    from slimwheel.build.settings import load_pyproject

    given = (config_settings or {}).get("build-dir")
    if isinstance(given, list):
        given = given[-1] if given else None
    if given is None:
        given = load_pyproject(Path.cwd()).get("tool", {}).get("scikit-build", {}).get("build-dir")
    if isinstance(given, str) and given and "{" not in given:
        return (Path.cwd() / given).resolve() / LINK_RECORD_NAME
    return scratch / LINK_RECORD_NAME


def _run_requirements(settings: BuildSettings) -> tuple[str, ...]:
    """The selected frameworks' run requirements for the versions this build compiled against."""
    lines = []
    for framework in settings.selected:
        if not framework.run_requires:
            continue
        try:
            text = importlib.metadata.version(framework.distribution)
            version = Version(text)
        except importlib.metadata.PackageNotFoundError as exc:
            raise BuildSettingsError(
                f"framework {framework.name} is selected but {framework.distribution} is not installed "
                f"for {sys.executable}: add it to [tool.slimwheel.frameworks.{framework.name}] build-requires"
            ) from exc
        except InvalidVersion as exc:
            raise BuildSettingsError(f"{framework.distribution} {text}: not a version ({exc})") from exc
        values = {
            "version": version.public,
            "major": str(version.major),
            "minor": str(version.minor),
            "release": ".".join(map(str, version.release)),
        }
        for template in framework.run_requires:
            try:
                lines.append(template.format(**values))
            except (KeyError, IndexError, ValueError) as exc:
                raise BuildSettingsError(
                    f"[tool.slimwheel.frameworks.{framework.name}] run-requires {template!r}: "
                    "use {version}, {major}, {minor} or {release}"
                ) from exc
    return tuple(lines)


def _build(wheel_directory: Path, config_settings: ConfigSettings | None, *, editable: bool) -> str:
    """Build with scikit-build-core, finish, and put the result in ``wheel_directory``: its name."""
    from slimwheel._scratch import scratch_folder
    from slimwheel.build.finish import finish_wheel, rename_wheel
    from slimwheel.build.locate import read_link_record
    from slimwheel.build.settings import load_pyproject
    from slimwheel.build.static import check_archives, static_libraries

    settings = _settings(config_settings)
    project = load_pyproject(Path.cwd()).get("project", {})
    project_name = project.get("name")
    if settings.suffix and not isinstance(project_name, str):
        raise BuildSettingsError("name-suffix needs [project] name in pyproject.toml")
    name, requires, extras = _distribution_metadata(settings, project)
    if settings.distribution is not None and settings.distribution.metapackage:
        from slimwheel.build.finish import metapackage_wheel

        return metapackage_wheel(
            wheel_directory, project, name=name or str(project_name), requires=requires, extras=extras
        ).name
    # Before pip or CMake: a library with neither a wheel nor an archive for this target is one line.
    static = static_libraries(settings)
    for line in check_archives(settings, static):
        sys.stdout.write(line + "\n")  # the build log's line for each static link
        sys.stdout.flush()
    _check_installed(settings, static)
    with scratch_folder("slimwheel-build-") as scratch:
        record = _record_path(config_settings, scratch)
        passed = scikit_build_settings(config_settings, settings, record, static)
        hook = "build_editable" if editable else "build_wheel"
        built_dir = scratch / "built"
        built_dir.mkdir()
        built = built_dir / getattr(_scikit_build(), hook)(str(built_dir), passed)
        linked = read_link_record(record)
        if linked.get("cuda_major") not in (None, settings.cuda):
            raise BuildSettingsError(
                f"the build linked CUDA {linked['cuda_major']} libraries, asked for CUDA {settings.cuda}"
            )
        if name is None and settings.suffix:
            name = f"{project_name}{settings.suffix}"
        requires = (*_run_requirements(settings), *requires)
        if name is not None or requires or extras:
            built = rename_wheel(built, scratch / "renamed", name=name, requires=requires, extras=extras)
        wheel_directory.mkdir(parents=True, exist_ok=True)
        finished = finish_wheel(
            built,
            wheel_directory,
            linked,
            cuda_major=settings.cuda,
            embed_loader=settings.embed_loader,
            frameworks=tuple(f.distribution for f in settings.selected),
        )
    return finished.name


def _distribution_metadata(
    settings: BuildSettings, project: Mapping[str, Any]
) -> tuple[str | None, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """The chosen distribution's name (None: the project's, suffixed), Requires-Dist and extras, with
    ``{major}`` and ``{version}`` filled."""
    chosen = settings.distribution
    if chosen is None:
        return None, (), ()
    version = project.get("version")
    if not isinstance(version, str) and any("{version}" in t for t in _templates(chosen)):
        raise BuildSettingsError(
            f"[tool.slimwheel.distributions.{chosen.key}] uses {{version}}: "
            "it needs a static [project] version"
        )
    text = version if isinstance(version, str) else ""
    name = settings.render(chosen.name, text) if chosen.name else None
    requires = tuple(settings.render(t, text) for t in chosen.requires)
    extras = tuple((extra, tuple(settings.render(t, text) for t in lines)) for extra, lines in chosen.extras)
    return name, requires, extras


def _templates(chosen: Distribution) -> list[str]:
    return [*(chosen.name or "",), *chosen.requires, *(t for _extra, lines in chosen.extras for t in lines)]


def _prepare(metadata_directory: str, config_settings: ConfigSettings | None, *, editable: bool) -> str:
    keep = Path(metadata_directory) / BUILT_FOLDER
    name = _build(keep, config_settings, editable=editable)
    with zipfile.ZipFile(keep / name) as archive:
        dist_info = next(
            n.split("/", 1)[0] for n in archive.namelist() if n.split("/", 1)[0].endswith(".dist-info")
        )
        for member in archive.namelist():
            if member.startswith(f"{dist_info}/") and not member.endswith("/"):
                archive.extract(member, metadata_directory)
    return dist_info


def _already_built(metadata_directory: str | None) -> Path | None:
    if metadata_directory is None:
        return None
    folder = Path(metadata_directory).parent / BUILT_FOLDER
    wheels = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    return wheels[0] if len(wheels) == 1 else None


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: ConfigSettings | None = None
) -> str:
    return _prepare(metadata_directory, config_settings, editable=False)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: ConfigSettings | None = None
) -> str:
    return _prepare(metadata_directory, config_settings, editable=True)


def _wheel(
    wheel_directory: str,
    config_settings: ConfigSettings | None,
    metadata_directory: str | None,
    *,
    editable: bool,
) -> str:
    built = _already_built(metadata_directory)
    if built is not None:  # prepare_metadata_for_build_* built and finished it already
        Path(wheel_directory).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, Path(wheel_directory) / built.name)
        return built.name
    return _build(Path(wheel_directory), config_settings, editable=editable)


def build_wheel(
    wheel_directory: str, config_settings: ConfigSettings | None = None, metadata_directory: str | None = None
) -> str:
    return _wheel(wheel_directory, config_settings, metadata_directory, editable=False)


def build_editable(
    wheel_directory: str, config_settings: ConfigSettings | None = None, metadata_directory: str | None = None
) -> str:
    return _wheel(wheel_directory, config_settings, metadata_directory, editable=True)


def build_sdist(sdist_directory: str, config_settings: ConfigSettings | None = None) -> str:
    # Without a distribution chosen the sdist keeps the project's own name: the suffix belongs to what
    # a build makes of it, and a build from the sdist picks its CUDA major (and its suffix) where it lands.
    chosen = read_settings(Path.cwd(), config_settings, detect=False).distribution
    if chosen is None:
        name: str = _scikit_build().build_sdist(sdist_directory, _plain(config_settings))
        return name
    return _distribution_sdist(Path(sdist_directory), config_settings, chosen).name


def _distribution_sdist(out: Path, config_settings: ConfigSettings | None, chosen: Distribution) -> Path:
    """scikit-build-core's sdist renamed to the chosen distribution, which its pyproject then builds
    (``slimwheel.build.sdist``); a name with ``{major}`` pins the build's CUDA major too."""
    from slimwheel._scratch import scratch_folder
    from slimwheel.build.sdist import rename_sdist
    from slimwheel.build.settings import load_pyproject

    pin_major = chosen.name is not None and "{major}" in chosen.name
    settings = read_settings(Path.cwd(), config_settings, detect=pin_major)
    project = load_pyproject(Path.cwd()).get("project", {})
    name, _requires, _extras = _distribution_metadata(settings, project)
    with scratch_folder("slimwheel-sdist-") as scratch:
        built = scratch / _scikit_build().build_sdist(str(scratch), _plain(config_settings))
        name = name or str(project.get("name", ""))
        return rename_sdist(built, out, name=name, key=chosen.key, cuda=settings.cuda if pin_major else None)
