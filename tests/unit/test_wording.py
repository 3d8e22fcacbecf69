"""How reports name a list too long for one line (slimwheel.wording)."""

from __future__ import annotations

import pytest

from slimwheel.wording import and_list, some_of

MODULES = [f"cuvs/m{n:02}.abi3.so" for n in range(40)]


def test_a_long_list_names_a_few_and_counts_the_rest() -> None:
    # cuvs-cu12 26.10's 28 modules each made a warning line of 1,500 characters.
    assert (
        some_of(MODULES, 3, noun="files")
        == "cuvs/m00.abi3.so, cuvs/m01.abi3.so, cuvs/m02.abi3.so and 37 more files"
    )
    assert some_of(MODULES, 2) == "cuvs/m00.abi3.so, cuvs/m01.abi3.so and 38 more"


def test_one_left_out_is_named_not_counted() -> None:
    # "and 1 more" takes the room of the name it hides.
    assert some_of(MODULES[:4], 3, noun="files") == ", ".join(MODULES[:4])
    assert some_of(MODULES[:5], 3, noun="files").endswith("and 2 more files")
    assert some_of(MODULES[:1], 3) == "cuvs/m00.abi3.so"
    assert some_of([], 3) == ""


def test_where_the_rest_are_listed_follows_the_count() -> None:
    said = some_of(MODULES[:10], 3, listed_in="--verbose names them all")
    assert (
        said == "cuvs/m00.abi3.so, cuvs/m01.abi3.so, cuvs/m02.abi3.so and 7 more (--verbose names them all)"
    )
    assert some_of(MODULES[:3], 3, listed_in="--verbose names them all") == ", ".join(MODULES[:3])


@pytest.mark.parametrize(
    ("items", "said"),
    [((), ""), (("11",), "11"), (("11", "12"), "11 and 12"), (("11", "12", "13"), "11, 12 and 13")],
)
def test_and_list(items: tuple[str, ...], said: str) -> None:
    assert and_list(items) == said
