"""Libraries whose tables sit outside the ends a streamed read keeps.

PyTorch 1.13's ``libtorch_cuda_cu.so`` (763 MB) was rewritten by patchelf when it was built: its
``.dynstr`` (10.9 MB) now ends the file, after the section headers, so ``.shstrtab``, ``.symtab``
and ``.strtab`` sit more than a tail's length before the end. The analysis then spooled the whole
library to disk, and repair's edit planning gave up and let patchelf rewrite it (1.5 GB of memory,
50 s of zlib). Here a gcc-built library, moved about the same way by the real patchelf, is read with
heads and tails of 4 KiB so that every table falls outside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from slimwheel.analysis import inspect as inspection
from slimwheel.repair import apply
from slimwheel.repair.plan import ElfEdit
from slimwheel.wheel import Wheel
from slimwheel.wheel.record import RecordEntry
from tests.support.elfbuild import compile_shared, find_tool, patchelf
from tests.support.wheels import make_wheel

pytestmark = pytest.mark.skipif(find_tool("patchelf") is None, reason="needs patchelf")

_FUNCTIONS = 3000  # enough symbols that each table is tens of KB


def _library(tmp_path: Path) -> Path:
    source = "\n".join(f"int cublasLikeFunction{i}(int x) {{ return x + {i}; }}" for i in range(_FUNCTIONS))
    library = compile_shared(tmp_path / "libmoved.so", {"moved.c": source}, soname="libmoved.so")
    # A search path longer than the old .dynstr has room for: patchelf writes a new .dynstr at the
    # end of the file, as PyTorch's build did.
    return patchelf(library, "--set-rpath", "$ORIGIN/" + "x" * 4000)


def _wheel(tmp_path: Path) -> Path:
    data = _library(tmp_path).read_bytes()
    return make_wheel(tmp_path, "moved", "1.0", {"moved/libmoved.so": data}, tag="py3-none-linux_x86_64")


class _Passes:
    """Counts the real member_view and seekable_member calls of every Wheel."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.views = 0
        self.spools = 0
        monkeypatch.setattr(Wheel, "member_view", self._counted(Wheel.member_view, "views"))
        monkeypatch.setattr(Wheel, "seekable_member", self._counted(Wheel.seekable_member, "spools"))

    def _counted(
        self, method: Callable[..., AbstractContextManager[Any]], field: str
    ) -> Callable[..., AbstractContextManager[Any]]:
        @contextmanager
        def counted(wheel: Wheel, *args: Any, **kwargs: Any) -> Iterator[Any]:
            setattr(self, field, getattr(self, field) + 1)
            with method(wheel, *args, **kwargs) as value:
                yield value

        return counted


def test_the_analysis_keeps_the_moved_tables_on_a_second_pass_instead_of_spooling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_path = _wheel(tmp_path)
    with Wheel.open(wheel_path) as wheel:
        member = wheel.member("moved/libmoved.so")
        whole = inspection._inspect_member(wheel, member, True)  # tables within the default ends
        monkeypatch.setattr(inspection, "_VIEW_HEAD", 4096)
        monkeypatch.setattr(inspection, "_VIEW_TAIL", 4096)
        passes = _Passes(monkeypatch)
        narrow = inspection._inspect_member(wheel, member, True)
    assert whole is not None
    assert narrow == whole
    assert len(whole.exported_api) + len(whole.internal_api) >= _FUNCTIONS  # the symbols were read
    assert (passes.views, passes.spools) == (2, 0)


def test_repair_plans_the_edit_itself_on_a_second_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_path = _wheel(tmp_path)
    monkeypatch.setattr(apply, "_PLAN_HEAD", 4096)
    monkeypatch.setattr(apply, "_PLAN_TAIL", 4096)
    edit = ElfEdit(path="moved/libmoved.so", search_path=("$ORIGIN/../nvidia/cublas/lib",))
    with Wheel.open(wheel_path) as wheel:
        records = apply.checked_record(wheel)
        record: RecordEntry = records[edit.path]
        passes = _Passes(monkeypatch)
        planned = apply._planned(wheel, edit, record)
    assert planned is not None  # not left to patchelf
    assert planned.changes_anything
    assert passes.views >= 2
    assert passes.spools == 0
