"""Round trips through the Bedrock Converse wire: IR -> encode -> decode == IR, projected through the codec's
losses.

`project` is the one projection: each entry of `RULES` is keyed by a key of the codec's `LOSSES` or `RESHAPES`
table and says what that loss does to an IR value; a test keeps the key sets equal. Every encoded output is
schema-validated, streams frame by frame.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import decode_events, encode_events
from harness.protocols.bedrock.documents import FORMATS, document_name
from harness.protocols.bedrock.errors import (
    CONTEXT_PREFIX,
    STREAM_EXCEPTIONS,
    TYPES,
    is_context_message,
    wire_type,
)
from harness.protocols.bedrock.mapping import WIRE_STOPS
from harness.wire.http import HttpRequest, HttpResponse
from tests import strategies
from tests.protocols.bedrock.support import CODEC, assert_schema, assert_stream_schema
from tests.protocols.roundtrip import RoundTrip

# --- requests ---------------------------------------------------------------------------------------------


def _request(update: Callable[[ir.Request], dict[str, Any]]) -> Callable[[Any], Any]:
    return lambda value: value.model_copy(update=update(value)) if isinstance(value, ir.Request) else value


def _messages(fix: Callable[[ir.Message], ir.Message]) -> Callable[[Any], Any]:
    return _request(lambda r: {"messages": [fix(m) for m in r.messages]})


def _no_url_images(message: ir.Message) -> ir.Message:
    def keep(part: Any) -> bool:
        return not (isinstance(part, ir.ImagePart) and isinstance(part.source, ir.UrlImage))

    content = []
    for part in message.content:
        if isinstance(part, ir.ToolResultPart):
            part = part.model_copy(update={"content": [p for p in part.content if keep(p)]})
        if keep(part):
            content.append(part)
    return message.model_copy(update={"content": content})


def _documents_only(message: ir.Message) -> ir.Message:
    def keep(part: Any) -> bool:
        return not isinstance(part, ir.FilePart) or part.media_type in FORMATS.values()

    return message.model_copy(update={"content": [p for p in message.content if keep(p)]})


def _document_names(message: ir.Message) -> ir.Message:
    def fix(part: Any) -> Any:
        if isinstance(part, ir.FilePart):
            return part.model_copy(update={"filename": document_name(part.filename)})
        return part

    return message.model_copy(update={"content": [fix(p) for p in message.content]})


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


def _format(kind: type[ir.ResponseFormatText | ir.ResponseFormatJsonObject]) -> Callable[[Any], Any]:
    return _request(lambda r: {"response_format": None} if isinstance(r.response_format, kind) else {})


def _strict(value: Any) -> Any:
    fmt = value.response_format if isinstance(value, ir.Request) else None
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        return value.model_copy(update={"response_format": fmt.model_copy(update={"strict": None})})
    return value


def _disabled_budget(value: Any) -> Any:
    if isinstance(value, ir.Request) and value.thinking is not None and not value.thinking.enabled:
        return value.model_copy(update={"thinking": ir.ThinkingConfig(enabled=False)})
    return value


def _on_calls(value: Any, fix: Callable[[ir.ToolCallPart], ir.ToolCallPart]) -> Any:
    def part(p: Any) -> Any:
        return fix(p) if isinstance(p, ir.ToolCallPart) else p

    if isinstance(value, ir.Request):
        messages = [m.model_copy(update={"content": [part(p) for p in m.content]}) for m in value.messages]
        return value.model_copy(update={"messages": messages})
    if isinstance(value, ir.Response):
        return value.model_copy(update={"content": [part(p) for p in value.content]})
    return value


def _arguments_raw(value: Any) -> Any:
    # Requests keep the arguments' key order (an SDK client's JSON); responses are sorted, as Bedrock writes them.
    sort = isinstance(value, ir.Response)

    def fix(p: ir.ToolCallPart) -> ir.ToolCallPart:
        raw = json.dumps(p.arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=sort)
        return p.model_copy(update={"arguments_raw": raw})

    return _on_calls(value, fix)


# --- responses, streams, usage, stop reasons ---------------------------------------------------------------


def _response(update: Callable[[ir.Response], dict[str, Any]]) -> Callable[[Any], Any]:
    return lambda value: value.model_copy(update=update(value)) if isinstance(value, ir.Response) else value


def _starts(update: dict[str, Any]) -> Callable[[Any], Any]:
    def rule(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [e.model_copy(update=update) if isinstance(e, ir.MessageStart) else e for e in value]

    return rule


def _fold_usage(value: Any) -> Any:
    """messageStart usage and UsageEvents end up in the final metadata usage (later figures win)."""
    if not isinstance(value, list):
        return value
    pending: ir.Usage | None = None
    out: list[Any] = []
    for event in value:
        if isinstance(event, ir.MessageStart | ir.UsageEvent) and event.usage is not None:
            pending = event.usage if pending is None else pending.merged(event.usage)
            if isinstance(event, ir.UsageEvent):
                continue
            event = event.model_copy(update={"usage": None})
        if isinstance(event, ir.Done) and pending is not None:
            event = event.model_copy(update={"usage": pending.merged(event.usage)})
        out.append(event)
    return out


def _done(update: Callable[[ir.Done], dict[str, Any]]) -> Callable[[Any], Any]:
    def rule(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [e.model_copy(update=update(e)) if isinstance(e, ir.Done) else e for e in value]

    return rule


def _on_usages(fix: Callable[[ir.Usage], ir.Usage]) -> Callable[[Any], Any]:
    def rule(value: Any) -> Any:
        if isinstance(value, ir.Response):
            return value.model_copy(update={"usage": fix(value.usage)})
        if isinstance(value, list):
            return [
                e.model_copy(update={"usage": fix(e.usage)}) if isinstance(e, ir.Done) and e.usage is not None else e
                for e in value
            ]
        return value

    return rule


def _cached(usage: ir.Usage) -> int:
    return (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)


def _on_stops(fix: Callable[[ir.StopReason], ir.StopReason]) -> Callable[[Any], Any]:
    def rule(value: Any) -> Any:
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

    return rule


def _stop_kind(old: str, new: str) -> Callable[[Any], Any]:
    return _on_stops(lambda s: s.model_copy(update={"kind": new}) if s.kind == old else s)


# --- errors -----------------------------------------------------------------------------------------------


def _on_errors(fix: Callable[[ir.IRError, bool], ir.IRError]) -> Callable[[Any], Any]:
    """Apply `fix(error, mid_stream)` to a standalone error (HTTP) or the errors inside an event list."""

    def rule(value: Any) -> Any:
        if isinstance(value, ir.IRError):
            return fix(value, False)
        if isinstance(value, list):
            return [
                e.model_copy(update={"error": fix(e.error, True)}) if isinstance(e, ir.ErrorEvent) else e for e in value
            ]
        return value

    return rule


def _set_kind(error: ir.IRError, kind: ir.ErrorKind) -> ir.IRError:
    return error.model_copy(update={"kind": kind, "retryable": kind.retryable})


def _error_kind(old: ir.ErrorKind, new: ir.ErrorKind) -> Callable[[Any], Any]:
    return _on_errors(lambda e, mid: _set_kind(e, new) if e.kind == old else e)


def _context_kind(error: ir.IRError, mid_stream: bool) -> ir.IRError:
    if error.kind not in (ir.ErrorKind.INVALID_REQUEST, ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED):
        return error
    context = is_context_message(error.message)
    return _set_kind(error, ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED if context else ir.ErrorKind.INVALID_REQUEST)


def _context_message(error: ir.IRError, mid_stream: bool) -> ir.IRError:
    if error.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not is_context_message(error.message):
        return error.model_copy(update={"message": CONTEXT_PREFIX + error.message})
    return error


def _status(error: ir.IRError, mid_stream: bool) -> ir.IRError:
    return error.model_copy(update={"status": None if mid_stream else TYPES[wire_type(error)][1]})


def _code(error: ir.IRError, mid_stream: bool) -> ir.IRError:
    name = wire_type(error)
    if mid_stream and name in STREAM_EXCEPTIONS:
        name = name[0].lower() + name[1:]  # a stream exception is camelCase on the wire
    return error.model_copy(update={"code": name})


NETWORK, MALFORMED, SERVER = ir.ErrorKind.NETWORK, ir.ErrorKind.MALFORMED_STREAM, ir.ErrorKind.SERVER

RULES: dict[str, Callable[[Any], Any]] = {
    "Request.parallel_tool_calls": _request(lambda r: {"parallel_tool_calls": None}),
    "Request.tool_choice without tools": _request(lambda r: {} if r.tools else {"tool_choice": None}),
    "ToolChoiceNone": _request(lambda r: {"tool_choice": None} if isinstance(r.tool_choice, ir.ToolChoiceNone) else {}),
    "ResponseFormatText": _format(ir.ResponseFormatText),
    "ResponseFormatJsonObject": _format(ir.ResponseFormatJsonObject),
    "ResponseFormatJsonSchema.strict": _strict,
    "ThinkingConfig.budget_tokens of disabled thinking": _disabled_budget,
    "UrlImage": _messages(_no_url_images),
    "FilePart of a media type without a document format": _messages(_documents_only),
    "FilePart.filename": _messages(_document_names),
    "Message.role:system": _messages(lambda m: m.model_copy(update={"role": "user"}) if m.role == "system" else m),
    "Message(role=tool) without content": _messages(
        lambda m: m.model_copy(update={"role": "user"}) if m.role == "tool" and not m.content else m
    ),
    "ToolResultPart.name": _tool_result_names,
    # a None input is sent as {}, whose compact text is then the raw arguments
    "ToolCallPart.arguments that are not JSON": lambda v: _on_calls(
        v, lambda p: p if p.arguments is not None else p.model_copy(update={"arguments": {}})
    ),
    "ToolCallPart.arguments_raw": _arguments_raw,
    "Response.id": _response(lambda r: {"id": None}),
    "Response.model": _response(lambda r: {"model": None}),
    "Response.stop_reason:None": _response(
        lambda r: {"stop_reason": ir.StopReason(kind="end_turn")} if r.stop_reason is None else {}
    ),
    "MessageStart.id": _starts({"id": None}),
    "MessageStart.model": _starts({"model": None}),
    # usage: fold the start's and the UsageEvents' figures into Done, then fill what the wire requires
    "MessageStart.usage": _fold_usage,
    "UsageEvent": lambda value: value,  # folded together with MessageStart.usage above
    "Done.stop_reason:None": _done(lambda e: {"stop_reason": e.stop_reason or ir.StopReason(kind="end_turn")}),
    "Done.usage:None": _done(lambda e: {"usage": e.usage or ir.Usage()}),
    "Usage.reasoning_tokens": _on_usages(lambda u: u.model_copy(update={"reasoning_tokens": None})),
    "Usage.input_tokens:None": _on_usages(
        lambda u: u if u.input_tokens is not None else u.model_copy(update={"input_tokens": _cached(u)})
    ),
    "Usage.input_tokens below the cached tokens": _on_usages(
        lambda u: u.model_copy(update={"input_tokens": max(u.input_tokens or 0, _cached(u))})
    ),
    "Usage.output_tokens:None": _on_usages(
        lambda u: u if u.output_tokens is not None else u.model_copy(update={"output_tokens": 0})
    ),
    "StopReason.kind:refusal": _stop_kind("refusal", "content_filter"),
    "StopReason.kind:other": _stop_kind("other", "end_turn"),
    "StopReason.raw": _on_stops(lambda s: s.model_copy(update={"raw": WIRE_STOPS[s.kind]})),
    "StopReason.sequence": _on_stops(lambda s: s.model_copy(update={"sequence": None})),
    # status and code follow from the type the error was sent as: they run before the kind rules
    "IRError.status follows the exception type": _on_errors(_status),
    "IRError.code": _on_errors(_code),
    "IRError.message of context_window_exceeded": _on_errors(_context_message),
    "IRError.kind:network": _error_kind(NETWORK, SERVER),
    "IRError.kind:malformed_stream": _error_kind(MALFORMED, SERVER),
    "IRError.kind:context_window_exceeded": _on_errors(_context_kind),
    "IRError.retry_after": _on_errors(lambda e, mid: e.model_copy(update={"retry_after": None})),
}


def project(value: Any) -> Any:
    """What an IR value (request, response, event list or error) looks like after a trip through the wire."""
    for rule in RULES.values():  # in this order: some rules build on others (see the comments)
        value = rule(value)
    return value


# --- properties -------------------------------------------------------------------------------------------


@given(strategies.responses(), strategies.usages, st.lists(strategies.usages, max_size=2))
def test_usage_from_start_and_usage_events_reaches_the_final_metadata(
    response: ir.Response, start: ir.Usage, mid: list[ir.Usage]
) -> None:
    events = strategies.events_for(response)
    events[0] = events[0].model_copy(update={"usage": start})  # type: ignore[union-attr]
    events[-1:-1] = [ir.UsageEvent(usage=u) for u in mid]
    assert decode_events(CODEC, [encode_events(CODEC, events)]) == project(events)


@given(st.sampled_from(sorted(TYPES)), strategies.nonempty_text)
def test_exception_type_and_status_survive_a_pass_through(error_type: str, message: str) -> None:
    _, status = TYPES[error_type]
    body = json.dumps({"message": message}).encode()
    error = CODEC.decode_error(status, {"x-amzn-errortype": f"{error_type}:http://internal.amazon.com/x/"}, body)
    again = CODEC.encode_error(error)
    assert again.status == status and again.headers["x-amzn-errortype"].split(":")[0] == error_type
    assert json.loads(again.body) == {"message": message}


def test_unknown_body_fields_are_kept_as_extras_and_written_back() -> None:
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Hi"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4, "cacheDetails": []},
        "metrics": {"latencyMs": 120},
        "additionalModelResponseFields": {"stop_sequence": None},
        "performanceConfig": {"latency": "optimized"},
    }
    response = CODEC.decode_response(json.dumps(body).encode())
    assert response.extras == {
        "bedrock": {
            "usage": {"cacheDetails": []},
            "additionalModelResponseFields": {"stop_sequence": None},
            "performanceConfig": {"latency": "optimized"},
        }
    }
    again = json.loads(CODEC.encode_response(response).body)
    assert again["additionalModelResponseFields"] == {"stop_sequence": None}
    assert again["performanceConfig"] == {"latency": "optimized"} and again["usage"]["cacheDetails"] == []
    assert "x-amzn-requestid" not in CODEC.encode_response(response).headers  # the reference backend's header


def _check_request(wire: HttpRequest, request: ir.Request) -> None:
    assert_schema("request", json.loads(wire.body))
    assert wire.method == "POST" and wire.headers == {"content-type": "application/json"}
    assert wire.path.endswith("/converse-stream" if request.stream else "/converse")


def _check_response(wire: HttpResponse) -> None:
    assert wire.headers["content-type"] == "application/json"
    assert_schema("response", json.loads(wire.body))


def _check_error(wire: HttpResponse, error: ir.IRError) -> None:
    assert_schema("error", json.loads(wire.body))
    assert wire.headers["x-amzn-errortype"].startswith(f"{wire_type(error)}:http://")


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        rules=frozenset(RULES),
        expect_request=project,
        expect_response=project,
        check_request=_check_request,
        check_response=_check_response,
        expect_stream=lambda response, chunk: project(strategies.events_for(response, chunk=chunk)),
        check_stream=lambda body, _events: assert_stream_schema(body),
        expect_stream_error=project,
        expect_error=project,
        check_error=_check_error,
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
