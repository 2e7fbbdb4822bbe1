"""ConverseStream decoding and encoding, event by event: the orders real Bedrock uses and the ones it does not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.protocols.bedrock.stream_encode import event_frame
from harness.stream import validate
from harness.wire.eventstream import encode_message
from tests.protocols.bedrock.support import CODEC, event_types, frames


def ev(event_type: str, **payload: Any) -> bytes:
    """One event frame with Bedrock's three headers."""
    return event_frame(event_type, payload)


def exception(name: str, message: str) -> bytes:
    headers = {":exception-type": name, ":content-type": "application/json", ":message-type": "exception"}
    return encode_message(headers, json.dumps({"message": message}).encode())


START = ev("messageStart", role="assistant")
STOP = ev("messageStop", stopReason="end_turn")
META = ev("metadata", usage={"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}, metrics={"latencyMs": 9})
DONE = ir.Done(
    stop_reason=ir.StopReason(kind="end_turn", raw="end_turn"), usage=ir.Usage(input_tokens=5, output_tokens=2)
)


def decode(*frames_: bytes) -> list[ir.StreamEvent]:
    return decode_events(CODEC, [b"".join(frames_)])


def test_text_opens_on_its_first_delta_and_done_waits_for_metadata() -> None:
    decoder = CODEC.stream_decoder()
    assert decoder.feed(START) == [ir.MessageStart()]
    assert decoder.feed(ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "Hi"})) == [
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hi"),
    ]
    assert decoder.feed(ev("contentBlockStop", contentBlockIndex=0)) == [ir.TextEnd(index=0)]
    assert decoder.feed(STOP) == []  # usage is still to come
    assert decoder.feed(META) == [DONE]
    assert decoder.close() == []


def test_metadata_before_message_stop_and_no_metadata_at_all() -> None:
    assert decode(START, META, STOP)[-1] == DONE
    assert decode(START, STOP)[-1] == ir.Done(stop_reason=ir.StopReason(kind="end_turn", raw="end_turn"))


def test_a_validation_exception_may_be_the_whole_stream() -> None:
    # As recorded by req_llm (agentjido/req_llm converse_stream_validation_exception.json): a 200 whose only
    # frame is the exception.
    events = decode(exception("validationException", "The model returned the following errors: bad image"))
    assert events == [
        ir.MessageStart(),
        ir.ErrorEvent(
            error=ir.IRError.of(
                ir.ErrorKind.INVALID_REQUEST,
                "The model returned the following errors: bad image",
                code="validationException",
            )
        ),
    ]


def test_an_exception_closes_open_blocks_and_ends_the_stream() -> None:
    events = decode(
        START,
        ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "안녕"}),
        exception("throttlingException", "slow down"),
    )
    assert events[-2:] == [
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", code="throttlingException")),
    ]
    assert validate(events) == []
    error_frame = encode_message(
        {":error-code": "AccessDeniedException", ":error-message": "no", ":message-type": "error"}, b""
    )
    assert decode(START, error_frame)[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.PERMISSION, "no", code="AccessDeniedException")
    )


@pytest.mark.parametrize("cut", [0, 1, 11, 40])
def test_a_body_that_stops_early_is_malformed(cut: int) -> None:
    body = START + ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "Hi"})
    events = decode_events(CODEC, [body[: len(body) - cut]])
    error = events[-1]
    assert isinstance(error, ir.ErrorEvent) and error.error.kind is ir.ErrorKind.MALFORMED_STREAM
    assert ("without messageStop" if cut == 0 else "stream ends inside a message") in error.error.message
    assert validate(events) == []


