"""Decoders accept the wire as clients meet it: documented variants that real recordings show, each test named
after the quirk. What the IR has no place for is kept as a provider extra, never an error; input too deep for
Python is a clean `DecodeError`."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.protocols.common import load_json
from harness.stream import accumulate, validate
from harness.wire.http import HttpRequest

DEEP = b"[" * 100_000 + b"]" * 100_000
"""JSON nested far deeper than Python's recursion limit (json.loads raises RecursionError on it)."""


def test_json_nested_deeper_than_the_recursion_limit_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="nests too deeply"):
        load_json("openai", DEEP)


@pytest.mark.parametrize("name", registry.names())
def test_deeply_nested_body_is_a_decode_error_for_every_codec(name: str) -> None:
    codec = registry.get(name)
    with pytest.raises(DecodeError):
        codec.decode_response(DEEP)
    # The codec's own request, its body made deep: only the depth can make it fail.
    plain = codec.encode_request(
        ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    )
    request = dataclasses.replace(plain, body=b'{"messages": ' + DEEP + b"}")
    with pytest.raises(DecodeError, match=r"too deep|nests|usable JSON"):
        codec.decode_request(request)
    # An error body that deep still decodes to an error (its text as the message): decode_error never raises.
    assert codec.decode_error(500, {}, DEEP).kind is ir.ErrorKind.SERVER


@pytest.mark.parametrize("name", registry.names())
def test_deeply_nested_tool_arguments_decode_as_unparsed_arguments(name: str) -> None:
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": DEEP.decode()}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    codec = registry.get("openai")
    call = codec.decode_response(json.dumps(body).encode()).content[0]
    assert isinstance(call, ir.ToolCallPart) and call.arguments is None and call.arguments_raw == DEEP.decode()


def test_choice_without_message_after_content_filter() -> None:
    # Azure OpenAI (and OpenAI) may return a choice whose output the content filter removed: no `message`.
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "content_filter", "content_filter_results": {}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5},
    }
    for name in ("openai", "azure"):
        response = registry.get(name).decode_response(json.dumps(body).encode())
        assert response.content == []
        assert response.stop_reason == ir.StopReason(kind="content_filter", raw="content_filter")
        assert response.usage == ir.Usage(input_tokens=5, output_tokens=0)


def test_unknown_top_level_field_is_kept_as_an_openai_extra() -> None:
    body = {
        "id": "c",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "system_fingerprint": "fp_1",
        "brand_new_field": {"a": 1},
    }
    codec = registry.get("openai")
    response = codec.decode_response(json.dumps(body).encode())
    assert response.extras == {"openai": {"system_fingerprint": "fp_1", "brand_new_field": {"a": 1}}}
    # OpenAI's own encoder writes them back; another protocol's does not.
    assert json.loads(codec.encode_response(response).body)["brand_new_field"] == {"a": 1}
    assert b"brand_new_field" not in registry.get("anthropic").encode_response(response).body


def test_unknown_sse_event_name_is_kept_as_a_provider_event() -> None:
    head = b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":'
    body = (
        head + b'[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
        b'event: keepalive\ndata: {"t":1}\n\n' + head + b'[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    codec = registry.get("openai")
    events = decode_events(codec, [body])
    assert ir.ProviderEvent(protocol="openai", type="keepalive", data={"t": 1}) in events
    assert b"event: keepalive" in encode_events(codec, events)


def test_unknown_message_field_is_kept_as_an_anthropic_extra() -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1, "service_tier": "standard"},
        "container": {"id": "c1"},
    }
    codec = registry.get("anthropic")
    response = codec.decode_response(json.dumps(body).encode())
    assert response.extras == {"anthropic": {"usage": {"service_tier": "standard"}, "container": {"id": "c1"}}}
    again = json.loads(codec.encode_response(response).body)
    assert again["container"] == {"id": "c1"} and again["usage"]["service_tier"] == "standard"


def _gemini_chunk(finish: object, **extra: object) -> bytes:
    candidate = {"content": {"parts": [{"text": "hi"}], "role": "model"}, "finishReason": finish, "index": 0}
    return json.dumps({"candidates": [candidate], **extra}).encode()


@pytest.mark.parametrize(("number", "kind"), [(1, "end_turn"), (2, "max_tokens"), (3, "content_filter"), (5, "other")])
def test_gemini_enum_encoding_int_finish_reason(number: int, kind: str) -> None:
    # Google's gapic REST clients (the Go generativelanguage client) ask for `$alt=json;enum-encoding=int`.
    response = registry.get("gemini").decode_response(_gemini_chunk(number))
    assert response.stop_reason is not None and response.stop_reason.kind == kind
    stream = decode_events(registry.get("gemini"), [b"data: " + _gemini_chunk(number) + b"\r\n\r\n"])
    assert isinstance(stream[-1], ir.Done) and stream[-1].stop_reason is not None
    assert stream[-1].stop_reason.kind == kind


def test_gemini_enum_encoding_int_block_reason() -> None:
    body = json.dumps({"promptFeedback": {"blockReason": 1}, "usageMetadata": {"promptTokenCount": 4}}).encode()
    response = registry.get("gemini").decode_response(body)
    assert response.stop_reason is not None and response.stop_reason.raw == "SAFETY"
    assert response.stop_reason.kind == "content_filter"


def test_gemini_enum_encoding_int_calling_mode_and_schema_types() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "weather?"}]}],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "weather",
                        "parameters": {"type": 6, "properties": {"city": {"type": 1}}, "required": ["city"]},
                    }
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": {"mode": 2, "allowedFunctionNames": ["weather"]}},
    }
    request = HttpRequest(
        method="POST",
        path="/v1beta/models/gemini-2.5-flash:generateContent",
        query={"$alt": "json;enum-encoding=int"},
        body=json.dumps(body).encode(),
    )
    decoded = registry.get("gemini").decode_request(request)
    assert decoded.tools[0].parameters == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert decoded.tool_choice == ir.ToolChoiceTool(name="weather")


def test_unknown_gemini_fields_are_kept_as_extras() -> None:
    body = _gemini_chunk(
        "STOP",
        modelVersion="g",
        responseId="r",
        usageMetadata={"promptTokenCount": 3, "serviceTier": "standard"},
        newField=1,
    )
    response = registry.get("gemini").decode_response(body)
    assert response.extras == {"gemini": {"newField": 1, "usageMetadata": {"serviceTier": "standard"}}}


@pytest.mark.parametrize("name", registry.names())
def test_every_encoder_skips_another_protocols_provider_event(name: str) -> None:
    codec = registry.get(name)
    stamp = {"ollama": {"created_at": "2025-08-01T12:00:00.000000000Z"}}  # fixed, so two encodings can compare
    plain: list[ir.StreamEvent] = [
        ir.MessageStart(id="r", model="m", extras=stamp),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="hi"),
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=2, output_tokens=1)),
    ]
    foreign = ir.ProviderEvent(protocol="elsewhere", type="note", data={"a": 1})
    with_event = [*plain[:2], foreign, *plain[2:]]
    assert encode_events(codec, with_event) == encode_events(codec, plain)
    assert validate(with_event) == []
    assert accumulate(with_event).response == accumulate(plain).response
