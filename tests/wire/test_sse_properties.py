"""Hypothesis properties of the SSE decoder: chunking never matters, line-end style never matters, garbage only
ever raises FramingError, and what the encoder writes the decoder reads back."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.wire.errors import FramingError
from harness.wire.sse import SSEDecoder, SSEEvent, encode_sse, encode_sse_comment
from tests.wire.chunking import split_at

# Pieces that exercise every branch: field names, colons, spaces, every line end, BOM, NUL, digits, valid and
# broken UTF-8 (a lone continuation byte, a truncated 3-byte sequence, 0xFF).
_TOKENS = [b"data", b"event", b"id", b"retry", b":", b" ", b"\n", b"\r", b"\r\n", b"x", b"7", b"\x00"]
_TOKENS += [b"\xef\xbb\xbf", b"\xc3\xa9", b"\xf0\x9f\x8e\x89", b"\xe4\xb8", b"\xad", b"\xff"]
_LINE_TOKENS = [t for t in _TOKENS if b"\n" not in t and b"\r" not in t]

soup = st.lists(st.sampled_from(_TOKENS), max_size=60).map(b"".join)
valid_soup = st.lists(st.sampled_from([t for t in _TOKENS if t not in (b"\xe4\xb8", b"\xad", b"\xff")]), max_size=60)


def outcome(chunks: list[bytes], max_event_size: int = 1 << 20) -> tuple[str, Any]:
    """Everything observable from decoding `chunks`: events, comments, retry, last id; or the error offset
    with the events delivered before it."""
    decoder = SSEDecoder(max_event_size=max_event_size)
    events: list[SSEEvent] = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.close()
    except FramingError as exc:
        assert exc.offset is not None
        return ("error", (exc.offset, events, decoder.comments, decoder.retry, decoder.last_event_id))
    return ("ok", (events, decoder.comments, decoder.retry, decoder.last_event_id))


@given(soup, st.lists(st.integers(min_value=0, max_value=200), max_size=12))
def test_any_split_gives_the_same_output(body: bytes, cuts: list[int]) -> None:
    assert outcome(split_at(body, cuts)) == outcome([body])


@given(soup, st.integers(min_value=1, max_value=24), st.lists(st.integers(min_value=0, max_value=200), max_size=12))
def test_any_split_gives_the_same_size_limit_error(body: bytes, limit: int, cuts: list[int]) -> None:
    whole = outcome([body], limit)
    assert outcome([body[i : i + 1] for i in range(len(body))], limit) == whole
    assert outcome(split_at(body, cuts), limit) == whole


_FIELDS = [b"data:", b"data: ", b"data:  ", b"event:", b"event: ", b"id: ", b"retry: ", b": ", b"dat"]
_VALUES = [t for t in _LINE_TOKENS if t not in (b"\xe4\xb8", b"\xad", b"\xff")]
_field_lines = st.tuples(st.sampled_from(_FIELDS), st.lists(st.sampled_from(_VALUES), max_size=6).map(b"".join))
event_chunks = st.lists(_field_lines.map(b"".join), min_size=1, max_size=4).map(lambda ls: b"\n".join(ls) + b"\n\n")


@given(
    st.lists(event_chunks, max_size=8),
    st.integers(min_value=0, max_value=8),
    st.just(b"") | valid_soup.map(b"".join) | soup,
    st.integers(min_value=1, max_value=64),
)
def test_a_chunk_per_event_gives_what_one_byte_at_a_time_gives(
    chunks: list[bytes], at: int, other: bytes, limit: int
) -> None:
    # How most servers write a stream: each chunk one whole event (read in one step when it holds only data and
    # event lines), and somewhere a chunk of anything else.
    chunks = [*chunks[:at], other, *chunks[at:]]
    body = b"".join(chunks)
    assert outcome(chunks, limit) == outcome([body[i : i + 1] for i in range(len(body))], limit)
    assert outcome(chunks) == outcome([body])


@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=8))
def test_random_bytes_raise_only_framing_error(body: bytes, cuts: list[int]) -> None:
    result = outcome(split_at(body, cuts))  # anything but FramingError propagates and fails the test
    assert result == outcome([body])


@given(
    st.lists(st.lists(st.sampled_from(_LINE_TOKENS), max_size=8).map(b"".join), max_size=15),
    st.booleans(),
)
def test_lf_cr_and_crlf_variants_give_the_same_events(lines: list[bytes], final_newline: bool) -> None:
    def events(newline: bytes) -> tuple[str, Any]:
        body = newline.join(lines) + (newline if final_newline else b"")
        kind, value = outcome([body])
        if kind == "error":
            return kind, None  # offsets move with the line-end width; that an error happens must not
        decoded, comments, retry, last_id = value
        return kind, ([(e.event, e.data, e.id, e.retry, e.terminated) for e in decoded], comments, retry, last_id)

    assert events(b"\n") == events(b"\r\n") == events(b"\r")


names = st.text(st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]), max_size=12)
datas = st.text(st.characters(exclude_characters="\r", exclude_categories=["Cs"]), max_size=40)
ids = st.none() | names.filter(lambda s: "\0" not in s)


@given(
    st.lists(st.tuples(st.none() | names, datas, ids, st.none() | st.integers(0, 10**6)), max_size=8),
    st.sampled_from(["\n", "\r", "\r\n"]),
    st.lists(st.integers(min_value=0, max_value=2000), max_size=6),
)
def test_encoder_decoder_round_trip(
    events: list[tuple[str | None, str, str | None, int | None]], newline: str, cuts: list[int]
) -> None:
    body = b"".join(
        encode_sse(data, event=event, id=id_, retry=retry, newline=newline) for event, data, id_, retry in events
    )
    body = encode_sse_comment("keep-alive", newline=newline) + body
    kind, value = outcome(split_at(body, cuts))
    assert kind == "ok"
    decoded, comments, _, _ = value
    expected, last_id = [], None
    for event, data, id_, retry in events:
        last_id = id_ if id_ is not None else last_id
        expected.append((event or "message", data, last_id, retry, True))
    assert [(e.event, e.data, e.id, e.retry, e.terminated) for e in decoded] == expected
    assert comments == ["keep-alive"]


@given(valid_soup.map(b"".join))
def test_valid_utf8_never_raises(body: bytes) -> None:
    assert outcome([body])[0] == "ok"
