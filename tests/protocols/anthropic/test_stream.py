"""Stream decoding and encoding: Anthropic SSE event by event."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.stream import validate
from tests.protocols.anthropic.support import CODEC, assert_stream_schema, sse_payloads

START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 1},
    },
}
TEXT_START = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
STOP = {"type": "message_stop"}


def sse(*payloads: dict[str, Any]) -> bytes:
    """An SSE body of these data payloads, each named after its type."""
    return b"".join(f"event: {p.get('type', 'message')}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    """A content_block_delta payload carrying text."""
    return {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}


def block_stop(index: int = 0) -> dict[str, Any]:
    """A content_block_stop payload."""
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str | None, usage: dict[str, Any], stop_sequence: str | None = None) -> dict[str, Any]:
    """A message_delta payload with a stop reason and cumulative usage."""
    delta = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
    return {"type": "message_delta", "delta": delta, "usage": usage}


def test_ping_anywhere_and_cumulative_usage() -> None:
    body = sse(
        {"type": "ping"},
        START,
        {"type": "ping"},
        TEXT_START,
        text_delta("Hel"),
        {"type": "ping"},
        text_delta("lo"),
        block_stop(),
        message_delta("stop_sequence", {"output_tokens": 7, "cache_read_input_tokens": 6}, stop_sequence="END"),
        {"type": "ping"},
        STOP,
    )
    events = decode_events(CODEC, [body])
    assert validate(events) == []
    assert events == [
        ir.MessageStart(
            id="msg_1",
            model="claude-haiku-4-5",
            usage=ir.Usage(input_tokens=15, output_tokens=1, cache_read_tokens=5),
        ),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hel"),
        ir.TextDelta(index=0, text="lo"),
        ir.TextEnd(index=0),
        ir.Done(
            stop_reason=ir.StopReason(kind="stop_sequence", raw="stop_sequence", sequence="END"),
            # input_tokens 10 stays from message_start; cache_read is replaced by the cumulative 6
            usage=ir.Usage(input_tokens=16, output_tokens=7, cache_read_tokens=6),
        ),
    ]


def test_mid_stream_error_event_closes_open_blocks() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = sse(START, TEXT_START, text_delta("partial")) + f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    events = decode_events(CODEC, [body])
    assert validate(events) == []
    assert events[-2:] == [
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", code="overloaded_error")),
    ]


def test_error_event_before_message_start_gets_an_empty_start() -> None:
    error = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    events = decode_events(CODEC, [sse(error)])
    assert events == [
        ir.MessageStart(),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER, "Internal server error", code="api_error")),
    ]
    # and the encoder sends such a stream back as the lone error event the API sends
    assert sse_payloads(encode_events(CODEC, events)) == [("error", error)]


def test_non_json_error_event_keeps_its_text() -> None:
    events = decode_events(CODEC, [sse(START) + b"event: error\ndata: upstream died\n\n"])
    assert events[-1] == ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER, "upstream died"))


@pytest.mark.parametrize(
    "cut",
    [0, 30, -4, -len("event: message_stop\ndata: {}\n\n") - 3],
    ids=["empty", "inside-message-start", "inside-message-stop", "before-message-stop"],
)
def test_truncated_stream_ends_with_malformed_stream(cut: int) -> None:
    body = sse(START, TEXT_START, text_delta("Hi"), block_stop(), message_delta("end_turn", {"output_tokens": 2}), STOP)
    events = decode_events(CODEC, [body[:cut]])
    assert validate(events) == []
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind == ir.ErrorKind.MALFORMED_STREAM


def test_complete_last_event_without_blank_line_still_counts() -> None:
    body = sse(START, TEXT_START, text_delta("Hi"), block_stop(), message_delta("end_turn", {"output_tokens": 2}))
    body += b'event: message_stop\ndata: {"type": "message_stop"}'
    events = decode_events(CODEC, [body])
    assert isinstance(events[-1], ir.Done) and events[-1].stop_reason == ir.StopReason(kind="end_turn", raw="end_turn")


def test_blocks_left_open_at_message_stop_are_closed() -> None:
    events = decode_events(CODEC, [sse(START, TEXT_START, text_delta("Hi"), STOP)])
    start = events[0]
    assert isinstance(start, ir.MessageStart)
    assert validate(events) == [] and events[-2:] == [ir.TextEnd(index=0), ir.Done(usage=start.usage)]


def test_unknown_event_type_is_kept_as_a_provider_event_and_unknown_deltas_are_skipped() -> None:
    body = sse(
        START,
        {"type": "message_annotation", "note": "new"},
        TEXT_START,
        {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "x": 1}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {"type": "x"}}},
        text_delta("ok"),
        block_stop(),
        STOP,
    )
    events = decode_events(CODEC, [body])
    assert [e.kind for e in events] == [
        "message_start",
        "provider_event",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    kept = {"type": "message_annotation", "note": "new"}
    assert events[1] == ir.ProviderEvent(protocol="anthropic", type="message_annotation", data=kept)
    # Written back as it came by Anthropic's own encoder; any other protocol has no wire form for it.
    assert b'event: message_annotation\ndata: {"type":"message_annotation","note":"new"}' in encode_events(
        CODEC, events
    )
    openai = registry.get("openai")
    assert b"message_annotation" not in encode_events(openai, events)


@pytest.mark.parametrize(
    ("wire", "kind"),
    [("pause_turn", "other"), ("refusal", "refusal"), ("model_context_window_exceeded", "max_tokens")],
)
def test_pause_turn_refusal_and_context_window_stop_reasons(wire: str, kind: ir.StopKind) -> None:
    events = decode_events(CODEC, [sse(START, message_delta(wire, {"output_tokens": 0}), STOP)])
    usage = ir.Usage(input_tokens=15, output_tokens=0, cache_read_tokens=5)
    assert events[-1] == ir.Done(stop_reason=ir.StopReason(kind=kind, raw=wire), usage=usage)


@pytest.mark.parametrize(
    ("payloads", "message"),
    [
        ((TEXT_START,), "before message_start"),
        ((START, START), "a second message_start"),
        ((START, text_delta("x")), "not open"),
        ((START, TEXT_START, TEXT_START), "already started"),
        (
            (
                START,
                TEXT_START,
                {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "x"}},
            ),
            "on a text block",
        ),
        ((START, STOP, TEXT_START), "after the end of the stream"),
        ((START, {"type": "content_block_start", "index": "0", "content_block": {}}), "index"),
        ((START, {"no_type": 1}), "event data has no type"),
    ],
    ids=["no-start", "two-starts", "delta-unopened", "restart", "type-mismatch", "after-stop", "bad-index", "no-type"],
)
def test_broken_streams_raise_decode_error_with_offset(payloads: tuple[dict[str, Any], ...], message: str) -> None:
    body = sse(*payloads)
    with pytest.raises(DecodeError, match=message) as caught:
        decode_events(CODEC, [body])
    assert caught.value.offset is not None and 0 <= caught.value.offset < len(body)


def test_invalid_json_data_raises_decode_error_at_the_event() -> None:
    head = sse(START)
    with pytest.raises(DecodeError) as caught:
        decode_events(CODEC, [head + b"event: content_block_start\ndata: {oops\n\n"])
    assert caught.value.offset is not None and caught.value.offset >= len(head)


# --- encoder ----------------------------------------------------------------------------------------------


def test_encoder_shape_matches_the_real_api() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="msg_9", model="claude-haiku-4-5", usage=ir.Usage(input_tokens=30, cache_read_tokens=20)),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="Let me see."),
        ir.ThinkingEnd(index=0, signature="c2ln"),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text="Hi"),
        ir.TextEnd(index=1),
        ir.UsageEvent(usage=ir.Usage(reasoning_tokens=4)),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(output_tokens=12)),
    ]
    body = encode_events(CODEC, events)
    assert_stream_schema(body)
    payloads = sse_payloads(body)
    assert [name for name, _ in payloads] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "ping",  # one keep-alive, after the first delta, where real streams mostly have it
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    # Every count the real API sends, 0 where the IR has none.
    assert payloads[0][1]["message"]["usage"] == {
        "input_tokens": 10,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 20,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 0,
    }
    assert payloads[0][1]["message"]["stop_details"] is None
    assert payloads[4][1]["delta"] == {"type": "signature_delta", "signature": "c2ln"}
    assert payloads[6][1] == {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}
    assert payloads[9][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None, "stop_details": None},
        # Cumulative, as the real API sends it: the start's input and cache counts stand beside the output.
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 20,
            "output_tokens": 12,
            "output_tokens_details": {"thinking_tokens": 4},
        },
    }
    assert b"[DONE]" not in body and encode_events(CODEC, []) == b""


def test_encoder_renumbers_blocks_in_wire_order() -> None:
    # IR indices come from the source protocol; the SDK indexes content by position, so the wire counts 0, 1, ...
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="m", model="x"),
        ir.ToolCallStart(index=5, id="t", name="run"),
        ir.ToolCallDelta(index=5, arguments='{"a":1}'),
        ir.ToolCallEnd(index=5),
        ir.RedactedThinking(index=7, data="opaque"),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
    ]
    payloads = [p for _, p in sse_payloads(encode_events(CODEC, events)) if "index" in p]
    assert [(p["type"], p["index"]) for p in payloads] == [
        ("content_block_start", 0),
        ("content_block_delta", 0),  # a tool_use block opens with an empty input_json_delta, as the real API's do
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_stop", 1),
    ]
    assert payloads[1]["delta"] == {"type": "input_json_delta", "partial_json": ""}
    assert payloads[0]["content_block"] == {"type": "tool_use", "id": "t", "name": "run", "input": {}}


def test_encoder_mid_stream_error_form() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", retry_after=3)
    body = encode_events(CODEC, [ir.MessageStart(id="m", model="x"), ir.ErrorEvent(error=error)])
    assert body.endswith(
        b'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}\n\n'
    )


def test_encoder_rejects_a_delta_for_an_unstarted_block() -> None:
    encoder = CODEC.stream_encoder()
    encoder.encode(ir.MessageStart(id="m", model="x"))
    with pytest.raises(ValueError, match="never started"):
        encoder.encode(ir.TextDelta(index=0, text="x"))
