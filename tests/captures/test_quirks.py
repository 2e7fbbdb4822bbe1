"""Quirks the recorded captures showed, each held by a small stream in the recorded form (these run without the
snapshot; the capture tests read the real ones)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, registry
from harness.stream import validate
from tests.captures.vercel_ai import sse

QUOTA = {"type": "insufficient_quota", "code": "insufficient_quota", "message": "You exceeded your current quota."}


def _failed_run() -> list[dict[str, Any]]:
    """The shape of vercel/ai's openai-error.1.chunks.txt: created, in_progress, `error`, `response.failed`."""
    response = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-5", "output": []}
    failed = {**response, "status": "failed", "error": {"code": QUOTA["code"], "message": QUOTA["message"]}}
    return [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {"type": "response.in_progress", "sequence_number": 1, "response": response},
        {"type": "error", "sequence_number": 2, "error": QUOTA},
        {"type": "response.failed", "sequence_number": 3, "response": failed},
    ]


def _decode(payloads: list[dict[str, Any]]) -> list[ir.StreamEvent]:
    return decode_events(registry.get("responses"), [sse(payloads)])


def test_openai_error_event_then_response_failed_is_one_error() -> None:
    events = _decode(_failed_run())
    assert validate(events) == []
    assert [e.kind for e in events] == ["message_start", "error"]
    error = events[-1]
    assert isinstance(error, ir.ErrorEvent)
    assert (error.error.code, error.error.message) == (QUOTA["code"], QUOTA["message"])


def test_openai_error_event_then_response_failed_named_events_too() -> None:
    events = decode_events(registry.get("responses"), [sse(_failed_run(), named=True)])
    assert [e.kind for e in events] == ["message_start", "error"]


def test_after_an_error_event_only_one_response_failed_is_read() -> None:
    run = _failed_run()
    again = copy.deepcopy(run[-1])
    again["sequence_number"] = 4
    with pytest.raises(DecodeError, match="after the end of the stream"):
        _decode([*run, again])


def test_after_an_error_event_a_completed_response_is_still_a_decode_error() -> None:
    run = _failed_run()
    run[-1] = {**run[-1], "type": "response.completed", "response": {**run[-1]["response"], "status": "completed"}}
    with pytest.raises(DecodeError, match="after the end of the stream"):
        _decode(run)


def test_the_response_failed_after_an_error_event_is_numbered_next() -> None:
    run = _failed_run()
    run[-1]["sequence_number"] = 7
    with pytest.raises(DecodeError, match="sequence_number"):
        _decode(run)


def _vertex_chunk(call: dict[str, Any], finish: bool = False) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"functionCall": call}]}}
    if finish:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}}


def _arg(path: str, more: bool = False, **value: Any) -> dict[str, Any]:
    return {"functionCall": {"partialArgs": [{"jsonPath": path, **value, **({"willContinue": True} if more else {})}]}}


def _streamed_call(end: bool = True) -> list[dict[str, Any]]:
    """The shape of vercel/ai's google-vertex-stream-tool-call-arguments-nested.1.chunks.txt."""
    parts = [
        {"name": "cook", "willContinue": True},
        {**_arg("$.recipe.items[0].name", True, stringValue="Lasa")["functionCall"], "willContinue": True},
        {**_arg("$.recipe.items[0].name", True, stringValue="gna")["functionCall"], "willContinue": True},
        {**_arg("$.recipe.items[0].name", stringValue="")["functionCall"], "willContinue": True},
        {**_arg("$.recipe.items[1].grams", numberValue=400)["functionCall"], "willContinue": True},
        {**_arg("$.recipe.vegan", boolValue=False)["functionCall"], "willContinue": True},
    ]
    chunks = [_vertex_chunk(p) for p in parts]
    return [*chunks, _vertex_chunk({}, finish=True)] if end else [*chunks[:-1], _vertex_chunk(parts[-1], finish=True)]


def _gemini(chunks: list[dict[str, Any]]) -> ir.Response:
    from harness.stream import accumulate

    result = accumulate(decode_events(registry.get("gemini"), [sse(chunks)]))
    assert result.error is None
    return result.response


def test_vertex_streamed_function_call_arguments_are_assembled_into_one_call() -> None:
    response = _gemini(_streamed_call())
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("cook", {"recipe": {"items": [{"name": "Lasagna"}, {"grams": 400}], "vegan": False}})
    ]
    assert response.stop_reason is not None and response.stop_reason.kind == "tool_use"


def test_vertex_streamed_call_left_open_at_the_finish_ends_with_what_came() -> None:
    response = _gemini(_streamed_call(end=False))
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert [c.arguments for c in calls] == [
        {"recipe": {"items": [{"name": "Lasagna"}, {"grams": 400}], "vegan": False}}
    ]


def test_vertex_streamed_argument_with_a_bad_json_path_is_a_decode_error() -> None:
    chunks = [
        _vertex_chunk({"name": "cook", "willContinue": True}),
        _vertex_chunk(_arg("recipe", stringValue="x")["functionCall"]),
    ]
    with pytest.raises(DecodeError, match="jsonPath"):
        decode_events(registry.get("gemini"), [sse(chunks)])
