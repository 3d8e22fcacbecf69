"""Find the package index the way pip does: flags, then ``PIP_*`` variables, then pip's config files.

pip's own default index is read from pip at run time and never spelled out here, so slimwheel follows
whatever pip the user has.
"""

from __future__ import annotations

import configparser
import importlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slimwheel.errors import IndexUnavailableError, InputError, UsageError

__all__ = [
    "IndexSettings",
    "PipConfigFiles",
    "pip_default_index_url",
    "resolve_index_settings",
]

# pip reads [global], then the command's own section; slimwheel both inspects and downloads, so it
# honours [install] and lets [download] have the last word.
_SECTIONS = ("global", "install", "download")
_KEYS = ("index-url", "extra-index-url", "find-links", "no-index")
_TRUE = frozenset({"y", "yes", "t", "true", "on", "1"})
_FALSE = frozenset({"n", "no", "f", "false", "off", "0"})


@dataclass(frozen=True)
class IndexSettings:
    """Where to look for distributions. ``index_url`` is None under ``--no-index``."""

    index_url: str | None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    origin: str = "given explicitly"  # where index_url came from, for messages

    @property
    def index_urls(self) -> tuple[str, ...]:
        """Every index to ask, the main one first, without repeats."""
        urls = ((self.index_url,) if self.index_url else ()) + self.extra_index_urls
        return tuple(dict.fromkeys(urls))

    @property
    def no_index(self) -> bool:
        return self.index_url is None


@dataclass(frozen=True)
class PipConfigFiles:
    """pip's configuration files by kind, in pip's override order (later kinds win)."""

    global_files: tuple[Path, ...]
    user_files: tuple[Path, ...]
    site_files: tuple[Path, ...]

    @classmethod
    def discover(cls, environ: Mapping[str, str], *, home: Path | None = None) -> PipConfigFiles:
        """The files pip would read on this system, with XDG variables taken from ``environ``."""
        if sys.platform in ("darwin", "win32"):
            return cls._from_pip()
        home = home if home is not None else Path(environ.get("HOME") or Path.home())
        config_dirs = environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
        site_dirs = [Path(entry) / "pip" for entry in config_dirs.split(os.pathsep) if entry]
        config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        return cls(
            global_files=(*(directory / "pip.conf" for directory in site_dirs), Path("/etc/pip.conf")),
            user_files=(home / ".pip" / "pip.conf", config_home / "pip" / "pip.conf"),
            site_files=(Path(sys.prefix) / "pip.conf",),
        )

    @classmethod
    def _from_pip(cls) -> PipConfigFiles:
        # macOS and Windows keep these in platform-specific places; pip knows them best.
        try:
            configuration: Any = importlib.import_module("pip._internal.configuration")
        except ImportError:
            return cls((), (), (Path(sys.prefix) / "pip.conf",))
        # The keys are plain strings in older pips and an enum in newer ones: compare by value.
        files = {
            str(getattr(kind, "value", kind)): names
            for kind, names in configuration.get_configuration_files().items()
        }
        return cls(
            global_files=tuple(Path(name) for name in files.get("global", ())),
            user_files=tuple(Path(name) for name in files.get("user", ())),
            site_files=tuple(Path(name) for name in files.get("site", ())),
        )


@dataclass(frozen=True)
class _Value:
    value: str
    origin: str


def pip_default_index_url() -> str:
    """pip's built-in index, asked of pip itself."""
    try:
        index_module: Any = importlib.import_module("pip._internal.models.index")
    except ImportError as error:
        raise IndexUnavailableError(
            "pip's default index",
            "pip is not importable, so its default index is unknown",
            hint="pass --index-url",
        ) from error
    return str(index_module.PyPI.simple_url)


