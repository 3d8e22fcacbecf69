"""Which library file names a package's code names: one rule for check (a soname its code may load
first) and repair (a copy its code may load by path), read one file at a time."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from slimwheel.sources import CODE_LIMIT, named_by_code
from slimwheel.wheel import Wheel
from tests.support.wheels import make_wheel


class _CountingWheel(Wheel):
    """A real wheel that counts the members opened."""

    opened: list[str]

    def open_member(self, name: str) -> BinaryIO:
        self.opened.append(name)
        return super().open_member(name)


def _wheel(tmp_path: Path) -> _CountingWheel:
    path = make_wheel(
        tmp_path,
        "pkg",
        "1.0",
        {
            "pkg/a.py": b"ctypes.CDLL(os.path.join(here, 'libfoo.so.1'))\n",
            "pkg/b.py": b"ctypes.CDLL('libfoo.so.1'); ctypes.CDLL('libbar.so.2')\n",
            "pkg/c.py": b"print('nothing')\n",
            "pkg/big.json": b'["libbaz.so.3"' + b" " * CODE_LIMIT + b"]",  # generated data: not code
            "pkg/lib/readme.txt": b"libbaz.so.3",  # neither code nor JSON
        },
        tag="cp311-cp311-manylinux_2_17_x86_64",
    )
    wheel = _CountingWheel.open(path)
    assert isinstance(wheel, _CountingWheel)
    wheel.opened = []
    return wheel


def test_each_name_with_the_first_file_by_name_that_names_it(tmp_path: Path) -> None:
    with _wheel(tmp_path) as wheel:
        found = named_by_code(wheel, ["libbar.so.2", "libfoo.so.1", "libbaz.so.3", "libfoo.so"])
    assert found == {"libfoo.so.1": "pkg/a.py", "libbar.so.2": "pkg/b.py"}


def test_files_are_read_only_until_every_name_is_found(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    with wheel:
        assert named_by_code(wheel, []) == {}
        assert wheel.opened == []  # nothing to look for: nothing read
        assert named_by_code(wheel, ["libfoo.so.1"]) == {"libfoo.so.1": "pkg/a.py"}
        assert wheel.opened == ["pkg/a.py"]  # found in the first: the others stay unread
        wheel.opened.clear()
        assert named_by_code(wheel, ["libbar.so.2"], skip=lambda name: name == "pkg/b.py") == {}
        assert "pkg/b.py" not in wheel.opened
