"""Stream decoder and encoder behaviour on hand-built chunks, one quirk per test."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError, common, decode_events, encode_events
from harness.protocols.openai.stream_encode import obfuscation
from harness.stream import validate
from harness.wire.errors import WireError
from tests.protocols.openai.support import OPENAI, check_stream, sse_payloads

HEAD = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o"}
DONE = b"data: [DONE]\n\n"


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return f"data: {json.dumps({**HEAD, 'choices': choices, **extra})}\n\n".encode()


def _tool(index: int, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **fields}]}


def _events(*parts: bytes) -> list[ir.StreamEvent]:
    events = decode_events(OPENAI, [b"".join(parts)])
    assert validate(events) == []
    return events


def test_tool_name_arriving_after_argument_fragments() -> None:
    events = _events(
        _chunk({"role": "assistant", "content": None}),
        _chunk(_tool(0, id="call_1", function={"arguments": '{"a":'})),
        _chunk(_tool(0, function={"name": "add", "arguments": "1}"})),
        _chunk({}, "tool_calls"),
        DONE,
    )
    # Arguments wait for the name; what waited goes out as one delta together with the naming fragment's.
    assert events[1:4] == [
        ir.ToolCallStart(index=0, id="call_1", name="add"),
        ir.ToolCallDelta(index=0, arguments='{"a":1}'),
        ir.ToolCallEnd(index=0),
    ]


def test_tool_name_and_whole_arguments_in_one_fragment() -> None:
    events = _events(
        _chunk(_tool(0, id="call_1", type="function", function={"name": "f", "arguments": '{"x":1}'})),
        _chunk({}, "tool_calls"),
        DONE,
    )
    assert [e.kind for e in events] == ["message_start", "tool_call_start", "tool_call_delta", "tool_call_end", "done"]


def test_tool_call_without_id_gets_a_deterministic_synthesized_id() -> None:
    body = [_chunk(_tool(0, function={"name": "f", "arguments": "{}"})), _chunk({}, "tool_calls"), DONE]
    first, second = _events(*body), _events(*body)
    start = first[1]
    assert isinstance(start, ir.ToolCallStart) and start.id.startswith("call_")
    assert first == second


def test_tool_fragments_without_index_continue_the_last_call() -> None:
    events = _events(
        _chunk({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{"}}]}),
        _chunk({"tool_calls": [{"function": {"arguments": "}"}}]}),
        _chunk({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "{}"}}]}),
        _chunk({}, "tool_calls"),
        DONE,
    )
    starts = [(e.index, e.id) for e in events if isinstance(e, ir.ToolCallStart)]
    assert starts == [(0, "a"), (1, "b")]


def test_fragment_for_a_closed_tool_call_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="after its block closed"):
        _events(
            _chunk(_tool(0, id="a", function={"name": "f", "arguments": "{"})),
            _chunk(_tool(1, id="b", function={"name": "g", "arguments": "{}"})),
            _chunk(_tool(0, function={"arguments": "}"})),
        )


def test_tool_call_that_never_gets_a_name_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="never received a function name"):
        _events(_chunk(_tool(0, id="a", function={"arguments": "{}"})), _chunk({}, "tool_calls"), DONE)


def test_text_then_reasoning_then_text_opens_three_blocks_in_order() -> None:
    events = _events(
        _chunk({"role": "assistant", "content": "a"}),
        _chunk({"reasoning_content": "r"}),
        _chunk({"content": "b"}),
        _chunk({}, "stop"),
        DONE,
    )
    starts = [(e.kind, e.index) for e in events if e.kind.endswith("_start") and e.kind != "message_start"]
    assert starts == [("text_start", 0), ("thinking_start", 1), ("text_start", 2)]


def test_reasoning_field_wins_over_empty_reasoning_content() -> None:
    events = _events(_chunk({"reasoning_content": "", "reasoning": "think"}), _chunk({}, "stop"), DONE)
    assert ir.ThinkingDelta(index=0, text="think") in events


@pytest.mark.parametrize(
    ("finish", "kind"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("tool_calls", "tool_use"), ("content_filter", "content_filter")],
)
def test_finish_reason_mapping(finish: str, kind: str) -> None:
    done = _events(_chunk({"content": "x"}), _chunk({}, finish), DONE)[-1]
    assert isinstance(done, ir.Done) and done.stop_reason == ir.StopReason(kind=kind, raw=finish)


def test_unknown_finish_reason_is_other_and_refusal_is_refusal() -> None:
    done = _events(_chunk({"content": "x"}), _chunk({}, "eos"), DONE)[-1]
    assert isinstance(done, ir.Done) and done.stop_reason == ir.StopReason(kind="other", raw="eos")
    refused = _events(_chunk({"refusal": "I can't help with that."}), _chunk({}, "stop"), DONE)
    assert ir.TextDelta(index=0, text="I can't help with that.") in refused
    assert ir.TextStart(index=0, refusal=True) in refused  # `delta.refusal` types the block from its start
    last = refused[-1]
    assert isinstance(last, ir.Done) and last.stop_reason == ir.StopReason(kind="refusal", raw="stop")


def test_stream_without_done_marker_ends_malformed_from_close() -> None:
    decoder = OPENAI.stream_decoder()
    events = decoder.feed(_chunk({"content": "x"}) + _chunk({}, "stop"))
    assert events[-1] == ir.TextEnd(index=0)
    tail = decoder.close()
    assert len(tail) == 1 and isinstance(tail[0], ir.ErrorEvent)
    assert tail[0].error.kind == ir.ErrorKind.MALFORMED_STREAM


def test_stream_cut_inside_an_event_ends_malformed() -> None:
    whole = _chunk({"content": "hello"})
    events = decode_events(OPENAI, [whole + whole[:-20]])
    assert validate(events) == []
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent) and "cut inside an event" in last.error.message


def test_done_without_final_blank_line_is_accepted() -> None:
    events = _events(_chunk({"content": "x"}), _chunk({}, "stop"), b"data: [DONE]")
    assert events[-1].kind == "done"


def test_error_chunk_mid_stream_closes_blocks_and_ignores_the_rest() -> None:
    error = {"error": {"message": "boom", "type": "server_error", "code": None}}
    events = _events(
        _chunk({"content": "x"}), f"data: {json.dumps(error)}\n\n".encode(), _chunk({"content": "y"}), DONE
    )
    assert [e.kind for e in events] == ["message_start", "text_start", "text_delta", "text_end", "error"]
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent) and (last.error.kind, last.error.message) == ("server", "boom")


def test_event_error_with_non_json_data_keeps_the_text() -> None:
    events = _events(_chunk({"content": "x"}), b"event: error\ndata: upstream exploded\n\n")
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.message == "upstream exploded"


def test_unknown_event_name_is_kept_and_bad_json_is_a_decode_error_with_its_offset() -> None:
    first = _chunk({"content": "x"})
    events = _events(first, b"event: ping\ndata: {}\n\n", b"data: [DONE]\n\n")
    assert ir.ProviderEvent(protocol="openai", type="ping", data={}) in events
    with pytest.raises(DecodeError, match="not JSON") as caught:
        _events(first, b"data: {nope\n\n")
    assert caught.value.offset is not None and caught.value.offset > len(first)


def test_invalid_utf8_is_a_wire_error() -> None:
    with pytest.raises(WireError):
        decode_events(OPENAI, [b'data: {"x": "\xff"}\n\n'])


def test_n_greater_than_one_streams_are_rejected() -> None:
    chunk = {**HEAD, "choices": [{"index": 1, "delta": {"content": "x"}, "finish_reason": None}]}
    with pytest.raises(DecodeError, match="n=1"):
        _events(f"data: {json.dumps(chunk)}\n\n".encode())


def test_usage_reported_twice_merges_later_figures() -> None:
    events = _events(
        _chunk({"content": "x"}, "stop", usage={"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}),
        _chunk(None, usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}),
        DONE,
    )
    assert events[-1] == ir.Done(
        stop_reason=ir.StopReason(kind="end_turn", raw="stop"), usage=ir.Usage(input_tokens=5, output_tokens=2)
    )


# --- encoder ----------------------------------------------------------------------------------------------


def test_encoder_chunk_order_role_content_tool_fragments_finish_usage_done() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="chatcmpl-e", model="gpt-4o"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hi"),
        ir.TextEnd(index=0),
        ir.ToolCallStart(index=1, id="call_9", name="f"),
        ir.ToolCallDelta(index=1, arguments='{"a"'),
        ir.ToolCallDelta(index=1, arguments=":1}"),
        ir.ToolCallEnd(index=1),
        ir.UsageEvent(usage=ir.Usage(input_tokens=3)),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use"), usage=ir.Usage(output_tokens=4)),
    ]
    body = encode_events(OPENAI, events)
    check_stream(body)
    assert body.endswith(b"\n\ndata: [DONE]\n\n")
    first = {"name": "f", "arguments": ""}
    deltas = [
        (p["choices"][0]["delta"], p["choices"][0]["finish_reason"]) if p["choices"] else p for p in sse_payloads(body)
    ]
    usage_chunk = deltas.pop()
    assert deltas == [
        ({"role": "assistant", "content": "", "refusal": None}, None),
        ({"content": "Hi"}, None),
        ({"tool_calls": [{"index": 0, "id": "call_9", "type": "function", "function": first}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}, None),
        ({}, "tool_calls"),
    ]
    # OpenAI's usage chunk: no choices, every detail count (0 where unknown), and the per-chunk padding.
    assert isinstance(usage_chunk, dict) and usage_chunk["choices"] == []
    assert usage_chunk["usage"] == {
        "prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
        },
    }  # fmt: skip
    payloads = sse_payloads(body)
    assert all(p["id"] == "chatcmpl-e" and p["model"] == "gpt-4o" for p in payloads)
    assert all(isinstance(p["obfuscation"], str) for p in payloads)
    # With include_usage (the default), every chunk before the usage chunk says `usage: null`, as OpenAI does.
    assert all(p["usage"] is None for p in payloads[:-1])
    assert all(c["logprobs"] is None for p in payloads for c in p["choices"])


def test_encoder_writes_no_done_after_an_error_or_an_unfinished_stream() -> None:
    encoder = OPENAI.stream_encoder()
    encoder.encode(ir.MessageStart(id="c", model="m"))
    assert encoder.close() == b""
    error = encode_events(OPENAI, [ir.MessageStart(), ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.TIMEOUT, "slow"))])
    assert sse_payloads(error)[-1] == {
        "error": {"message": "slow", "type": "server_error", "param": None, "code": "timeout"}
    }
    assert not error.endswith(DONE)


def test_encoder_drops_redacted_thinking_and_signatures() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="c", model="m"),
        ir.RedactedThinking(index=0, data="opaque"),
        ir.ThinkingStart(index=1),
        ir.ThinkingDelta(index=1, text="t"),
        ir.ThinkingEnd(index=1, signature="sig"),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=None),
    ]
    body = encode_events(OPENAI, events)
    assert b"opaque" not in body and b"sig" not in body
    assert sse_payloads(body)[1]["choices"][0]["delta"] == {"reasoning_content": "t"}
    usage = sse_payloads(body)[-1]["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (0, 0, 0)


def test_obfuscated_chunk_is_the_padded_chunk_encoded() -> None:
    """The encoder writes an obfuscated chunk by appending the padding to the text its seed already is; every
    chunk must read back as the unpadded chunk plus `obfuscation: obfuscation(unpadded)`, the padding last."""
    texts = ["a", 'é\u2028"\\', "x" * 300, "世界 🎉"]
    events: list[ir.StreamEvent] = [ir.MessageStart(id="chatcmpl-o", model="gpt-4o"), ir.TextStart(index=0)]
    events += [ir.TextDelta(index=0, text=t) for t in texts]
    events += [ir.TextEnd(index=0), ir.Done(stop_reason=ir.StopReason(kind="end_turn"))]
    body = encode_events(OPENAI, events)
    lines = [line.removeprefix(b"data: ") for line in body.split(b"\n") if line.startswith(b"data: {")]
    assert len(lines) == len(texts) + 3  # role chunk, deltas, finish chunk, usage chunk
    for line in lines:
        payload = json.loads(line)
        padding = payload.pop("obfuscation")
        assert padding == obfuscation(payload)
        assert line == common.dump_json({**payload, "obfuscation": padding})
