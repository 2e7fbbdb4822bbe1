"""The google-genai driver: the SDK call it builds from IR, and what it makes of hand-written Gemini bytes."""

from __future__ import annotations

import base64
from typing import Any

from harness import ir
from harness.drivers import get
from harness.drivers.base import SdkResult
from harness.scenarios import SdkException, evaluate
from tests.drivers.mock import SCENARIOS, Recorder, Reply, sse

DRIVER = get("gemini")
SIG = "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0LTAwMQ=="
USAGE = {"promptTokenCount": 45, "candidatesTokenCount": 12, "thoughtsTokenCount": 48, "totalTokenCount": 105}


def _response(parts: list[dict[str, Any]], finish: str | None = "STOP", **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "resp-1", **extra}


def _run(scenario: str, reply: Reply, *, stream: bool) -> tuple[SdkResult, Recorder]:
    recorder = Recorder(reply)
    request = SCENARIOS[scenario].request_for("gemini-test", stream=stream)
    result = DRIVER.run(request, stream=stream, base_url="http://proxy", http_client=recorder.httpx2_client())
    return result, recorder


def _text_reply() -> Reply:
    return Reply.json(_response([{"text": "ok"}], usageMetadata=USAGE))


def test_request_system_sampling_and_limits() -> None:
    _, rec = _run("sampling-params", _text_reply(), stream=False)
    assert rec.url == "http://proxy/v1beta/models/gemini-test:generateContent"
    config = rec.body["generationConfig"]
    assert (config["temperature"], config["topP"], config["maxOutputTokens"]) == (0.3, 0.9, 32)
    _, rec = _run("system-prompt", _text_reply(), stream=False)
    assert rec.body["systemInstruction"]["parts"] == [{"text": "You are a pirate. Answer in one short sentence."}]
    assert rec.body["contents"] == [{"role": "user", "parts": [{"text": "How is the sea today?"}]}]


def test_request_tools_and_function_calling_config() -> None:
    _, rec = _run("tool-choice-specific", _text_reply(), stream=False)
    declarations = rec.body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["get_weather", "get_time"]
    # The SDK sends the JSON Schema under its snake_case name, as in real recorded traffic.
    assert declarations[0]["parameters_json_schema"]["required"] == ["city"]
    assert rec.body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}}
    _, rec = _run("tool-choice-none", _text_reply(), stream=False)
    assert rec.body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}


def test_tool_result_roundtrip_names_the_function() -> None:
    _, rec = _run("tool-result-roundtrip", _text_reply(), stream=False)
    model_turn, tool_turn = rec.body["contents"][1:3]
    assert model_turn == {
        "role": "model",
        "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
    }
    assert tool_turn == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "18°C and sunny"}}}],
    }


def test_inline_image_goes_urlsafe_base64_with_snake_case_mime_type() -> None:
    # A quirk of this SDK release that a Gemini frontend must accept: `mime_type` (not `mimeType`) and the
    # URL-safe base64 alphabet (`_` where the scenario's standard base64 has `/`).
    _, rec = _run("vision-base64", _text_reply(), stream=False)
    inline = rec.body["contents"][0]["parts"][1]["inlineData"]
    assert inline == {
        "mime_type": "image/png",
        "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ_pLvAAAAAElFTkSuQmCC",
    }


def test_request_json_and_thinking() -> None:
    _, rec = _run("json-object", _text_reply(), stream=False)
    assert rec.body["generationConfig"]["responseMimeType"] == "application/json"
    _, rec = _run("json-schema", _text_reply(), stream=False)
    assert rec.body["generationConfig"]["responseJsonSchema"]["required"] == ["city", "country", "population"]
    _, rec = _run("thinking-with-signature", _text_reply(), stream=False)
    assert rec.body["generationConfig"]["thinkingConfig"] == {"include_thoughts": True, "thinking_budget": 2048}


def test_nonstream_thought_signature_and_usage() -> None:
    parts = [{"text": "17 times 20 is 340.", "thought": True}, {"text": "17 \u00d7 23 = 391.", "thoughtSignature": SIG}]
    result, _ = _run("thinking-with-signature", Reply.json(_response(parts, usageMetadata=USAGE)), stream=False)
    assert result.response == ir.Response(
        id="resp-1",
        model="gemini-test",
        content=[ir.ThinkingPart(text="17 times 20 is 340.", signature=SIG), ir.TextPart(text="17 \u00d7 23 = 391.")],
        stop_reason=ir.StopReason(kind="end_turn", raw="STOP"),
        usage=ir.Usage(input_tokens=45, output_tokens=60, reasoning_tokens=48),
    )
    assert all(c.passed for c in evaluate(SCENARIOS["thinking-with-signature"], result))


def test_gemini3_signature_on_a_function_call_becomes_an_empty_signed_thought() -> None:
    parts = [{"functionCall": {"name": "get_weather", "args": {"city": "London"}}, "thoughtSignature": SIG}]
    result, _ = _run("thinking-then-tool", Reply.json(_response(parts, usageMetadata=USAGE)), stream=False)
    assert result.response is not None
    assert result.response.content == [
        ir.ThinkingPart(text="", signature=SIG),
        ir.ToolCallPart(
            id="call_0_get_weather", name="get_weather", arguments={"city": "London"}, arguments_raw='{"city":"London"}'
        ),
    ]
    assert result.response.stop_reason == ir.StopReason(kind="tool_use", raw="STOP")


