"""The openai driver: the SDK call it builds from IR, and what it makes of hand-written Chat Completions bytes."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ir
from harness.drivers import get
from harness.drivers.base import SdkResult
from harness.scenarios import SdkException, evaluate
from tests.drivers.mock import SCENARIOS, Recorder, Reply, sse
from tests.protocols.openai.support import interactions

DRIVER = get("openai")


def _completion(message: dict[str, Any], finish: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": usage or {"prompt_tokens": 14, "completion_tokens": 9, "total_tokens": 23},
    }


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
            "choices": [choice], **extra}  # fmt: skip


def _run(scenario: str, reply: Reply, *, stream: bool) -> tuple[SdkResult, Recorder]:
    recorder = Recorder(reply)
    request = SCENARIOS[scenario].request_for("gpt-test", stream=stream)
    result = DRIVER.run(request, stream=stream, base_url="http://proxy", http_client=recorder.httpx2_client())
    return result, recorder


def test_request_carries_system_sampling_and_limits() -> None:
    _, rec = _run("sampling-params", Reply.json(_completion({"content": "Teal."}, "stop")), stream=False)
    assert rec.url == "http://proxy/v1/chat/completions"
    body = rec.body
    assert (body["temperature"], body["top_p"], body["max_completion_tokens"]) == (0.3, 0.9, 32)
    assert "stream" not in body
    _, rec = _run("system-prompt", Reply.json(_completion({"content": "Arr"}, "stop")), stream=False)
    system = {"role": "system", "content": "You are a pirate. Answer in one short sentence."}
    assert rec.body["messages"] == [system, {"role": "user", "content": "How is the sea today?"}]


def test_request_carries_tools_choice_and_stop() -> None:
    _, rec = _run("tool-choice-specific", Reply.json(_completion({"content": "x"}, "stop")), stream=False)
    body = rec.body
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "get_time"]
    assert body["tools"][0]["function"]["parameters"]["required"] == ["city"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_time"}}
    _, rec = _run("stop-sequence", Reply.json(_completion({"content": "1"}, "stop")), stream=False)
    assert rec.body["stop"] == ["END"]


def test_request_images_json_schema_and_tool_results() -> None:
    _, rec = _run("vision-multiple-images", Reply.json(_completion({"content": "x"}, "stop")), stream=False)
    content = rec.body["messages"][0]["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "text", "image_url", "text"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    _, rec = _run("json-schema", Reply.json(_completion({"content": "{}"}, "stop")), stream=False)
    fmt = rec.body["response_format"]
    assert (fmt["type"], fmt["json_schema"]["name"], fmt["json_schema"]["strict"]) == ("json_schema", "city_info", True)
    assert fmt["json_schema"]["schema"]["required"] == ["city", "country", "population"]
    _, rec = _run("tool-result-roundtrip", Reply.json(_completion({"content": "x"}, "stop")), stream=False)
    assistant, tool = rec.body["messages"][1:3]
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert tool == {"role": "tool", "tool_call_id": "call_weather_paris", "content": "18°C and sunny"}


def test_nonstream_text_then_tool_normalized() -> None:
    message = {
        "content": "Let me check the weather in Rome.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}}
        ],
    }
    result, _ = _run("text-then-tool", Reply.json(_completion(message, "tool_calls")), stream=False)
    assert result.response == ir.Response(
        id="chatcmpl-1",
        model="gpt-test",
        content=[
            ir.TextPart(text="Let me check the weather in Rome."),
            ir.ToolCallPart(
                id="call_1", name="get_weather", arguments={"city": "Rome"}, arguments_raw='{"city":"Rome"}'
            ),
        ],
        stop_reason=ir.StopReason(kind="tool_use", raw="tool_calls"),
        usage=ir.Usage(input_tokens=14, output_tokens=9),
    )
    assert all(c.passed for c in evaluate(SCENARIOS["text-then-tool"], result))


def test_stream_parallel_tool_calls_with_usage_chunk() -> None:
    body = sse(
        _chunk({"role": "assistant", "content": None}),
        _chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                "function": {"name": "get_weather", "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"city":"Tokyo"}'}}]}),
        _chunk({}, "tool_calls"),
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test", "choices": [],
         "usage": {"prompt_tokens": 85, "completion_tokens": 38, "total_tokens": 123,
                   "prompt_tokens_details": {"cached_tokens": 64}}},
        done=True,
    )  # fmt: skip
    result, rec = _run("tool-call-parallel", Reply.stream(body), stream=True)
    assert (rec.body["stream"], rec.body["stream_options"]) == (True, {"include_usage": True})
    assert result.events == [
        ir.MessageStart(id="chatcmpl-1", model="gpt-test"),
        ir.ToolCallStart(index=0, id="call_a", name="get_weather"),
        ir.ToolCallDelta(index=0, arguments='{"city":'),
        ir.ToolCallDelta(index=0, arguments='"Paris"}'),
        ir.ToolCallStart(index=1, id="call_b", name="get_weather"),
        ir.ToolCallDelta(index=1, arguments='{"city":"Tokyo"}'),
        ir.ToolCallEnd(index=0),
        ir.ToolCallEnd(index=1),
        ir.Done(
            stop_reason=ir.StopReason(kind="tool_use", raw="tool_calls"),
            usage=ir.Usage(input_tokens=85, output_tokens=38, cache_read_tokens=64),
        ),
    ]
    assert all(c.passed for c in evaluate(SCENARIOS["tool-call-parallel"], result))


def test_stream_without_finish_reason_is_malformed() -> None:
    body = sse(_chunk({"content": "This reply"}), _chunk({"content": " is"}))
    result, _ = _run("truncated-stream", Reply.stream(body), stream=True)
    assert result.events is not None
    assert result.events[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a finish_reason")
    )
    assert all(c.passed for c in evaluate(SCENARIOS["truncated-stream"], result))


def test_error_object_inside_the_stream_raises_api_error() -> None:
    error = {"error": {"message": "Overloaded", "type": "overloaded_error", "code": None}}
    body = sse(_chunk({"content": "Partial "}), _chunk({"content": "answer"}), error)
    result, _ = _run("midstream-error", Reply.stream(body), stream=True)
    assert (result.exception_class, result.exception) == ("openai.APIError", SdkException.STREAM_ERROR)
    assert result.error == ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", code="overloaded_error")
    assert result.events is not None and result.events[-2:] == [ir.TextEnd(index=0), ir.ErrorEvent(error=result.error)]
    assert all(c.passed for c in evaluate(SCENARIOS["midstream-error"], result))


def test_a_stream_error_whose_code_names_no_kind_is_read_by_its_type() -> None:
    # OpenRouter's in-stream `code: 400`, written back as OpenAI's error object, is the string "400" beside
    # `type: invalid_request_error` (corpus openai_compat/openrouter-stream-comments-and-error-chunk): the type says it.
    error = {"error": {"message": "Token limit reached", "type": "invalid_request_error", "param": None, "code": "400"}}
    result, _ = _run("midstream-error", Reply.stream(sse(_chunk({"content": "Partial "}), error)), stream=True)
    assert result.exception == SdkException.STREAM_ERROR
    assert result.error == ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, "Token limit reached", code="400")


def test_rate_limit_with_retry_after() -> None:
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    for stream in (False, True):
        result, _ = _run("error-rate-limit-429", Reply.json(body, 429, **{"retry-after": "7"}), stream=stream)
        assert (result.exception_class, result.exception, result.retry_after) == (
            "openai.RateLimitError",
            SdkException.RATE_LIMIT,
            7.0,
        )
        assert result.error is not None and (result.error.kind, result.error.status) == (ir.ErrorKind.THROTTLED, 429)
        assert result.events is None
        assert all(c.passed for c in evaluate(SCENARIOS["error-rate-limit-429"], result))


def test_overloaded_503_is_an_internal_server_error_class_but_overloaded() -> None:
    result, _ = _run("error-overloaded", Reply.json({"error": {"message": "Overloaded"}}, 503), stream=False)
    assert (result.exception_class, result.exception) == ("openai.InternalServerError", SdkException.OVERLOADED)
    assert all(c.passed for c in evaluate(SCENARIOS["error-overloaded"], result))


def test_context_overflow_from_the_code() -> None:
    body = {"error": {"message": "This model's maximum is 128k.", "type": "invalid_request_error",
                      "code": "context_length_exceeded"}}  # fmt: skip
    result, _ = _run("error-context-overflow-400", Reply.json(body, 400), stream=False)
    assert result.error is not None and result.error.kind is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    assert result.exception_class == "openai.BadRequestError"


def test_models_list() -> None:
    rec = Recorder(Reply.json({"object": "list", "data": [{"id": "conformance-model", "object": "model",
                                                          "created": 1, "owned_by": "x"}]}))  # fmt: skip
    result = DRIVER.list_models(base_url="http://proxy", http_client=rec.httpx2_client())
    assert result.models == ["conformance-model"]
    assert rec.url == "http://proxy/v1/models"


@pytest.mark.corpus
def test_openrouter_numeric_error_code_in_the_stream_is_the_status() -> None:
    # OpenRouter's in-stream error object is `{code: <HTTP status as a number>, message}` (corpus:
    # openai_compat/openrouter-stream-comments-and-error-chunk.yaml, code 400); the number says the kind.
    recorded = interactions("openai_compat", "openrouter-stream-comments-and-error-chunk.yaml")[0].response.body
    result, _ = _run("midstream-error", Reply.stream(recorded), stream=True)
    assert result.exception == SdkException.STREAM_ERROR
    assert result.error is not None and (result.error.kind, result.error.code) == (
        ir.ErrorKind.INVALID_REQUEST,
        "400",
    )
    throttled = {"error": {"code": 429, "message": "Too many tokens, please wait before trying again."}}
    result, _ = _run("stream-error-first", Reply.stream(sse(_chunk({"role": "assistant"}), throttled)), stream=True)
    assert result.error is not None and result.error.kind is ir.ErrorKind.THROTTLED
    assert all(c.passed for c in evaluate(SCENARIOS["stream-error-first"], result))


def test_a_file_goes_as_a_file_part_with_a_data_url_and_its_name() -> None:
    _, rec = _run("file-pdf-inline", Reply.json(_completion({"content": "x"}, "stop")), stream=False)
    text, file = rec.body["messages"][0]["content"]
    assert (text["type"], file["type"], file["file"]["filename"]) == ("text", "file", "invoice.pdf")
    assert file["file"]["file_data"].startswith("data:application/pdf;base64,JVBERi0")
