"""The anthropic driver: the SDK call it builds from IR, and what it makes of hand-written Messages API bytes."""

from __future__ import annotations

import base64
from typing import Any

from harness import ir
from harness.drivers import get
from harness.drivers.base import SdkResult
from harness.scenarios import SdkException, evaluate
from tests.drivers.mock import SCENARIOS, Recorder, Reply, sse

DRIVER = get("anthropic")
SIG = "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0LTAwMQ=="


def _message(content: list[dict[str, Any]], stop: str, **usage: int) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 14, "output_tokens": 9, **usage},
    }


def _events(*pairs: tuple[str, dict[str, Any]]) -> bytes:
    return sse(*[{"type": name, **data} for name, data in pairs], events=[name for name, _ in pairs])


START = ("message_start", {"message": {**_message([], "end_turn"), "stop_reason": None, "usage": {
    "input_tokens": 45, "output_tokens": 1, "cache_read_input_tokens": 0}}})  # fmt: skip
STOP = ("message_stop", {})


def _run(scenario: str, reply: Reply, *, stream: bool) -> tuple[SdkResult, Recorder]:
    recorder = Recorder(reply)
    request = SCENARIOS[scenario].request_for("claude-test", stream=stream)
    result = DRIVER.run(request, stream=stream, base_url="http://proxy", http_client=recorder.httpx2_client())
    return result, recorder


def _text_reply() -> Reply:
    return Reply.json(_message([{"type": "text", "text": "ok"}], "end_turn"))


def test_request_system_sampling_through_extra_body_and_default_max_tokens() -> None:
    _, rec = _run("sampling-params", _text_reply(), stream=False)
    assert rec.url == "http://proxy/v1/messages"
    body = rec.body
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.3, 0.9, 32)
    _, rec = _run("system-prompt", _text_reply(), stream=False)
    assert rec.body["system"] == "You are a pirate. Answer in one short sentence."
    assert [m["role"] for m in rec.body["messages"]] == ["user"]


def test_request_tools_choices_and_stop_sequences() -> None:
    _, rec = _run("tool-choice-required", _text_reply(), stream=False)
    assert rec.body["tool_choice"] == {"type": "any"}
    assert rec.body["tools"][0]["input_schema"]["required"] == ["city"]
    _, rec = _run("tool-choice-specific", _text_reply(), stream=False)
    assert rec.body["tool_choice"] == {"type": "tool", "name": "get_time"}
    _, rec = _run("tool-choice-none", _text_reply(), stream=False)
    assert rec.body["tool_choice"] == {"type": "none"}
    _, rec = _run("stop-sequence", _text_reply(), stream=False)
    assert rec.body["stop_sequences"] == ["END"]


def test_request_thinking_images_schema_and_tool_results() -> None:
    _, rec = _run("thinking-with-signature", _text_reply(), stream=False)
    assert (rec.body["thinking"], rec.body["max_tokens"]) == ({"type": "enabled", "budget_tokens": 2048}, 4096)
    _, rec = _run("vision-base64", _text_reply(), stream=False)
    image = rec.body["messages"][0]["content"][1]
    assert (image["type"], image["source"]["type"], image["source"]["media_type"]) == ("image", "base64", "image/png")
    _, rec = _run("json-schema", _text_reply(), stream=False)
    assert rec.body["output_config"]["format"]["type"] == "json_schema"
    _, rec = _run("tool-result-roundtrip", _text_reply(), stream=False)
    assistant, result = rec.body["messages"][1:3]
    assert assistant["content"] == [
        {"type": "tool_use", "id": "call_weather_paris", "name": "get_weather", "input": {"city": "Paris"}}
    ]
    assert result == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_weather_paris",
                "content": [{"type": "text", "text": "18°C and sunny"}],
            }
        ],
    }


def test_nonstream_thinking_with_signature_and_cache_usage() -> None:
    content = [
        {"type": "thinking", "thinking": "17 times 20 is 340, plus 51.", "signature": SIG},
        {"type": "text", "text": "17 \u00d7 23 = 391."},
    ]
    reply = Reply.json(_message(content, "end_turn", input_tokens=45, output_tokens=60, cache_read_input_tokens=100))
    result, _ = _run("thinking-with-signature", reply, stream=False)
    assert result.response is not None
    assert result.response.content[0] == ir.ThinkingPart(text="17 times 20 is 340, plus 51.", signature=SIG)
    assert result.response.usage == ir.Usage(input_tokens=145, output_tokens=60, cache_read_tokens=100)
    assert all(c.passed for c in evaluate(SCENARIOS["thinking-with-signature"], result))


