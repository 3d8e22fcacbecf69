"""in_two_threads: the results in the order of the items, the work split by size between this thread
(through the caller's Wheel) and another (through its own open of the same file)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from slimwheel.wheel import Wheel, WheelMember
from slimwheel.wheel.shares import in_two_threads
from tests.support.wheels import make_wheel

SIZES = {"pkg/a.bin": 5000, "pkg/b.bin": 3000, "pkg/c.bin": 2500, "pkg/d.bin": 10}


def _wheel(tmp_path: Path) -> Path:
    files = {name: bytes([i]) * size for i, (name, size) in enumerate(SIZES.items())}
    return make_wheel(tmp_path, "pkg", "1.0", files)


def test_the_results_keep_the_items_order_and_the_work_is_shared(tmp_path: Path) -> None:
    calls: list[tuple[int, int, list[str]]] = []

    def work(source: Wheel, share: Sequence[WheelMember]) -> list[bytes]:
        calls.append((id(source), threading.get_ident(), [m.name for m in share]))
        return [source.read_member(m.name)[:1] * 2 for m in share]

    with Wheel.open(_wheel(tmp_path)) as wheel:
        members = [wheel.member(name) for name in SIZES]
        results = in_two_threads(wheel, members, size=lambda m: m.file_size, work=work, min_bytes=1)
    assert results == [bytes([i]) * 2 for i in range(len(SIZES))]
    (mine, theirs) = sorted(calls, key=lambda call: call[0] != id(wheel))
    assert mine[0] == id(wheel)
    assert mine[1] == threading.get_ident()
    assert theirs[1] != threading.get_ident()  # another thread, through another open
    assert theirs[0] != id(wheel)
    # Largest first to the lighter share: a (5000) here, b (3000) there, c (2500) there, d here.
    assert (mine[2], theirs[2]) == (["pkg/a.bin", "pkg/d.bin"], ["pkg/b.bin", "pkg/c.bin"])


def test_small_work_stays_on_this_thread(tmp_path: Path) -> None:
    threads: set[int] = set()

    def work(source: Wheel, share: Sequence[WheelMember]) -> list[int]:
        threads.add(threading.get_ident())
        return [m.file_size for m in share]

    with Wheel.open(_wheel(tmp_path)) as wheel:
        members = [wheel.member(name) for name in SIZES]
        results = in_two_threads(wheel, members, size=lambda m: m.file_size, work=work, min_bytes=1 << 30)
    assert results == list(SIZES.values())
    assert threads == {threading.get_ident()}
