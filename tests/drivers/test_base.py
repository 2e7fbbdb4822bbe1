"""Shared driver parts: the event builder, error normalization, class names, the registry."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.drivers import base, get, names
from harness.drivers.event_builder import EventBuilder
from harness.drivers.registry import UnknownDriverError
from harness.scenarios import SdkException
from harness.stream import validate


def test_builder_flows_text_and_thinking_into_numbered_blocks() -> None:
    b = EventBuilder()
    b.flow_thinking("")
    b.flow_thinking("hmm", signature="s1")
    b.flow_text("")
    b.flow_text("Hi")
    b.flow_text(" there")
    b.tool_call("t", id="c1", name="f", arguments="{}")
    events = b.done(ir.StopReason(kind="tool_use"))
    assert events == [
        ir.MessageStart(),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="hmm"),
        ir.ThinkingEnd(index=0, signature="s1"),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text="Hi"),
        ir.TextDelta(index=1, text=" there"),
        ir.TextEnd(index=1),
        ir.ToolCallStart(index=2, id="c1", name="f"),
        ir.ToolCallDelta(index=2, arguments="{}"),
        ir.ToolCallEnd(index=2),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
    ]
    assert validate(events) == []


def test_builder_fail_closes_open_blocks_and_refuses_a_second_end() -> None:
    b = EventBuilder()
    b.open(0, "text")
    b.delta(0, "x")
    b.add_usage(ir.Usage(input_tokens=3))
    b.add_usage(ir.Usage(output_tokens=4))
    error = ir.IRError.of(ir.ErrorKind.SERVER, "boom")
    events = b.fail(error)
    assert events[-2:] == [ir.TextEnd(index=0), ir.ErrorEvent(error=error)]
    assert b.usage == ir.Usage(input_tokens=3, output_tokens=4)
    with pytest.raises(RuntimeError, match="already ended"):
        b.done(None)


@pytest.mark.parametrize(
    ("status", "message", "code", "kind"),
    [
        (429, "slow", None, ir.ErrorKind.THROTTLED),
        (400, "bad", "context_length_exceeded", ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, "prompt is too long: 250000 tokens", None, ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, "bad", "invalid_request_error", ir.ErrorKind.INVALID_REQUEST),
        (529, "Overloaded", None, ir.ErrorKind.OVERLOADED),
        (500, "oops", None, ir.ErrorKind.SERVER),
    ],
)
def test_error_from_status(status: int, message: str, code: str | None, kind: ir.ErrorKind) -> None:
    error = base.error_from_status(status, message, code=code, headers={"Retry-After": "3"})
    assert (error.kind, error.status, error.retry_after, error.code) == (kind, status, 3.0, code)


@pytest.mark.parametrize(
    ("message", "code", "kind"),
    [
        ("Overloaded", "overloaded_error", ir.ErrorKind.OVERLOADED),
        ("x", "RESOURCE_EXHAUSTED", ir.ErrorKind.THROTTLED),
        ("model is overloaded, please retry", None, ir.ErrorKind.OVERLOADED),
        ("something broke", None, ir.ErrorKind.SERVER),
    ],
)
def test_error_in_stream(message: str, code: str | None, kind: ir.ErrorKind) -> None:
    error = base.error_in_stream(message, code=code)
    assert (error.kind, error.status, error.message) == (kind, None, message)


def test_neutral_for_status() -> None:
    assert [base.neutral_for_status(s) for s in (200, 401, 404, 429, 500, 503, 529, 418)] == [
        SdkException.STREAM_ERROR,
        SdkException.AUTHENTICATION,
        SdkException.NOT_FOUND,
        SdkException.RATE_LIMIT,
        SdkException.SERVER_ERROR,
        SdkException.OVERLOADED,
        SdkException.OVERLOADED,
        SdkException.BAD_REQUEST,
    ]


def test_public_name_drops_private_modules() -> None:
    import json

    import openai

    assert base.public_name(openai.APIError("m", request=None, body=None)) == "openai.APIError"  # type: ignore[arg-type]
    assert base.public_name(json.JSONDecodeError("m", "", 0)) == "json.decoder.JSONDecodeError"


def test_registry() -> None:
    assert names() == ["anthropic", "bedrock", "cloudflare", "gemini", "ollama", "openai", "responses", "swink"]
    assert [get(n).name for n in names()] == names()
    assert isinstance(get("openai"), base.Driver)
    with pytest.raises(UnknownDriverError, match="no SDK driver for protocol 'groq'"):
        get("groq")


BROKEN_STREAMS = {
    "openai": b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: {broken\n\n',
    "anthropic": b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message",'
    b'"role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: content_block_start\ndata: {broken\n\n',
    "gemini": b'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}\n\ndata: {broken\n\n',
    "ollama": b'{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}\n{broken\n',
}
DECODE_CLASSES = {
    "openai": "json.decoder.JSONDecodeError",
    "anthropic": "json.decoder.JSONDecodeError",
    "gemini": "google.genai.errors.UnknownApiResponseError",
    "ollama": "json.decoder.JSONDecodeError",
}


@pytest.mark.parametrize("protocol", sorted(BROKEN_STREAMS))
def test_broken_json_is_a_decode_error_not_a_crash(protocol: str) -> None:
    from tests.drivers.mock import SCENARIOS, Recorder, Reply

    for stream, body in ((True, BROKEN_STREAMS[protocol]), (False, b"{broken")):
        rec = Recorder(Reply.stream(body) if stream else Reply(200, body, {"content-type": "application/json"}))
        client = rec.httpx_client() if protocol == "ollama" else rec.httpx2_client()
        request = SCENARIOS["text-basic"].request_for("m", stream=stream)
        result = get(protocol).run(request, stream=stream, base_url="http://proxy", http_client=client)
        assert result.exception is SdkException.DECODE_ERROR
        assert result.exception_class == (DECODE_CLASSES[protocol] if stream else "json.decoder.JSONDecodeError")
        assert result.error is not None and result.error.kind is ir.ErrorKind.MALFORMED_STREAM
        if stream:
            assert result.events is not None and result.events[-1] == ir.ErrorEvent(error=result.error)


_FLOWS = st.lists(
    st.tuples(st.sampled_from(["text", "thinking", "end", "tool"]), st.sampled_from(["", "a", "bc", "\u00e9"])),
    max_size=12,
)


@given(_FLOWS)
def test_flowing_text_is_the_keyed_calls(ops: list[tuple[str, str]]) -> None:
    """`flow_text` / `flow_thinking` (which continue an open block of their kind without the keyed calls) build
    what the keyed calls build: close a block of the other kind, open one, add the piece."""
    flowing, keyed = EventBuilder(), EventBuilder()
    for i, (op, text) in enumerate(ops):
        if op == "end":
            flowing.end_flow()
            keyed.close("flow")
        elif op == "tool":
            flowing.tool_call(i, id=f"c{i}", name="f", arguments=text)
            keyed.close("flow")
            keyed.open(i, "tool_call", id=f"c{i}", name="f")
            keyed.delta(i, text)
            keyed.close(i)
        else:
            kind: Literal["text", "thinking"] = "text" if op == "text" else "thinking"
            (flowing.flow_text if kind == "text" else flowing.flow_thinking)(text)
            if text:
                if keyed.is_open("flow") and keyed._open["flow"].kind != kind:
                    keyed.close("flow")
                if not keyed.is_open("flow"):
                    keyed.open("flow", kind)
                keyed.delta("flow", text)
    assert [e.model_dump() for e in flowing.done(None)] == [e.model_dump() for e in keyed.done(None)]
