"""Decoding Workers AI streams: the wire bodies Cloudflare's own workers-ai-provider tests serve (read from the
cloudflare/ai snapshot), both the native `response` form and the OpenAI-form chunks newer models send."""

from __future__ import annotations

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.stream import accumulate, validate
from tests.protocols.cloudflare.support import CODEC, check_stream, decode, payloads, provider_body

NATIVE_TOOLS = "should handle streamed tool calls (native format) with tools present"


def _folded(body: bytes) -> ir.Response:
    events = decode(body)
    assert validate(events) == []
    for chunk in (1, 7):
        assert decode_events(CODEC, [body[i : i + chunk] for i in range(0, len(body), chunk)]) == events
    result = accumulate(events)
    assert result.error is None
    return result.response


def test_native_text_chunks_and_done() -> None:
    response = _folded(provider_body("const defaultStreamingHandler"))
    assert response.content == [ir.TextPart(text="Hello chunk1Hello chunk2")]
    assert response.stop_reason == ir.StopReason(kind="end_turn")


def test_p_padding_and_empty_tool_calls_carry_nothing() -> None:
    response = _folded(provider_body("should handle chunk without 'response' field gracefully"))
    assert response.content == [ir.TextPart(text="Hello chunk1")]


def test_native_whole_tool_call_then_finish_reason() -> None:
    response = _folded(provider_body(NATIVE_TOOLS))
    assert response.content == [
        ir.ToolCallPart(
            id="call123", name="get_weather", arguments={"location": "London"}, arguments_raw='{"location": "London"}'
        )
    ]
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="tool_calls")


def test_openai_form_tool_call_chunks() -> None:
    response = _folded(provider_body("should handle streamed tool calls (OpenAI format) with tools present"))
    (call,) = response.content
    assert isinstance(call, ir.ToolCallPart)
    assert (call.id, call.name, call.arguments) == ("chatcmpl-tool-abc", "get_weather", {"location": "London"})
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="tool_calls")


def _with_done_field(body: bytes) -> bytes:
    # These two provider tests end their bodies with a bare `[DONE]` line, which is an SSE field named "[DONE]",
    # not the `data: [DONE]` event Workers AI sends; the provider's lenient parser accepts it.
    assert body.endswith(b"\n\n[DONE]\n\n")
    return body[: -len(b"[DONE]\n\n")] + b"data: [DONE]\n\n"


def test_a_bare_done_line_is_not_the_end_marker() -> None:
    body = provider_body("should handle reasoning field (without _content suffix) if present")
    last = decode(body)[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind == ir.ErrorKind.MALFORMED_STREAM


def test_reasoning_content_then_content_and_the_last_usage_wins() -> None:
    body = _with_done_field(provider_body("should handle content and reasoning_content fields if present"))
    events = decode(body)
    assert events[0] == ir.MessageStart(
        id="chatcmpl-edc8406714f74cca9cff55f929272d9a", model="@cf/meta/llama-3.3-70b-instruct-fp8-fast"
    )
    response = _folded(body)
    assert response.content == [
        ir.ThinkingPart(text="Okay, the user is asking"),
        ir.TextPart(text="A **cow is cool"),
    ]
    # Per-chunk usage here is cumulative; the last figures are the reply's, never a sum.
    assert (response.usage.input_tokens, response.usage.output_tokens) == (13, 1022)
    figures = [e.usage.output_tokens for e in events if isinstance(e, ir.UsageEvent)]
    assert len(figures) > 1 and figures == sorted(figures) and figures[-1] == 1022
    done = events[-1]
    assert isinstance(done, ir.Done) and done.usage is not None and done.usage.output_tokens == 1022


def test_cumulative_usage_events_are_written_as_they_come_and_read_back_last_wins() -> None:
    running = [ir.Usage(input_tokens=30, output_tokens=n) for n in (4, 9)]
    body = encode_events(
        CODEC,
        [
            ir.MessageStart(),
            ir.TextStart(index=0),
            ir.TextDelta(index=0, text="Hello"),
            ir.UsageEvent(usage=running[0]),
            ir.TextDelta(index=0, text=" there"),
            ir.UsageEvent(usage=running[1]),
            ir.TextEnd(index=0),
            ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=30, output_tokens=12)),
        ],
    )
    usages = [p["usage"] for p in payloads(body) if "usage" in p]
    assert [(u["prompt_tokens"], u["completion_tokens"]) for u in usages] == [(30, 4), (30, 9), (30, 12)]
    events = decode(body)
    assert [e.usage.output_tokens for e in events if isinstance(e, ir.UsageEvent)] == [4, 9, 12]
    assert events[-1] == ir.Done(
        stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=30, output_tokens=12)
    )


def test_reasoning_field_without_content_suffix() -> None:
    response = _folded(
        _with_done_field(provider_body("should handle reasoning field (without _content suffix) if present"))
    )
    assert response.content == [ir.ThinkingPart(text="Thinking..."), ir.TextPart(text="Hello")]
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="stop")


