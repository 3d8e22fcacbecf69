"""Output people can read: -q/-v on every command, exit codes in --help, tables that keep one fact per
row at 80 columns and print without box drawing in a pipe, warnings once each, progress only on a
terminal (a real pseudo-terminal), and the nearest names for a misspelled library."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from slimwheel.catalog.model import Catalog
from slimwheel.cli import main
from slimwheel.cli._output import Output, RichProgress
from slimwheel.cli.main import COMMANDS, build_parser
from slimwheel.index.client import IndexClient
from slimwheel.index.config import IndexSettings
from slimwheel.progress import SILENT
from tests.support.elfbuild import patchelf
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import ProviderWheels
from tests.support.solver import fat_solver_wheel
from tests.support.wheels import make_wheel

TAG = "cp311-cp311-manylinux_2_17_x86_64"
BOX = re.compile("[\u2500-\u257f]")  # box drawing


def _env(columns: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    env["COLUMNS"] = str(columns)
    env["TERM"] = "xterm"
    return env


def _run_piped(argv: Sequence[str], columns: int = 80) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slimwheel", *argv],
        capture_output=True,
        text=True,
        env=_env(columns),
        check=False,
        timeout=120,
    )


def _run_on_terminal(argv: Sequence[str], columns: int = 80) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal of ``columns``; what it wrote, escapes removed."""
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "slimwheel", *argv],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=_env(columns),
        close_fds=True,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    code = process.wait(timeout=60)
    text = b"".join(chunks).decode("utf-8", "replace")
    return code, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text).replace("\r", "")


# -- options and help -------------------------------------------------------------------------------


def _subparsers() -> dict[str, object]:
    import argparse

    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_quiet_and_verbose_and_states_its_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert "-q, --quiet" in text
    assert "-v, --verbose" in text
    assert " ".join(text.split()).rstrip().split("exit status: ", 1)[1].endswith("interrupted.")


def test_quiet_and_verbose_together_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "-q", "-v", "x.whl"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_catalog_actions_take_the_options_too(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["catalog", "update", "--help"], ["catalog", "query", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert "--quiet" in text
        assert "exit status:" in text


def test_help_states_the_default_output_folder(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["repair", "--help"])
    assert "default: wheelhouse" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["catalog", "update", "--help"])
    assert "default: the user's catalog" in " ".join(capsys.readouterr().out.split())


# -- warnings ---------------------------------------------------------------------------------------


def _output(**options: object) -> tuple[Output, io.StringIO]:
    err = io.StringIO()
    return Output("repair", stdout=io.StringIO(), stderr=err, **options), err  # type: ignore[arg-type]


def test_warnings_are_said_once_grouped_by_what_to_do() -> None:
    out, err = _output()
    fix = "run `slimwheel catalog update` once"
    out.warn("a: not in the catalog", fix=fix)
    out.warn("b: not in the catalog", fix=fix)
    out.warn("a: not in the catalog", fix=fix)
    out.warn("something else")
    out.warn("detail", verbose_only=True)
    out.flush_warnings()
    lines = err.getvalue().splitlines()
    assert lines == [
        "slimwheel repair: 2 warnings:",
        "  - a: not in the catalog",
        "  - b: not in the catalog",
        f"  what to do: {fix}",
        "slimwheel repair: warning: something else",
    ]


def test_quiet_drops_warnings_and_notes_never_errors() -> None:
    out, err = _output(quiet=True)
    out.warn("a warning")
    out.note("a note")
    out.error("an error")
    out.flush_warnings()
    assert err.getvalue() == "slimwheel repair: error: an error\n"
    verbose, err = _output(verbose=1)
    verbose.warn("detail", verbose_only=True)
    verbose.note("a note")
    verbose.flush_warnings()
    assert "detail" in err.getvalue()
    assert "a note" in err.getvalue()


# -- progress ---------------------------------------------------------------------------------------


def _terminal_stream() -> tuple[io.TextIOWrapper, int]:
    leader, follower = pty.openpty()
    return os.fdopen(follower, "w", buffering=1), leader


def _drain(leader: int) -> str:
    data = b""
    while select.select([leader], [], [], 0.2)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace")


def test_progress_only_on_a_terminal_and_never_with_json_or_quiet() -> None:
    stream, leader = _terminal_stream()
    try:
        assert isinstance(Output("x", stderr=stream).progress(), RichProgress)
        assert Output("x", stderr=stream, json=True).progress() is SILENT
        assert Output("x", stderr=stream, quiet=True).progress() is SILENT
        assert Output("x", stderr=io.StringIO()).progress() is SILENT
    finally:
        stream.close()
        os.close(leader)


def test_a_download_shows_bytes_on_a_terminal_and_nothing_in_a_pipe(
    providers: ProviderWheels, index_server: Callable[..., IndexServer], tmp_path: Path
) -> None:
    server = index_server(providers.directory)
    stream, leader = _terminal_stream()
    try:
        out = Output("x", stderr=stream)
        with IndexClient(IndexSettings(server.simple_url), progress=out.progress()) as client:
            (file, *_) = client.project("nvidia-cudss-cu13").files
            client.download(file, tmp_path / "tty")
        drawn = _drain(leader)
    finally:
        stream.close()
        os.close(leader)
    assert f"downloading {file.filename}"[:39] in drawn
    assert re.search(r"\d+(\.\d+)?/\d+(\.\d+)? (bytes|kB)", drawn), drawn
    piped = io.StringIO()
    out = Output("x", stderr=piped)
    with IndexClient(IndexSettings(server.simple_url), progress=out.progress()) as client:
        client.download(file, tmp_path / "pipe")
    assert piped.getvalue() == ""


# -- tables -----------------------------------------------------------------------------------------


@pytest.fixture
def slim_wheel(elf_zoo: ElfZoo, tmp_path: Path) -> Path:
    """A wheel with a deep, long-named extension that needs cuDSS and cuBLAS from NVIDIA's wheels."""
    work = tmp_path / "build"
    work.mkdir()
    solver = work / "_solver.so"
    shutil.copyfile(elf_zoo.ext_dynamic, solver)
    patchelf(solver, "--force-rpath", "--set-rpath", "$ORIGIN/../../../nvidia/cu13/lib")
    patchelf(solver, "--add-needed", "libcublas.so.13")
    name = "pkg/very_long_subpackage_name/another_level/_solver_extension_module_with_a_long_name.so"
    return make_wheel(
        tmp_path,
        "pkg",
        "1.0",
        {name: solver.read_bytes()},
        tag=TAG,
        requires=["nvidia-cudss-cu13>=1.0.0.35,<2"],
    )


def _lookup_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "libcudss.so.1" in line or "libcublas.so.13" in line]