def test_reasoning_deltas_signature_and_redacted_content() -> None:
    events = decode(
        START,
        ev("contentBlockDelta", contentBlockIndex=0, delta={"reasoningContent": {"text": "17 \u00d7 23"}}),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"reasoningContent": {"text": ""}}),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"reasoningContent": {"signature": "EqUB"}}),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"reasoningContent": {"signature": "Cg=="}}),
        ev("contentBlockStop", contentBlockIndex=0),
        ev("contentBlockDelta", contentBlockIndex=1, delta={"reasoningContent": {"redactedContent": "RXRrRQ=="}}),
        ev("contentBlockStop", contentBlockIndex=1),
        STOP,
        META,
    )
    assert events[1:6] == [
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="17 \u00d7 23"),
        ir.ThinkingEnd(index=0, signature="EqUBCg=="),
        ir.RedactedThinking(index=1, data="EtkE"),
        DONE,
    ]


def test_tool_use_start_fragments_and_server_tools() -> None:
    server = {"toolUse": {"name": "nova_code_interpreter", "toolUseId": "tooluse_s", "type": "server_tool_use"}}
    events = decode(
        START,
        ev("contentBlockStart", contentBlockIndex=0, start=server),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"toolUse": {"input": '{"snippet":"1+1"}'}}),
        ev("contentBlockStop", contentBlockIndex=0),
        ev(
            "contentBlockStart",
            contentBlockIndex=1,
            start={"toolUse": {"name": "f", "toolUseId": "t1", "type": "tool_use"}},
        ),
        ev("contentBlockDelta", contentBlockIndex=1, delta={"toolUse": {"input": ""}}),
        ev("contentBlockDelta", contentBlockIndex=1, delta={"toolUse": {"input": '{"a"'}}),
        ev("contentBlockDelta", contentBlockIndex=1, delta={"toolUse": {"input": ":1}"}}),
        ev("contentBlockStop", contentBlockIndex=1),
        ev("futureEvent", something=1),  # an event type this codec does not know: kept (see below)
        ev("messageStop", stopReason="tool_use"),
        META,
    )
    assert events[1:6] == [
        ir.ToolCallStart(index=0, id="t1", name="f"),
        ir.ToolCallDelta(index=0, arguments='{"a"'),
        ir.ToolCallDelta(index=0, arguments=":1}"),
        ir.ToolCallEnd(index=0),
        ir.ProviderEvent(protocol="bedrock", type="futureEvent", data={"something": 1, "p": "a"}),
    ]


def test_an_unknown_event_type_is_kept_and_written_back_as_it_came() -> None:
    # botocore skips the event types its service model lacks, so Bedrock may add some: they are no error.
    future = ev("futureEvent", something=1)
    events = decode(START, future, STOP, META)
    assert events[1] == ir.ProviderEvent(protocol="bedrock", type="futureEvent", data={"something": 1, "p": "a"})
    assert validate(events) == []
    again = encode_events(CODEC, events)
    assert future in again and event_types(again) == ["messageStart", "futureEvent", "messageStop", "metadata"]
    # Another protocol's event has no meaning here, and this one none on another wire.
    foreign = [events[0], ir.ProviderEvent(protocol="openai", type="x", data={}), *events[2:]]
    assert encode_events(CODEC, foreign) == encode_events(CODEC, [events[0], *events[2:]])
    assert b"futureEvent" not in encode_events(registry.get("anthropic"), events)