def test_stream_thinking_then_tool_use() -> None:
    body = _events(
        START,
        ("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "I need the weather."}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "signature_delta", "signature": SIG}}),
        ("content_block_stop", {"index": 0}),
        ("content_block_start", {"index": 1, "content_block": {"type": "tool_use", "id": "toolu_1",
                                                               "name": "get_weather", "input": {}}}),
        ("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta",
                                                       "partial_json": '{"city": "London"}'}}),
        ("content_block_stop", {"index": 1}),
        ("message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": {"output_tokens": 40}}),
        STOP,
    )  # fmt: skip
    result, rec = _run("thinking-then-tool", Reply.stream(body), stream=True)
    assert rec.body["stream"] is True
    assert result.events == [
        ir.MessageStart(id="msg_1", model="claude-test", usage=ir.Usage(input_tokens=45, output_tokens=1,
                                                                         cache_read_tokens=0)),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="I need the weather."),
        ir.ThinkingEnd(index=0, signature=SIG),
        ir.ToolCallStart(index=1, id="toolu_1", name="get_weather"),
        ir.ToolCallDelta(index=1, arguments='{"city": "London"}'),
        ir.ToolCallEnd(index=1),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use", raw="tool_use"),
                usage=ir.Usage(input_tokens=45, output_tokens=40, cache_read_tokens=0)),
    ]  # fmt: skip
    assert all(c.passed for c in evaluate(SCENARIOS["thinking-then-tool"], result))


def test_stream_without_message_stop_is_malformed() -> None:
    body = _events(
        START,
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "This reply is"}}),
    )
    result, _ = _run("truncated-stream", Reply.stream(body), stream=True)
    assert result.events is not None and result.events[-2:] == [
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without message_stop")),
    ]
    assert all(c.passed for c in evaluate(SCENARIOS["truncated-stream"], result))


def test_error_event_in_the_stream() -> None:
    body = _events(
        START,
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Partial answer"}}),
        ("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )
    result, _ = _run("midstream-error", Reply.stream(body), stream=True)
    assert (result.exception_class, result.exception) == ("anthropic.APIStatusError", SdkException.STREAM_ERROR)
    assert result.error == ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", code="overloaded_error")
    assert all(c.passed for c in evaluate(SCENARIOS["midstream-error"], result))


def test_overloaded_529_and_rate_limit_429() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    result, _ = _run("error-overloaded", Reply.json(body, 529), stream=True)
    assert (result.exception_class, result.exception) == ("anthropic.OverloadedError", SdkException.OVERLOADED)
    assert result.error is not None and (result.error.kind, result.error.status) == (ir.ErrorKind.OVERLOADED, 529)
    assert all(c.passed for c in evaluate(SCENARIOS["error-overloaded"], result))
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}
    result, _ = _run("error-rate-limit-429", Reply.json(body, 429, **{"retry-after": "7"}), stream=False)
    assert (result.exception_class, result.retry_after) == ("anthropic.RateLimitError", 7.0)
    assert all(c.passed for c in evaluate(SCENARIOS["error-rate-limit-429"], result))


def test_models_list() -> None:
    model = {"type": "model", "id": "conformance-model", "display_name": "C", "created_at": "2025-01-01T00:00:00Z"}
    page = {"data": [model], "has_more": False, "first_id": "conformance-model", "last_id": "conformance-model"}
    rec = Recorder(Reply.json(page))
    result = DRIVER.list_models(base_url="http://proxy", http_client=rec.httpx2_client())
    assert result.models == ["conformance-model"]
    assert rec.url.startswith("http://proxy/v1/models")


def test_a_file_goes_as_a_document_block_without_its_name() -> None:
    _, rec = _run("file-pdf-inline", _text_reply(), stream=False)
    document = rec.body["messages"][0]["content"][1]
    assert document["type"] == "document" and "title" not in document
    source = document["source"]
    assert (source["type"], source["media_type"]) == ("base64", "application/pdf")
    assert base64.b64decode(source["data"]).startswith(b"%PDF-")
