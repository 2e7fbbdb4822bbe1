"""The responses driver: the `responses.create` call it builds from IR, and what it makes of hand-written and
recorded Responses bytes (not yet in the driver registry: the proxy does not serve `/v1/responses` yet)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness import ir
from harness.drivers.base import UnsupportedRequest
from harness.drivers.responses_sdk import DRIVER
from harness.protocols import decode_events, registry
from harness.protocols.reference import strip_extras
from harness.scenarios import SdkException, evaluate
from harness.wire.http import HttpRequest
from tests.conftest import corpus_files
from tests.drivers.mock import SCENARIOS, Recorder, Reply, sse
from tests.protocols.responses.support import interactions

CODEC = registry.get("responses")
RESP_ID = "resp_0123456789abcdef0123456789abcdef0123456789abcdef01"


def _response(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {
        "id": RESP_ID,
        "object": "response",
        "created_at": 1,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "model": "gpt-test",
        "output": output,
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "usage": {
            "input_tokens": 14,
            "input_tokens_details": {"cached_tokens": 8},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 2},
            "total_tokens": 23,
        },
        **extra,
    }


ANSWER = "17 \u00d7 23 = 391."
ROME = "Let me check the weather in Rome."
MESSAGE = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": ROME, "annotations": []}]}  # fmt: skip
OPENING = {**MESSAGE, "content": [], "status": "in_progress"}
CALL = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "get_weather",
        "arguments": '{"city":"Rome"}'}  # fmt: skip


def _stream(*events: dict[str, Any]) -> bytes:
    numbered = [{**e, "sequence_number": i} for i, e in enumerate(events)]
    return sse(*numbered, events=[e["type"] for e in numbered])


def _lifecycle(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> list[dict[str, Any]]:
    start = _response([], "in_progress", usage=None)
    return [{"type": "response.created", "response": start}, {"type": "response.in_progress", "response": start},
            {"type": f"response.{status}", "response": _response(output, status, **extra)}]  # fmt: skip


def _run(scenario: str, reply: Reply, *, stream: bool) -> tuple[Any, Recorder]:
    recorder = Recorder(reply)
    request = SCENARIOS[scenario].request_for("gpt-test", stream=stream)
    result = DRIVER.run(request, stream=stream, base_url="http://proxy", http_client=recorder.httpx2_client())
    return result, recorder


def _ok() -> Reply:
    return Reply.json(_response([MESSAGE]))


# --- the request ------------------------------------------------------------------------------------------


def test_request_carries_system_sampling_and_limits_statelessly() -> None:
    _, rec = _run("sampling-params", _ok(), stream=False)
    assert rec.url == "http://proxy/v1/responses"
    body = rec.body
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.3, 0.9, 32)
    assert body["store"] is False and "stream" not in body
    _, rec = _run("system-prompt", _ok(), stream=False)
    assert rec.body["instructions"] == "You are a pirate. Answer in one short sentence."
    assert rec.body["input"] == [{"role": "user", "content": "How is the sea today?"}]


def test_request_carries_flat_tools_and_choice() -> None:
    _, rec = _run("tool-choice-specific", _ok(), stream=False)
    tools = rec.body["tools"]
    assert [(t["type"], t["name"], t["strict"]) for t in tools] == [("function", "get_weather", False),
                                                                     ("function", "get_time", False)]  # fmt: skip
    assert tools[0]["parameters"]["required"] == ["city"]
    assert rec.body["tool_choice"] == {"type": "function", "name": "get_time"}


def test_stop_sequences_cannot_be_sent() -> None:
    with pytest.raises(UnsupportedRequest, match="stop sequences"):
        _run("stop-sequence", _ok(), stream=False)


def test_request_images_json_schema_reasoning_and_tool_results() -> None:
    _, rec = _run("vision-multiple-images", _ok(), stream=False)
    content = rec.body["input"][0]["content"]
    assert [p["type"] for p in content] == ["input_text", "input_image", "input_text", "input_image", "input_text"]
    assert content[1]["image_url"].startswith("data:image/png;base64,iVBORw0KGgo")
    _, rec = _run("json-schema", _ok(), stream=False)
    fmt = rec.body["text"]["format"]
    assert (fmt["type"], fmt["name"], fmt["strict"]) == ("json_schema", "city_info", True)
    _, rec = _run("thinking-then-tool", _ok(), stream=False)
    assert rec.body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert rec.body["include"] == ["reasoning.encrypted_content"]
    _, rec = _run("tool-result-roundtrip", _ok(), stream=False)
    call, output = rec.body["input"][1:3]
    assert call == {"type": "function_call", "call_id": "call_weather_paris", "name": "get_weather",
                    "arguments": '{"city":"Paris"}'}  # fmt: skip
    assert output == {"type": "function_call_output", "call_id": "call_weather_paris", "output": "18°C and sunny"}


@pytest.mark.parametrize("scenario", ["tool-result-roundtrip", "thinking-then-tool", "vision-base64", "multi-turn"])
def test_what_the_driver_sends_decodes_to_the_scenario_request(scenario: str) -> None:
    _, rec = _run(scenario, _ok(), stream=True)
    sent = rec.requests[-1]
    decoded = CODEC.decode_request(HttpRequest(method="POST", path="/v1/responses", body=sent.content))
    expected = SCENARIOS[scenario].request_for("gpt-test", stream=True)
    assert decoded.messages == expected.messages and decoded.tools == expected.tools
    assert decoded.max_tokens == expected.max_tokens and decoded.stream is True


# --- what came back ---------------------------------------------------------------------------------------


def test_nonstream_text_then_tool_normalized() -> None:
    result, _ = _run("text-then-tool", Reply.json(_response([MESSAGE, CALL])), stream=False)
    assert result.response == ir.Response(
        id=RESP_ID,
        model="gpt-test",
        content=[
            ir.TextPart(text=ROME),
            ir.ToolCallPart(
                id="call_1", name="get_weather", arguments={"city": "Rome"}, arguments_raw='{"city":"Rome"}'
            ),
        ],
        stop_reason=ir.StopReason(kind="tool_use", raw="completed"),
        usage=ir.Usage(input_tokens=14, output_tokens=9, cache_read_tokens=8, reasoning_tokens=2),
    )
    assert all(c.passed for c in evaluate(SCENARIOS["text-then-tool"], result))


def test_litellm_reasoning_item_with_null_summary_reads_its_content() -> None:
    # LiteLLM 1.106.2's /v1/responses sends a reasoning item with `"summary": null` and the text in `content`.
    rs = {"id": "rs_1", "type": "reasoning", "summary": None, "encrypted_content": "c2ln",
          "content": [{"type": "reasoning_text", "text": "391 = 17 x 23."}]}  # fmt: skip
    result, _ = _run("text-then-tool", Reply.json(_response([rs, MESSAGE, CALL])), stream=False)
    assert result.response is not None
    assert result.response.content[0] == ir.ThinkingPart(text="391 = 17 x 23.", signature="c2ln")
    assert result.response.content[1] == ir.TextPart(text=ROME)


def test_stream_reasoning_with_encrypted_content_is_thinking_with_its_signature() -> None:
    rs = {"id": "rs_1", "type": "reasoning", "summary": []}
    summary = "17 times 20 is 340, plus 17 times 3 is 51, so 391."
    where = {"item_id": "rs_1", "output_index": 0, "summary_index": 0}
    done = {**rs, "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": "c2ln"}
    text = {"item_id": "msg_1", "output_index": 1, "content_index": 0}
    message = {**MESSAGE, "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}
    start, progress, completed = _lifecycle([done, message])
    body = _stream(
        start, progress,
        {"type": "response.output_item.added", "output_index": 0, "item": rs},
        {"type": "response.reasoning_summary_part.added", **where, "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", **where, "delta": summary[:20]},
        {"type": "response.reasoning_summary_text.delta", **where, "delta": summary[20:]},
        {"type": "response.reasoning_summary_text.done", **where, "text": summary},
        {"type": "response.reasoning_summary_part.done", **where, "part": {"type": "summary_text", "text": summary}},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.output_item.added", "output_index": 1, "item": OPENING},
        {"type": "response.content_part.added", **text, "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", **text, "delta": ANSWER, "logprobs": []},
        {"type": "response.output_text.done", **text, "text": ANSWER, "logprobs": []},
        {"type": "response.content_part.done", **text, "part": message["content"][0]},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        completed,
    )  # fmt: skip
    result, rec = _run("thinking-with-signature", Reply.stream(body), stream=True)
    assert rec.body["stream"] is True
    assert result.events == [
        ir.MessageStart(id=RESP_ID, model="gpt-test"),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text=summary[:20]),
        ir.ThinkingDelta(index=0, text=summary[20:]),
        ir.ThinkingEnd(index=0, signature="c2ln"),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text=ANSWER),
        ir.TextEnd(index=1),
        ir.Done(
            stop_reason=ir.StopReason(kind="end_turn", raw="completed"),
            usage=ir.Usage(input_tokens=14, output_tokens=9, cache_read_tokens=8, reasoning_tokens=2),
        ),
    ]
    assert all(c.passed for c in evaluate(SCENARIOS["thinking-with-signature"], result))


@pytest.mark.corpus
@pytest.mark.parametrize("name", [p.name for p in corpus_files("openai_responses") if p.name.startswith("stream-")])
def test_recorded_streams_normalize_as_the_codec_decodes_them(name: str) -> None:
    # Two independent readers of the same real bytes (the SDK's types and our decoder) agree on the IR; the
    # provider extras the decoder keeps for re-encoding (times, service tier, phases) are no part of what the
    # SDK's user reads.
    for item in interactions(name):
        result, _ = _run("text-basic", Reply.stream(item.response.body), stream=True)
        assert result.events == strip_extras(decode_events(CODEC, [item.response.body]))


def test_an_incomplete_stream_is_a_max_tokens_stop() -> None:
    cut = {**MESSAGE, "status": "incomplete", "content": [{"type": "output_text", "text": "One, two, three, four",
                                                              "annotations": []}]}  # fmt: skip
    events = _lifecycle([cut], "incomplete", incomplete_details={"reason": "max_output_tokens"})
    result, _ = _run("max-tokens-length", Reply.stream(_stream(*events)), stream=True)
    assert result.events[-1].stop_reason == ir.StopReason(kind="max_tokens", raw="max_output_tokens")
    assert all(c.passed for c in evaluate(SCENARIOS["max-tokens-length"], result))


def test_a_stream_without_its_terminal_event_is_malformed() -> None:
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    text = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    body = _stream(
        _lifecycle([])[0],
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **text, "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", **text, "delta": "This reply is cut", "logprobs": []},
    )
    result, _ = _run("truncated-stream", Reply.stream(body), stream=True)
    assert result.events[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without response.completed")
    )
    assert result.exception is None
    assert all(c.passed for c in evaluate(SCENARIOS["truncated-stream"], result))


def test_a_delta_for_an_item_never_opened_is_a_decode_error_not_a_crash() -> None:
    # Argument deltas that name output item 0 (the upstream choice index) while the call is output item 1.
    call = {**CALL, "status": "in_progress", "arguments": ""}
    body = _stream(
        _lifecycle([])[0],
        {"type": "response.output_item.added", "output_index": 0, "item": MESSAGE},
        {"type": "response.output_item.done", "output_index": 0, "item": MESSAGE},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{"},
    )
    result, _ = _run("text-then-tool", Reply.stream(body), stream=True)
    message = "stream does not add up: response.function_call_arguments names item 0, which no earlier event opened"
    assert result.error == ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, message)
    assert result.exception == SdkException.DECODE_ERROR
    assert result.events[-1] == ir.ErrorEvent(error=result.error)
    assert [e.kind for e in result.events[:4]] == ["message_start", "text_start", "text_delta", "text_end"]


def _partial() -> list[dict[str, Any]]:
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    text = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        _lifecycle([])[0],
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **text, "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", **text, "delta": "Partial answer", "logprobs": []},
    ]


def test_an_error_event_with_the_error_object_raises_api_error() -> None:
    error = {"type": "error", "error": {"type": "server_error", "code": "overloaded", "message": "Overloaded"}}
    result, _ = _run("midstream-error", Reply.stream(_stream(*_partial(), error)), stream=True)
    assert (result.exception_class, result.exception) == ("openai.APIError", SdkException.STREAM_ERROR)
    assert result.error == ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", code="overloaded")
    assert result.events[-2:] == [ir.TextEnd(index=0), ir.ErrorEvent(error=result.error)]
    assert all(c.passed for c in evaluate(SCENARIOS["midstream-error"], result))


@pytest.mark.parametrize(
    ("event", "kind", "cls"),
    [
        ({"type": "error", "code": "invalid_api_key", "message": "bad key", "param": None}, ir.ErrorKind.AUTH,
         "openai.types.responses.ResponseErrorEvent"),
        ({"type": "response.failed", "response": _response([], "failed", usage=None,
          error={"code": "server_error", "message": "boom"})}, ir.ErrorKind.SERVER,
         "openai.types.responses.ResponseFailedEvent"),
    ],
)  # fmt: skip
def test_failures_the_sdk_yields_as_events_are_stream_errors(
    event: dict[str, Any], kind: ir.ErrorKind, cls: str
) -> None:
    result, _ = _run("midstream-error", Reply.stream(_stream(*_partial(), copy.deepcopy(event))), stream=True)
    assert (result.exception_class, result.exception) == (cls, SdkException.STREAM_ERROR)
    assert result.error is not None and result.error.kind == kind and result.error.status is None
    assert isinstance(result.events[-1], ir.ErrorEvent) and result.events[-1].error == result.error


def test_a_stream_error_whose_code_names_no_kind_is_read_by_its_type() -> None:
    # OpenRouter's in-stream `code: 400`, re-encoded as a Responses error event, keeps "400" as its code beside
    # `type: invalid_request_error` (corpus openai_compat/openrouter-stream-comments-and-error-chunk).
    nested = {"type": "invalid_request_error", "code": "400", "message": "Token limit reached", "param": None}
    error = {"type": "error", "code": "400", "error": nested, "message": "Token limit reached", "param": None}
    result, _ = _run("midstream-error", Reply.stream(_stream(*_partial(), error)), stream=True)
    assert result.exception == SdkException.STREAM_ERROR
    assert result.error == ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, "Token limit reached", code="400")


def test_rate_limit_with_retry_after() -> None:
    body = {
        "error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}
    }
    for stream in (False, True):
        result, _ = _run("error-rate-limit-429", Reply.json(body, 429, **{"retry-after": "7"}), stream=stream)
        assert (result.exception_class, result.exception, result.retry_after) == (
            "openai.RateLimitError",
            SdkException.RATE_LIMIT,
            7.0,
        )
        assert result.error is not None and (result.error.kind, result.error.status) == (ir.ErrorKind.THROTTLED, 429)
        assert all(c.passed for c in evaluate(SCENARIOS["error-rate-limit-429"], result))


def test_overloaded_503_is_an_internal_server_error_class_but_overloaded() -> None:
    result, _ = _run("error-overloaded", Reply.json({"error": {"message": "Overloaded"}}, 503), stream=True)
    assert (result.exception_class, result.exception) == ("openai.InternalServerError", SdkException.OVERLOADED)
    assert all(c.passed for c in evaluate(SCENARIOS["error-overloaded"], result))


def test_models_list() -> None:
    rec = Recorder(Reply.json({"object": "list", "data": [{"id": "conformance-model", "object": "model",
                                                          "created": 1, "owned_by": "x"}]}))  # fmt: skip
    result = DRIVER.list_models(base_url="http://proxy", http_client=rec.httpx2_client())
    assert result.models == ["conformance-model"] and rec.url == "http://proxy/v1/models"


def test_a_file_goes_as_input_file_with_a_data_url_and_its_name() -> None:
    _, rec = _run("file-pdf-inline", _ok(), stream=False)
    text, file = rec.body["input"][0]["content"]
    assert (text["type"], file["type"], file["filename"]) == ("input_text", "input_file", "invoice.pdf")
    assert file["file_data"].startswith("data:application/pdf;base64,JVBERi0")
