"""Index settings resolved as pip resolves them: flags, PIP_* variables, config files, pip's default.

Every test builds its own config files under tmp_path and passes ``environ`` and the file locations
explicitly, so the machine's own pip configuration never leaks in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pip._internal.models.index import PyPI

from slimwheel.errors import IndexUnavailableError, InputError, UsageError
from slimwheel.index.config import PipConfigFiles, resolve_index_settings


@pytest.fixture
def files(tmp_path: Path) -> PipConfigFiles:
    """Config locations inside tmp_path, one per pip kind (two site-wide, two per-user, like pip)."""
    return PipConfigFiles(
        global_files=(tmp_path / "xdg" / "pip" / "pip.conf", tmp_path / "etc" / "pip.conf"),
        user_files=(
            tmp_path / "home" / ".pip" / "pip.conf",
            tmp_path / "home" / ".config" / "pip" / "pip.conf",
        ),
        site_files=(tmp_path / "venv" / "pip.conf",),
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_pip_default_comes_from_pip(files: PipConfigFiles) -> None:
    settings = resolve_index_settings(environ={}, config_files=files)
    assert settings.index_url == PyPI.simple_url
    assert settings.origin == "pip's default"
    assert settings.extra_index_urls == ()
    assert settings.find_links == ()
    assert settings.index_urls == (PyPI.simple_url,)


def test_flag_beats_environment_and_files(files: PipConfigFiles) -> None:
    write(files.global_files[0], "[global]\nindex-url = http://from-file.invalid/simple\n")
    settings = resolve_index_settings(
        index_url="http://flag.invalid/simple",
        environ={"PIP_INDEX_URL": "http://env.invalid/simple"},
        config_files=files,
    )
    assert settings.index_url == "http://flag.invalid/simple"
    assert settings.origin == "--index-url"


def test_environment_beats_files(files: PipConfigFiles) -> None:
    write(files.site_files[0], "[global]\nindex-url = http://from-file.invalid/simple\n")
    settings = resolve_index_settings(
        environ={"PIP_INDEX_URL": "http://env.invalid/simple"}, config_files=files
    )
    assert settings.index_url == "http://env.invalid/simple"
    assert settings.origin == "PIP_INDEX_URL"


def test_file_order_global_user_site_then_pip_config_file(files: PipConfigFiles, tmp_path: Path) -> None:
    for number, path in enumerate([*files.global_files, *files.user_files, *files.site_files]):
        write(path, f"[global]\nindex-url = http://file{number}.invalid/simple\n")
    settings = resolve_index_settings(environ={}, config_files=files)
    assert settings.index_url == "http://file4.invalid/simple"
    assert settings.origin == f"pip configuration {files.site_files[0]}"

    env_file = write(tmp_path / "env.conf", "[global]\nindex-url = http://env-file.invalid/simple\n")
    settings = resolve_index_settings(environ={"PIP_CONFIG_FILE": str(env_file)}, config_files=files)
    assert settings.index_url == "http://env-file.invalid/simple"
    assert settings.origin == f"pip configuration {env_file}"


def test_user_files_skipped_when_pip_config_file_exists(files: PipConfigFiles, tmp_path: Path) -> None:
    write(files.user_files[1], "[global]\nextra-index-url = http://user.invalid/simple\n")
    write(files.global_files[1], "[global]\nfind-links = /global/links\n")
    env_file = write(tmp_path / "env.conf", "[global]\n")
    settings = resolve_index_settings(environ={"PIP_CONFIG_FILE": str(env_file)}, config_files=files)
    assert settings.extra_index_urls == ()
    assert settings.find_links == ("/global/links",)
    # A PIP_CONFIG_FILE that does not exist does not hide the user's files.
    missing = str(tmp_path / "missing.conf")
    settings = resolve_index_settings(environ={"PIP_CONFIG_FILE": missing}, config_files=files)
    assert settings.extra_index_urls == ("http://user.invalid/simple",)


def test_devnull_pip_config_file_disables_every_file(files: PipConfigFiles) -> None:
    for path in [*files.global_files, *files.user_files, *files.site_files]:
        write(path, "[global]\nindex-url = http://file.invalid/simple\nfind-links = /links\n")
    settings = resolve_index_settings(environ={"PIP_CONFIG_FILE": os.devnull}, config_files=files)
    assert settings.index_url == PyPI.simple_url
    assert settings.find_links == ()


def test_command_sections_override_global(files: PipConfigFiles) -> None:
    write(
        files.global_files[0],
        "[download]\nindex-url = http://download.invalid/simple\n"
        "[freeze]\nfind-links = /ignored\n"
        "[install]\nindex-url = http://install.invalid/simple\nextra-index-url = http://install-extra.invalid/\n",
    )
    # A later file's [global] does not beat an earlier file's command section, as in pip.
    write(files.site_files[0], "[global]\nindex-url = http://global.invalid/simple\n")
    settings = resolve_index_settings(environ={}, config_files=files)
    assert settings.index_url == "http://download.invalid/simple"
    assert settings.extra_index_urls == ("http://install-extra.invalid/",)
    assert settings.find_links == ()


def test_list_values_split_on_whitespace_and_flags_append(files: PipConfigFiles) -> None:
    write(
        files.global_files[0],
        "[global]\nextra-index-url =\n    http://a.invalid/simple\n    http://b.invalid/simple\n"
        "find-links = /one /two\n",
    )
    settings = resolve_index_settings(
        extra_index_urls=["http://flag.invalid/simple"], find_links=["/three"], environ={}, config_files=files
    )
    # Like pip, --extra-index-url and --find-links add to what is configured.
    assert settings.extra_index_urls == (
        "http://a.invalid/simple",
        "http://b.invalid/simple",
        "http://flag.invalid/simple",
    )
    assert settings.find_links == ("/one", "/two", "/three")


def test_environment_lists_replace_file_lists(files: PipConfigFiles) -> None:
    write(files.global_files[0], "[global]\nextra-index-url = http://file.invalid/simple\n")
    environ = {
        "PIP_EXTRA_INDEX_URL": "http://e1.invalid/simple  http://e2.invalid/simple",
        "PIP_FIND_LINKS": "/env/links",
    }
    settings = resolve_index_settings(environ=environ, config_files=files)
    assert settings.extra_index_urls == ("http://e1.invalid/simple", "http://e2.invalid/simple")
    assert settings.find_links == ("/env/links",)


def test_option_names_are_normalised(files: PipConfigFiles) -> None:
    write(files.global_files[0], "[global]\nINDEX_URL = http://upper.invalid/simple\n")
    assert resolve_index_settings(environ={}, config_files=files).index_url == "http://upper.invalid/simple"


def test_empty_value_does_not_blank_out_a_lower_section(files: PipConfigFiles) -> None:
    write(
        files.global_files[0], "[global]\nindex-url = http://global.invalid/simple\n[install]\nindex-url =\n"
    )
    assert resolve_index_settings(environ={}, config_files=files).index_url == "http://global.invalid/simple"


def test_no_index_from_flag_environment_and_file(files: PipConfigFiles) -> None:
    settings = resolve_index_settings(no_index=True, find_links=["/links"], environ={}, config_files=files)
    assert settings.index_url is None
    assert settings.no_index
    assert settings.index_urls == ()
    assert settings.find_links == ("/links",)
    assert settings.origin == "--no-index"

    settings = resolve_index_settings(environ={"PIP_NO_INDEX": "yes"}, config_files=files)
    assert settings.no_index
    assert settings.origin == "PIP_NO_INDEX"
    assert not resolve_index_settings(environ={"PIP_NO_INDEX": "0"}, config_files=files).no_index

    path = write(files.user_files[0], "[install]\nno-index = true\nextra-index-url = http://x.invalid/\n")
    settings = resolve_index_settings(environ={}, config_files=files)
    assert settings.no_index
    assert settings.extra_index_urls == ()
    assert settings.origin == f"pip configuration {path}"


def test_bad_no_index_value_is_a_usage_error(files: PipConfigFiles) -> None:
    with pytest.raises(UsageError, match="PIP_NO_INDEX"):
        resolve_index_settings(environ={"PIP_NO_INDEX": "perhaps"}, config_files=files)


def test_unparsable_file_names_the_file(files: PipConfigFiles) -> None:
    path = write(files.global_files[0], "index-url = no section header\n")
    with pytest.raises(InputError) as caught:
        resolve_index_settings(environ={}, config_files=files)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_isolated_is_like_pip_isolated(files: PipConfigFiles, tmp_path: Path) -> None:
    write(files.user_files[1], "[global]\nextra-index-url = http://user.invalid/simple\n")
    write(files.global_files[0], "[global]\nfind-links = /site-wide\n")
    environ = {"PIP_INDEX_URL": "http://env.invalid/simple", "PIP_FIND_LINKS": "/env"}
    settings = resolve_index_settings(isolated=True, environ=environ, config_files=files)
    # pip --isolated skips PIP_* variables and the user's files, yet reads the site-wide ones.
    assert settings.index_url == PyPI.simple_url
    assert settings.extra_index_urls == ()
    assert settings.find_links == ("/site-wide",)
    env_file = write(tmp_path / "env.conf", "[global]\nindex-url = http://env-file.invalid/simple\n")
    environ["PIP_CONFIG_FILE"] = str(env_file)
    assert resolve_index_settings(isolated=True, environ=environ, config_files=files).index_url == (
        "http://env-file.invalid/simple"
    )


def test_discover_follows_xdg_variables(tmp_path: Path) -> None:
    if sys.platform in ("darwin", "win32"):
        pytest.skip("XDG locations are for Linux and other Unixes")
    environ = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_DIRS": f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    found = PipConfigFiles.discover(environ)
    assert found.global_files == (
        tmp_path / "a" / "pip" / "pip.conf",
        tmp_path / "b" / "pip" / "pip.conf",
        Path("/etc/pip.conf"),
    )
    assert found.user_files == (
        tmp_path / "home" / ".pip" / "pip.conf",
        tmp_path / "config" / "pip" / "pip.conf",
    )
    assert found.site_files == (Path(sys.prefix) / "pip.conf",)
    defaults = PipConfigFiles.discover({"HOME": str(tmp_path)})
    assert defaults.global_files[0] == Path("/etc/xdg/pip/pip.conf")
    assert defaults.user_files[1] == tmp_path / ".config" / "pip" / "pip.conf"


def test_missing_pip_asks_for_index_url(files: PipConfigFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pip._internal.models.index", None)
    with pytest.raises(IndexUnavailableError, match="--index-url"):
        resolve_index_settings(environ={}, config_files=files)
    # An explicit index needs no pip.
    assert resolve_index_settings(index_url="http://x.invalid/", environ={}, config_files=files).index_url


def test_agrees_with_real_pip(tmp_path: Path) -> None:
    """The indexes pip itself says it looks in, for files, variables and flags together."""
    index = (tmp_path / "main").as_uri()
    env_file = write(
        tmp_path / "pip.conf",
        f"[global]\nindex-url = {index}\nextra-index-url = {(tmp_path / 'file-extra').as_uri()}\n"
        f"[download]\nextra-index-url = {(tmp_path / 'download-extra').as_uri()}\n",
    )
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "XDG_CONFIG"))
    } | {"PIP_CONFIG_FILE": str(env_file), "PIP_EXTRA_INDEX_URL": (tmp_path / "env-extra").as_uri()}
    flag_extra = (tmp_path / "flag-extra").as_uri()
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-cache-dir",
        "--disable-pip-version-check",
    ]
    result = subprocess.run(
        [
            *command,
            "--extra-index-url",
            flag_extra,
            "-d",
            str(tmp_path / "out"),
            "no-such-project-slimwheel-test",
        ],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    looking = next(line for line in result.stdout.splitlines() if line.startswith("Looking in indexes: "))
    pip_says = tuple(looking.removeprefix("Looking in indexes: ").split(", "))
    ours = resolve_index_settings(extra_index_urls=[flag_extra], environ=environ)
    assert ours.index_urls == pip_says
    assert ours.index_urls == (index, (tmp_path / "env-extra").as_uri(), flag_extra)
