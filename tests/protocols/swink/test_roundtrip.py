"""Round trips through the swink wire: IR -> encode -> decode gives the IR back, projected through the losses."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.swink.events import STOP_KINDS, WIRE_ERROR_KINDS, wire_stop
from tests import strategies
from tests.protocols.roundtrip import RoundTrip
from tests.protocols.swink import support
from tests.protocols.swink.support import CODEC


def _split(msg: ir.Message) -> list[ir.Message]:
    if msg.role != "tool":
        return [msg]
    return [ir.Message(role="tool", content=[p]) for p in msg.content]


def _part(part: Any) -> Any:
    if isinstance(part, ir.ToolResultPart):
        return part.model_copy(update={"name": None})
    if isinstance(part, ir.ToolCallPart):
        return part.model_copy(update={"arguments_raw": common.dump_json(part.arguments).decode()})
    return part


def project_request(request: ir.Request) -> ir.Request:
    """What swink's request carries of `request` (no file parts: the FilePart loss; a turn of files only is
    not sent at all)."""
    messages = [
        m.model_copy(update={"content": [_part(p) for p in m.content if not isinstance(p, ir.FilePart)]})
        for m in request.messages
        if not m.content or not all(isinstance(p, ir.FilePart) for p in m.content)
    ]
    return request.model_copy(
        update={
            "messages": [out for m in messages for out in _split(m)],
            "tools": [],
            "tool_choice": None,
            "parallel_tool_calls": None,
            "top_p": None,
            "stop": [],
            "response_format": None,
            "thinking": None,
            "stream": True,
        }
    )


def project_response(response: ir.Response) -> ir.Response:
    """What the stream carries of `response` (stop reason raw as swink sends it)."""
    raw = wire_stop(response.stop_reason)
    usage = response.usage
    zeroed = {
        k: getattr(usage, k) or 0 for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    }
    return response.model_copy(
        update={
            "id": None,
            "model": None,
            "content": [p for p in response.content if not isinstance(p, ir.RedactedThinkingPart)],
            "stop_reason": ir.StopReason(kind=STOP_KINDS[raw], raw=raw),
            "usage": usage.model_copy(update=zeroed),
        }
    )


def _expect_error(error: ir.IRError) -> ir.IRError:
    carried = {ir.ErrorKind.NETWORK: ir.ErrorKind.SERVER, ir.ErrorKind.MALFORMED_STREAM: ir.ErrorKind.SERVER}
    kind = carried.get(error.kind, error.kind)
    if kind is ir.ErrorKind.INVALID_REQUEST and common.is_context_message(error.message):
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    code = WIRE_ERROR_KINDS.get(error.kind)
    return ir.IRError.of(
        kind, error.message, status=common.KIND_STATUS[error.kind], retry_after=error.retry_after, code=code
    )


def _expect_stream_error(events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent)
    wire_kind = WIRE_ERROR_KINDS.get(last.error.kind)
    kind = last.error.kind if wire_kind is not None else ir.ErrorKind.SERVER
    return [ir.MessageStart(), ir.ErrorEvent(error=ir.IRError.of(kind, last.error.message, code=wire_kind))]


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        expect_request=project_request,
        expect_response=project_response,
        check_request=lambda wire, _request: support.check_request(wire),
        check_response=lambda wire: support.check_stream(wire.body),
        stream_only=True,
        expect_stream=lambda response, chunk: strategies.events_for(project_response(response), chunk=chunk),
        check_stream=lambda body, _events: support.check_stream(body),
        expect_stream_error=_expect_stream_error,
        error_after_content=False,
        expect_error=_expect_error,
        check_error=lambda wire, _error: support.check_error(wire),
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
