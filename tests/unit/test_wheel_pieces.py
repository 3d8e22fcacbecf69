"""PieceBuffer keeps what is appended, in order, in pieces of about a MiB; past its memory limit, in
a temporary file."""

from __future__ import annotations

import random

import pytest

from slimwheel.wheel._pieces import PIECE_SIZE, PieceBuffer


@pytest.mark.parametrize(("memory_limit", "spilled"), [(64 << 20, False), (2 << 20, True), (0, True)])
def test_the_pieces_hold_what_was_appended_in_order(memory_limit: int, spilled: bool) -> None:
    generator = random.Random(7)
    buffer = PieceBuffer(memory_limit=memory_limit)
    appended = []
    for _ in range(60_000):
        data = generator.randbytes(generator.randrange(0, 200))
        buffer.append(data)
        appended.append(data)
        if len(appended) == 30_000:  # read halfway: appending goes on after it
            assert b"".join(buffer.pieces()) == b"".join(appended)
    pieces = list(buffer.pieces())
    assert b"".join(pieces) == b"".join(appended)
    assert len(buffer) == sum(map(len, appended))
    assert buffer.spilled == spilled
    assert len(pieces) > 1
    assert all(len(piece) < PIECE_SIZE + 200 for piece in pieces)
    buffer.close()
    assert not buffer.spilled


def test_an_empty_buffer_has_no_pieces() -> None:
    assert list(PieceBuffer().pieces()) == []
