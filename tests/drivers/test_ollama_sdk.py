"""The ollama driver: the SDK call it builds from IR, and what it makes of hand-written /api/chat NDJSON."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from harness import ir
from harness.drivers import get
from harness.drivers.base import SdkResult
from harness.scenarios import Capability, SdkException, evaluate
from tests.drivers.mock import SCENARIOS, Recorder, Reply, ndjson

DRIVER = get("ollama")


def _line(content: str = "", *, done: bool = False, **extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, **extra.pop("message", {})}
    return {"model": "llama-test", "created_at": "2025-01-01T00:00:00Z", "message": message, "done": done, **extra}


FINAL = {"done_reason": "stop", "prompt_eval_count": 14, "eval_count": 9}


def _run(scenario: str, reply: Reply, *, stream: bool) -> tuple[SdkResult, Recorder]:
    recorder = Recorder(reply)
    request = SCENARIOS[scenario].request_for("llama-test", stream=stream)
    result = DRIVER.run(request, stream=stream, base_url="http://proxy", http_client=recorder.httpx_client())
    return result, recorder


def _text_reply() -> Reply:
    return Reply.json(_line("ok", done=True, **FINAL))


def test_request_options_system_format_and_think() -> None:
    _, rec = _run("sampling-params", _text_reply(), stream=False)
    assert rec.url == "http://proxy/api/chat"
    assert rec.body["options"] == {"temperature": 0.3, "top_p": 0.9, "num_predict": 32}
    assert rec.body["stream"] is False
    _, rec = _run("system-prompt", _text_reply(), stream=False)
    assert rec.body["messages"][0] == {"role": "system", "content": "You are a pirate. Answer in one short sentence."}
    _, rec = _run("json-object", _text_reply(), stream=False)
    assert rec.body["format"] == "json"
    _, rec = _run("json-schema", _text_reply(), stream=False)
    assert rec.body["format"]["required"] == ["city", "country", "population"]
    _, rec = _run("thinking-with-signature", _text_reply(), stream=False)
    assert rec.body["think"] is True
    _, rec = _run("vision-base64", _text_reply(), stream=False)
    assert rec.body["messages"][0]["images"][0].startswith("iVBORw0KGgoAAAANSUhEUg")


def test_tool_results_carry_the_tool_name() -> None:
    _, rec = _run("tool-result-roundtrip", _text_reply(), stream=False)
    assistant, tool = rec.body["messages"][1:3]
    assert assistant["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]
    assert tool == {"role": "tool", "content": "18°C and sunny", "tool_name": "get_weather"}


def test_tool_choice_cannot_be_expressed() -> None:
    assert Capability.TOOL_CHOICE not in DRIVER.capabilities
    with pytest.raises(ValueError, match="ollama: /api/chat has no tool_choice"):
        _run("tool-choice-required", _text_reply(), stream=False)


def test_stream_thinking_text_and_usage() -> None:
    body = ndjson(
        _line("", message={"thinking": "17 times 20 is 340"}),
        _line("17 \u00d7 23"),
        _line(" = 391."),
        _line("", done=True, done_reason="stop", prompt_eval_count=45, eval_count=60),
    )
    result, rec = _run("thinking-with-signature", Reply.stream(body, "application/x-ndjson"), stream=True)
    assert rec.body["stream"] is True
    assert result.events == [
        ir.MessageStart(model="llama-test"),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="17 times 20 is 340"),
        ir.ThinkingEnd(index=0),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text="17 \u00d7 23"),
        ir.TextDelta(index=1, text=" = 391."),
        ir.TextEnd(index=1),
        ir.Done(
            stop_reason=ir.StopReason(kind="end_turn", raw="stop"), usage=ir.Usage(input_tokens=45, output_tokens=60)
        ),
    ]
    assert all(
        c.passed for c in evaluate(SCENARIOS["thinking-with-signature"], result, capabilities=DRIVER.capabilities)
    )


def test_nonstream_tool_calls_get_positional_ids() -> None:
    calls = [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
             {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]  # fmt: skip
    reply = Reply.json(_line("", done=True, message={"tool_calls": calls}, **FINAL))
    result, _ = _run("tool-call-parallel", reply, stream=False)
    assert result.response is not None
    assert [(p.id, p.arguments_raw) for p in result.response.content if isinstance(p, ir.ToolCallPart)] == [
        ("call_0_get_weather", '{"city":"Paris"}'),
        ("call_1_get_weather", '{"city":"Tokyo"}'),
    ]
    assert result.response.stop_reason == ir.StopReason(kind="tool_use", raw="stop")
    assert all(c.passed for c in evaluate(SCENARIOS["tool-call-parallel"], result))


def test_stream_without_done_line_is_malformed() -> None:
    body = ndjson(_line("This reply"), _line(" is"))
    result, _ = _run("truncated-stream", Reply.stream(body, "application/x-ndjson"), stream=True)
    assert result.events is not None and result.events[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a done:true line")
    )
    assert all(c.passed for c in evaluate(SCENARIOS["truncated-stream"], result))


def test_error_line_in_the_stream() -> None:
    body = ndjson(_line("Partial answer"), {"error": "model is overloaded, please retry"})
    result, _ = _run("midstream-error", Reply.stream(body, "application/x-ndjson"), stream=True)
    assert (result.exception_class, result.exception) == ("ollama.ResponseError", SdkException.STREAM_ERROR)
    assert result.error is not None and result.error.kind is ir.ErrorKind.OVERLOADED
    assert all(c.passed for c in evaluate(SCENARIOS["midstream-error"], result))


def test_http_errors_by_status_without_retry_after() -> None:
    result, _ = _run("error-rate-limit-429", Reply.json({"error": "too many requests"}, 429), stream=True)
    assert (result.exception_class, result.exception, result.retry_after) == (
        "ollama.ResponseError",
        SdkException.RATE_LIMIT,
        None,
    )
    # The SDK's ResponseError keeps no headers, so Retry-After is not checked for this driver.
    checks = evaluate(SCENARIOS["error-rate-limit-429"], result, capabilities=DRIVER.capabilities)
    assert [c.name for c in checks] == ["error.kind", "error.status", "error.exception"]
    assert all(c.passed for c in checks)


def test_models_list_and_client_type() -> None:
    rec = Recorder(Reply.json({"models": [{"model": "conformance-model", "name": "conformance-model"}]}))
    result = DRIVER.list_models(base_url="http://proxy", http_client=rec.httpx_client())
    assert (result.models, rec.url) == (["conformance-model"], "http://proxy/api/tags")
    with pytest.raises(TypeError, match=r"needs an httpx\.Client"):
        DRIVER.list_models(base_url="http://proxy", http_client=httpx2.Client())


def test_ollama_sdk_drops_nested_tool_properties() -> None:
    # ollama-python #724: the SDK's Tool model keeps type, items, description and enum of each parameter, so a
    # nested object's own properties never reach the request. The driver therefore lacks nested_tool_schema, and
    # tool-nested-schema is unsupported with an Ollama client or backend SDK; when an SDK release keeps them, this
    # fails and the capability can be declared.
    import ollama

    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    tool = ollama.Tool.model_validate({"type": "function", "function": {"name": "f", "parameters": nested}})
    sent = tool.model_dump(exclude_none=True)["function"]["parameters"]["properties"]["a"]
    assert sent == {"type": "object"}
    assert Capability.NESTED_TOOL_SCHEMA not in get("ollama").capabilities
    assert Capability.NESTED_TOOL_SCHEMA in get("openai").capabilities
