"""repair refuses an input whose RECORD does not vouch for its files (exit 2, one line naming the member
and what is wrong, nothing written, the input untouched) and writes only RECORD lines computed from the
bytes it wrote. A member it copies raw is verified as it streams: CRC-32 and RECORD hash.

Why refuse rather than write a fresh RECORD: a wrong hash or size means the file was damaged or altered
after the wheel was built. A new RECORD computed from the bytes would hide that for good, and make a
corrupt or tampered wheel look sound to every installer that checks RECORD."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from slimwheel.cli import main
from slimwheel.wheel import Wheel
from tests.support.fixtures_elf import ElfZoo
from tests.support.fixtures_wheel import RawMember, add_raw_members, patch_central_directory, rewrite_wheel
from tests.support.solver import SOLVER_INIT, SOLVER_TAG
from tests.support.wheels import make_wheel, record_hash

DIST_INFO = "solver-1.0.dist-info"
RECORD = f"{DIST_INFO}/RECORD"
DATA = "solver/data.txt"  # a member nothing reads: only the copy sees its bytes
DATA_BYTES = b"solver data\n" * 1000


def _md5(data: bytes) -> str:
    return "md5=" + base64.urlsafe_b64encode(hashlib.md5(data).digest()).rstrip(b"=").decode()


def _solver(directory: Path, zoo: ElfZoo, *, tag: str = SOLVER_TAG) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "solver/__init__.py": SOLVER_INIT,
        "solver/_solver.so": zoo.ext_renamed.read_bytes(),
        "solver.libs/libcudss.8f0e2a1b.so.1": zoo.renamed_copy.read_bytes(),
        DATA: DATA_BYTES,
    }
    return make_wheel(directory, "solver", "1.0", files, tag=tag)


def _edit_record(wheel: Path, edit: Callable[[list[str]], list[str]]) -> Path:
    with Wheel.open(wheel) as opened:
        lines = opened.read_member(RECORD).decode().splitlines()
    return rewrite_wheel(wheel, replace={RECORD: ("\n".join(edit(lines)) + "\n").encode()})


def _line_of(name: str, replacement: Callable[[str], str | None]) -> Callable[[list[str]], list[str]]:
    """An edit of RECORD: ``replacement`` gets the member's line and gives a new one (None drops it)."""

    def edit(lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            new = replacement(line) if line.startswith(f"{name},") else line
            if new is not None:
                out.append(new)
        return out

    return edit


def _data_line(wheel: Path) -> str:
    with Wheel.open(wheel) as opened:
        return next(x for x in opened.read_member(RECORD).decode().splitlines() if x.startswith(f"{DATA},"))


def _other_hash(line: str) -> str:
    return line.replace(record_hash(DATA_BYTES), record_hash(b"something else"))


BROKEN: dict[str, tuple[Callable[[Path], Path], str]] = {
    "wrong-hash": (
        lambda w: _edit_record(w, _line_of(DATA, _other_hash)),
        f"hash mismatch for {DATA}: RECORD says sha256=",
    ),
    "altered-content": (
        lambda w: rewrite_wheel(w, replace={DATA: b"SOLVER DATA\n" * 1000}),  # CRC-32 consistent, RECORD old
        f"hash mismatch for {DATA}: RECORD says sha256=",
    ),
    "wrong-size": (
        lambda w: _edit_record(w, _line_of(DATA, lambda line: line.rpartition(",")[0] + ",99")),
        f"size mismatch for {DATA}: RECORD says 99 bytes, the wheel holds {len(DATA_BYTES)}",
    ),
    "missing-line": (
        lambda w: _edit_record(w, _line_of(DATA, lambda _: None)),
        f"{DATA} is not listed in RECORD",
    ),
    "md5": (
        lambda w: _edit_record(w, _line_of(DATA, lambda _: f"{DATA},{_md5(DATA_BYTES)},{len(DATA_BYTES)}")),
        f"RECORD hashes {DATA} with md5, which the wheel specification does not accept",
    ),
    "no-hash": (
        lambda w: _edit_record(w, _line_of(DATA, lambda _: f"{DATA},,{len(DATA_BYTES)}")),
        f"RECORD has no hash for {DATA}",
    ),
    "empty-record": (
        lambda w: rewrite_wheel(w, replace={RECORD: b""}),
        "is not listed in RECORD (RECORD lists no file at all)",
    ),
    "duplicate-line": (  # in place of another line: no more lines than members
        lambda w: _edit_record(w, _line_of("solver/__init__.py", lambda _: _data_line(w))),
        f"RECORD lists {DATA} more than once",
    ),
    "line-without-member": (  # beside a folder entry, which RECORD does not list
        lambda w: _edit_record(
            add_raw_members(w, [RawMember("solver/")]),
            lambda lines: [*lines, f"solver/ghost.py,{record_hash(b'')},0"],
        ),
        "RECORD lists solver/ghost.py, which is not in the wheel",
    ),
    "bad-crc": (
        lambda w: patch_central_directory(w, DATA, crc=zlib.crc32(b"other")),
        f"cannot copy {DATA}: bad CRC-32",
    ),
    "patched-elf-wrong-hash": (
        lambda w: _edit_record(
            w,
            _line_of(
                "solver/_solver.so",
                lambda line: f"solver/_solver.so,{record_hash(b'x')},{line.rpartition(',')[2]}",
            ),
        ),
        "hash mismatch for solver/_solver.so",
    ),
    "rewritten-metadata-wrong-hash": (
        lambda w: _edit_record(
            w,
            _line_of(
                f"{DIST_INFO}/METADATA",
                lambda line: f"{DIST_INFO}/METADATA,{record_hash(b'x')},{line.rpartition(',')[2]}",
            ),
        ),
        f"hash mismatch for {DIST_INFO}/METADATA",
    ),
}


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory repair's scratch folders go to, to see that none is left."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_input_whose_record_does_not_vouch_for_it_is_refused(
    kind: str,
    elf_zoo: ElfZoo,
    own_catalog: Path,
    private_tmp: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    breaks, message = BROKEN[kind]
    wheel = breaks(_solver(tmp_path / "in", elf_zoo))
    before = wheel.read_bytes()
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"slimwheel repair: error: {wheel}: ")
    assert message in line
    if kind != "bad-crc":
        assert "wheel pack" in line  # the way out for a wheel whose files are known to be right
    assert list(out.iterdir()) == []  # no wheel, no staging folder, no temporary file
    assert list(private_tmp.iterdir()) == []
    assert wheel.read_bytes() == before


