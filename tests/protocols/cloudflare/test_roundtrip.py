"""Round trips through the Workers AI native wire, projected through what the losses table says is not carried."""

from __future__ import annotations

import json
import re
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.cloudflare.errors import WIRE
from harness.protocols.cloudflare.request import call_id_for
from harness.protocols.reference import body_reply, error_reply, stream_reply
from harness.stream import accumulate
from harness.wire.http import HttpRequest
from tests.protocols.cloudflare import support
from tests.protocols.cloudflare.support import CODEC
from tests.protocols.roundtrip import RoundTrip


def _joined(parts: list[Any]) -> list[Any]:
    """One message's text as the wire has it: joined, unless images keep the parts apart."""
    if any(isinstance(p, ir.ImagePart) for p in parts):
        return [p for p in parts if isinstance(p, ir.TextPart | ir.ImagePart)]
    text = "".join(p.text for p in parts if isinstance(p, ir.TextPart))
    return [ir.TextPart(text=text)] if text else []


def _message(msg: ir.Message) -> list[ir.Message]:
    if msg.role == "tool" or any(isinstance(p, ir.ToolResultPart) for p in msg.content):
        return [
            ir.Message(role="tool", content=[p.model_copy(update={"is_error": False, "content": _joined(p.content)})])
            for p in msg.content
            if isinstance(p, ir.ToolResultPart)
        ]
    kept = [p for p in msg.content if not isinstance(p, ir.ThinkingPart | ir.RedactedThinkingPart)]
    if not kept:
        return []
    return [msg.model_copy(update={"content": _joined(kept) + [p for p in kept if isinstance(p, ir.ToolCallPart)]})]


def project_request(request: ir.Request) -> ir.Request:
    """What the native request carries of `request`."""
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatText):
        fmt = None
    elif isinstance(fmt, ir.ResponseFormatJsonSchema):
        fmt = ir.ResponseFormatJsonSchema(schema_=fmt.schema_)
    return request.model_copy(
        update={
            "messages": [out for m in request.messages for out in _message(m)],
            "tool_choice": None,
            "parallel_tool_calls": None,
            "stop": [],
            "thinking": None,
            "response_format": fmt,
        }
    )


def _usage(usage: ir.Usage) -> ir.Usage:
    return ir.Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=usage.cache_read_tokens,
    )


def project_response(response: ir.Response, *, streamed: bool) -> ir.Response:
    """What a native reply carries of `response`."""
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    if streamed:
        content: list[Any] = []
        for part in response.content:
            if isinstance(part, ir.TextPart) and content and isinstance(content[-1], ir.TextPart):
                content[-1] = ir.TextPart(text=content[-1].text + part.text)
            elif isinstance(part, ir.TextPart | ir.ToolCallPart):
                content.append(part)
    else:
        text = "".join(p.text for p in response.content if isinstance(p, ir.TextPart))
        content = [ir.TextPart(text=text)] if text else []
        for i, call in enumerate(calls):
            raw = common.dump_json(call.arguments).decode()
            content.append(call.model_copy(update={"id": call_id_for(i, call.name, raw), "arguments_raw": raw}))
    return ir.Response(
        content=content,
        stop_reason=ir.StopReason(kind="tool_use" if calls else "end_turn"),
        usage=_usage(response.usage),
    )


def test_every_reference_answer_carries_cf_ray() -> None:
    request = ir.Request(model="@cf/meta/llama-3.1-8b-instruct", stream=True)
    body = body_reply(CODEC, request, ir.Response(content=[ir.TextPart(text="hi")]), seed="s")
    stream = stream_reply(CODEC, request, [ir.MessageStart(), ir.Done()], seed="s")
    error = error_reply(CODEC, ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down"), seed="s")
    rays = [body.headers["cf-ray"], stream.headers["cf-ray"], error.headers["cf-ray"]]
    assert all(re.fullmatch(r"[0-9a-f]{16}-SJC", ray) for ray in rays)
    assert "cf-ray" not in CODEC.encode_response(ir.Response()).headers  # the edge's header, not the encoder's


def test_unknown_result_keys_are_kept_as_extras_and_written_back() -> None:
    body = b'{"result":{"response":"hi","usage":{"prompt_tokens":1,"neurons":0.5},"trace":"t"},"success":true}'
    response = CODEC.decode_response(body)
    assert response.extras == {"cloudflare": {"usage": {"neurons": 0.5}, "trace": "t"}}
    result = json.loads(CODEC.encode_response(response).body)["result"]
    assert result["trace"] == "t" and result["usage"]["neurons"] == 0.5


def _kind(error: ir.IRError) -> ir.ErrorKind:
    kind = error.kind if error.kind in WIRE else ir.ErrorKind.SERVER
    if kind is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not common.is_context_message(error.message):
        return ir.ErrorKind.INVALID_REQUEST
    if kind is ir.ErrorKind.INVALID_REQUEST and common.is_context_message(error.message):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    return kind


def _expect_error(error: ir.IRError) -> ir.IRError:
    status, code = WIRE.get(error.kind, (500, 3043))
    return ir.IRError.of(_kind(error), error.message, status=status, retry_after=error.retry_after, code=str(code))


def _expect_stream_error(events: list[ir.StreamEvent]) -> ir.StreamEvent:
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent)
    error = last.error
    _, code = WIRE.get(error.kind, (500, 3043))
    kind = _kind(error)
    if error.kind is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED:  # 5021 has no kind of its own: the message decides
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED if common.is_context_message(error.message) else ir.ErrorKind.SERVER
    return ir.ErrorEvent(error=ir.IRError.of(kind, error.message, code=str(code)))


def _check_stream(body: bytes, events: list[ir.StreamEvent]) -> None:
    support.check_stream(body)
    assert body.endswith(b"data: [DONE]\n\n") is isinstance(events[-1], ir.Done)  # an error ends it without


def _check_request(wire: HttpRequest, request: ir.Request) -> None:
    support.check_request(wire)
    assert wire.path == f"/client/v4/accounts/{'0' * 32}/ai/run/{request.model}"


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        expect_request=project_request,
        expect_response=lambda response: project_response(response, streamed=False),
        check_request=_check_request,
        check_response=support.check_response,
        expect_stream=lambda response, _chunk: project_response(response, streamed=True),
        seen_stream=lambda events: accumulate(events).response,
        check_stream=_check_stream,
        expect_stream_error=_expect_stream_error,
        seen_stream_error=lambda events: events[-1],
        error_after_content=False,
        expect_error=_expect_error,
        check_error=lambda wire, _error: support.check_error(wire),
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
