"""show, check, repair and verify on hostile inputs (issue 9): each refuses unreadable input the same way,
exit 2 with one line on stderr and no traceback, at once (no hang, no gigabytes read), the input untouched
and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from slimwheel.cli import main
from slimwheel.wheel.reader import RECORD_LIMIT, TEXT_MEMBER_LIMIT
from tests.support.fixtures_elf import ElfZoo
from tests.support.fixtures_wheel import patch_central_directory
from tests.support.wheels import make_wheel

TAG = "py3-none-manylinux_2_17_x86_64"
DIST_INFO = "hostile-1.0.dist-info"
RECORD = f"{DIST_INFO}/RECORD"
METADATA = f"{DIST_INFO}/METADATA"
COMMANDS = ("show", "check", "repair", "verify")
HANG_TIMEOUT = 60  # seconds: a command on a FIFO that takes longer is taken to hang


@pytest.fixture(autouse=True)
def _hermetic_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the catalog given with --catalog: no shipped snapshot, no user copy."""
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(tmp_path / "no-user-catalog.json.gz"))


def _argv(command: str, wheel: Path, catalog: Path, tmp_path: Path) -> list[str]:
    argv = [command, str(wheel), "--catalog", str(catalog)]
    if command == "check":
        argv.append("--offline")
    elif command == "repair":
        argv += ["-w", str(tmp_path / "wheelhouse"), "--offline", "--isolated-environment"]
    elif command == "verify":
        empty = tmp_path / "no-wheels"
        empty.mkdir(exist_ok=True)
        argv += ["--find-links", str(empty)]
    return argv


def _refused(
    capsys: pytest.CaptureFixture[str], command: str, wheel: Path, catalog: Path, tmp_path: Path
) -> str:
    """Run ``command`` in this process on ``wheel``; it must refuse it: exit 2, one line, nothing
    written, the input untouched. Returns the line."""
    before = wheel.read_bytes() if wheel.is_file() else None
    code = main(_argv(command, wheel, catalog, tmp_path))
    captured = capsys.readouterr()
    assert code == 2, captured.err or captured.out
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    assert lines[0].startswith(f"slimwheel {command}: error: ")
    wheelhouse = tmp_path / "wheelhouse"
    assert not wheelhouse.exists() or not any(wheelhouse.iterdir())
    if before is not None:
        assert wheel.read_bytes() == before
    return lines[0]


def _hostile_wheel(directory: Path, edits: Mapping[str, Callable[[bytes], bytes]]) -> Path:
    """A wheel with some members' bytes edited after RECORD was written (deflated)."""
    directory.mkdir(parents=True, exist_ok=True)
    wheel = make_wheel(directory, "hostile", "1.0", {"hostile/__init__.py": b"VALUE = 1\n"}, tag=TAG)
    with zipfile.ZipFile(wheel) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    for name, edit in edits.items():
        contents[name] = edit(contents[name])
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return wheel


# -- 1. a RECORD size of thousands of digits ------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_record_size_of_thousands_of_digits_is_one_line_and_exit_2(
    command: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = b"9" * 5000
    wheel = _hostile_wheel(tmp_path / "in", {RECORD: lambda r: r.replace(b",10\n", b"," + huge + b"\n", 1)})
    line = _refused(capsys, command, wheel, provider_catalog_file, tmp_path)
    assert "RECORD line" in line
    assert "has 5000 digits" in line
    assert len(line) < 500


# -- 2. text members that inflate to far more than they may ----------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_record_over_its_cap_is_refused_unread(
    command: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _hostile_wheel(tmp_path / "in", {RECORD: lambda r: r + b"\n" * RECORD_LIMIT})
    assert wheel.stat().st_size < 1 << 20
    line = _refused(capsys, command, wheel, provider_catalog_file, tmp_path)
    assert f"{RECORD} is too big to read" in line


