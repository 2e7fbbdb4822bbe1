"""SSE decoder and encoder: one test per WHATWG parsing rule and per framing hazard."""

from __future__ import annotations

import pytest

from harness.wire.errors import FramingError
from harness.wire.sse import SSEDecoder, SSEEvent, encode_sse, encode_sse_comment, iter_sse
from tests.wire.chunking import run


def decode(*chunks: bytes, **kwargs: int) -> list[SSEEvent]:
    """All events of `chunks` through one decoder, close() included."""
    return run(lambda: SSEDecoder(**kwargs), chunks)


def fields(events: list[SSEEvent]) -> list[tuple[str, str]]:
    return [(e.event, e.data) for e in events]


def test_event_and_data_fields() -> None:
    assert decode(b"event: message_start\ndata: {}\n\n") == [SSEEvent("message_start", "{}", None, None, 0)]


def test_event_defaults_to_message() -> None:
    assert fields(decode(b"data: x\n\n")) == [("message", "x")]


def test_multiline_data_joined_with_newline() -> None:
    assert fields(decode(b"data: a\ndata: b\ndata:\ndata: c\n\n")) == [("message", "a\nb\n\nc")]


def test_field_without_colon_has_empty_value() -> None:
    assert fields(decode(b"data\n\n")) == [("message", "")]
    assert fields(decode(b"event\ndata: x\n\n")) == [("message", "x")]


def test_only_one_leading_space_is_stripped() -> None:
    assert fields(decode(b"data:  two spaces\n\n")) == [("message", " two spaces")]
    assert fields(decode(b"data:no space\n\n")) == [("message", "no space")]
    assert fields(decode(b"data:\tx \n\n")) == [("message", "\tx ")]


def test_value_keeps_later_colons() -> None:
    assert fields(decode(b'data: {"a": "b:c"}\n\n')) == [("message", '{"a": "b:c"}')]


def test_block_without_data_is_not_dispatched_and_resets_event_type() -> None:
    assert decode(b"event: ping\n\n") == []
    assert fields(decode(b"event: ping\n\ndata: x\n\n")) == [("message", "x")]


def test_event_type_resets_after_dispatch() -> None:
    assert fields(decode(b"event: a\ndata: 1\n\ndata: 2\n\n")) == [("a", "1"), ("message", "2")]


def test_repeated_blank_lines_dispatch_once() -> None:
    assert fields(decode(b"\n\n\ndata: x\n\n\n\n")) == [("message", "x")]


def test_comment_lines_are_recorded_not_dispatched() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b": OPENROUTER PROCESSING\n\n:keepalive\ndata: x\n:  two\n\n")
    assert fields(events) == [("message", "x")]
    assert decoder.comments == ["OPENROUTER PROCESSING", "keepalive", " two"]


def test_unknown_field_is_ignored() -> None:
    assert fields(decode(b"foo: bar\ndata: x\nDATA: y\n\n")) == [("message", "x")]


@pytest.mark.parametrize("newline", [b"\n", b"\r", b"\r\n"], ids=["LF", "CR", "CRLF"])
def test_line_ends(newline: bytes) -> None:
    body = b"event: e\ndata: a\ndata: b\n\ndata: c\n\n".replace(b"\n", newline)
    assert fields(decode(body)) == [("e", "a\nb"), ("message", "c")]


def test_mixed_line_ends() -> None:
    assert fields(decode(b"data: a\rdata: b\r\ndata: c\n\r\n")) == [("message", "a\nb\nc")]


