"""slimwheel.wheel.ahead: a producer on a thread, one step ahead of its consumer."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from slimwheel.wheel.ahead import ahead


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
