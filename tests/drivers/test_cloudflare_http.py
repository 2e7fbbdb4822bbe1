"""The Workers AI REST driver against our own encoders (through httpx2.MockTransport): what it sends, what it reads."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.drivers.base import SdkResult, UnsupportedRequest
from harness.drivers.cloudflare_http import DRIVER
from harness.protocols import encode_events, registry
from harness.scenarios import SdkException
from tests.drivers.mock import Recorder, Reply
from tests.strategies import events_for

CODEC = registry.get("cloudflare")
MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
CALL = ir.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}')
REPLY = ir.Response(
    content=[ir.TextPart(text="Checking."), CALL],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=12, output_tokens=7),
)


def _request(**update: object) -> ir.Request:
    request = ir.Request(
        model=MODEL,
        system="Be brief.",
        messages=[ir.Message(role="user", content=[ir.TextPart(text="Weather in Paris?")])],
        tools=[ir.Tool(name="get_weather", description="Weather", parameters={"type": "object", "properties": {}})],
        max_tokens=64,
    )
    return request.model_copy(update=update)


def _run(reply: Reply, *, stream: bool, request: ir.Request | None = None) -> tuple[SdkResult, Recorder]:
    recorder = Recorder(reply)
    result = DRIVER.run(
        request or _request(), stream=stream, base_url="http://proxy", http_client=recorder.httpx2_client()
    )
    return result, recorder


def test_non_streamed_call_sends_the_native_body_and_reads_the_envelope() -> None:
    wire = CODEC.encode_response(REPLY)
    result, rec = _run(Reply(wire.status, wire.body, wire.headers), stream=False)
    assert rec.url == f"http://proxy/client/v4/accounts/{'0' * 32}/ai/run/{MODEL}"
    assert rec.requests[-1].headers["authorization"] == "Bearer conformance-test-key"
    assert rec.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert (rec.body["stream"], rec.body["max_tokens"]) == (False, 64)
    assert rec.body["tools"][0]["function"]["name"] == "get_weather"
    assert result.response is not None
    assert [p.kind for p in result.response.content] == ["text", "tool_call"]
    assert result.response.stop_reason == ir.StopReason(kind="tool_use")
    assert result.response.usage == ir.Usage(input_tokens=12, output_tokens=7)


def test_streamed_call_reads_native_events_to_done() -> None:
    body = encode_events(CODEC, events_for(REPLY))
    result, rec = _run(Reply.stream(body), stream=True)
    assert rec.body["stream"] is True
    assert result.error is None and result.events is not None
    kinds = [e.kind for e in result.events]
    assert kinds[0] == "message_start" and kinds[-1] == "done"
    starts = [e for e in result.events if isinstance(e, ir.ToolCallStart)]
    assert [(s.id, s.name) for s in starts] == [("call_1", "get_weather")]
    done = result.events[-1]
    assert isinstance(done, ir.Done) and done.usage == ir.Usage(input_tokens=12, output_tokens=7)


def test_an_error_envelope_is_mapped_like_an_sdk_exception() -> None:
    wire = CODEC.encode_error(ir.IRError.of(ir.ErrorKind.THROTTLED, "Account limited", retry_after=3))
    result, _ = _run(Reply(wire.status, wire.body, wire.headers), stream=True)
    assert result.error is not None
    assert (result.error.kind, result.error.status, result.error.code, result.retry_after) == (
        ir.ErrorKind.THROTTLED,
        429,
        "3036",
        3.0,
    )
    assert result.exception is SdkException.RATE_LIMIT
    assert result.exception_class == "harness.drivers.cloudflare_http.WorkersAIError"


def test_an_error_inside_the_stream_and_a_cut_stream() -> None:
    events = [ir.MessageStart(), ir.TextStart(index=0), ir.TextDelta(index=0, text="Hi")]
    failed = encode_events(CODEC, [*events, ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "busy"))])
    result, _ = _run(Reply.stream(failed), stream=True)
    assert result.exception is SdkException.STREAM_ERROR and result.error is not None
    # 3040 (out of capacity) is documented as a 429, but the code says what it is: overloaded.
    assert (result.error.kind, result.error.code) == (ir.ErrorKind.OVERLOADED, "3040")
    cut = encode_events(CODEC, events)
    result, _ = _run(Reply.stream(cut), stream=True)
    assert result.events is not None and result.events[-1].kind == "error"
    assert json.loads(json.dumps(ir.to_json(result.events[-1])))["error"]["kind"] == "malformed_stream"


def test_what_the_native_schema_cannot_say_is_refused() -> None:
    with pytest.raises(UnsupportedRequest, match="stop"):
        _run(Reply(), stream=False, request=_request(stop=["END"]))


def test_list_models_reads_the_search_result() -> None:
    reply = Reply.json({"result": [{"name": "@cf/meta/a"}, {"name": "@cf/qwen/b"}], "success": True, "errors": []})
    recorder = Recorder(reply)
    result = DRIVER.list_models(base_url="http://proxy", http_client=recorder.httpx2_client())
    assert result.models == ["@cf/meta/a", "@cf/qwen/b"]
    assert "task=Text+Generation" in recorder.url


def test_a_workers_ai_code_names_the_kind_its_status_does_not() -> None:
    # Cloudflare answers an unknown model with 400 and code 5007, and no capacity with 429 and code 3040.
    for status, code, kind, neutral in [
        (400, 5007, ir.ErrorKind.NOT_FOUND, SdkException.NOT_FOUND),
        (429, 3040, ir.ErrorKind.OVERLOADED, SdkException.OVERLOADED),
        (400, 5004, ir.ErrorKind.INVALID_REQUEST, SdkException.BAD_REQUEST),
    ]:
        body = json.dumps({"success": False, "errors": [{"code": code, "message": "m"}], "messages": []}).encode()
        result, _ = _run(Reply(status, body, {"content-type": "application/json"}), stream=False)
        assert result.error is not None
        assert (result.error.kind, result.error.status, result.error.code, result.exception) == (
            kind,
            status,
            str(code),
            neutral,
        )
