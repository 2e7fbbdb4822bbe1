"""Round trips through the wire: IR -> encode -> decode gives the IR back, up to the codec's listed losses
(applied by `support.project`, driven by the `losses` keys). Every encoded output is schema-checked."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from hypothesis import given

from harness import ir
from harness.diff.losses import parse_loss
from harness.protocols import Codec, decode_events, encode_events, registry
from harness.protocols.openai import LOSSES, RESHAPES, OpenAICodec
from harness.protocols.openai.mapping import reasoning_effort
from harness.protocols.openai.profiles import SYSTEM_FOLDED, USAGE_DETAILS
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.openai import support
from tests.protocols.openai.support import coalesce, project, tables
from tests.protocols.roundtrip import RoundTrip

CODECS = support.PROFILE_CODECS


def _project(codec: OpenAICodec, value: Any, *, streamed: bool = False) -> Any:
    projected = project(value, tables(codec), streamed=streamed, tool_ids=codec.profile.encode_tool_id)
    if isinstance(value, ir.Request) and value.thinking is not None and codec.profile.reasoning_effort:
        # The level a budget became is not what budget-less settings give back: the decoder remembers it.
        level = reasoning_effort(value.thinking)
        if level != reasoning_effort(projected.thinking):
            projected = projected.model_copy(
                update={"provider_fields": {codec.name: {"_shape": {"reasoning_effort": level}}}}
            )
    return projected


def _consistent(response: ir.Response) -> ir.Response:
    """The IR convention the usage encoders rely on: output tokens include reasoning tokens."""
    usage = response.usage
    if usage.reasoning_tokens is not None and (usage.output_tokens or 0) < usage.reasoning_tokens:
        usage = usage.model_copy(update={"output_tokens": usage.reasoning_tokens})
    return response.model_copy(update={"usage": usage})


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
    # The documented choice: an error chunk and no [DONE]; OpenRouter puts the error in a chunk and still ends
    # with [DONE], as it does for real.
    in_chunk = codec.profile.wire.error_chunk == "in_chunk"  # type: ignore[attr-defined]
    assert body.endswith(b"data: [DONE]\n\n") is in_chunk
    support.check_stream(body, codec)
    decoded = decode_events(codec, [body])
    assert decoded[:4] == events[:4]
    last = decoded[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert last.error.message == error.message
    assert last.error.kind == error.kind or f"IRError.kind:{error.kind.value}" in codec.losses
    assert last.error.status is None and last.error.retry_after is None  # listed losses: no headers mid-stream


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_every_profile_loss_key_follows_the_diff_grammar(codec: OpenAICodec) -> None:
    for key in codec.losses:
        parse_loss(key)  # raises LossKeyError for a key the diff could not apply


def test_loss_keys_drive_the_projection() -> None:
    # The projection is driven by these keys; a renamed key would silently stop projecting.
    used = {
        "ThinkingConfig.budget_tokens", "request.ThinkingPart", "ThinkingPart.signature", "RedactedThinkingPart",
        "ToolResultPart.name", "ToolResultPart.is_error", "StopReason.kind:stop_sequence", "StopReason.kind:refusal",
        "StopReason.raw", "StopReason.sequence", "Usage.cache_write_tokens", "Usage.input_tokens:None",
        "Usage.output_tokens:None", "Response.id", "Response.model",
    }  # fmt: skip
    assert used <= set(LOSSES)
    assert "ThinkingPart" not in LOSSES  # responses do carry thinking (reasoning_content / reasoning)
    assert set(RESHAPES) == {"Message.content order", "Message(role=tool)", "ImagePart outside user messages"}
    assert support.OPENAI.losses == LOSSES
    assert tables(support.OPENAI) == {**LOSSES, **RESHAPES, USAGE_DETAILS: support.OPENAI.reshapes[USAGE_DETAILS]}
    assert {"ToolCallPart.id", "ToolResultPart.tool_call_id"} <= set(registry.get("mistral").losses)
    assert SYSTEM_FOLDED in registry.get("gemma").reshapes  # type: ignore[attr-defined]


def test_profiles_that_send_thinking_back_do_not_declare_it_lost() -> None:
    sending = {c.name for c in CODECS if c.profile.request_reasoning_field}
    assert sending == {"llamacpp", "gptoss"}
    for codec in CODECS:
        assert ("request.ThinkingPart" in codec.losses) is (codec.name not in sending)


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


LOST_KINDS = {
    ir.ErrorKind.NETWORK: ir.ErrorKind.SERVER,
    ir.ErrorKind.MALFORMED_STREAM: ir.ErrorKind.SERVER,
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: ir.ErrorKind.INVALID_REQUEST,
}
"""The kind an error of a kind a profile lists as lost (`IRError.kind:...`) comes back as."""


def _expect_error(codec: OpenAICodec, error: ir.IRError) -> tuple[str, float | None, ir.ErrorKind]:
    lost = f"IRError.kind:{error.kind.value}" in codec.losses
    return error.message, error.retry_after, LOST_KINDS[error.kind] if lost else error.kind


def _stream_events(codec: OpenAICodec, response: ir.Response) -> list[ir.StreamEvent]:
    return coalesce(_project(codec, strategies.events_for(_project(codec, response, streamed=True))))


def _round_trip(codec: OpenAICodec) -> RoundTrip:
    return RoundTrip(
        expect_request=partial(_project, codec),
        expect_response=partial(_project, codec),
        check_request=lambda wire, _request: support.check_request(wire),
        check_response=partial(support.check_response, codec=codec),
        seen_response=partial(_project, codec),
        prepare_response=_consistent,
        expect_stream=lambda response, _chunk: _stream_events(codec, response),
        seen_stream=lambda events: coalesce(_project(codec, events)),
        check_stream=lambda body, _events: support.check_stream(body, codec),
        expect_error=partial(_expect_error, codec),
        seen_error=lambda error: (error.message, error.retry_after, error.kind),
        check_error=lambda wire, _error: support.check_error(wire),
        reencodes_byte_for_byte=True,
    )


ROUND_TRIPS = {codec.name: _round_trip(codec) for codec in CODECS}
"""The generic round trips' parameters, one per profile (tests/protocols/test_contract.py)."""
