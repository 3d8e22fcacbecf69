"""Where ``repair --embed-loader`` puts its call in ``__init__.py``: after the docstring and the
``from __future__`` imports, in the file's own encoding and line endings, once."""

from __future__ import annotations

import pytest

from slimwheel.repair.embed import InitPatch, call_lines, init_patch, patched_init
from slimwheel.repair.errors import RepairError

CALL = "".join(f"{line}\n" for line in call_lines("mypkg")).encode()


def _patch(text: bytes, distribution: str = "mypkg") -> tuple[InitPatch, bytes]:
    patch = init_patch("mypkg/__init__.py", text, distribution)
    return patch, patched_init(text, patch)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"", CALL),
        (b"from ._ext import f\n", CALL + b"from ._ext import f\n"),
        (b'"""Doc."""\nimport os\n', b'"""Doc."""\n' + CALL + b"import os\n"),
        (b'"""Doc."""', b'"""Doc."""\n' + CALL),  # no newline at the end of the file
        (
            b'"""Doc.\n\nMore."""\n\nfrom __future__ import annotations\nfrom __future__ import (\n'
            b"    division,\n)\n\nimport os\n",
            b'"""Doc.\n\nMore."""\n\nfrom __future__ import annotations\nfrom __future__ import (\n'
            b"    division,\n)\n" + CALL + b"\nimport os\n",
        ),
        # The opening comments stay first: a coding cookie must stay on line 1 or 2.
        (
            b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n# caf\xe9\nX = '\xe9'\n",
            b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n# caf\xe9\n" + CALL + b"X = '\xe9'\n",
        ),
        (b"# c\n@decorate\ndef f(): pass\n", b"# c\n" + CALL + b"@decorate\ndef f(): pass\n"),
        (b"\xef\xbb\xbfimport os\n", b"\xef\xbb\xbf" + CALL + b"import os\n"),
        (b'"""Doc."""\r\nimport os\r\n', b'"""Doc."""\r\n' + CALL.replace(b"\n", b"\r\n") + b"import os\r\n"),
    ],
)
def test_the_call_goes_after_the_docstring_and_future_imports(text: bytes, expected: bytes) -> None:
    patch, patched = _patch(text)
    assert patched == expected
    assert patch.changes_anything
    compile(patched, "mypkg/__init__.py", "exec")
    again, unchanged = _patch(patched)
    assert not again.changes_anything
    assert unchanged == patched


def test_an_earlier_call_is_replaced_not_repeated() -> None:
    text = b'"""Doc."""\nimport os\n'
    _, first = _patch(text, "old-name")
    patch, second = _patch(first)
    assert patch.removed == (2, 6)
    assert second == b'"""Doc."""\n' + CALL + b"import os\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"def (:\n", "mypkg/__init__.py does not parse (invalid syntax, line 1)"),
        (b"x = 1\0\n", "mypkg/__init__.py does not parse"),
        (b'"""Doc."""; from ._ext import f\n', "line 1 holds another statement after the docstring"),
        (CALL.replace(b"del _slimwheel_preload\n", b""), "line 1 starts a call --embed-loader wrote, edited"),
    ],
)
def test_files_the_call_cannot_go_into(text: bytes, message: str) -> None:
    with pytest.raises(RepairError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _patch(text)
