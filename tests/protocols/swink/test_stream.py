"""Decoding swink proxy streams: swink-agent's own test bodies (read from its snapshot) and each event's form."""

from __future__ import annotations

import pytest

from harness import ir
from harness.protocols import DecodeError, encode_events
from harness.stream import accumulate, validate
from tests.protocols.mirror import SWINK, rust_raw_string
from tests.protocols.swink.support import CODEC, PROXY_RS, check_stream, decode, payloads, swink_body


def _chunkings(body: bytes) -> list[list[bytes]]:
    return [[body], [body[i : i + 1] for i in range(len(body))], [body[i : i + 7] for i in range(0, len(body), 7)]]


def test_swink_text_only_body_decodes_to_text_and_done() -> None:
    events = decode(swink_body("text_only_sse_body"))
    assert validate(events) == []
    assert events == [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="hello"),
        ir.TextEnd(index=0),
        ir.Done(
            stop_reason=ir.StopReason(kind="end_turn", raw="stop"),
            usage=ir.Usage(input_tokens=10, output_tokens=20, cache_read_tokens=0, cache_write_tokens=0),
        ),
    ]


def test_swink_text_and_tool_call_body_folds_into_text_then_call() -> None:
    body = swink_body("text_and_tool_call_sse_body")
    for chunks in _chunkings(body):
        from harness.protocols import decode_events

        assert decode_events(CODEC, chunks) == decode(body)
    response = accumulate(decode(body)).response
    assert response.content == [
        ir.TextPart(text="Let me read that."),
        ir.ToolCallPart(id="tc_1", name="read_file", arguments={"path": "foo.rs"}, arguments_raw='{"path":"foo.rs"}'),
    ]
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="tool_use")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (15, 25)


def test_mid_stream_disconnect_is_a_malformed_stream_after_draining_open_blocks() -> None:
    events = decode(swink_body("mid_stream_disconnect_produces_network_error"))
    assert validate(events) == []
    assert [e.kind for e in events] == ["message_start", "text_start", "text_delta", "text_end", "error"]
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert last.error.kind == ir.ErrorKind.MALFORMED_STREAM
    assert "ended unexpectedly" in last.error.message


def test_done_sentinel_without_protocol_terminal_is_an_error_not_done() -> None:
    # swink issue #543: `data: [DONE]` is transport, not the protocol's terminal event.
    events = decode(swink_body("done_sentinel_without_protocol_terminal_produces_stream_error"))
    assert not any(e.kind == "done" for e in events)
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert last.error.kind == ir.ErrorKind.MALFORMED_STREAM
    assert "protocol terminal event" in last.error.message


def test_malformed_event_json_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="not JSON"):
        decode(swink_body("malformed_sse_event_produces_stream_error"))


def _unit(function: str) -> list[ir.StreamEvent]:
    data = rust_raw_string(SWINK.read(PROXY_RS), function)
    start = '{"type":"start"}'
    events = decode(f"data: {start}\n\ndata: {' '.join(data.split())}\n\n".encode())
    return events[1:]


def test_swink_unit_done_event_with_cost() -> None:
    (done,) = _unit("parse_done_event")
    assert done == ir.Done(
        stop_reason=ir.StopReason(kind="end_turn", raw="stop"),
        usage=ir.Usage(input_tokens=10, output_tokens=20, cache_read_tokens=0, cache_write_tokens=0),
    )


def test_swink_unit_error_event_keeps_its_kind() -> None:
    (error,) = _unit("parse_error_event")
    assert error == ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.AUTH, "boom", code="auth"))


def test_swink_unit_tool_call_start_and_thinking_end_signature() -> None:
    proxy = SWINK.read(PROXY_RS)
    start = rust_raw_string(proxy, "parse_tool_call_start_event")
    end = rust_raw_string(proxy, "parse_thinking_end_event")
    events = decode(
        (
            f'data: {{"type":"thinking_start","content_index":1}}\n\ndata: {end}\n\n'
            f"data: {start}\n\n"
            'data: {"type":"tool_call_end","content_index":2}\n\n'
        ).encode()
    )
    assert events[2] == ir.ThinkingEnd(index=0, signature="sig123")
    assert events[3] == ir.ToolCallStart(index=1, id="tc_1", name="read_file")


