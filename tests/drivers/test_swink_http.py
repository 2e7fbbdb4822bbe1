"""The swink proxy driver against our own encoder (through httpx2.MockTransport): what it sends, what it reads."""

from __future__ import annotations

import json

from harness import ir
from harness.drivers.base import SdkResult
from harness.drivers.swink_http import DRIVER
from harness.protocols import encode_events, registry
from harness.protocols.swink import schemas
from harness.scenarios import SdkException
from tests.drivers.mock import Recorder, Reply
from tests.strategies import events_for

CODEC = registry.get("swink")
CALL = ir.ToolCallPart(id="tc_1", name="read_file", arguments={"path": "foo.rs"}, arguments_raw='{"path":"foo.rs"}')
REPLY = ir.Response(
    content=[ir.ThinkingPart(text="Hm.", signature="sig"), ir.TextPart(text="Let me read that."), CALL],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=15, output_tokens=25),
)
REQUEST = ir.Request(
    model="test-model",
    system="sys",
    messages=[
        ir.Message(role="user", content=[ir.TextPart(text="read foo")]),
        ir.Message(role="assistant", content=[CALL]),
        ir.Message(
            role="tool", content=[ir.ToolResultPart(tool_call_id="tc_1", content=[ir.TextPart(text="fn main")])]
        ),
    ],
    temperature=0.7,
)


def _run(reply: Reply, *, stream: bool) -> tuple[SdkResult, Recorder]:
    recorder = Recorder(reply)
    result = DRIVER.run(REQUEST, stream=stream, base_url="http://proxy/", http_client=recorder.httpx2_client())
    return result, recorder


def test_sends_proxy_request_with_bearer_and_reads_the_stream() -> None:
    result, rec = _run(Reply.stream(encode_events(CODEC, events_for(REPLY))), stream=True)
    assert rec.url == "http://proxy/v1/stream"
    assert rec.requests[-1].headers["authorization"] == "Bearer conformance-test-key"
    schemas.validate("request", rec.body)
    assert rec.body["options"] == {"temperature": 0.7}
    assert [m["role"] for m in rec.body["messages"]] == ["user", "assistant", "tool_result"]
    assert result.events is not None and result.error is None
    ends = [e for e in result.events if isinstance(e, ir.ThinkingEnd)]
    assert ends == [ir.ThinkingEnd(index=0, signature="sig")]
    done = result.events[-1]
    assert isinstance(done, ir.Done)
    assert done.stop_reason == ir.StopReason(kind="tool_use", raw="tool_use")
    assert (done.usage.input_tokens, done.usage.output_tokens) if done.usage else None == (15, 25)


def test_a_non_streamed_run_folds_the_stream_like_swinks_agent() -> None:
    result, _ = _run(Reply.stream(encode_events(CODEC, events_for(REPLY))), stream=False)
    assert result.response is not None
    assert result.response.content == [
        ir.ThinkingPart(text="Hm.", signature="sig"),
        ir.TextPart(text="Let me read that."),
        CALL,
    ]


def test_http_statuses_are_classified_as_swink_does() -> None:
    for status, neutral, kind in [
        (401, SdkException.AUTHENTICATION, ir.ErrorKind.AUTH),
        (429, SdkException.RATE_LIMIT, ir.ErrorKind.THROTTLED),
        (504, SdkException.SERVER_ERROR, ir.ErrorKind.TIMEOUT),
    ]:
        result, _ = _run(Reply(status, b"", {}), stream=True)
        assert (result.exception, result.error.kind if result.error else None) == (neutral, kind)
        assert result.exception_class == "harness.drivers.swink_http.ProxyHTTPError"


def test_done_sentinel_and_cut_streams_are_errors_and_error_events_keep_their_kind() -> None:
    head = encode_events(CODEC, [ir.MessageStart(), ir.TextStart(index=0), ir.TextDelta(index=0, text="hi")])
    for body, text in [(head + b"data: [DONE]\n\n", "protocol terminal event"), (head, "ended unexpectedly")]:
        result, _ = _run(Reply.stream(body), stream=True)
        assert result.error is not None and result.error.kind == ir.ErrorKind.MALFORMED_STREAM
        assert text in result.error.message
    error = ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down"))
    result, _ = _run(
        Reply.stream(head + encode_events(CODEC, [error])[0:0] + CODEC.stream_encoder().encode(error)), stream=True
    )
    assert result.exception is SdkException.STREAM_ERROR
    assert result.error == ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", code="throttled")
    assert json.dumps(ir.events_to_json(result.events or []))


def test_a_block_out_of_its_place_is_refused_as_accumulate_message_does() -> None:
    # swink's accumulate_message: a start's content_index must be the next place in the message, and deltas and
    # ends must name a block of their own type.
    def body(*events: dict[str, object]) -> bytes:
        return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)

    start = {"type": "start"}
    thinking = [
        {"type": "thinking_start", "content_index": 0},
        {"type": "thinking_delta", "content_index": 0, "delta": "Hm."},
        {"type": "thinking_end", "content_index": 0, "signature": "sig"},
    ]
    done = {"type": "done", "stop_reason": "stop", "usage": {"input": 1, "output": 2, "cache_read": 0,
            "cache_write": 0, "total": 3}, "cost": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0,
            "total": 0}}  # fmt: skip
    again_zero = {"type": "text_start", "content_index": 0}
    result, _ = _run(Reply.stream(body(start, *thinking, again_zero)), stream=True)
    assert result.exception is SdkException.DECODE_ERROR
    assert result.error is not None and result.error.kind is ir.ErrorKind.MALFORMED_STREAM
    assert "text_start content_index 0 != content length 1" in result.error.message
    wrong_type = {"type": "text_delta", "content_index": 0, "delta": "x"}
    result, _ = _run(Reply.stream(body(start, *thinking, wrong_type)), stream=True)
    assert result.error is not None and "block at index 0 is not text" in result.error.message
    in_place = [{"type": "text_start", "content_index": 1}, {"type": "text_end", "content_index": 1}]
    result, _ = _run(Reply.stream(body(start, *thinking, *in_place, done)), stream=True)
    assert result.error is None and result.events is not None and isinstance(result.events[-1], ir.Done)
