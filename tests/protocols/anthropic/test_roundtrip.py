"""Round trips through the Anthropic wire: IR -> encode -> decode == IR, projected through the codec's losses.

`project` is the one projection: each entry of `RULES` is keyed by a key of the codec's `LOSSES` or `RESHAPES`
table and says what that loss does to an IR value; a test keeps the key sets equal. Every encoded output is
schema-validated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common
from harness.protocols.anthropic.errors import CONTEXT_PREFIX, ERROR_TYPES, wire_error_type
from harness.protocols.anthropic.mapping import DEFAULT_MAX_TOKENS, MISSING_MESSAGE_ID, stop_reason_to_wire
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.anthropic.support import CODEC, assert_schema, assert_stream_schema
from tests.protocols.roundtrip import RoundTrip

# --- the projection ---------------------------------------------------------------------------------------


def _request_max_tokens(value: Any) -> Any:
    if isinstance(value, ir.Request) and value.max_tokens is None:
        return value.model_copy(update={"max_tokens": DEFAULT_MAX_TOKENS})
    return value


def _request_choice_for_parallel(value: Any) -> Any:
    if isinstance(value, ir.Request) and value.parallel_tool_calls is not None and value.tool_choice is None:
        return value.model_copy(update={"tool_choice": ir.ToolChoiceAuto()})
    return value


def _request_parallel_under_none(value: Any) -> Any:
    if isinstance(value, ir.Request) and isinstance(value.tool_choice, ir.ToolChoiceNone):
        return value.model_copy(update={"parallel_tool_calls": None})
    return value


def _request_format(kind: type[ir.ResponseFormatText | ir.ResponseFormatJsonObject]) -> Callable[[Any], Any]:
    def rule(value: Any) -> Any:
        if isinstance(value, ir.Request) and isinstance(value.response_format, kind):
            return value.model_copy(update={"response_format": None})
        return value

    return rule


def _schema_field(name: str, default: Any) -> Callable[[Any], Any]:
    def rule(value: Any) -> Any:
        if isinstance(value, ir.Request) and isinstance(value.response_format, ir.ResponseFormatJsonSchema):
            return value.model_copy(
                update={"response_format": value.response_format.model_copy(update={name: default})}
            )
        return value

    return rule


def _request_thinking(value: Any) -> Any:
    if isinstance(value, ir.Request) and value.thinking is not None and not value.thinking.enabled:
        return value.model_copy(update={"thinking": ir.ThinkingConfig(enabled=False)})
    return value


def _on_messages(value: Any, fix: Callable[[ir.Message], ir.Message]) -> Any:
    if not isinstance(value, ir.Request):
        return value
    return value.model_copy(update={"messages": [fix(m) for m in value.messages]})


def _no_url_file_types(m: ir.Message) -> ir.Message:
    def fix(p: ir.ContentPart) -> ir.ContentPart:
        return p.model_copy(update={"media_type": None}) if isinstance(p, ir.FilePart) and p.url else p

    return m.model_copy(update={"content": [fix(p) for p in m.content]})


def _no_file_names(m: ir.Message) -> ir.Message:
    def fix(p: ir.ContentPart) -> ir.ContentPart:
        return p.model_copy(update={"filename": None}) if isinstance(p, ir.FilePart) else p

    return m.model_copy(update={"content": [fix(p) for p in m.content]})


def _system_role(value: Any) -> Any:
    return _on_messages(value, lambda m: m.model_copy(update={"role": "user"}) if m.role == "system" else m)


def _empty_tool_role(value: Any) -> Any:
    def fix(m: ir.Message) -> ir.Message:
        return m.model_copy(update={"role": "user"}) if m.role == "tool" and not m.content else m

    return _on_messages(value, fix)


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


def _on_calls(value: Any, fix: Callable[[ir.ToolCallPart], ir.ToolCallPart]) -> Any:
    # Whole tool calls (requests, responses) only: streamed fragments travel verbatim.
    def part(p: Any) -> Any:
        return fix(p) if isinstance(p, ir.ToolCallPart) else p

    if isinstance(value, ir.Request):
        messages = [m.model_copy(update={"content": [part(p) for p in m.content]}) for m in value.messages]
        return value.model_copy(update={"messages": messages})
    if isinstance(value, ir.Response):
        return value.model_copy(update={"content": [part(p) for p in value.content]})
    return value


def _non_object_arguments(value: Any) -> Any:
    return _on_calls(value, lambda p: p if isinstance(p.arguments, dict) else p.model_copy(update={"arguments": {}}))


def _arguments_raw(value: Any) -> Any:
    return _on_calls(value, lambda p: p.model_copy(update={"arguments_raw": common.dump_json(p.arguments).decode()}))


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


def _on_usages(value: Any, fix: Callable[[ir.Usage], ir.Usage]) -> Any:
    if isinstance(value, ir.Response):
        return value.model_copy(update={"usage": fix(value.usage)})
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for event in value:
        if isinstance(event, ir.MessageStart | ir.Done) and event.usage is not None:
            event = event.model_copy(update={"usage": fix(event.usage)})
        out.append(event)
    return out


def _done_usage(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [
        e.model_copy(update={"usage": ir.Usage()}) if isinstance(e, ir.Done) and e.usage is None else e for e in value
    ]


def _cached(usage: ir.Usage) -> int:
    return (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)


def _input_tokens(value: Any) -> Any:
    # None is sent as 0 fresh tokens, which decodes as the cached total.
    return _on_usages(
        value, lambda u: u if u.input_tokens is not None else u.model_copy(update={"input_tokens": _cached(u)})
    )


def _input_below_cached(value: Any) -> Any:
    return _on_usages(value, lambda u: u.model_copy(update={"input_tokens": max(u.input_tokens or 0, _cached(u))}))


def _cache_counts(value: Any) -> Any:
    def fill(u: ir.Usage) -> ir.Usage:
        return u.model_copy(
            update={"cache_read_tokens": u.cache_read_tokens or 0, "cache_write_tokens": u.cache_write_tokens or 0}
        )

    return _on_usages(value, fill)


def _output_tokens(value: Any) -> Any:
    return _on_usages(value, lambda u: u if u.output_tokens is not None else u.model_copy(update={"output_tokens": 0}))


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


def _stop_kind(old: str, new: str) -> Callable[[Any], Any]:
    return lambda value: _on_stops(value, lambda s: s.model_copy(update={"kind": new}) if s.kind == old else s)


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


def _error_kind(old: ir.ErrorKind, new: ir.ErrorKind) -> Callable[[Any], Any]:
    def fix(error: ir.IRError, mid_stream: bool) -> ir.IRError:
        return error.model_copy(update={"kind": new, "retryable": new.retryable}) if error.kind == old else error

    return lambda value: _on_errors(value, fix)


def _context_kind(value: Any) -> Any:
    # One wire type for both kinds: the message decides (after the context prefix was added, see below).
    def fix(error: ir.IRError, mid_stream: bool) -> ir.IRError:
        if error.kind not in (ir.ErrorKind.INVALID_REQUEST, ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED):
            return error
        context = common.is_context_message(error.message)
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED if context else ir.ErrorKind.INVALID_REQUEST
        return error.model_copy(update={"kind": kind, "retryable": kind.retryable})

    return _on_errors(value, fix)


def _error_message(value: Any) -> Any:
    def fix(error: ir.IRError, mid_stream: bool) -> ir.IRError:
        if error.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not common.is_context_message(error.message):
            return error.model_copy(update={"message": CONTEXT_PREFIX + error.message})
        return error

    return _on_errors(value, fix)


def _error_status(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"status": None if mid else wire_error_type(e)[1]}))


def _error_retry(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"retry_after": None}) if mid else e)


def _error_code(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"code": wire_error_type(e)[0]}))


NETWORK, MALFORMED, SERVER = ir.ErrorKind.NETWORK, ir.ErrorKind.MALFORMED_STREAM, ir.ErrorKind.SERVER

RULES: dict[str, Callable[[Any], Any]] = {
    "Request.max_tokens:None": _request_max_tokens,
    "Request.tool_choice None beside parallel_tool_calls": _request_choice_for_parallel,
    "Request.parallel_tool_calls under tool_choice none": _request_parallel_under_none,
    "ResponseFormatText": _request_format(ir.ResponseFormatText),
    "ResponseFormatJsonObject": _request_format(ir.ResponseFormatJsonObject),
    "ResponseFormatJsonSchema.name": _schema_field("name", "response"),
    "ResponseFormatJsonSchema.strict": _schema_field("strict", None),
    "ThinkingConfig.budget_tokens of disabled thinking": _request_thinking,
    "Message.role:system": _system_role,
    "Message(role=tool) without content": _empty_tool_role,
    "FilePart.filename": lambda v: _on_messages(v, _no_file_names),
    "request.FilePart.media_type:None": lambda v: _on_messages(v, _no_url_file_types),
    "ToolResultPart.name": _tool_result_names,
    # a non-object input is sent as {}, whose compact text is then the raw arguments
    "ToolCallPart.arguments that are not an object": _non_object_arguments,
    "ToolCallPart.arguments_raw": _arguments_raw,
    "Response.id:None": _response_id,
    "Response.model:None": _response_model,
    "MessageStart.id:None": _start_id,
    "MessageStart.model:None": _start_model,
    # usage: fold UsageEvents into Done and fill missing usages before the per-figure rules
    "UsageEvent": _usage_events,
    "MessageStart.usage:None": _start_usage,
    "Done.usage:None": _done_usage,
    "Usage.input_tokens:None": _input_tokens,
    "Usage.input_tokens below the cached tokens": _input_below_cached,
    "Usage cache counts of None": _cache_counts,
    "Usage.output_tokens:None": _output_tokens,
    "StopReason.kind:content_filter": _stop_kind("content_filter", "refusal"),
    "StopReason.kind:error": _stop_kind("error", "end_turn"),
    "StopReason.kind:other": _stop_kind("other", "end_turn"),
    "StopReason.raw": _stop_raw,
    "StopReason.sequence beside another kind": _stop_sequence,
    # status and code follow from the kind the error was sent with: they run before the kind rules
    "IRError.status follows the error type": _error_status,
    "IRError.code": _error_code,
    "IRError.message of context_window_exceeded": _error_message,
    "IRError.kind:network": _error_kind(NETWORK, SERVER),
    "IRError.kind:malformed_stream": _error_kind(MALFORMED, SERVER),
    "IRError.kind:context_window_exceeded": _context_kind,
    "IRError.retry_after mid-stream": _error_retry,
}


def project(value: Any) -> Any:
    """What an IR value (request, response, event list or error) looks like after a trip through the wire."""
    for rule in RULES.values():  # in this order: some rules build on others (see the comments)
        value = rule(value)
    return value


# --- properties -------------------------------------------------------------------------------------------


@given(st.sampled_from(sorted(ERROR_TYPES)), strategies.nonempty_text)
def test_error_type_survives_a_pass_through(error_type: str, message: str) -> None:
    _, status = ERROR_TYPES[error_type]
    body = json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()
    error = CODEC.decode_error(status, {}, body)
    again = CODEC.encode_error(error)
    assert again.status == status
    assert json.loads(again.body)["error"] == {"type": error_type, "message": message}


def _check_request(wire: HttpRequest, request: ir.Request) -> None:
    assert_schema("request", json.loads(wire.body))
    assert wire.path == "/v1/messages" and wire.headers["anthropic-version"] == "2023-06-01"


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        rules=frozenset(RULES),
        expect_request=project,
        expect_response=project,
        check_request=_check_request,
        check_response=lambda wire: assert_schema("response", json.loads(wire.body)),
        expect_stream=lambda response, chunk: project(strategies.events_for(response, chunk=chunk)),
        check_stream=lambda body, _events: assert_stream_schema(body),
        expect_stream_error=project,
        expect_error=project,
        check_error=lambda wire, _error: assert_schema("error", json.loads(wire.body)),
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
