"""RECORD's digests are checked for their form and length without being decoded."""

from __future__ import annotations

import io
import string

from hypothesis import example, given, settings
from hypothesis import strategies as st

from slimwheel.errors import WheelError
from slimwheel.wheel.record import _digest_length, _lines, decode_digest, parse_record

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


def _parsed_or_refused(data: bytes | list[bytes]) -> object:
    try:
        return parse_record(data, "w.whl")
    except WheelError as error:
        return ("refused", error.reason)


RECORD_BYTES = st.lists(
    st.sampled_from(
        [
            b"pkg/a.py,sha256=" + b"A" * 43 + b",12",
            b'"pkg/quoted, name.py",sha256=' + b"B" * 43 + b",3",
            b'"pkg/two\nlines.py",,',
            b"pkg/caf\xc3\xa9.py,,",  # UTF-8
            b"pkg/bad\xff.py,,",  # not UTF-8
            b"",
            b"a,b",  # two fields
            b"RECORD,,",
        ]
    ).flatmap(lambda line: st.sampled_from([b"\n", b"\r\n", b"\r"]).map(lambda end: line + end)),
    max_size=12,
).map(b"".join)


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(RECORD_BYTES, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_pieces_parse_as_the_whole_bytes_do(data: bytes, cuts: list[int]) -> None:
    """RECORD is parsed as it is inflated, in pieces cut anywhere: inside a UTF-8 character, between
    a \\r and its \\n, inside a quoted field that spans lines. The entries, or the refusal and its
    words (the byte offset of text that is not UTF-8 included), are those of the whole bytes."""
    points = sorted({min(cut, len(data)) for cut in cuts})
    pieces = [data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)]
    assert _parsed_or_refused(pieces) == _parsed_or_refused(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:  # the lines csv reads are those of io.StringIO(text, newline=""), as before
        assert list(_lines(pieces, "w.whl")) == io.StringIO(text, newline="").readlines()
    whole = _parsed_or_refused(data)
    if isinstance(whole, tuple) and whole and whole[0] == "refused":
        return
    assert whole == _parsed_or_refused([bytes([byte]) for byte in data])  # a byte at a time