def resolve_index_settings(
    *,
    index_url: str | None = None,
    extra_index_urls: Sequence[str] = (),
    find_links: Sequence[str] = (),
    no_index: bool = False,
    isolated: bool = False,
    environ: Mapping[str, str] | None = None,
    config_files: PipConfigFiles | None = None,
) -> IndexSettings:
    """Resolve the indexes as ``pip download`` would, given the flags it was called with.

    Like pip, ``--extra-index-url`` and ``--find-links`` on the command line add to the configured
    ones, while ``--index-url`` replaces. Like ``pip --isolated``, ``isolated`` skips the ``PIP_*``
    variables and the user's files, but still reads the site-wide, virtualenv and ``PIP_CONFIG_FILE``
    files. ``config_files`` replaces the discovered locations (tests use it).
    """
    env = dict(os.environ if environ is None else environ)
    files = config_files if config_files is not None else PipConfigFiles.discover(env)
    configured = _configured_values(files, env, isolated=isolated)

    extra = tuple(_split(configured.get("extra-index-url"))) + tuple(extra_index_urls)
    links = tuple(_split(configured.get("find-links"))) + tuple(find_links)
    if no_index:
        return IndexSettings(None, (), links, "--no-index")
    no_index_value = configured.get("no-index")
    if no_index_value is not None and _to_bool(no_index_value):
        return IndexSettings(None, (), links, no_index_value.origin)
    if index_url:
        return IndexSettings(index_url, extra, links, "--index-url")
    main = configured.get("index-url")
    if main is not None:
        return IndexSettings(main.value.strip(), extra, links, main.origin)
    return IndexSettings(pip_default_index_url(), extra, links, "pip's default")


def _configured_values(files: PipConfigFiles, env: Mapping[str, str], *, isolated: bool) -> dict[str, _Value]:
    """The last value of each key we care about, after pip's file, section and environment order."""
    # pip reads PIP_CONFIG_FILE even when isolated, and os.devnull there turns every file off.
    env_file = env.get("PIP_CONFIG_FILE")
    sections: dict[str, dict[str, _Value]] = {section: {} for section in _SECTIONS}
    if env_file != os.devnull:
        paths: list[Path] = list(files.global_files)
        # The user's files are skipped when isolated, or when PIP_CONFIG_FILE names an existing file.
        if not isolated and not (env_file and Path(env_file).exists()):
            paths += files.user_files
        paths += files.site_files
        if env_file:
            paths.append(Path(env_file))
        for path in paths:
            for section, key, value in _read_config_file(path):
                if section in sections and key in _KEYS:
                    sections[section][key] = _Value(value, f"pip configuration {path}")
    result: dict[str, _Value] = {}
    for section in _SECTIONS:
        # pip drops empty values, so an empty key in [install] does not blank out [global].
        result.update({key: value for key, value in sections[section].items() if value.value.strip()})
    if not isolated:
        for name, value in env.items():
            key = name[4:].lower().replace("_", "-") if name.startswith("PIP_") else ""
            if key in _KEYS and value.strip():
                result[key] = _Value(value, name)
    return result


class _PipConfigParser(configparser.RawConfigParser):
    def optionxform(self, optionstr: str) -> str:
        # pip normalises option names: case-insensitive, underscores as dashes, no leading "--".
        return optionstr.lower().replace("_", "-").removeprefix("--")


def _read_config_file(path: Path) -> Iterable[tuple[str, str, str]]:
    if not path.is_file():
        return []
    parser = _PipConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        raise InputError(
            str(path), f"cannot parse pip configuration: {' '.join(str(error).split())}"
        ) from error
    return [(section, key, value) for section in parser.sections() for key, value in parser.items(section)]


def _split(value: _Value | None) -> list[str]:
    # Lists in pip's config and PIP_* variables are whitespace-separated (newlines included).
    return value.value.split() if value is not None else []


def _to_bool(value: _Value) -> bool:
    text = value.value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise UsageError(
        f"{value.origin}: no-index = {value.value.strip()!r} is not a boolean",
        hint="use yes/no, true/false or 1/0",
    )
