"""Round trips through the Anthropic wire: IR -> encode -> decode == IR, projected through the codec's losses.

`project` is the one projection: each entry of `RULES` is keyed by a `losses` table key and says what that
loss does to an IR value; a test keeps the two key sets equal. Every encoded output is schema-validated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common, decode_events, encode_events
from harness.protocols.anthropic.errors import ERROR_TYPES, wire_error_type
from harness.protocols.anthropic.mapping import DEFAULT_MAX_TOKENS, MISSING_MESSAGE_ID, stop_reason_to_wire
from tests import strategies
from tests.protocols.anthropic.support import CODEC, assert_schema, assert_stream_schema, random_chunks

# --- the projection ---------------------------------------------------------------------------------------


def _request_max_tokens(value: Any) -> Any:
    if isinstance(value, ir.Request) and value.max_tokens is None:
        return value.model_copy(update={"max_tokens": DEFAULT_MAX_TOKENS})
    return value


def _request_parallel(value: Any) -> Any:
    if not isinstance(value, ir.Request) or value.parallel_tool_calls is None:
        return value
    if value.tool_choice is None:
        return value.model_copy(update={"tool_choice": ir.ToolChoiceAuto()})
    if isinstance(value.tool_choice, ir.ToolChoiceNone):
        return value.model_copy(update={"parallel_tool_calls": None})
    return value


def _request_format(value: Any) -> Any:
    if not isinstance(value, ir.Request):
        return value
    fmt = value.response_format
    if isinstance(fmt, ir.ResponseFormatText | ir.ResponseFormatJsonObject):
        return value.model_copy(update={"response_format": None})
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        return value.model_copy(update={"response_format": ir.ResponseFormatJsonSchema(schema_=fmt.schema_)})
    return value


def _request_thinking(value: Any) -> Any:
    if isinstance(value, ir.Request) and value.thinking is not None and not value.thinking.enabled:
        return value.model_copy(update={"thinking": ir.ThinkingConfig(enabled=False)})
    return value


def _message_roles(value: Any) -> Any:
    if not isinstance(value, ir.Request):
        return value
    messages = []
    for m in value.messages:
        if m.role == "system" or (m.role == "tool" and not m.content):
            m = m.model_copy(update={"role": "user"})
        messages.append(m)
    return value.model_copy(update={"messages": messages})


def _tool_result_names(value: Any) -> Any:
    if not isinstance(value, ir.Request):
        return value
    names: dict[str, str] = {}
    messages = []
    for m in value.messages:
        content: list[ir.ContentPart] = []
        for p in m.content:
            if isinstance(p, ir.ToolCallPart):
                names[p.id] = p.name
            if isinstance(p, ir.ToolResultPart):
                p = p.model_copy(update={"name": names.get(p.tool_call_id)})
            content.append(p)
        messages.append(m.model_copy(update={"content": content}))
    return value.model_copy(update={"messages": messages})


def _call(part: Any) -> Any:
    if not isinstance(part, ir.ToolCallPart):
        return part
    arguments = part.arguments if isinstance(part.arguments, dict) else {}
    return part.model_copy(update={"arguments": arguments, "arguments_raw": common.dump_json(arguments).decode()})


def _arguments_raw(value: Any) -> Any:
    # Whole tool calls are re-serialized from `input`; streamed fragments travel verbatim.
    if isinstance(value, ir.Request):
        messages = [m.model_copy(update={"content": [_call(p) for p in m.content]}) for m in value.messages]
        return value.model_copy(update={"messages": messages})
    if isinstance(value, ir.Response):
        return value.model_copy(update={"content": [_call(p) for p in value.content]})
    return value


def _identity(value: Any) -> Any:
    # Losses of wire-only blocks: IR values never hold them, so nothing changes here.
    return value


def _response_id(value: Any) -> Any:
    if isinstance(value, ir.Response) and value.id is None:
        return value.model_copy(update={"id": MISSING_MESSAGE_ID})
    return value


def _response_model(value: Any) -> Any:
    if isinstance(value, ir.Response) and value.model is None:
        return value.model_copy(update={"model": ""})
    return value


def _on_starts(value: Any, fix: Callable[[ir.MessageStart], ir.MessageStart]) -> Any:
    if not isinstance(value, list):
        return value
    out = []
    for i, event in enumerate(value):
        held = event == ir.MessageStart() and i + 1 < len(value) and isinstance(value[i + 1], ir.ErrorEvent)
        # An empty start right before an error is held back by the encoder and re-made by the decoder.
        out.append(fix(event) if isinstance(event, ir.MessageStart) and not held else event)
    return out


def _start_id(value: Any) -> Any:
    return _on_starts(value, lambda e: e if e.id is not None else e.model_copy(update={"id": MISSING_MESSAGE_ID}))


def _start_model(value: Any) -> Any:
    return _on_starts(value, lambda e: e if e.model is not None else e.model_copy(update={"model": ""}))


def _start_usage(value: Any) -> Any:
    return _on_starts(value, lambda e: e if e.usage is not None else e.model_copy(update={"usage": ir.Usage()}))


def _usage(usage: ir.Usage, *, inputs: bool = True, outputs: bool = True) -> ir.Usage:
    cached = (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
    update: dict[str, Any] = {}
    if inputs:
        update["input_tokens"] = max(usage.input_tokens or 0, cached)
    if outputs:
        update["output_tokens"] = usage.output_tokens or 0
    return usage.model_copy(update=update)


def _on_usages(value: Any, fix: Callable[[ir.Usage], ir.Usage]) -> Any:
    if isinstance(value, ir.Response):
        return value.model_copy(update={"usage": fix(value.usage)})
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for event in value:
        if isinstance(event, ir.MessageStart) and event.usage is not None:
            event = event.model_copy(update={"usage": fix(event.usage)})
        elif isinstance(event, ir.Done):
            event = event.model_copy(update={"usage": fix(event.usage or ir.Usage())})
        out.append(event)
    return out


def _input_tokens(value: Any) -> Any:
    return _on_usages(value, lambda u: _usage(u, outputs=False))


def _output_tokens(value: Any) -> Any:
    return _on_usages(value, lambda u: _usage(u, inputs=False))


def _usage_events(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    pending, out = ir.Usage(), []
    for event in value:
        if isinstance(event, ir.UsageEvent):
            pending = pending.merged(event.usage)
            continue
        if isinstance(event, ir.Done) and pending != ir.Usage():
            event = event.model_copy(update={"usage": pending.merged(event.usage)})
        out.append(event)
    return out


def _on_stops(value: Any, fix: Callable[[ir.StopReason], ir.StopReason]) -> Any:
    if isinstance(value, ir.Response) and value.stop_reason is not None:
        return value.model_copy(update={"stop_reason": fix(value.stop_reason)})
    if isinstance(value, list):
        return [
            e.model_copy(update={"stop_reason": fix(e.stop_reason)})
            if isinstance(e, ir.Done) and e.stop_reason is not None
            else e
            for e in value
        ]
    return value


_STOP_KIND = {"content_filter": "refusal", "error": "end_turn", "other": "end_turn"}


def _stop_kind(value: Any) -> Any:
    return _on_stops(value, lambda s: s.model_copy(update={"kind": _STOP_KIND.get(s.kind, s.kind)}))


def _stop_raw(value: Any) -> Any:
    return _on_stops(value, lambda s: s.model_copy(update={"raw": stop_reason_to_wire(s)[0]}))


def _stop_sequence(value: Any) -> Any:
    return _on_stops(value, lambda s: s if s.kind == "stop_sequence" else s.model_copy(update={"sequence": None}))


def _on_errors(value: Any, fix: Callable[[ir.IRError, bool], ir.IRError]) -> Any:
    """Apply `fix(error, mid_stream)` to a standalone error (HTTP) or the errors inside an event list."""
    if isinstance(value, ir.IRError):
        return fix(value, False)
    if isinstance(value, list):
        return [
            e.model_copy(update={"error": fix(e.error, True)}) if isinstance(e, ir.ErrorEvent) else e for e in value
        ]
    return value


def _error_kind(value: Any) -> Any:
    def fix(error: ir.IRError, mid_stream: bool) -> ir.IRError:
        kind = error.kind
        if kind in (ir.ErrorKind.NETWORK, ir.ErrorKind.MALFORMED_STREAM):
            kind = ir.ErrorKind.SERVER
        elif kind == ir.ErrorKind.INVALID_REQUEST and common.is_context_message(error.message):
            kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
        return error.model_copy(update={"kind": kind, "retryable": kind.retryable})

    return _on_errors(value, fix)


def _error_message(value: Any) -> Any:
    def fix(error: ir.IRError, mid_stream: bool) -> ir.IRError:
        if error.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not common.is_context_message(error.message):
            return error.model_copy(update={"message": "prompt is too long: " + error.message})
        return error

    return _on_errors(value, fix)


def _error_status(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"status": None if mid else wire_error_type(e)[1]}))


def _error_retry(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"retry_after": None}) if mid else e)


def _error_code(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"code": wire_error_type(e)[0]}))


RULES: dict[str, Callable[[Any], Any]] = {
    "Request.max_tokens": _request_max_tokens,
    "Request.parallel_tool_calls": _request_parallel,
    "Request.response_format": _request_format,
    "Request.thinking": _request_thinking,
    "Message.role": _message_roles,
    "Message.content": _identity,
    "ToolResultPart.name": _tool_result_names,
    "ToolCallPart.arguments_raw": _arguments_raw,
    "Response.content": _identity,
    "Response.id": _response_id,
    "Response.model": _response_model,
    "MessageStart.id": _start_id,
    "MessageStart.model": _start_model,
    # usage: fold UsageEvents into Done and fill a missing start usage before the per-figure rules
    "UsageEvent": _usage_events,
    "MessageStart.usage": _start_usage,
    "Usage.input_tokens": _input_tokens,
    "Usage.output_tokens": _output_tokens,
    "StopReason.kind": _stop_kind,
    "StopReason.raw": _stop_raw,
    "StopReason.sequence": _stop_sequence,
    # status and code follow from the kind the error was sent with: they run before the kind rule
    "IRError.status": _error_status,
    "IRError.code": _error_code,
    "IRError.kind": _error_kind,
    "IRError.message": _error_message,
    "IRError.retry_after": _error_retry,
}


def project(value: Any) -> Any:
    """What an IR value (request, response, event list or error) looks like after a trip through the wire."""
    for rule in RULES.values():  # in table order: some rules build on others (see the comments)
        value = rule(value)
    return value


def test_projection_covers_exactly_the_losses_table() -> None:
    assert set(RULES) == set(CODEC.losses)


# --- properties -------------------------------------------------------------------------------------------


@given(strategies.requests)
def test_request_round_trip(request: ir.Request) -> None:
    encoded = CODEC.encode_request(request)
    assert_schema("request", json.loads(encoded.body))
    assert encoded.path == "/v1/messages" and encoded.headers["anthropic-version"] == "2023-06-01"
    assert CODEC.decode_request(encoded) == project(request)
    assert CODEC.is_stream_request(encoded) is request.stream


@given(strategies.responses())
def test_response_round_trip(response: ir.Response) -> None:
    encoded = CODEC.encode_response(response)
    assert encoded.status == 200
    assert_schema("response", json.loads(encoded.body))
    assert CODEC.decode_response(encoded.body) == project(response)


@given(strategies.responses(), st.integers(0, 2**16))
def test_stream_round_trip(response: ir.Response, seed: int) -> None:
    events = strategies.events_for(response)
    body = encode_events(CODEC, events)
    assert_stream_schema(body)
    assert decode_events(CODEC, random_chunks(body, seed)) == project(events)


@given(strategies.responses(), strategies.errors)
def test_stream_ending_in_error_round_trip(response: ir.Response, error: ir.IRError) -> None:
    events = [*strategies.events_for(response)[:-1], ir.ErrorEvent(error=error)]
    body = encode_events(CODEC, events)
    assert_stream_schema(body)
    assert decode_events(CODEC, [body]) == project(events)


@given(strategies.errors)
def test_error_round_trip(error: ir.IRError) -> None:
    encoded = CODEC.encode_error(error)
    assert_schema("error", json.loads(encoded.body))
    decoded = CODEC.decode_error(encoded.status, encoded.headers, encoded.body)
    expected = project(error)
    assert decoded.kind == expected.kind and decoded.message == expected.message
    assert decoded.retry_after == expected.retry_after
    assert decoded == expected


@given(st.sampled_from(sorted(ERROR_TYPES)), strategies.nonempty_text)
def test_error_type_survives_a_pass_through(error_type: str, message: str) -> None:
    _, status = ERROR_TYPES[error_type]
    body = json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()
    error = CODEC.decode_error(status, {}, body)
    again = CODEC.encode_error(error)
    assert again.status == status
    assert json.loads(again.body)["error"] == {"type": error_type, "message": message}