def test_content_indices_are_renumbered_densely() -> None:
    body = (
        b'data: {"type":"text_start","content_index":4}\n\n'
        b'data: {"type":"text_delta","content_index":4,"delta":"x"}\n\n'
        b'data: {"type":"text_end","content_index":4}\n\n'
        b'data: {"type":"error","stop_reason":"error","error_message":"slow down","error_kind":"throttled"}\n\n'
    )
    events = decode(body)
    assert events[1] == ir.TextStart(index=0)
    assert events[-1] == ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", code="throttled"))


def test_an_event_after_the_terminal_one_is_a_decode_error() -> None:
    body = swink_body("text_only_sse_body") + b'data: {"type":"start"}\n\n'
    with pytest.raises(DecodeError, match="after the terminal event"):
        decode(body)


def test_unknown_event_type_and_unopened_blocks_are_decode_errors() -> None:
    with pytest.raises(DecodeError, match="unknown event type"):
        decode(b'data: {"type":"image_start","content_index":0}\n\n')
    with pytest.raises(DecodeError, match="no open text block"):
        decode(b'data: {"type":"text_delta","content_index":0,"delta":"x"}\n\n')


def test_encoder_writes_the_keys_swink_sends() -> None:
    body = swink_body("text_and_tool_call_sse_body")
    ours = encode_events(CODEC, decode(body))
    check_stream(ours)
    theirs = payloads(body)
    assert [sorted(p) for p in payloads(ours)] == [sorted(p) for p in theirs]
    # Everything but the cost (the harness prices nothing) is the same value.
    assert [{k: v for k, v in p.items() if k != "cost"} for p in payloads(ours)] == [
        {k: v for k, v in p.items() if k != "cost"} for p in theirs
    ]


def test_whole_response_is_a_stream_body() -> None:
    response = ir.Response(content=[ir.TextPart(text="hi")], stop_reason=ir.StopReason(kind="end_turn"))
    wire = CODEC.encode_response(response)
    assert wire.headers["content-type"] == "text/event-stream"
    assert CODEC.decode_response(wire.body).content == [ir.TextPart(text="hi")]
    with pytest.raises(DecodeError, match="ended with an error"):
        CODEC.decode_response(b'data: {"type":"error","stop_reason":"error","error_message":"no"}\n\n')


def test_a_block_with_no_swink_form_takes_no_place_in_the_message() -> None:
    # Redacted thinking is not sent; the text after it is the message's first block, as swink's
    # accumulate_message requires (a start's content_index is the content length so far).
    body = encode_events(
        CODEC,
        [
            ir.MessageStart(),
            ir.RedactedThinking(index=0, data="opaque"),
            ir.TextStart(index=1),
            ir.TextDelta(index=1, text="Hi"),
            ir.TextEnd(index=1),
            ir.Done(stop_reason=ir.StopReason(kind="end_turn")),
        ],
    )
    assert [(p["type"], p.get("content_index")) for p in payloads(body)] == [
        ("start", None),
        ("text_start", 0),
        ("text_delta", 0),
        ("text_end", 0),
        ("done", None),
    ]


def test_unknown_fields_of_start_and_done_are_kept_as_extras_and_written_back() -> None:
    # swink's serde structs ignore fields they do not know, so a server may add some.
    usage = '{"input":3,"output":1,"cache_read":0,"cache_write":0,"total":4}'
    body = (
        b'data: {"type":"start","session":"s-1"}\n\n'
        b'data: {"type":"done","stop_reason":"stop","usage":' + usage.encode() + b',"cost":{},"trace":[1]}\n\n'
    )
    events = decode(body)
    assert events[0] == ir.MessageStart(extras={"swink": {"session": "s-1"}})
    assert isinstance(events[-1], ir.Done) and events[-1].extras == {"swink": {"trace": [1]}}
    start, done = payloads(encode_events(CODEC, events))
    assert start == {"type": "start", "session": "s-1"} and done["trace"] == [1]
    assert done["cost"]["total"] == 0  # the encoder's own cost, not the upstream's


def test_no_provider_event_is_sent_since_swinks_client_rejects_unknown_types() -> None:
    start, end = ir.MessageStart(), ir.Done(stop_reason=ir.StopReason(kind="end_turn"))
    for protocol in ("swink", "anthropic"):
        event = ir.ProviderEvent(protocol=protocol, type="note", data={"type": "note"})
        assert encode_events(CODEC, [start, event, end]) == encode_events(CODEC, [start, end])


def test_every_truncation_of_a_swink_stream_ends_with_one_terminal_event() -> None:
    body = swink_body("text_and_tool_call_sse_body")
    for cut in range(0, len(body), 11):
        events = decode(body[:cut])
        assert validate(events) == [], cut
        assert events[-1].kind in ("error", "done"), cut
