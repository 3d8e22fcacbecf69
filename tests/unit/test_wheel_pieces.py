"""PieceBuffer keeps what is appended, in order, in pieces of about a MiB."""

from __future__ import annotations

import random

from slimwheel.wheel._pieces import PIECE_SIZE, PieceBuffer


def test_the_pieces_hold_what_was_appended_in_order() -> None:
    generator = random.Random(7)
    buffer = PieceBuffer()
    appended = []
    for _ in range(40_000):
        data = generator.randbytes(generator.randrange(0, 200))
        buffer.append(data)
        appended.append(data)
    pieces = list(buffer.pieces())
    assert b"".join(pieces) == b"".join(appended)
    assert len(buffer) == sum(map(len, appended))
    assert len(pieces) > 1
    assert all(PIECE_SIZE <= len(piece) < PIECE_SIZE + 200 for piece in pieces[:-1])
    assert list(PieceBuffer().pieces()) == []
