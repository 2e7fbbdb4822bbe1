"""Quirks the recorded captures showed, each held by a small stream in the recorded form (these run without the
snapshot; the capture tests read the real ones)."""

from __future__ import annotations

import copy
import json
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


def _openrouter(chunks: list[dict[str, Any]]) -> ir.Response:
    from harness.stream import accumulate

    result = accumulate(decode_events(registry.get("openrouter"), [sse(chunks, done=True)]))
    assert result.error is None
    return result.response


def _or_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": finish}
    return {"id": "gen-1", "model": "openai/o3", "object": "chat.completion.chunk", "choices": [choice]}


ENCRYPTED = {"type": "reasoning.encrypted", "data": "gAAAAABo-sealed", "format": "openai-responses-v1", "index": 0}


def test_openrouter_encrypted_reasoning_is_the_thinking_signature() -> None:
    """The shape of pydantic-ai's test_openrouter_stream_with_reasoning.yaml (openai/o3 through OpenRouter): the
    encrypted reasoning comes first, alone in `reasoning_details`, then the answer text."""
    response = _openrouter(
        [
            _or_chunk({"content": "", "reasoning": None, "reasoning_details": [ENCRYPTED]}),
            _or_chunk({"content": "Hi."}),
            _or_chunk({"content": ""}, finish="stop"),
        ]
    )
    assert response.content == [ir.ThinkingPart(text="", signature=ENCRYPTED["data"]), ir.TextPart(text="Hi.")]


def test_openrouter_encrypted_reasoning_in_a_body_signs_the_summary() -> None:
    """The shape of pydantic-ai's test_openrouter_preserve_reasoning_block.yaml: `reasoning` holds the summary,
    `reasoning_details` the encrypted entry and the summary entry."""
    summary = {"type": "reasoning.summary", "summary": "Thinking.", "format": "openai-responses-v1", "index": 0}
    details = [ENCRYPTED, summary]
    message = {"role": "assistant", "content": "Hi.", "reasoning": "Thinking.", "reasoning_details": details}
    body = {"id": "gen-1", "model": "openai/gpt-5", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}  # fmt: skip
    response = registry.get("openrouter").decode_response(json.dumps(body).encode())
    assert response.content[0] == ir.ThinkingPart(text="Thinking.", signature=ENCRYPTED["data"])


def test_openrouter_tool_call_without_arguments_is_a_call_with_none() -> None:
    """pydantic-ai's test_openrouter_tool_optional_parameters.yaml (claude-sonnet-4.5 through OpenRouter): a call
    the model made with no arguments has no `arguments` key at all."""
    call = {"id": "toolu_1", "index": 0, "type": "function", "function": {"name": "find"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {"id": "gen-1", "model": "anthropic/claude-sonnet-4.5", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}  # fmt: skip
    response = registry.get("openrouter").decode_response(json.dumps(body).encode())
    assert [(p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)] == [("find", {})]


def test_gemini_generated_image_is_read_past_as_a_provider_event() -> None:
    """pydantic-ai's test_google_image_generation_with_text.yaml (gemini-2.5-flash-image): the answer is text and
    an `inlineData` image. The IR's answer has no image part: a stream keeps the part as a Gemini provider event (the
    Gemini encoder writes it back), a body leaves it out; the text, stop reason and usage decode as usual."""
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Here it is."}, image]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1290}}  # fmt: skip
    events = decode_events(registry.get("gemini"), [sse([chunk])])
    assert [e.data for e in events if isinstance(e, ir.ProviderEvent)] == [
        {"candidates": [{"content": {"parts": [image], "role": "model"}, "index": 0}]}
    ]
    body = registry.get("gemini").decode_response(json.dumps(chunk).encode())
    assert body.content == [ir.TextPart(text="Here it is.")]
    assert (body.stop_reason and body.stop_reason.raw, body.usage.output_tokens) == ("STOP", 1290)


def _cortex_body(function_call: dict[str, Any]) -> bytes:
    message = {"role": "assistant", "content": "4", "function_call": function_call, "refusal": "", "tool_calls": None}
    choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": {"content": None}}
    body = {"id": "", "object": "chat.completion", "model": "claude-sonnet-4-6", "choices": [choice]}
    return json.dumps(body).encode()


def test_snowflake_empty_function_call_is_no_call() -> None:
    """pydantic-ai's test_snowflake_*.yaml (Snowflake Cortex's compatible endpoint): every message carries an empty
    legacy `function_call`, which named no function; a real legacy call still fails the decode."""
    response = registry.get("openai").decode_response(_cortex_body({"arguments": "", "name": ""}))
    assert response.content == [ir.TextPart(text="4")]
    with pytest.raises(DecodeError, match="legacy functions API"):
        registry.get("openai").decode_response(_cortex_body({"arguments": "{}", "name": "get_time"}))
