"""The reference backends' generic reply (`harness.backends.generic`): the documented rule, on each protocol's wire."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.backends.generic import GENERIC_TEXT, generic_reply, respond_generic, sample_arguments
from harness.protocols import HttpRequest, decode_events, registry
from harness.stream import accumulate

WEATHER = ir.Tool(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "days": {"type": "integer"},
        },
        "required": ["location", "unit"],
    },
)


def _user(text: str) -> ir.Message:
    return ir.Message(role="user", content=[ir.TextPart(text=text)])


def test_generic_reply_calls_the_offered_tool_with_a_sample_of_each_required_property() -> None:
    reply = generic_reply(ir.Request(model="m", messages=[_user("Weather?")], tools=[WEATHER]))
    [call] = reply.content
    assert isinstance(call, ir.ToolCallPart)
    assert (call.name, call.arguments) == ("get_weather", {"location": "example", "unit": "c"})
    assert json.loads(call.arguments_raw) == call.arguments
    assert reply.stop_reason.kind == "tool_use"


def test_generic_reply_answers_text_quoting_the_last_user_text() -> None:
    reply = generic_reply(ir.Request(model="m", system="Be brief.", messages=[_user("Hi"), _user("Count to 3.")]))
    [part] = reply.content
    assert isinstance(part, ir.TextPart)
    assert part.text == f'{GENERIC_TEXT} "Count to 3."'
    assert reply.stop_reason.kind == "end_turn"
    assert reply.usage.input_tokens == 6  # words of the system prompt and every message


def test_generic_reply_answers_text_after_a_tool_result_or_when_tools_are_forbidden() -> None:
    result = ir.Message(role="tool", content=[ir.ToolResultPart(tool_call_id="c1", content=[ir.TextPart(text="20C")])])
    after_result = generic_reply(ir.Request(model="m", messages=[_user("Weather?"), result], tools=[WEATHER]))
    forbidden = generic_reply(
        ir.Request(model="m", messages=[_user("Weather?")], tools=[WEATHER], tool_choice=ir.ToolChoiceNone())
    )
    assert [type(p) for p in after_result.content] == [ir.TextPart]
    assert [type(p) for p in forbidden.content] == [ir.TextPart]


def test_generic_reply_calls_the_tool_that_tool_choice_names() -> None:
    other = ir.Tool(name="other")
    reply = generic_reply(
        ir.Request(
            model="m", messages=[_user("x")], tools=[other, WEATHER], tool_choice=ir.ToolChoiceTool(name="get_weather")
        )
    )
    assert [p.name for p in reply.content if isinstance(p, ir.ToolCallPart)] == ["get_weather"]


def test_sample_arguments_are_empty_for_a_schema_without_required_properties() -> None:
    assert (
        sample_arguments(ir.Tool(name="t", parameters={"type": "object", "properties": {"a": {"type": "string"}}}))
        == {}
    )


@pytest.mark.parametrize("backend", ["openai", "anthropic", "gemini"])
def test_respond_generic_streams_the_reply_in_the_backends_own_wire(backend: str) -> None:
    codec = registry.get(backend)
    request = ir.Request(model="m", messages=[_user("Count from 1 to 5.")], stream=True)
    wire = codec.encode_request(request)
    reply = respond_generic(codec, wire)
    assert reply.stream and reply.status == 200 and len(reply.chunks) > 1
    response = accumulate(decode_events(codec, reply.chunks)).response
    assert [p.text for p in response.content if isinstance(p, ir.TextPart)] == [f'{GENERIC_TEXT} "Count from 1 to 5."']


def test_respond_generic_gives_distinct_requests_distinct_ids() -> None:
    codec = registry.get("openai")
    ids = set()
    for text in ("first", "second", "first"):
        wire = codec.encode_request(ir.Request(model="m", messages=[_user(text)]))
        ids.add(
            json.loads(respond_generic(codec, HttpRequest("POST", wire.path, {}, wire.headers, wire.body)).body)["id"]
        )
    assert len(ids) == 2