def test_the_output_record_is_computed_and_the_output_passes_zipfile_t(
    elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sha512 lines in, sha256 lines out; RECORD's own line without a hash is normal; a signature of
    the input's RECORD does not sign the new one, so it is dropped."""
    wheel = _solver(tmp_path / "in", elf_zoo)
    with Wheel.open(wheel) as opened:
        contents = {m.name: opened.read_member(m.name) for m in opened.members if not m.is_dir}

    def sha512(line: str) -> str:
        name, _, size = line.split(",")
        digest = base64.urlsafe_b64encode(hashlib.sha512(contents[name]).digest()).rstrip(b"=").decode()
        return f"{name},sha512={digest},{size}"

    _edit_record(wheel, lambda lines: [line if line.startswith(RECORD) else sha512(line) for line in lines])
    with Wheel.open(wheel) as opened:
        assert {e.hash_algorithm for e in opened.record()} == {"sha512", None}
    add_raw_members(wheel, [RawMember(f"{DIST_INFO}/RECORD.jws", b"{}")])  # signs the input's RECORD
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment"]) == 0, capsys.readouterr().err
    (repaired,) = out.iterdir()
    tested = subprocess.run(
        [sys.executable, "-m", "zipfile", "-t", str(repaired)], capture_output=True, text=True, check=False
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    with Wheel.open(repaired) as result:
        result.verify()
        entries = {e.path: e for e in result.record()}
        assert not result.has_member(f"{DIST_INFO}/RECORD.jws")
        assert result.read_member(DATA) == DATA_BYTES
    assert entries.pop(RECORD).hash_algorithm is None
    assert {e.hash_algorithm for e in entries.values()} == {"sha256"}
    assert f"sha256={entries[DATA].hash_digest}" == record_hash(DATA_BYTES)


def test_a_wheel_for_auditwheel_is_verified_whole_first(
    elf_zoo: ElfZoo,
    own_catalog: Path,
    private_tmp: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """auditwheel writes a RECORD from the files it unpacked: a damaged member would come out of it
    looking sound, so a linux_* wheel is verified whole before auditwheel sees it."""
    monkeypatch.setenv("LD_LIBRARY_PATH", str(elf_zoo.libcublas.parent))  # what auditwheel must find
    wheel = _solver(tmp_path / "in", elf_zoo, tag="py3-none-linux_x86_64")
    rewrite_wheel(wheel, replace={DATA: b"SOLVER DATA\n" * 1000})
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment", "--linked-version", "cudss=1.0.0.35"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"hash mismatch for {DATA}" in line
    assert list(out.iterdir()) == []
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("kind", ["missing-line", "md5", "no-hash", "empty-record", "wrong-size"])
def test_dry_run_refuses_what_needs_no_reading_too(
    kind: str, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What RECORD's lines alone show is refused before any work, so --dry-run says it as well."""
    breaks, message = BROKEN[kind]
    wheel = breaks(_solver(tmp_path / "in", elf_zoo))
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment", "--dry-run"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert message in line
