"""slimwheel.wheel.ahead: a producer on a thread, one step ahead of its consumer; a hash on a thread,
behind its feeder."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator

import pytest

from slimwheel.wheel.ahead import HashBehind, ahead


def test_items_come_in_order() -> None:
    assert list(ahead(iter(range(1000)), depth=3)) == list(range(1000))


def test_the_producers_exception_is_raised_after_its_items() -> None:
    def failing() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("corrupt deflate data")

    items = ahead(failing())
    assert [next(items), next(items)] == [1, 2]
    with pytest.raises(ValueError, match="corrupt deflate data"):
        next(items)


def test_closing_early_stops_the_producer_and_closes_its_source() -> None:
    produced: list[int] = []
    closed = threading.Event()

    def endless() -> Iterator[int]:
        try:
            number = 0
            while True:
                produced.append(number)
                yield number
                number += 1
        finally:
            closed.set()

    before = threading.active_count()
    items = ahead(endless(), depth=2)
    assert [next(items) for _ in range(5)] == [0, 1, 2, 3, 4]
    items.close()
    assert closed.is_set()
    assert len(produced) <= 5 + 2 + 1  # never more than the queue's depth ahead
    assert threading.active_count() == before


def test_hash_behind_gives_the_sha256_of_its_chunks_in_order() -> None:
    chunks = [os.urandom(size) for size in (0, 1, 4096, 1 << 20, 3, 70_000)] * 5
    with HashBehind(depth=2) as behind:
        for chunk in chunks:
            behind.update(chunk)
        view = memoryview(b"the end")
        behind.update(view[4:])
        assert behind.digest() == hashlib.sha256(b"".join(chunks) + b"end").digest()


def test_hash_behind_stops_its_thread_when_left_without_a_digest() -> None:
    before = threading.active_count()

    def failing_pass(behind: HashBehind) -> None:
        with behind:
            for _ in range(10):
                behind.update(b"x" * 1000)
            raise ValueError("a pass failed")

    behind = HashBehind(depth=1)
    with pytest.raises(ValueError, match="a pass failed"):
        failing_pass(behind)
    assert threading.active_count() == before
    with pytest.raises(RuntimeError, match="outside its with block"):
        behind.update(b"late")
