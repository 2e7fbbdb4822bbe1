"""Round trips through the wire: IR -> encode -> decode gives the IR back, up to the codec's listed losses
(applied by `support.project`, driven by the `losses` keys). Every encoded output is schema-checked."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.diff.losses import parse_loss
from harness.protocols import Codec, decode_events, encode_events
from harness.protocols.openai import LOSSES, RESHAPES
from harness.stream import validate
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.openai import support
from tests.protocols.openai.support import coalesce, project, tables

CODECS = [support.OPENAI, support.DEEPSEEK, support.GROQ]


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(request=strategies.requests)
def test_request_round_trip(codec: Codec, request: ir.Request) -> None:
    wire = codec.encode_request(request)
    support.check_request(wire)
    assert codec.is_stream_request(wire) is request.stream
    assert codec.decode_request(wire) == project(request, tables(codec))


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(request=strategies.requests)
def test_decoded_request_reencodes_to_the_same_body(codec: Codec, request: ir.Request) -> None:
    # Pass-through fidelity: decode(encode(x)) re-encodes byte for byte, provider fields and shape included.
    wire = codec.encode_request(request)
    assert codec.encode_request(codec.decode_request(wire)).body == wire.body


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(response=strategies.responses())
def test_response_round_trip(codec: Codec, response: ir.Response) -> None:
    wire = codec.encode_response(response)
    assert wire.status == 200
    support.check_response(wire)
    assert project(codec.decode_response(wire.body), tables(codec)) == project(response, tables(codec))


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(response=strategies.responses(), chunk=st.integers(1, 5))
def test_stream_round_trip(codec: Codec, response: ir.Response, chunk: int) -> None:
    events = strategies.events_for(response, chunk=chunk)
    body = encode_events(codec, events)
    support.check_stream(body)
    decoded = decode_events(codec, [body])
    assert validate(decoded) == []
    expected = strategies.events_for(project(response, tables(codec), streamed=True))
    assert coalesce(project(decoded, tables(codec))) == coalesce(project(expected, tables(codec)))
    assert decode_events(codec, support.chunkings(body)["1-byte"]) == decoded


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(error=strategies.errors)
def test_error_round_trip(codec: Codec, error: ir.IRError) -> None:
    wire = codec.encode_error(error)
    support.check_error(wire)
    back = codec.decode_error(wire.status, wire.headers, wire.body)
    assert (back.kind, back.message, back.retry_after) == (error.kind, error.message, error.retry_after)
    assert back.status == wire.status


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(error=strategies.errors, text=strategies.nonempty_text)
def test_mid_stream_error_round_trip(codec: Codec, error: ir.IRError, text: str) -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="chatcmpl-x", model="m"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text=text),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=error),
    ]
    body = encode_events(codec, events)
    assert not body.endswith(b"data: [DONE]\n\n")  # the documented choice: an error chunk and no [DONE]
    support.check_stream(body)
    decoded = decode_events(codec, [body])
    assert decoded[:4] == events[:4]
    last = decoded[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert (last.error.kind, last.error.message) == (error.kind, error.message)
    assert last.error.status is None and last.error.retry_after is None  # listed losses: no headers mid-stream


def test_loss_keys_follow_the_diff_grammar_and_drive_the_projection() -> None:
    for key in LOSSES:
        parse_loss(key)  # raises LossKeyError for a key the diff could not apply
    # The projection is driven by these keys; a renamed key would silently stop projecting.
    used = {
        "Request.thinking", "ThinkingPart", "ThinkingPart.signature", "RedactedThinkingPart", "ToolResultPart.name",
        "ToolResultPart.is_error", "StopReason.kind:stop_sequence", "StopReason.kind:refusal", "StopReason.raw",
        "StopReason.sequence", "Usage.cache_write_tokens", "Usage.input_tokens", "Usage.output_tokens",
        "Response.id", "Response.model",
    }  # fmt: skip
    assert used <= set(LOSSES)
    assert set(RESHAPES) == {"Message.content order", "Message(role=tool)", "ImagePart outside user messages"}
    assert all(codec.losses is LOSSES and tables(codec) == {**LOSSES, **RESHAPES} for codec in CODECS)


def test_stream_without_include_usage_sends_no_usage_chunk() -> None:
    request = support.OPENAI.decode_request(
        ir_request_body({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    )
    reply = ir.Response(id="c", model="m", content=[ir.TextPart(text="hi")], stop_reason=ir.StopReason(kind="end_turn"))
    events = strategies.events_for(reply)
    body = encode_events(support.OPENAI, events, request)
    payloads = support.sse_payloads(body)
    assert all(p["choices"] for p in payloads)  # no `choices: []` usage chunk
    assert payloads[-1]["choices"][0]["finish_reason"] == "stop"
    assert body.endswith(b"data: [DONE]\n\n")


def ir_request_body(body: dict[str, object]) -> HttpRequest:
    """A wire request with this JSON body."""
    return HttpRequest(method="POST", path="/v1/chat/completions", body=json.dumps(body).encode())
