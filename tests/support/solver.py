"""A small 'solver' package around the gcc-built cuDSS stand-ins, fat in each vendoring style."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import analyse_wheel
from slimwheel.catalog.model import Catalog
from slimwheel.cli import main
from slimwheel.repair import RepairOptions, RepairPlan, plan_repair
from slimwheel.wheel import Wheel
from tests.support.elfbuild import patchelf
from tests.support.fixtures_elf import ElfZoo
from tests.support.wheels import make_wheel

__all__ = ["SOLVER_INIT", "SOLVER_TAG", "fat_solver_wheel", "repair_to_json", "unresolvable_library"]

# Already manylinux-tagged (as after `auditwheel repair --exclude ...`); linux_* ones are tested apart.
SOLVER_TAG = "py3-none-manylinux_2_17_x86_64"
SOLVER_INIT = b"""\
import ctypes, os
_library = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "_solver.so"))
def version():
    return _library.solver_cudss_version()
"""


def fat_solver_wheel(
    directory: Path, zoo: ElfZoo, style: str = "auditwheel", *, more: Mapping[str, bytes] | None = None
) -> Path:
    """``solver`` with its own copy of libcudss: auditwheel's hashed copy, a renamed one, or a plain one;
    and ``more`` files."""
    directory.mkdir(parents=True, exist_ok=True)
    if style == "auditwheel":
        files = {
            "solver/_solver.so": zoo.ext_auditwheel.read_bytes(),
            "solver.libs/libcudss-1a2b3c4d.so.1.0.0": zoo.auditwheel_copy.read_bytes(),
        }
    elif style == "renamed":
        files = {
            "solver/_solver.so": zoo.ext_renamed.read_bytes(),
            "solver.libs/libcudss.8f0e2a1b.so.1": zoo.renamed_copy.read_bytes(),
        }
    else:
        files = {
            "solver/_solver.so": zoo.ext_dynamic.read_bytes(),
            "solver/libcudss.so.1": zoo.libcudss.read_bytes(),
        }
    files["solver/__init__.py"] = SOLVER_INIT
    files.update(more or {})
    return make_wheel(directory, "solver", "1.0", files, tag=SOLVER_TAG)


def unresolvable_library(zoo: ElfZoo, work: Path) -> bytes:
    """A library that needs ``libnowhere.so.3``, which nothing installs: an error of the input's that
    no repair can mend (an empty or relative search-path entry, repair now drops)."""
    target = work / "libunresolvable.so.1"
    target.write_bytes(zoo.relative_rpath.read_bytes())
    patchelf(target, "--remove-rpath")
    patchelf(target, "--add-needed", "libnowhere.so.3")
    return target.read_bytes()


def repair_to_json(
    capsys: pytest.CaptureFixture[str], wheel: Path, out: Path, catalog: Path, *extra: str
) -> dict[str, Any]:
    """``slimwheel repair --json`` in this process; it must succeed. Returns the one wheel's report."""
    assert main(["repair", str(wheel), "-w", str(out), "--catalog", str(catalog), "--json", *extra]) == 0
    (result,) = json.loads(capsys.readouterr().out)["wheels"]
    assert isinstance(result, dict)
    return result


def plan_for_cuda13(wheel: Wheel, catalog: Catalog) -> RepairPlan:
    """The plan repair makes for ``wheel`` with --cuda 13, from a fresh analysis."""
    return plan_repair(
        analyse_wheel(wheel, catalog),
        catalog,
        requires_dist=wheel.requires_dist(),
        dist_info=wheel.dist_info,
        options=RepairOptions(cuda_major=13),
    )
