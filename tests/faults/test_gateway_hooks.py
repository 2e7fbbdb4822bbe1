"""The gateway faults' hooks in isolation: stateful ones keep their state per request, protocol-specific ones leave
other protocols alone, and each rewrites only what its bug breaks."""

from __future__ import annotations

import json

from harness import ir
from harness.faults import gateway_hooks as g
from harness.proxy import HookContext, TranslateHooks

OPENAI_TO_GEMINI = HookContext("openai", "gemini", stream=True)
GEMINI_TO_OPENAI = HookContext("gemini", "openai", stream=True)


def _run(bound: TranslateHooks, events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    return [out for event in events for out in bound.on_upstream_event(event)]


def _text(index: int, text: str) -> list[ir.StreamEvent]:
    return [ir.TextStart(index=index), ir.TextDelta(index=index, text=text)]


def test_a_call_with_empty_arguments_is_dropped_and_one_with_arguments_kept() -> None:
    empty = [
        ir.ToolCallStart(index=0, id="a", name="now"),
        ir.ToolCallDelta(index=0, arguments=""),
        ir.ToolCallEnd(index=0),
    ]
    full = [
        ir.ToolCallStart(index=1, id="b", name="w"),
        ir.ToolCallDelta(index=1, arguments="{}"),
        ir.ToolCallEnd(index=1),
    ]
    done = ir.Done(stop_reason=ir.StopReason(kind="tool_use"))
    assert _run(g.EMPTY_ARGUMENTS_CALL_DROPPED.bind(OPENAI_TO_GEMINI), [*empty, *full, done]) == [*full, done]


def test_only_a_truncated_stream_becomes_a_stop_and_open_blocks_are_closed() -> None:
    cut = ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "no [DONE]"))
    out = _run(g.TRUNCATED_STREAM_AS_STOP.bind(OPENAI_TO_GEMINI), [*_text(0, "cut sh"), cut])
    assert [e.kind for e in out] == ["text_start", "text_delta", "text_end", "done"]
    overloaded = ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded"))
    assert _run(g.TRUNCATED_STREAM_AS_STOP.bind(OPENAI_TO_GEMINI), [*_text(0, "x"), overloaded])[-1] == overloaded


def test_error_faults_change_only_the_errors_of_their_bug() -> None:
    throttled = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", status=429, retry_after=7.0)
    assert g.RETRY_AFTER_DROPPED.on_error(throttled).model_dump() == {**throttled.model_dump(), "retry_after": None}
    assert g.OVERLOADED_AS_SERVER_ERROR.on_error(throttled) == throttled
    flattened = g.ERROR_STATUS_FLATTENED.on_error(throttled)
    assert (flattened.kind, flattened.status, flattened.retry_after) == (ir.ErrorKind.SERVER, 500, None)
    assert g.STREAM_ERROR_AFTER_200.on_stream_error is not None
    assert [e.kind for e in g.STREAM_ERROR_AFTER_200.on_stream_error(throttled)] == ["message_start", "error"]


def test_the_gemini_error_chunk_is_rewritten_only_on_a_gemini_frontend() -> None:
    chunk = b'data: {"error":{"code":503,"message":"Overloaded","status":"UNAVAILABLE"}}\n\n'
    rewritten = g.GEMINI_STREAM_ERROR_OPENAI_SHAPED.bind(GEMINI_TO_OPENAI).on_frontend_bytes(chunk)
    assert json.loads(rewritten.decode().removeprefix("data: ")) == {
        "error": {"message": "Overloaded", "type": None, "param": None, "code": "500"}
    }
    assert g.GEMINI_STREAM_ERROR_OPENAI_SHAPED.bind(OPENAI_TO_GEMINI).on_frontend_bytes(chunk) == chunk


def test_parallel_calls_get_index_zero_only_on_an_openai_frontend() -> None:
    chunk = b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b"}]}}]}\n\n'
    out = g.PARALLEL_CALLS_SAME_INDEX.bind(OPENAI_TO_GEMINI).on_frontend_bytes(chunk)
    assert json.loads(out.decode().removeprefix("data: "))["choices"][0]["delta"]["tool_calls"][0]["index"] == 0
    assert g.PARALLEL_CALLS_SAME_INDEX.bind(GEMINI_TO_OPENAI).on_frontend_bytes(chunk) == chunk


def test_request_faults_rewrite_what_their_bug_loses() -> None:
    result = ir.ToolResultPart(tool_call_id="c", name="get_weather", content=[ir.TextPart(text="18°C")])
    request = ir.Request(
        model="m",
        system="Be brief.",
        messages=[ir.Message(role="tool", content=[result])],
        tools=[ir.Tool(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})],
        tool_choice=ir.ToolChoiceTool(name="get_weather"),
    )
    assert g.SYSTEM_AS_USER_TURN.on_upstream_request(request).messages[0].content == [ir.TextPart(text="Be brief.")]
    assert g.SYSTEM_AS_USER_TURN.on_upstream_request(request).system is None
    assert g.TOOL_SCHEMA_EMPTIED.on_upstream_request(request).tools[0].parameters == {
        "type": "object",
        "properties": {},
    }
    assert g.TOOL_CHOICE_WIDENED.on_upstream_request(request).tool_choice == ir.ToolChoiceRequired()
    sent = g.TOOL_RESULT_STRINGIFIED.on_upstream_request(request).messages[0].content[0]
    assert isinstance(sent, ir.ToolResultPart) and sent.content == [ir.TextPart(text='[{"type":"text","text":"18°C"}]')]
    unnamed = g.TOOL_RESULT_NAME_DROPPED.on_upstream_request(request).messages[0].content[0]
    assert isinstance(unnamed, ir.ToolResultPart) and unnamed.name is None and unnamed.content == result.content
