"""`catalog update --needed`: the DT_NEEDED of the newest releases' library files, read from a real HTTP index
on 127.0.0.1 serving fake NVIDIA wheels, kept by later updates that do not read them, and used by repair
to list what a provider needs in turn without installing it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from slimwheel.catalog.store import read_catalog
from slimwheel.cli import main
from slimwheel.elf import read_elf_file
from tests.support.fixtures_elf import ElfZoo
from tests.support.index_server import IndexServer
from tests.support.providers import build_provider_wheels
from tests.support.solver import SOLVER_TAG, repair_to_json
from tests.support.wheels import make_wheel

StartServer = Callable[..., IndexServer]


@pytest.mark.parametrize("ranges", [True, False])
def test_update_needed_reads_the_newest_releases_libraries_and_later_updates_keep_them(
    index_server: StartServer,
    elf_zoo: ElfZoo,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    ranges: bool,
) -> None:
    server = index_server(build_provider_wheels(elf_zoo, isolated_env / "index").directory, ranges=ranges)
    update = ["catalog", "update", "--index-url", server.simple_url, "--isolated", "--json"]
    assert main([*update, "--needed"]) == 0
    summary = json.loads(capsys.readouterr().out)
    catalog = read_catalog(isolated_env / "user-catalog.json.gz")
    cudss = read_elf_file(elf_zoo.libcudss, symbols=False)
    cublas = read_elf_file(elf_zoo.libcublas, symbols=False)
    newest = catalog.release("nvidia-cudss-cu13", "1.0.0.35")
    assert newest is not None
    (library,) = newest.wheels[0].libraries
    assert library.needed == cudss.needed
    assert "libcublas.so.13" in library.needed
    assert library.build_id == cudss.build_id
    assert library.soname_confirmed
    (blas,) = catalog.release("nvidia-cublas", "13.1.0.3").wheels[0].libraries  # type: ignore[union-attr]
    assert blas.needed == cublas.needed
    # An older release is read for a file no newer one ships (cuDSS 0.7's libcudss.so.0); a Windows
    # DLL never is. (That a file newer releases ship is read once only: tests/unit/test_catalog_needed.)
    old = catalog.release("nvidia-cudss-cu13", "0.7.1.6")
    assert old is not None
    assert old.wheels[0].libraries[0].needed == cudss.needed
    cu12 = catalog.release("nvidia-cudss-cu12", "1.0.0.35")
    assert cu12 is not None
    by_file = {w.filename: w for w in cu12.wheels}
    assert all(lib.needed is None for name, w in by_file.items() if "win" in name for lib in w.libraries)
    assert any(
        lib.needed is not None for name, w in by_file.items() if "linux" in name for lib in w.libraries
    )
    read = sum(1 for p in catalog.iter_libraries() if p.library.needed is not None)
    assert summary["libraries_with_needs"] == read
    # An update that does not read ELF files (incremental, or --fresh) keeps what was read.
    assert main(update) == 0
    assert json.loads(capsys.readouterr().out)["libraries_with_needs"] == read
    again = read_catalog(isolated_env / "user-catalog.json.gz")
    assert again.needed_by("libcudss.so.1", cuda_major=13) == cudss.needed


def test_the_needs_are_learned_once(
    index_server: StartServer, elf_zoo: ElfZoo, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = index_server(build_provider_wheels(elf_zoo, isolated_env / "index").directory)
    update = ["catalog", "update", "--index-url", server.simple_url, "--isolated", "--json", "--needed"]
    assert main(update) == 0
    capsys.readouterr()
    first = server.bytes_count("/files/")
    server.reset_counters()
    # Nothing new: every wheel is known by its sha256 and every library's needs with it, so no provider
    # wheel is opened (cuda-toolkit's METADATA is read on every update, as before).
    assert main(update) == 0
    capsys.readouterr()
    assert first > 0
    assert server.bytes_count("/files/") == server.bytes_count("/files/cuda_toolkit-")


def test_repair_lists_what_the_provider_needs_from_the_learned_catalog_without_installing_it(
    index_server: StartServer, elf_zoo: ElfZoo, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As when cuDSS is installed in the build environment (test_repair's build-environment test), with
    nothing installed: cuBLAS, which cuDSS needs, is in the manifest, and no provider is left unread."""
    server = index_server(build_provider_wheels(elf_zoo, isolated_env / "index").directory)
    learned = isolated_env / "learned.json.gz"
    update = ["catalog", "update", "--index-url", server.simple_url, "--isolated", "-o", str(learned)]
    fresh = make_wheel(
        isolated_env, "fresh", "1.0", {"fresh/_solver.so": elf_zoo.ext_dynamic.read_bytes()}, tag=SOLVER_TAG
    )
    extra = ("--cuda", "13", "--isolated-environment", "--dry-run")
    results = []
    for flags in ((), ("--needed",)):
        assert main([*update, *flags]) == 0
        capsys.readouterr()
        results.append(repair_to_json(capsys, fresh, isolated_env / "out", learned, *extra)["plan"])
    without, learned_needs = results
    assert [lib["soname"] for lib in without["manifest"]["libraries"]] == ["libcudss.so.1"]
    assert without["unread_providers"] == ["nvidia-cudss-cu13"]
    libraries = learned_needs["manifest"]["libraries"]
    assert [(lib["soname"], lib["requires"]) for lib in libraries] == [
        ("libcublas.so.13", []),
        ("libcudss.so.1", ["cublas"]),
    ]
    assert learned_needs["unread_providers"] == []


def test_a_dry_run_update_learns_and_writes_nothing(
    index_server: StartServer, elf_zoo: ElfZoo, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``catalog update --dry-run`` reads the index as an update does and says which releases it would
    add; the user's catalog is left as it was (here: not there at all)."""
    server = index_server(build_provider_wheels(elf_zoo, isolated_env / "index").directory)
    update = ["catalog", "update", "--index-url", server.simple_url, "--isolated", "--json"]
    written = isolated_env / "user-catalog.json.gz"
    assert main([*update, "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert (dry["dry_run"], dry["written"]) == (True, None)
    assert not written.exists()
    assert "nvidia-cudss-cu13==1.0.0.35" in dry["new_releases"]
    assert main(update) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["written"] == str(written)
    assert written.exists()
    assert sorted(done["new_releases"]) == sorted(dry["new_releases"])
    before = written.read_bytes()
    assert main([*update, "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["new_releases"] == []
    assert written.read_bytes() == before
    assert main(["catalog", "update", "--index-url", server.simple_url, "--isolated", "--dry-run"]) == 0
    assert "none new) nothing written (dry run;" in " ".join(capsys.readouterr().out.split())
