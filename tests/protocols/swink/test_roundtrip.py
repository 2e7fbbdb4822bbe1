"""Round trips through the swink wire: IR -> encode -> decode gives the IR back, projected through the losses."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common, decode_events, encode_events
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


@given(strategies.responses(), st.integers(1, 5))
def test_stream_round_trip(response: ir.Response, chunk: int) -> None:
    body = encode_events(CODEC, strategies.events_for(response, chunk=chunk))
    support.check_stream(body)
    decoded = decode_events(CODEC, [body])
    expected = strategies.events_for(project_response(response), chunk=chunk)
    assert decoded == expected
    assert decode_events(CODEC, [body[i : i + 1] for i in range(len(body))]) == decoded


@given(strategies.errors)
def test_http_error_round_trip(error: ir.IRError) -> None:
    wire = CODEC.encode_error(error)
    support.check_error(wire)
    decoded = CODEC.decode_error(wire.status, wire.headers, wire.body)
    carried = {ir.ErrorKind.NETWORK: ir.ErrorKind.SERVER, ir.ErrorKind.MALFORMED_STREAM: ir.ErrorKind.SERVER}
    kind = carried.get(error.kind, error.kind)
    if kind is ir.ErrorKind.INVALID_REQUEST and common.is_context_message(error.message):
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    assert (decoded.kind, decoded.message, decoded.status, decoded.retry_after) == (
        kind,
        error.message,
        common.KIND_STATUS[error.kind],
        error.retry_after,
    )
    assert decoded.code == WIRE_ERROR_KINDS.get(error.kind)


@given(strategies.errors)
def test_stream_error_round_trip(error: ir.IRError) -> None:
    body = encode_events(CODEC, [ir.MessageStart(), ir.ErrorEvent(error=error)])
    support.check_stream(body)
    (_, event) = decode_events(CODEC, [body])
    assert isinstance(event, ir.ErrorEvent)
    wire_kind = WIRE_ERROR_KINDS.get(error.kind)
    kind = error.kind if wire_kind is not None else ir.ErrorKind.SERVER
    assert event.error == ir.IRError.of(kind, error.message, code=wire_kind)


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        expect_request=project_request,
        expect_response=project_response,
        check_request=lambda wire, _request: support.check_request(wire),
        check_response=lambda wire: support.check_stream(wire.body),
        stream_only=True,
    )
}
"""The generic request and response round trips' parameters (tests/protocols/test_contract.py)."""