def test_premature_termination_is_a_malformed_stream() -> None:
    body = provider_body(NATIVE_TOOLS).replace(b"data: [DONE]\n\n", b"")
    events = decode(body)
    assert validate(events) == []
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind == ir.ErrorKind.MALFORMED_STREAM


def test_native_final_usage_event_and_finalization_sentinel() -> None:
    # The shapes of a real llama stream with tools: an opening empty event, fragments by index, the null sentinel,
    # and the cumulative `{"response": "", "usage"}` event before [DONE].
    body = (
        b'data: {"response":"","tool_calls":[],"p":"abdefghijklmnoprstuvxyz12"}\n\n'
        b'data: {"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"f"}}]}\n\n'
        b'data: {"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":"}}]}\n\n'
        b'data: {"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}\n\n'
        b'data: {"tool_calls":[{"id":null,"type":null,"function":{"name":null}}]}\n\n'
        b'data: {"response":"","usage":{"prompt_tokens":147,"completion_tokens":16,"total_tokens":163,'
        b'"prompt_tokens_details":{"cached_tokens":64},"neurons":1.77}}\n\n'
        b"data: [DONE]\n\n"
    )
    events = decode(body)
    assert [e.kind for e in events] == [
        "message_start", "tool_call_start", "tool_call_delta", "tool_call_delta", "tool_call_end", "usage", "done",
    ]  # fmt: skip
    assert events[-1] == ir.Done(
        stop_reason=ir.StopReason(kind="tool_use"),
        usage=ir.Usage(input_tokens=147, output_tokens=16, cache_read_tokens=64),
        extras={"cloudflare": {"usage": {"neurons": 1.77}}},  # Cloudflare's billing unit: no IR field, kept
    )
    assert payloads(encode_events(CODEC, events))[-1]["usage"]["neurons"] == 1.77


def test_unknown_keys_of_the_first_and_the_usage_event_are_kept_and_written_back() -> None:
    body = (
        b'data: {"response":"","tool_calls":[],"p":"ab","trace_id":"t-1"}\n\n'
        b'data: {"response":"Hi","p":"abd"}\n\n'
        b'data: {"response":"","usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4},"gateway":"g"}\n\n'
        b"data: [DONE]\n\n"
    )
    events = decode(body)
    assert events[0] == ir.MessageStart(extras={"cloudflare": {"trace_id": "t-1"}})
    assert isinstance(events[-1], ir.Done) and events[-1].extras == {"cloudflare": {"gateway": "g"}}
    again = payloads(encode_events(CODEC, events))
    assert again[0]["trace_id"] == "t-1" and "trace_id" not in again[1]
    assert again[-1]["gateway"] == "g"
    assert b"trace_id" not in encode_events(registry.get("openai"), events)


def test_a_workers_ai_provider_event_is_written_back_another_protocols_skipped() -> None:
    start, done = ir.MessageStart(), ir.Done(stop_reason=ir.StopReason(kind="end_turn"))
    own = ir.ProviderEvent(protocol="cloudflare", type="message", data={"note": 1})
    assert payloads(encode_events(CODEC, [start, own, done]))[1] == {"note": 1}
    foreign = ir.ProviderEvent(protocol="anthropic", type="ping", data={"type": "ping"})
    assert encode_events(CODEC, [start, foreign, done]) == encode_events(CODEC, [start, done])


def test_error_envelope_inside_a_stream_ends_it() -> None:
    body = (
        b'data: {"response":"Hi"}\n\n'
        b'data: {"success":false,"errors":[{"code":3040,"message":"Capacity temporarily exceeded"}]}\n\n'
    )
    events = decode(body)
    assert events[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Capacity temporarily exceeded", code="3040")
    )
    assert events[-2] == ir.TextEnd(index=0)


def test_data_after_done_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="after the end"):
        decode(b'data: [DONE]\n\ndata: {"response":"x"}\n\n')


def test_encoder_writes_the_native_keys() -> None:
    events = decode(provider_body(NATIVE_TOOLS))
    body = encode_events(CODEC, events)
    check_stream(body)
    assert body.endswith(b"data: [DONE]\n\n")
    shapes = [sorted(p) for p in payloads(body)]
    # the opening empty event, the whole call, the closing usage event
    assert shapes == [["p", "response", "tool_calls"], ["p", "response", "tool_calls"], ["response", "usage"]]
    call = payloads(body)[1]["tool_calls"]
    assert call == [
        {
            "id": "call123",
            "type": "function",
            "index": 0,
            "function": {"name": "get_weather", "arguments": '{"location": "London"}'},
        }
    ]


def test_every_truncation_of_a_workers_ai_stream_ends_with_one_terminal_event() -> None:
    body = provider_body("should handle streamed tool calls (OpenAI format) with tools present")
    for cut in range(0, len(body), 11):
        events = decode_events(CODEC, [body[:cut]])
        assert validate(events) == [], cut
        assert events[-1].kind in ("error", "done"), cut
