"""The `qwen` codec: OpenAI Chat Completions on the wire, Qwen `<tool_call>` text inside, IR tool calls out."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import decode_events, encode_events, registry
from harness.protocols.openai import schemas as openai_schemas
from harness.protocols.qwen_xml import OWN_LOSSES, PROMPT_LOSSES, XmlToolCallCodec
from harness.protocols.qwen_xml.prompt import TOOLS_HEADER
from harness.stream import accumulate, validate
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest
from harness.wire.sse import SSEDecoder
from tests import strategies

CODEC = registry.get("qwen")
WEATHER = ir.Tool(
    name="get_weather",
    description="Current weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def sse(*contents: str, finish: str = "stop") -> bytes:
    """An OpenAI-compatible (vLLM-style) stream whose content deltas are `contents`."""
    chunks: list[dict[str, Any]] = [
        {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 1, "model": "Qwen/Qwen3-8B",
         "choices": [{"index": 0, "delta": {"role": "assistant", "content": c}, "finish_reason": None}]}
        for c in contents
    ]  # fmt: skip
    chunks.append(
        {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 1, "model": "Qwen/Qwen3-8B",
         "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    )  # fmt: skip
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def check_sse(body: bytes) -> None:
    """Every SSE payload validates against the OpenAI stream schema."""
    decoder = SSEDecoder()
    for event in [*decoder.feed(body), *decoder.close()]:
        if event.data != "[DONE]":
            openai_schemas.validate("StreamPayload", json.loads(event.data))


def test_registered_over_openai_with_merged_losses() -> None:
    assert isinstance(CODEC, XmlToolCallCodec)
    assert CODEC.name == "qwen"
    assert CODEC.stream_media_type == "text/event-stream"
    openai = registry.get("openai")
    assert set(CODEC.losses) == set(openai.losses) | set(OWN_LOSSES)
    assert CODEC.losses["response.ToolCallPart.id"] == OWN_LOSSES["response.ToolCallPart.id"]


def test_tools_in_prompt_adds_the_request_losses_of_the_template() -> None:
    codec = XmlToolCallCodec("openai", "qwen-prompt", tools_in_prompt=True)
    assert set(codec.losses) == set(registry.get("openai").losses) | set(OWN_LOSSES) | set(PROMPT_LOSSES)
    assert "Request.tool_choice" in codec.losses and "Request.tool_choice" not in CODEC.losses
    assert "request.ToolCallPart.id" not in CODEC.losses  # without tools in the prompt, requests pass through


def test_a_call_split_across_sse_chunks_decodes_to_one_tool_call() -> None:
    body = sse("Sure.\n<to", 'ol_call>\n{"name": "get_wea', 'ther", "arguments": {"city": "Paris"}}\n</tool', "_call>")
    events = decode_events(CODEC, [body])
    assert validate(events) == []
    assert not any(isinstance(e, ir.TextDelta) and "<" in e.text for e in events)
    response = accumulate(events).response
    assert response.model == "Qwen/Qwen3-8B"
    assert response.content[0] == ir.TextPart(text="Sure.")
    call = response.content[1]
    assert isinstance(call, ir.ToolCallPart)
    assert (call.name, call.arguments, call.arguments_raw) == ("get_weather", {"city": "Paris"}, '{"city":"Paris"}')
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="stop")
    for size in (1, 5, 64):
        assert decode_events(CODEC, [body[i : i + size] for i in range(0, len(body), size)]) == events


def test_stream_decoder_records_warnings_for_malformed_calls() -> None:
    decoder = CODEC.stream_decoder()
    events = [*decoder.feed(sse("x <tool_call>nope</tool_call>")), *decoder.close()]
    assert accumulate(events).response.content == [ir.TextPart(text="x <tool_call>nope</tool_call>")]
    assert len(decoder.warnings) == 1  # type: ignore[attr-defined]


@given(strategies.responses())
def test_stream_round_trip_through_the_openai_wire(response: ir.Response) -> None:
    body = encode_events(CODEC, strategies.events_for(response))
    check_sse(body)
    assert b"tool_calls" not in body  # the calls travel as text
    decoded = accumulate(decode_events(CODEC, [body])).response
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    found = [p for p in decoded.content if isinstance(p, ir.ToolCallPart)]
    assert [(p.name, p.arguments) for p in found] == [(p.name, p.arguments) for p in calls]
    if calls:
        assert decoded.stop_reason is not None and decoded.stop_reason.kind == "tool_use"


@given(strategies.responses())
def test_response_round_trip_through_the_openai_wire(response: ir.Response) -> None:
    wire = CODEC.encode_response(response)
    openai_schemas.validate("Response", json.loads(wire.body))
    message = json.loads(wire.body)["choices"][0]["message"]
    assert "tool_calls" not in message or not message["tool_calls"]
    decoded = CODEC.decode_response(wire.body)
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    found = [p for p in decoded.content if isinstance(p, ir.ToolCallPart)]
    assert [(p.name, p.arguments) for p in found] == [(p.name, p.arguments) for p in calls]
    # Stream and non-stream decoding agree on the synthesized ids.
    streamed = accumulate(decode_events(CODEC, [encode_events(CODEC, strategies.events_for(response))])).response
    assert [p.id for p in found] == [p.id for p in streamed.content if isinstance(p, ir.ToolCallPart)]


def test_requests_pass_through_to_openai_by_default() -> None:
    request = ir.Request(
        model="qwen3", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])], tools=[WEATHER]
    )
    wire = CODEC.encode_request(request)
    assert wire == registry.get("openai").encode_request(request)
    assert CODEC.decode_request(wire) == registry.get("openai").decode_request(wire)


SUNNY = ir.TextPart(text="sunny")
RESULT = ir.ToolResultPart(tool_call_id="c1", name="get_weather", content=[SUNNY])


def test_tools_in_prompt_renders_the_qwen_template_and_reads_it_back() -> None:
    codec = XmlToolCallCodec("openai", "qwen-prompt", tools_in_prompt=True)
    call = ir.ToolCallPart(id="c1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}')
    request = ir.Request(
        model="qwen3",
        system="Be brief.",
        messages=[
            ir.Message(role="user", content=[ir.TextPart(text="Weather in Paris?")]),
            ir.Message(role="assistant", content=[ir.TextPart(text="Checking."), call]),
            ir.Message(role="tool", content=[RESULT]),
        ],
        tools=[WEATHER],
        tool_choice=ir.ToolChoiceAuto(),
    )  # fmt: skip
    wire = codec.encode_request(request)
    openai_schemas.validate("Request", json.loads(wire.body))
    body = json.loads(wire.body)
    assert "tools" not in body
    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("Be brief.\n\n" + TOOLS_HEADER)
    assert (
        '{"type": "function", "function": {"name": "get_weather", "description": "Current weather"' in system["content"]
    )
    assert body["messages"][2]["content"] == (
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    assert body["messages"][3] == {"role": "user", "content": "<tool_response>\nsunny\n</tool_response>"}
    back = codec.decode_request(wire)
    assert back.system == "Be brief."
    assert back.tools == [WEATHER]
    (text, decoded_call) = back.messages[1].content
    assert text == ir.TextPart(text="Checking.")
    assert isinstance(decoded_call, ir.ToolCallPart)
    assert (decoded_call.name, decoded_call.arguments) == ("get_weather", {"city": "Paris"})
    assert back.messages[2] == ir.Message(
        role="tool",
        content=[
            ir.ToolResultPart(tool_call_id=decoded_call.id, name="get_weather", content=[ir.TextPart(text="sunny")])
        ],
    )


def test_errors_are_the_base_protocols() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", retry_after=3)
    wire = CODEC.encode_error(error)
    assert wire.status == 429
    decoded = CODEC.decode_error(wire.status, wire.headers, wire.body)
    assert (decoded.kind, decoded.message, decoded.retry_after) == (ir.ErrorKind.THROTTLED, "slow down", 3.0)
    assert (
        CODEC.with_auth(HttpRequest(method="POST", path="/v1/chat/completions"), "k").headers["authorization"]
        == "Bearer k"
    )


@given(st.binary(max_size=200))
def test_random_bytes_raise_only_wire_errors(body: bytes) -> None:
    for decode in (
        lambda: CODEC.decode_request(HttpRequest(method="POST", path="/v1/chat/completions", body=body)),
        lambda: CODEC.decode_response(body),
        lambda: decode_events(CODEC, [body]),
    ):
        with contextlib.suppress(WireError):
            decode()
    CODEC.decode_error(500, {}, body)


@pytest.mark.parametrize("style", ["hermes", "coder"])
def test_reference_backend_writes_the_style_it_is_given(style: str) -> None:
    codec = XmlToolCallCodec("openai", f"qwen-{style}", style=style)
    call = ir.ToolCallPart(id="c", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}')
    wire = codec.encode_response(
        ir.Response(id="r", model="m", content=[call], stop_reason=ir.StopReason(kind="tool_use"))
    )
    content = json.loads(wire.body)["choices"][0]["message"]["content"]
    expected = {
        "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
        "</tool_call>",
    }[style]
    assert content == expected
    assert json.loads(wire.body)["choices"][0]["finish_reason"] == "stop"
    decoded = codec.decode_response(wire.body)
    assert [(p.name, p.arguments) for p in decoded.content if isinstance(p, ir.ToolCallPart)] == [
        ("get_weather", {"city": "Paris"})
    ]


def test_a_self_hosted_qwen_server_holds_no_stored_files() -> None:
    """The base `openai` codec has OpenAI's Files (`file_id`); a vLLM or llama.cpp server running Qwen does not, so
    a stored file's id before it is a declared gap, never forwarded."""
    from harness.ir import Capability
    from harness.protocols import registry

    assert Capability.FILE_ID in registry.get("openai").capabilities
    assert Capability.FILE_ID not in registry.get("qwen").capabilities
    assert Capability.FILES in registry.get("qwen").capabilities