@pytest.mark.parametrize("command", ["check", "repair", "verify"])  # show does not read METADATA
def test_a_metadata_over_its_cap_is_refused_unread(
    command: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    padding = b"Description: " + b"x" * TEXT_MEMBER_LIMIT + b"\n"
    wheel = _hostile_wheel(tmp_path / "in", {METADATA: lambda m: m + padding})
    line = _refused(capsys, command, wheel, provider_catalog_file, tmp_path)
    assert f"{METADATA} is too big to read" in line


# -- 3. a FIFO named like a wheel (or like a library) ---------------------------------------------


def _run_cli(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """A command in a fresh process: a hang is a TimeoutExpired, and the child is killed."""
    env = {
        **os.environ,
        "SLIMWHEEL_SHIPPED_CATALOG": "off",
        "SLIMWHEEL_CATALOG": str(tmp_path / "no-user-catalog.json.gz"),
    }
    return subprocess.run(
        [sys.executable, "-m", "slimwheel", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=HANG_TIMEOUT,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("command", "name"),
    [
        *((command, "fifo-1.0-py3-none-any.whl") for command in COMMANDS),
        ("show", "libfifo.so.1"),
        ("check", "libfifo.so.1"),
        ("repair", "libfifo.so.1"),
    ],
)
def test_a_fifo_is_refused_at_once(
    command: str, name: str, provider_catalog_file: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    done = _run_cli(_argv(command, fifo, provider_catalog_file, tmp_path), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"slimwheel {command}: error: {fifo}: a FIFO (named pipe), not a regular file"
    ]


@pytest.mark.parametrize("command", ["show", "check", "verify"])
def test_a_device_is_refused(
    command: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _refused(capsys, command, Path(os.devnull), provider_catalog_file, tmp_path)
    assert line.endswith(f"{os.devnull}: a character device, not a regular file")


# -- 4. one behaviour for one unreadable input ------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_record_that_is_not_utf8_is_exit_2_for_every_command(
    command: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify used to install it and report pip's failure as a problem found (exit 1)."""
    wheel = _hostile_wheel(tmp_path / "in", {RECORD: lambda r: r + b"\xff\xfe,,\n"})
    line = _refused(capsys, command, wheel, provider_catalog_file, tmp_path)
    assert "RECORD is not UTF-8 text" in line


@pytest.mark.parametrize(
    "compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"]
)
@pytest.mark.parametrize("command", ["show", "check", "repair", "verify"])
def test_an_elf_member_with_a_bad_crc_is_refused_stored_or_deflated(
    command: str,
    compression: int,
    elf_zoo: ElfZoo,
    provider_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """show read a stored member in place and never checked its CRC-32 (exit 0) where a deflated one is
    refused (exit 2, as repair and check do): now both are refused."""
    member = "hostile/_ext.so"
    (tmp_path / "in").mkdir()
    wheel = make_wheel(
        tmp_path / "in",
        "hostile",
        "1.0",
        {member: elf_zoo.ext_dynamic.read_bytes(), "hostile/__init__.py": b""},
        tag=TAG,
        compression=compression,
    )
    with zipfile.ZipFile(wheel) as archive:
        crc = archive.getinfo(member).CRC
    patch_central_directory(wheel, member, crc=crc ^ 1)
    line = _refused(capsys, command, wheel, provider_catalog_file, tmp_path)
    assert f"cannot read {member}: bad CRC-32" in line


@pytest.mark.parametrize("command", ["show", "check"])
def test_a_wheel_with_another_suffix_is_told_what_it_is(
    command: str, provider_catalog_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _hostile_wheel(tmp_path / "in", {})
    upper = wheel.with_suffix(".WHL")
    upper.write_bytes(wheel.read_bytes())
    line = _refused(capsys, command, upper, provider_catalog_file, tmp_path)
    assert line.endswith(
        "not a valid wheel file name: it must end in .whl, in lower case "
        "(pip and packaging do not take '.WHL' for a wheel)"
    )
    as_zip = wheel.with_suffix(".zip")
    as_zip.write_bytes(wheel.read_bytes())
    line = _refused(capsys, command, as_zip, provider_catalog_file, tmp_path)
    assert line.endswith("a zip archive, not an ELF file (a wheel's name must end in .whl)")