def test_check_in_a_pipe_is_plain_text_one_fact_per_line(
    slim_wheel: Path, provider_catalog_file: Path
) -> None:
    result = _run_piped(["check", str(slim_wheel), "--catalog", str(provider_catalog_file), "--offline"])
    assert result.returncode in (0, 1), result.stderr
    assert not BOX.search(result.stdout), result.stdout
    lines = _lookup_lines(result.stdout)
    cudss = [line for line in lines if line.split()[1:2] == ["libcudss.so.1"]]
    # The soname, where it is found, and which file needs it stand on one line (grep finds it whole).
    assert cudss, result.stdout
    assert "nvidia/cu13/lib/libcudss.so.1" in cudss[0]
    assert "_solver_extension_module_with_a_long_name.so" in cudss[0]
    assert "CUDA 13" in result.stdout or "no CUDA major" in result.stdout
    assert "CUDA None" not in result.stdout


def test_check_on_an_80_column_terminal_keeps_each_soname_beside_its_answer(
    slim_wheel: Path, provider_catalog_file: Path
) -> None:
    code, text = _run_on_terminal(
        ["check", str(slim_wheel), "--catalog", str(provider_catalog_file), "--offline"]
    )
    assert code in (0, 1), text
    assert BOX.search(text), text
    for line in text.splitlines():
        assert len(line) <= 80, line
    # A soname is never broken, and the first line of its answer is on the soname's own line.
    for soname, found in (("libcudss.so.1", "nvidia/cu13/l"), ("libcublas.so.13", "nvidia/cu13/l")):
        (row,) = [line for line in text.splitlines() if soname in line and "│" in line and found in line]
        assert row.index(soname) < row.index(found)


# -- words ------------------------------------------------------------------------------------------


def test_plan_refuses_an_unknown_library_with_the_nearest_names(
    provider_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["plan", "cudsss", "--offline", "--catalog", str(provider_catalog_file)])
    err = capsys.readouterr().err
    assert code == 2
    assert "cudsss: no NVIDIA wheel in the catalog ships this library" in err
    assert "did you mean cudss" in err


def test_plan_knows_a_library_in_another_case(
    provider_catalog: Catalog, provider_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = {p.library.name for p in provider_catalog.iter_libraries()}
    mixed = next(name for name in sorted(names) if name != name.upper())
    assert main(["plan", mixed.upper(), "--offline", "--catalog", str(provider_catalog_file), "--json"]) in (
        0,
        1,
    )
    assert json.loads(capsys.readouterr().out)["schema"] == "slimwheel.plan/1"


# -- repair's notes ---------------------------------------------------------------------------------


def test_repair_says_nothing_of_providers_it_cannot_read_unless_verbose(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fat = fat_solver_wheel(tmp_path / "fat", elf_zoo, "auditwheel")
    base = ["repair", str(fat), "--catalog", str(own_catalog), "--cuda", "13", "--isolated-environment"]
    assert main([*base, "-w", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert "not listed in the manifest" not in captured.err
    assert "CUDA 13" in captured.out
    assert "CUDA None" not in captured.out
    assert main([*base, "-w", str(tmp_path / "b"), "-v"]) == 0
    err = capsys.readouterr().err
    assert err.count("not listed in the manifest") == 1, err
    assert "nothing needs doing" in err
    assert main([*base, "-w", str(tmp_path / "c"), "-q"]) == 0
    assert capsys.readouterr().err == ""