def test_stream_parallel_function_calls() -> None:
    body = sse(
        _response([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                   {"functionCall": {"name": "get_weather", "args": {"city": "Tokyo"}}}], finish=None),
        _response([{"text": ""}], usageMetadata={"promptTokenCount": 85, "candidatesTokenCount": 38}),
        crlf=True,
    )  # fmt: skip
    result, rec = _run("tool-call-parallel", Reply.stream(body), stream=True)
    assert rec.url == "http://proxy/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    assert result.events == [
        ir.MessageStart(id="resp-1", model="gemini-test"),
        ir.ToolCallStart(index=0, id="call_0_get_weather", name="get_weather"),
        ir.ToolCallDelta(index=0, arguments='{"city":"Paris"}'),
        ir.ToolCallEnd(index=0),
        ir.ToolCallStart(index=1, id="call_1_get_weather", name="get_weather"),
        ir.ToolCallDelta(index=1, arguments='{"city":"Tokyo"}'),
        ir.ToolCallEnd(index=1),
        ir.Done(
            stop_reason=ir.StopReason(kind="tool_use", raw="STOP"), usage=ir.Usage(input_tokens=85, output_tokens=38)
        ),
    ]
    assert all(c.passed for c in evaluate(SCENARIOS["tool-call-parallel"], result))


def test_stream_text_across_chunks_and_missing_finish_reason() -> None:
    body = sse(_response([{"text": "This reply"}], finish=None), _response([{"text": " is cut"}], finish=None))
    result, _ = _run("truncated-stream", Reply.stream(body), stream=True)
    assert result.events == [
        ir.MessageStart(id="resp-1", model="gemini-test"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="This reply"),
        ir.TextDelta(index=0, text=" is cut"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a finishReason")),
    ]
    assert all(c.passed for c in evaluate(SCENARIOS["truncated-stream"], result))


def test_error_chunk_in_the_stream() -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    body = sse(_response([{"text": "Partial answer"}], finish=None), error)
    result, _ = _run("midstream-error", Reply.stream(body), stream=True)
    assert (result.exception_class, result.exception) == ("google.genai.errors.ServerError", SdkException.STREAM_ERROR)
    assert result.error is not None and (result.error.kind, result.error.code) == (
        ir.ErrorKind.OVERLOADED,
        "UNAVAILABLE",
    )
    assert all(c.passed for c in evaluate(SCENARIOS["midstream-error"], result))


def test_resource_exhausted_is_a_client_error_with_code_429() -> None:
    body = {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}
    result, _ = _run("error-rate-limit-429", Reply.json(body, 429, **{"retry-after": "7"}), stream=True)
    assert (result.exception_class, result.exception) == ("google.genai.errors.ClientError", SdkException.RATE_LIMIT)
    assert result.error is not None and (result.error.kind, result.error.code) == (
        ir.ErrorKind.THROTTLED,
        "RESOURCE_EXHAUSTED",
    )
    assert all(c.passed for c in evaluate(SCENARIOS["error-rate-limit-429"], result))


def test_models_list_drops_the_prefix() -> None:
    rec = Recorder(
        Reply.json({"models": [{"name": "models/conformance-model"}, {"name": "models/conformance-model-mini"}]})
    )
    result = DRIVER.list_models(base_url="http://proxy", http_client=rec.httpx2_client())
    assert result.models == ["conformance-model", "conformance-model-mini"]
    assert all(c.passed for c in evaluate(SCENARIOS["models-list"], result))


def test_thought_signature_in_url_safe_base64_is_sent_back() -> None:
    # The API answers signatures in standard base64; this SDK sends them back URL-safe and unpadded, so a recorded
    # follow-up request (tests import such captures) carries `-` and `_`, which the standard alphabet would drop.
    raw = bytes(range(250, 256)) + b"\xfb\xff?>"
    urlsafe = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert "-" in urlsafe and "_" in urlsafe
    request = ir.Request(
        model="gemini-test",
        messages=[
            ir.Message(role="user", content=[ir.TextPart(text="hi")]),
            ir.Message(role="assistant", content=[ir.ThinkingPart(text="", signature=urlsafe), ir.TextPart(text="ok")]),
            ir.Message(role="user", content=[ir.TextPart(text="again")]),
        ],
    )
    recorder = Recorder(_text_reply())
    DRIVER.run(request, stream=False, base_url="http://proxy", http_client=recorder.httpx2_client())
    sent = recorder.body["contents"][1]["parts"][0]["thoughtSignature"]
    assert base64.urlsafe_b64decode(sent + "=" * (-len(sent) % 4)) == raw


def test_a_file_goes_as_inline_data_of_its_mime_type() -> None:
    _, rec = _run("file-pdf-inline", _text_reply(), stream=False)
    inline = rec.body["contents"][0]["parts"][1]["inlineData"]
    assert inline["mime_type"] == "application/pdf"
    assert base64.urlsafe_b64decode(inline["data"]).startswith(b"%PDF-")
