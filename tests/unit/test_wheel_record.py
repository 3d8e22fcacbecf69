"""RECORD's digests are checked for their form and length without being decoded."""

from __future__ import annotations

import string

from hypothesis import example, given, settings
from hypothesis import strategies as st

from slimwheel.wheel.record import _digest_length, decode_digest

DIGEST_LIKE = st.text(alphabet=string.ascii_letters + string.digits + "-_", max_size=90).flatmap(
    lambda body: st.sampled_from(["", "=", "==", "==="]).map(lambda padding: body + padding)
)
ANY_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-_=+/ .\n\x00é", max_size=90)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.one_of(DIGEST_LIKE, ANY_TEXT))
@example("A")  # one character: no whole byte
@example("AAAAA==")  # five characters and padding
@example("a" * 43)  # a sha256 digest's length
@example("=")
@example("")
def test_the_length_is_what_decoding_gives(text: str) -> None:
    decoded = decode_digest(text)
    assert _digest_length(text) == (None if decoded is None else len(decoded))