def test_fields_the_ir_has_no_place_for_are_kept_as_extras_and_written_back() -> None:
    events = decode(
        ev("messageStart", role="assistant", conversationId="c-1"),
        ev("messageStop", stopReason="end_turn", additionalModelResponseFields={"stop_sequence": None}),
        ev(
            "metadata",
            usage={"inputTokens": 5, "outputTokens": 2, "totalTokens": 7, "cacheDetails": []},
            metrics={"latencyMs": 9, "timeToFirstByteMs": 3},
            trace={"guardrail": {}},
            performanceConfig={"latency": "standard"},
        ),
    )
    start, done = events[0], events[-1]
    assert start == ir.MessageStart(extras={"bedrock": {"conversationId": "c-1"}})
    assert isinstance(done, ir.Done)
    assert done.extras == {
        "bedrock": {
            "additionalModelResponseFields": {"stop_sequence": None},
            "usage": {"cacheDetails": []},
            "metrics": {"timeToFirstByteMs": 3},
            "trace": {"guardrail": {}},
            "performanceConfig": {"latency": "standard"},
        }
    }
    payloads = {f["headers"][":event-type"]: f["payload"] for f in frames(encode_events(CODEC, events))}
    assert payloads["messageStart"]["conversationId"] == "c-1"
    assert payloads["messageStop"]["additionalModelResponseFields"] == {"stop_sequence": None}
    assert "additionalModelResponseFields" not in payloads["metadata"]
    assert payloads["metadata"]["trace"] == {"guardrail": {}} and payloads["metadata"]["usage"]["cacheDetails"] == []
    assert payloads["metadata"]["metrics"] == {"latencyMs": 0, "timeToFirstByteMs": 3}


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (ev("contentBlockDelta", contentBlockIndex=0, delta={"toolUse": {"input": "{}"}}), "had no contentBlockStart"),
        (ev("contentBlockStop", contentBlockIndex=3), "never started"),
        (ev("contentBlockDelta", contentBlockIndex="0", delta={"text": "x"}), "expected an integer"),
        (ev("messageStop", stopReason=7), "stopReason is int"),
        (encode_message({":event-type": "messageStart", ":message-type": "event"}, b"not json"), "not JSON"),
        (encode_message({":message-type": "chunk"}, b"{}"), ":message-type is 'chunk'"),
    ],
)
def test_impossible_sequences_raise_with_the_frames_offset(bad: bytes, problem: str) -> None:
    with pytest.raises(DecodeError, match=problem) as info:
        decode(START, bad)
    assert info.value.offset is not None and info.value.offset >= len(START)


def test_frames_after_the_end_and_a_second_stop_are_errors() -> None:
    with pytest.raises(DecodeError, match="after the stream's end"):
        decode(START, STOP, META, STOP)
    delta = ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "x"})
    stop = ev("contentBlockStop", contentBlockIndex=0)
    with pytest.raises(DecodeError, match="already closed"):
        decode(START, delta, stop, stop)
    with pytest.raises(DecodeError, match="which is closed"):
        decode(START, delta, stop, delta)
    with pytest.raises(DecodeError, match="CRC32 mismatch"):
        decode_events(CODEC, [START[:-1] + bytes([START[-1] ^ 1])])


# --- encoding ---------------------------------------------------------------------------------------------


def test_the_encoder_follows_the_recorded_sequence() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="msg_1", model="m", usage=ir.Usage(input_tokens=12)),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="hmm"),
        ir.ThinkingEnd(index=0, signature="sig"),
        ir.TextStart(index=1),
        ir.TextEnd(index=1),
        ir.ToolCallStart(index=2, id="tooluse_1", name="f"),
        ir.ToolCallEnd(index=2),
        ir.UsageEvent(usage=ir.Usage(output_tokens=3)),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
    ]
    body = encode_events(CODEC, events)
    assert event_types(body) == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "contentBlockDelta",
        "contentBlockStop",
        "contentBlockStart",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    payloads = [f["payload"] for f in frames(body)]
    assert payloads[2]["delta"] == {"reasoningContent": {"signature": "sig"}}
    assert payloads[4]["delta"] == {"text": ""}  # an empty text block still exists on the wire
    assert payloads[6]["start"] == {"toolUse": {"name": "f", "toolUseId": "tooluse_1"}}
    assert payloads[-1]["usage"] == {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15}
    decoded = decode_events(CODEC, [body])
    assert [e.kind for e in decoded] == [e.kind for e in events if e.kind != "usage"]


def test_a_failure_before_any_output_is_the_exception_frame_alone() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "Too many requests, please wait before trying again.")
    body = encode_events(CODEC, [ir.MessageStart(id="x"), ir.ErrorEvent(error=error)])
    assert event_types(body) == ["throttlingException"]
    assert frames(body)[0]["payload"] == {"message": "Too many requests, please wait before trying again."}
    assert event_types(encode_events(CODEC, [ir.MessageStart()])) == ["messageStart"]  # sent at close
