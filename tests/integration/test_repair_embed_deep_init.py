"""``repair --embed-loader`` on a package whose ``__init__.py`` nests deeper than Python's parser can go:
one line and exit 2 (the parser's RecursionError or MemoryError is no traceback), nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.cli import main
from slimwheel.repair.embed import init_patch
from slimwheel.repair.errors import RepairError
from tests.support.fixtures_elf import ElfZoo
from tests.support.solver import SOLVER_TAG
from tests.support.wheels import make_wheel

# Each parses to a RecursionError or a MemoryError on CPython, not to a SyntaxError.
DEEP = {
    "unary-minus": b"X = " + b"-" * 1_000_000 + b"1\n",
    "not": b"X = " + b"not " * 1_000_000 + b"x\n",
    "lambda": b"X = " + b"lambda: " * 100_000 + b"1\n",
    "attributes": b"X = a" + b".b" * 1_000_000 + b"\n",
    "sum": b"X = 1" + b" + 1" * 1_000_000 + b"\n",
}


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_a_too_deep_init_is_a_repair_error(kind: str) -> None:
    with pytest.raises(RepairError, match=r"mypkg/__init__\.py does not parse \(it nests too deeply"):
        init_patch("mypkg/__init__.py", DEEP[kind], "mypkg")


@pytest.mark.parametrize("kind", ["unary-minus", "attributes"])
def test_repair_embed_loader_says_it_in_one_line(
    kind: str, elf_zoo: ElfZoo, own_catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "solver/__init__.py": DEEP[kind],
        "solver/_solver.so": elf_zoo.ext_renamed.read_bytes(),
        "solver.libs/libcudss.8f0e2a1b.so.1": elf_zoo.renamed_copy.read_bytes(),
    }
    wheel = make_wheel(tmp_path, "solver", "1.0", files, tag=SOLVER_TAG)
    before = wheel.read_bytes()
    out = tmp_path / "out"
    argv = ["repair", str(wheel), "-w", str(out), "--catalog", str(own_catalog), "--cuda", "13"]
    assert main([*argv, "--isolated-environment", "--embed-loader"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"slimwheel repair: error: {wheel.name}: solver/__init__.py does not parse")
    assert "nests too deeply" in line
    assert wheel.read_bytes() == before
    assert not out.exists() or list(out.iterdir()) == []
