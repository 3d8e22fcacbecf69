"""The build backend's settings: ``[tool.slimwheel]``, ``-C slimwheel.<key>=``, ``SLIMWHEEL_<KEY>``.

Each key can be given in three places; the first that has it wins: the config setting
(``pip wheel -C slimwheel.cuda=12``), the environment (``SLIMWHEEL_CUDA=12``), the file
(``[tool.slimwheel] cuda = 12``). A key given nowhere is detected from the build environment:

- ``cuda``: the one CUDA major the installed NVIDIA wheels agree on, else the newest of
  ``cuda-majors``. An isolated build environment has no NVIDIA wheel when pip asks what to install
  (``get_requires_for_build_wheel``) and then has exactly those, so both calls answer the same.
- ``frameworks`` (``auto``): each framework declared in ``[tool.slimwheel.frameworks.<name>]``
  whose module the build interpreter can find (not imported: finding is cheap and has no effects);
  a chosen distribution with its own ``frameworks`` builds those (a selection given for the build
  must agree, or be ``auto``).

Bad settings raise :class:`BuildSettingsError`, one line naming the key and where it came from.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slimwheel.errors import SlimwheelError

__all__ = [
    "CONFIG_PREFIX",
    "FRAMEWORK_ALIASES",
    "KEYS",
    "BuildSettings",
    "BuildSettingsError",
    "Distribution",
    "Framework",
    "env_name",
    "load_pyproject",
    "read_settings",
]

CONFIG_PREFIX = "slimwheel."
# The keys of [tool.slimwheel] (besides the frameworks table), as config settings and variables.
KEYS = (
    "cuda",
    "cuda-majors",
    "libraries",
    "frameworks",
    "name-suffix",
    "embed-loader",
    "static-fallback",
    "distribution",
)
# TransformerEngine's NVTE_FRAMEWORK says "pytorch": accept its spelling for the same framework.
FRAMEWORK_ALIASES = {"pytorch": "torch"}
_FRAMEWORK_KEYS = (
    "module",
    "distribution",
    "cmake-option",
    "cmake-defines",
    "build-requires",
    "run-requires",
)
_DISTRIBUTION_KEYS = (
    "name",
    "metapackage",
    "requires",
    "extras",
    "frameworks",
    "cmake-defines",
    "install-components",
    "packages",
)
# What a metapackage cannot have: it is written without CMake and holds no files of the project.
_BUILD_ONLY_KEYS = ("frameworks", "cmake-defines", "install-components", "packages")
_DEFAULT_MAJORS = (13,)


class BuildSettingsError(SlimwheelError):
    """A ``[tool.slimwheel]`` setting, ``-C slimwheel.*`` option or ``SLIMWHEEL_*`` variable is wrong."""


@dataclass(frozen=True)
class Framework:
    """One framework extension a project can build: ``[tool.slimwheel.frameworks.<name>]``."""

    name: str  # "torch"
    module: str  # found (not imported) to detect it: "torch"
    distribution: str  # its installed version fills run-requires' {version}, {major}, {minor}
    cmake_option: str | None  # -D<option>=ON when selected, OFF when not
    cmake_defines: tuple[tuple[str, str], ...]  # more -D<name>=<value> when selected
    build_requires: tuple[str, ...]  # what the build installs for it: "torch>=2.4"
    run_requires: tuple[str, ...]  # templates for Requires-Dist: "torch=={major}.{minor}.*"


@dataclass(frozen=True)
class Distribution:
    """One of the distributions a source tree makes: ``[tool.slimwheel.distributions.<name>]``,
    chosen per build with ``distribution = <name>``. Templates take ``{version}`` (the project's) and
    ``{major}`` (the build's CUDA major).

    Besides its metadata, a distribution can fix what its build makes: the frameworks (``["torch"]``
    for a framework extension package, ``[]`` for a core that never has one), more CMake defines (an
    option leaving the core extension out), scikit-build-core's install components and the Python
    packages copied into the wheel (``[]``: none of ``[tool.scikit-build] wheel.packages``)."""

    key: str  # the table's name: "core", "meta", "torch"
    name: str | None  # the distribution name template, "cudss-solver-cu{major}"; None: the project's
    # A pure wheel of metadata only, CMake not run: what pip installs for "mypkg[torch]".
    metapackage: bool
    requires: tuple[str, ...]  # Requires-Dist templates
    extras: tuple[tuple[str, tuple[str, ...]], ...]  # (extra, Requires-Dist templates)
    frameworks: tuple[str, ...] | None = None  # the selection this distribution builds; None: not fixed
    cmake_defines: tuple[tuple[str, str], ...] = ()  # -D<name>=<value>, after the frameworks' own
    install_components: tuple[str, ...] | None = None  # install.components; None: all (CMake's default)
    packages: tuple[str, ...] | None = None  # wheel.packages; None: [tool.scikit-build]'s


@dataclass(frozen=True)
class BuildSettings:
    """What one build makes: for which CUDA major, with which frameworks, under which name."""

    cuda: int
    cuda_majors: tuple[int, ...]
    libraries: tuple[str, ...]
    frameworks: tuple[str, ...]  # selected, in declaration order
    declared: tuple[Framework, ...]
    name_suffix: str  # as given, "{major}" not yet filled: "-cu{major}"; "" for none
    embed_loader: bool
    sources: tuple[tuple[str, str], ...]  # (key, where its value came from), for messages
    # A library with no NVIDIA wheel for this target is linked from its lib<name>_static.a (when an
    # installed wheel ships one) rather than failing the build.
    static_fallback: bool = False
    distribution: Distribution | None = None  # None: the project as [project] declares it

    def render(self, template: str, version: str) -> str:
        """A distribution template with ``{major}`` and ``{version}`` filled."""
        return template.replace("{major}", str(self.cuda)).replace("{version}", version)

    @property
    def suffix(self) -> str:
        """The name suffix for this build: ``-cu13``."""
        return self.name_suffix.replace("{major}", str(self.cuda))

    @property
    def selected(self) -> tuple[Framework, ...]:
        return tuple(f for f in self.declared if f.name in self.frameworks)

    def source_of(self, key: str) -> str:
        return dict(self.sources).get(key, "default")

    def describe(self) -> str:
        """``CUDA 13, frameworks: none``: what this build is, in messages."""
        return f"CUDA {self.cuda}, frameworks: {', '.join(self.frameworks) or 'none'}"


def env_name(key: str) -> str:
    """``cuda-majors`` -> ``SLIMWHEEL_CUDA_MAJORS``."""
    return "SLIMWHEEL_" + key.upper().replace("-", "_")


def load_pyproject(project: Path) -> dict[str, Any]:
    path = project / "pyproject.toml"
    # tomllib is 3.11+; scikit-build-core depends on tomli below that, so a build always has one.
    toml: Any = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    try:
        with path.open("rb") as handle:
            document: dict[str, Any] = toml.load(handle)
    except OSError as exc:
        raise BuildSettingsError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except ValueError as exc:  # tomllib.TOMLDecodeError
        raise BuildSettingsError(f"{path}: not valid TOML ({exc})") from exc
    return document


def read_settings(
    project: Path,
    config_settings: Mapping[str, str | list[str]] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    pyproject: Mapping[str, Any] | None = None,
    installed_major: int | None = None,
    detect: bool = True,
) -> BuildSettings:
    """The settings of a build of ``project`` (the folder holding pyproject.toml).

    ``installed_major``: the CUDA major of the installed NVIDIA wheels (found when None and
    ``detect``); ``detect=False`` leaves every undetected key at its default.
    """
    environ = os.environ if environ is None else environ
    document = load_pyproject(project) if pyproject is None else pyproject
    table = document.get("tool", {}).get("slimwheel", {})
    if not isinstance(table, Mapping):
        raise BuildSettingsError("pyproject.toml: [tool.slimwheel] must be a table")
    unknown = sorted(set(table) - {*KEYS, "frameworks", "distributions"})
    if unknown:
        raise BuildSettingsError(
            f"pyproject.toml: [tool.slimwheel] has no key {unknown[0]!r} (known: {', '.join(KEYS)})"
        )
    config = _config(config_settings or {})
    raw: dict[str, tuple[Any, str]] = {}
    for key in KEYS:
        if key in config:
            raw[key] = (config[key], f"-C {CONFIG_PREFIX}{key}")
        elif environ.get(env_name(key), "") != "":
            raw[key] = (environ[env_name(key)], env_name(key))
        elif key in table and not (key in ("frameworks", "distribution") and isinstance(table[key], Mapping)):
            raw[key] = (table[key], f"[tool.slimwheel] {key}")
    frameworks_table = table.get("frameworks", {})
    declared = _frameworks(frameworks_table if isinstance(frameworks_table, Mapping) else {})
    if "frameworks" in table and not isinstance(table["frameworks"], Mapping):
        # frameworks = "torch" in the file selects; the declarations then cannot be in the same key.
        raise BuildSettingsError(
            "pyproject.toml: [tool.slimwheel] frameworks must be a table of "
            "[tool.slimwheel.frameworks.<name>]; select with -C slimwheel.frameworks= or SLIMWHEEL_FRAMEWORKS"
        )

    distribution = _distribution(raw.get("distribution"), table.get("distributions", {}), declared)
    majors = _majors(*raw["cuda-majors"]) if "cuda-majors" in raw else _DEFAULT_MAJORS
    sources = [(key, where) for key, (_value, where) in raw.items()]
    if "cuda" in raw:
        cuda = _major(*raw["cuda"])
        if cuda not in majors:
            raise BuildSettingsError(
                f"{raw['cuda'][1]}: CUDA {cuda} is not one this project builds for "
                f"(cuda-majors: {', '.join(map(str, majors))})"
            )
    else:
        if installed_major is None and detect:
            from slimwheel.build.locate import installed_cuda_major

            installed_major = installed_cuda_major()
        if installed_major is not None and installed_major in majors:
            cuda, where = installed_major, "the installed NVIDIA wheels"
        else:
            cuda, where = max(majors), "the newest of cuda-majors"
        sources.append(("cuda", where))

    selection = raw.get("frameworks", ("auto", "default"))
    frameworks = _select(*selection, declared, detect=detect)
    if distribution is not None and distribution.frameworks is not None:
        frameworks = _fixed_frameworks(distribution, raw.get("frameworks"), frameworks)
        sources = [(k, w) for k, w in sources if k != "frameworks"]
        sources.append(("frameworks", f"[tool.slimwheel.distributions.{distribution.key}] frameworks"))
    elif "frameworks" not in raw:
        sources.append(("frameworks", "detected by import"))
    return BuildSettings(
        cuda=cuda,
        cuda_majors=majors,
        libraries=_strings(*raw["libraries"]) if "libraries" in raw else (),
        frameworks=frameworks,
        declared=declared,
        name_suffix=_suffix(*raw["name-suffix"]) if "name-suffix" in raw else "",
        embed_loader=_bool(*raw["embed-loader"]) if "embed-loader" in raw else False,
        sources=tuple(sources),
        static_fallback=_bool(*raw["static-fallback"]) if "static-fallback" in raw else False,
        distribution=distribution,
    )


def _config(config_settings: Mapping[str, str | list[str]]) -> dict[str, str]:
    found = {}
    for name, value in config_settings.items():
        if not name.startswith(CONFIG_PREFIX):
            continue
        key = name[len(CONFIG_PREFIX) :]
        if key not in KEYS:
            raise BuildSettingsError(f"-C {name}: no such setting (known: {', '.join(KEYS)})")
        # pip passes a key given twice as a list: the last one wins, as on a command line.
        found[key] = value[-1] if isinstance(value, list) else value
    return found


def _frameworks(table: Mapping[str, Any]) -> tuple[Framework, ...]:
    declared = []
    for name, spec in table.items():
        where = f"[tool.slimwheel.frameworks.{name}]"
        if not isinstance(spec, Mapping):
            raise BuildSettingsError(f"pyproject.toml: {where} must be a table")
        unknown = sorted(set(spec) - set(_FRAMEWORK_KEYS))
        if unknown:
            raise BuildSettingsError(
                f"pyproject.toml: {where} has no key {unknown[0]!r} (known: {', '.join(_FRAMEWORK_KEYS)})"
            )
        defines = spec.get("cmake-defines", {})
        if not isinstance(defines, Mapping):
            raise BuildSettingsError(f"pyproject.toml: {where} cmake-defines must be a table")
        option = spec.get("cmake-option")
        if option is not None and not isinstance(option, str):
            raise BuildSettingsError(f"pyproject.toml: {where} cmake-option must be a string")
        declared.append(
            Framework(
                name=name,
                module=str(spec.get("module", name)),
                distribution=str(spec.get("distribution", name)),
                cmake_option=option,
                cmake_defines=tuple((str(k), _define_value(v)) for k, v in defines.items()),
                build_requires=_strings(spec.get("build-requires", []), f"{where} build-requires"),
                run_requires=_strings(spec.get("run-requires", []), f"{where} run-requires"),
            )
        )
    return tuple(declared)


def _distribution(
    chosen: tuple[Any, str] | None, table: Any, frameworks_declared: Sequence[Framework]
) -> Distribution | None:
    if not isinstance(table, Mapping):
        raise BuildSettingsError("pyproject.toml: [tool.slimwheel] distributions must be a table")
    if chosen is None or str(chosen[0]).strip() in ("", "none"):
        return None
    key, where = str(chosen[0]).strip(), chosen[1]
    if key not in table:
        declared = ", ".join(table) or "none declared"
        raise BuildSettingsError(
            f"{where}: no distribution {key!r} in [tool.slimwheel.distributions] ({declared})"
        )
    spec = table[key]
    here = f"pyproject.toml: [tool.slimwheel.distributions.{key}]"
    if not isinstance(spec, Mapping):
        raise BuildSettingsError(f"{here} must be a table")
    unknown = sorted(set(spec) - set(_DISTRIBUTION_KEYS))
    if unknown:
        raise BuildSettingsError(f"{here} has no key {unknown[0]!r} (known: {', '.join(_DISTRIBUTION_KEYS)})")
    name = spec.get("name")
    if name is not None and (
        not isinstance(name, str)
        or not name.replace("{major}", "13").replace("-", "").replace("_", "").replace(".", "").isalnum()
    ):
        raise BuildSettingsError(f"{here} name: {name!r} is not a distribution name ('mypkg-cu{{major}}')")
    extras = spec.get("extras", {})
    if not isinstance(extras, Mapping):
        raise BuildSettingsError(f"{here} extras must be a table of extra = [requirements]")
    metapackage = _bool(spec.get("metapackage", False), f"{here} metapackage")
    build_only = [k for k in _BUILD_ONLY_KEYS if k in spec]
    if metapackage and build_only:
        raise BuildSettingsError(f"{here} {build_only[0]}: a metapackage runs no CMake and holds no files")
    defines = spec.get("cmake-defines", {})
    if not isinstance(defines, Mapping) or not all(isinstance(v, (str, bool, int)) for v in defines.values()):
        raise BuildSettingsError(f"{here} cmake-defines must be a table of NAME = value (string, bool, int)")
    frameworks = None
    if "frameworks" in spec:
        value = spec["frameworks"]
        if not isinstance(value, list):
            raise BuildSettingsError(f"{here} frameworks: expected a list of framework names, not {value!r}")
        frameworks = _select(value, f"{here} frameworks", frameworks_declared, detect=False)
    return Distribution(
        key=key,
        name=name,
        metapackage=metapackage,
        requires=_strings(spec.get("requires", []), f"{here} requires"),
        extras=tuple(
            (str(extra), _strings(lines, f"{here} extras.{extra}")) for extra, lines in extras.items()
        ),
        frameworks=frameworks,
        cmake_defines=tuple((str(k), _define_value(v)) for k, v in defines.items()),
        install_components=_list(spec, "install-components", here),
        packages=_list(spec, "packages", here),
    )


def _list(spec: Mapping[str, Any], key: str, here: str) -> tuple[str, ...] | None:
    """A list-of-strings key of a distribution table (a list, not a comma string); None: absent."""
    if key not in spec:
        return None
    value = spec[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BuildSettingsError(f"{here} {key}: expected a list of strings, not {value!r}")
    return tuple(value)


def _fixed_frameworks(
    distribution: Distribution, given: tuple[Any, str] | None, selected: tuple[str, ...]
) -> tuple[str, ...]:
    """The distribution's own frameworks; a selection given for the build must agree (or be auto)."""
    fixed = distribution.frameworks or ()
    if given is not None and str(given[0]).strip().lower() != "auto" and selected != fixed:
        table = f"[tool.slimwheel.distributions.{distribution.key}]"
        raise BuildSettingsError(
            f"{given[1]}: distribution {distribution.key!r} builds frameworks {', '.join(fixed) or 'none'} "
            f"({table} frameworks), not {', '.join(selected) or 'none'}"
        )
    return fixed


def _define_value(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def _select(value: Any, where: str, declared: Sequence[Framework], *, detect: bool) -> tuple[str, ...]:
    names = [FRAMEWORK_ALIASES.get(n.lower(), n.lower()) for n in _strings(value, where)]
    known = [f.name for f in declared]
    if names in ([], ["none"]):
        return ()
    if names == ["all"]:
        return tuple(known)
    if names == ["auto"]:
        if not detect:
            return ()
        return tuple(f.name for f in declared if importlib.util.find_spec(f.module) is not None)
    for name in names:
        if name in ("all", "none", "auto"):
            raise BuildSettingsError(f"{where}: {name!r} cannot be combined with framework names")
        if name not in known:
            declared_text = ", ".join(known) or "none declared"
            raise BuildSettingsError(
                f"{where}: no framework {name!r} in [tool.slimwheel.frameworks] ({declared_text})"
            )
    return tuple(n for n in known if n in names)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):  # a config setting or variable: a comma list
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise BuildSettingsError(f"{where}: expected a list of strings or a comma list, not {value!r}")


def _major(value: Any, where: str) -> int:
    text = str(value).strip().lower().removeprefix("cu")
    if isinstance(value, bool) or not text.isdigit() or not 10 <= int(text) <= 99:
        raise BuildSettingsError(f"{where}: {value!r} is not a CUDA major (12, 13)")
    return int(text)


def _majors(value: Any, where: str) -> tuple[int, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    majors = tuple(sorted({_major(item, where) for item in items if str(item).strip()}))
    if not majors:
        raise BuildSettingsError(f"{where}: name at least one CUDA major")
    return majors


def _suffix(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise BuildSettingsError(f"{where}: expected a string such as '-cu{{major}}', not {value!r}")
    text = value.strip()
    if text.lower() in ("", "none", "false"):
        return ""
    probe = text.replace("{major}", "13")
    if "{" in probe or "}" in probe or not all(c.isalnum() or c in "-_." for c in probe):
        raise BuildSettingsError(
            f"{where}: {value!r} is not a name suffix (letters, digits, - _ . and {{major}}: '-cu{{major}}')"
        )
    return text


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise BuildSettingsError(f"{where}: {value!r} is not true or false")