def test_cr_at_chunk_end_followed_by_lf_is_one_line_end() -> None:
    # Read as two line ends, the CR|LF split would be a blank line and dispatch "a" alone.
    assert fields(decode(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")) == [("message", "a\nb")]


def test_cr_then_lf_in_later_chunk_after_empty_chunk() -> None:
    assert fields(decode(b"data: a\r", b"", b"\n", b"\r\n")) == [("message", "a")]


def test_cr_cr_is_two_line_ends() -> None:
    assert fields(decode(b"data: a\r\rdata: b\r\r")) == [("message", "a"), ("message", "b")]


def test_leading_bom_is_stripped_and_counted_in_offsets() -> None:
    events = decode(b"\xef\xbb\xbfdata: x\n\n")
    assert events == [SSEEvent("message", "x", None, None, 3)]


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
def test_bom_split_across_chunks(cut: int) -> None:
    body = b"\xef\xbb\xbfdata: x\n\n"
    assert decode(body[:cut], body[cut:]) == [SSEEvent("message", "x", None, None, 3)]


def test_only_the_first_bom_is_stripped() -> None:
    # The second BOM makes the field name "\ufeffdata", which is unknown and ignored.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == []


def test_bom_later_in_stream_is_ordinary_text() -> None:
    assert fields(decode(b"data: \xef\xbb\xbfx\n\n")) == [("message", "\ufeffx")]


def test_partial_bom_at_eof_is_invalid_utf8() -> None:
    with pytest.raises(FramingError) as info:
        decode(b"\xef\xbb")
    assert info.value.offset == 0


def test_utf8_sequence_split_across_chunks() -> None:
    body = "data: héllo → 世界 🎉\n\n".encode()
    for cut in range(len(body) + 1):
        assert fields(decode(body[:cut], body[cut:])) == [("message", "héllo → 世界 🎉")]


def test_invalid_utf8_raises_with_offset() -> None:
    with pytest.raises(FramingError) as info:
        decode(b"data: ok\n\ndata: b\xff\n\n")
    assert info.value.offset == 17
    assert "invalid UTF-8" in str(info.value)


def test_invalid_utf8_in_comment_raises_too() -> None:
    with pytest.raises(FramingError) as info:
        decode(b": \xc3\n")
    assert info.value.offset == 2


def test_truncated_utf8_at_eof_raises_with_offset() -> None:
    with pytest.raises(FramingError) as info:
        decode(b"data: \xe4\xb8")
    assert info.value.offset == 6


def test_id_persists_across_events() -> None:
    events = decode(b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")
    assert [e.id for e in events] == ["1", "1", ""]


def test_id_containing_nul_is_ignored() -> None:
    events = decode(b"id: 7\ndata: a\n\nid: x\x00y\ndata: b\n\n")
    assert [e.id for e in events] == ["7", "7"]


def test_id_without_data_still_sets_last_event_id() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 42\n\n") == []
    assert decoder.last_event_id == "42"


def test_retry_only_ascii_digits() -> None:
    decoder = SSEDecoder()
    body = b"retry: 3000\ndata: a\n\nretry: 12x\ndata: b\n\nretry: \xd9\xa3\ndata: c\n\nretry:\ndata: d\n\n"
    events = decoder.feed(body)
    assert [e.retry for e in events] == [3000, None, None, None]
    assert decoder.retry == 3000


def test_absurdly_long_retry_is_a_framing_error_not_a_value_error() -> None:
    with pytest.raises(FramingError) as info:
        decode(b"data: a\n\nretry: " + b"9" * 5000 + b"\n")
    assert info.value.offset == 9


def test_retry_without_data_updates_stream_retry() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 500\n\n") == []
    assert decoder.retry == 500


def test_event_offsets_point_at_first_field_line() -> None:
    events = decode(b": c\n\nevent: a\ndata: 1\n\n\r\ndata: 2\n\n")
    assert [e.offset for e in events] == [5, 25]


def test_unterminated_last_event_is_reported_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\n") == [SSEEvent("message", "a", None, None, 0)]
    assert decoder.close() == [SSEEvent("message", "b", None, None, 9, terminated=False)]


def test_last_line_without_line_end_is_parsed_at_close() -> None:
    events = decode(b"event: x\ndata: tail")
    assert events == [SSEEvent("x", "tail", None, None, 0, terminated=False)]


def test_trailing_cr_completes_the_last_line() -> None:
    assert decode(b"data: a\r") == [SSEEvent("message", "a", None, None, 0, terminated=False)]


def test_close_after_complete_stream_returns_nothing() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n: trailing comment")
    assert decoder.close() == []
    assert decoder.comments == ["trailing comment"]


def test_undispatched_fields_at_close_are_dropped() -> None:
    assert decode(b"data: a\n\nevent: orphan\n") == [SSEEvent("message", "a", None, None, 0)]


def test_empty_stream() -> None:
    assert decode() == []
    assert decode(b"", b"") == []


def test_max_event_size_on_complete_lines() -> None:
    with pytest.raises(FramingError) as info:
        decode(b"data: ok\n\nevent: big\ndata: 0123456789\n\n", max_event_size=16)
    assert info.value.offset == 10


def test_max_event_size_on_a_line_still_arriving() -> None:
    decoder = SSEDecoder(max_event_size=16)
    decoder.feed(b"data: ok\n\ndata: ")
    with pytest.raises(FramingError) as info:
        decoder.feed(b"x" * 20)
    assert info.value.offset == 10


def test_max_event_size_counts_one_block_up_to_the_end_of_its_text() -> None:
    body = b"".join(b"data: 0123456789\r\n\r\n" for _ in range(10))  # 16 bytes of text per block
    assert len(decode(body, max_event_size=16)) == 10
    with pytest.raises(FramingError) as info:
        decode(body, max_event_size=15)
    assert info.value.offset == 0
    two_lines = b"event: e\r\ndata: 0123456789\r\n\r\n"  # 10 + 16 bytes, the first line end included
    assert len(decode(two_lines, max_event_size=26)) == 1
    with pytest.raises(FramingError):
        decode(two_lines, max_event_size=25)


def test_comment_lines_do_not_count_toward_the_size_limit() -> None:
    body = b":keep-alive\n" * 100 + b"data: x\n\n"
    assert fields(decode(body, max_event_size=12)) == [("message", "x")]
    with pytest.raises(FramingError) as info:
        decode(body + b"data: 0123456789\n:c\n\n", max_event_size=12)
    assert info.value.offset == 1209


def test_events_before_an_error_are_delivered_and_the_next_call_raises() -> None:
    decoder = SSEDecoder()
    assert fields(decoder.feed(b"data: a\n\ndata: \xff\n\n")) == [("message", "a")]
    with pytest.raises(FramingError) as info:
        decoder.close()
    assert info.value.offset == 15


def test_error_is_sticky() -> None:
    decoder = SSEDecoder()
    with pytest.raises(FramingError):
        decoder.feed(b"data: \xff\n")
    with pytest.raises(FramingError) as info:
        decoder.feed(b"data: fine\n\n")
    assert info.value.offset == 6


def test_feed_after_close_is_a_usage_error() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: x\n\n")


def test_iter_sse_includes_the_unterminated_event() -> None:
    events = list(iter_sse([b"data: a\n", b"\ndata: b"]))
    assert [(e.data, e.terminated) for e in events] == [("a", True), ("b", False)]


def test_encode_sse_layout() -> None:
    assert encode_sse("a\nb", event="delta", id="7", retry=100) == (
        b"event: delta\nid: 7\nretry: 100\ndata: a\ndata: b\n\n"
    )
    assert encode_sse("[DONE]") == b"data: [DONE]\n\n"
    assert encode_sse("x", newline="\r\n") == b"data: x\r\n\r\n"


def test_encode_sse_keeps_leading_space_of_data() -> None:
    assert decode(encode_sse(" x\n")) == [SSEEvent("message", " x\n", None, None, 0)]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": "a\rb"},
        {"data": "x", "event": "a\nb"},
        {"data": "x", "id": "a\x00b"},
        {"data": "x", "id": "a\rb"},
        {"data": "x", "retry": -1},
        {"data": "x", "newline": "\n\n"},
    ],
)
def test_encode_sse_rejects_what_cannot_round_trip(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        encode_sse(**kwargs)  # type: ignore[arg-type]


def test_encode_sse_comment() -> None:
    assert encode_sse_comment("OPENROUTER PROCESSING") == b": OPENROUTER PROCESSING\n\n"
    decoder = SSEDecoder()
    assert decoder.feed(encode_sse_comment("a\nb", newline="\r") + encode_sse("x", event="e")) == [
        SSEEvent("e", "x", None, None, 9)
    ]
    assert decoder.comments == ["a", "b"]
