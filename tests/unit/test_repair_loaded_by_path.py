"""Which vendored copies the package's Python code names (and so may load by path): repair leaves those."""

from __future__ import annotations

import pytest

from slimwheel.names import names_file

CUDSS = b"libcudss.so.1"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (b'ctypes.CDLL(os.path.join(here, "libcudss.so.1"))', True),
        (b"_lib = 'solver.libs/libcudss.so.1'", True),
        (b"libcudss.so.1", True),
        (b"see libcudss.so.1.", True),  # a full stop ends a sentence, not a version
        (b"load('libcudss.so.12')", False),
        (b"load('libcudss.so.1.0.2')", False),
        (b"load('mylibcudss.so.1')", False),
        (b"load('x-libcudss.so.1')", False),
        (b"load('libcudss.so.1_backup')", False),
        (b"# no library here", False),
        (b"libcudss.so.12, then libcudss.so.1", True),  # the second one counts
    ],
)
def test_a_file_name_counts_only_whole(text: bytes, named: bool) -> None:
    assert names_file(text, CUDSS) is named
