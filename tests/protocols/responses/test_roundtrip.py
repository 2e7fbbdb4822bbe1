"""Round trips through the Responses wire: IR -> encode -> decode == IR, projected through the codec's losses.

`project` is the one projection: each entry of `RULES` is keyed by a key of the codec's `LOSSES` or `RESHAPES`
table and says what that loss does to an IR value; a test keeps the key sets equal. Every encoded output is
schema-validated, and every encoded stream counts `sequence_number` from 0 without a gap.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given

from harness import ir
from harness.protocols import common, decode_events, encode_events
from harness.protocols.responses import client_calls, ids, items, schemas
from harness.protocols.responses.errors import error_object
from harness.protocols.responses.ids import PLACEHOLDER_RESPONSE_ID
from harness.protocols.responses.mapping import reasoning_effort, status_of
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.responses.support import CODEC, assert_stream_schema
from tests.protocols.roundtrip import RoundTrip

# --- the projection ---------------------------------------------------------------------------------------


def _on_messages(value: Any, fix: Callable[[list[ir.Message]], list[ir.Message]]) -> Any:
    return value.model_copy(update={"messages": fix(list(value.messages))}) if isinstance(value, ir.Request) else value


def _request(update: Callable[[ir.Request], dict[str, Any]]) -> Callable[[Any], Any]:
    return lambda value: value.model_copy(update=update(value)) if isinstance(value, ir.Request) else value


def _budget(value: Any) -> Any:
    if not isinstance(value, ir.Request) or value.thinking is None:
        return value
    level = reasoning_effort(value.thinking)
    thinking = value.thinking.model_copy(update={"budget_tokens": None})
    update: dict[str, Any] = {"thinking": thinking}
    if level != reasoning_effort(thinking):  # the level a budget became is remembered for re-encoding
        update["provider_fields"] = {"responses": {"_shape": {"reasoning": {"effort": level}}}}
    return value.model_copy(update=update)


def _parts(value: Any, fix: Callable[[ir.ContentPart], ir.ContentPart]) -> Any:
    return _on_messages(value, lambda ms: [m.model_copy(update={"content": [fix(p) for p in m.content]}) for m in ms])


def _tool_result_names(value: Any) -> Any:
    names: dict[str, str] = {}

    def fix(part: ir.ContentPart) -> ir.ContentPart:
        if isinstance(part, ir.ToolCallPart):
            names[part.id] = part.name
        if isinstance(part, ir.ToolResultPart):
            return part.model_copy(update={"name": names.get(part.tool_call_id)})
        return part

    return _parts(value, fix)


def _no_error_flag(value: Any) -> Any:
    return _parts(value, lambda p: p.model_copy(update={"is_error": False}) if isinstance(p, ir.ToolResultPart) else p)


def _tool_turns(messages: list[ir.Message]) -> list[ir.Message]:
    out: list[ir.Message] = []
    for m in messages:
        results = [p for p in m.content if isinstance(p, ir.ToolResultPart)]
        rest = [p for p in m.content if not isinstance(p, ir.ToolResultPart)]
        if m.role == "tool" or results:
            if results:
                out.append(ir.Message(role="tool", content=list(results)))
            if rest:
                out.append(ir.Message(role="user" if m.role == "tool" else m.role, content=rest))
        else:
            out.append(m)
    return out


def _runs(messages: list[ir.Message]) -> list[ir.Message]:
    out: list[ir.Message] = []
    for m in messages:
        boundary = bool(out and out[-1].content and m.content) and items.continues(out[-1].content[-1:], m.content[0])
        if out and m.role == out[-1].role and m.role in ("assistant", "tool") and not boundary:
            out[-1] = out[-1].model_copy(update={"content": [*out[-1].content, *m.content]})
        else:
            out.append(m)
    return out


def _assistant_images(messages: list[ir.Message]) -> list[ir.Message]:
    def keep(m: ir.Message) -> ir.Message:
        if m.role != "assistant":
            return m
        return m.model_copy(update={"content": [p for p in m.content if not isinstance(p, ir.ImagePart)]})

    return [keep(m) for m in messages]


def _leading_system(value: Any) -> Any:
    if not isinstance(value, ir.Request) or value.system is not None or not value.messages:
        return value
    first = value.messages[0]
    if first.role == "system" and len(first.content) == 1 and isinstance(first.content[0], ir.TextPart):
        return value.model_copy(update={"system": first.content[0].text, "messages": value.messages[1:]})
    return value


def _calls(content: list[Any]) -> bool:
    return any(isinstance(p, ir.ToolCallPart | ir.ToolCallStart) for p in content)


def _on_stops(value: Any, fix: Callable[[ir.StopReason | None, bool], ir.StopReason | None]) -> Any:
    """Apply `fix(stop, has_calls)` to a response's or a stream's stop reason."""
    if isinstance(value, ir.Response):
        return value.model_copy(update={"stop_reason": fix(value.stop_reason, _calls(value.content))})
    if isinstance(value, list):
        calls = _calls(value)
        return [e.model_copy(update={"stop_reason": fix(e.stop_reason, calls)}) if isinstance(e, ir.Done) else e
                for e in value]  # fmt: skip
    return value


def _completed(kind: str) -> Callable[[Any], Any]:
    """A stop kind the wire has no status for: sent as completed, decoded by the output."""

    def fix(stop: ir.StopReason | None, calls: bool) -> ir.StopReason | None:
        if stop is None or stop.kind != kind:
            return stop
        return stop.model_copy(update={"kind": "tool_use" if calls else "end_turn"})

    return lambda value: _on_stops(value, fix)


def _stop_none(value: Any) -> Any:
    return _on_stops(value, lambda stop, calls: stop or ir.StopReason(kind="tool_use" if calls else "end_turn"))


def _follows_output(value: Any) -> Any:
    def fix(stop: ir.StopReason | None, calls: bool) -> ir.StopReason | None:
        if stop is None or status_of(stop)[0] != "completed":
            return stop
        return stop.model_copy(update={"kind": "tool_use" if calls else "end_turn"})

    return _on_stops(value, fix)


def _stop_raw(value: Any) -> Any:
    def fix(stop: ir.StopReason | None, calls: bool) -> ir.StopReason | None:
        if stop is None:
            return None
        status, reason = status_of(stop)
        return stop.model_copy(update={"raw": reason or status})

    return _on_stops(value, fix)


def _stop_sequence(value: Any) -> Any:
    return _on_stops(value, lambda stop, calls: stop and stop.model_copy(update={"sequence": None}))


def _on_usages(value: Any, fix: Callable[[ir.Usage], ir.Usage]) -> Any:
    if isinstance(value, ir.Response):
        return value.model_copy(update={"usage": fix(value.usage)})
    if not isinstance(value, list):
        return value
    return [e.model_copy(update={"usage": fix(e.usage)}) if isinstance(e, ir.Done) and e.usage else e for e in value]


def _zero(field: str) -> Callable[[Any], Any]:
    return lambda value: _on_usages(
        value, lambda u: u if getattr(u, field) is not None else u.model_copy(update={field: 0})
    )


def _start_usage(value: Any) -> Any:
    # The start's usage is folded like a mid-stream usage event right after it (see the next rule).
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for event in value:
        if isinstance(event, ir.MessageStart) and event.usage is not None:
            out += [event.model_copy(update={"usage": None}), ir.UsageEvent(usage=event.usage)]
        else:
            out.append(event)
    return out


def _usage_events(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    total: ir.Usage | None = None
    out: list[Any] = []
    for event in value:
        if isinstance(event, ir.UsageEvent):
            total = event.usage if total is None else total.merged(event.usage)
            continue
        if isinstance(event, ir.Done) and total is not None:
            event = event.model_copy(update={"usage": total.merged(event.usage)})
        out.append(event)
    return out


def _placeholder(model: type[ir.Response] | type[ir.MessageStart], field: str, filler: str) -> Callable[[Any], Any]:
    def fix(item: Any) -> Any:
        if isinstance(item, model) and getattr(item, field) is None:
            return item.model_copy(update={field: filler})
        return item

    return lambda value: _events(value, fix) if isinstance(value, list) else fix(value)


def _events(events: list[Any], fix: Callable[[Any], Any]) -> list[Any]:
    # An empty start right before an error is held back by the encoder and re-made by the decoder.
    return [e if e == ir.MessageStart() and isinstance(nxt, ir.ErrorEvent) else fix(e)
            for e, nxt in zip(events, [*events[1:], None], strict=True)]  # fmt: skip


def _resp_ids(value: Any) -> Any:
    def fix(item: Any) -> Any:
        if isinstance(item, ir.Response | ir.MessageStart) and item.id is not None:
            return item.model_copy(update={"id": ids.response_id(item.id)})
        return item

    return [fix(e) for e in value] if isinstance(value, list) else fix(value)


def _on_errors(value: Any, fix: Callable[[ir.IRError, bool], ir.IRError]) -> Any:
    """Apply `fix(error, mid_stream)` to a standalone error (HTTP) or the errors inside an event list."""
    if isinstance(value, ir.IRError):
        return fix(value, False)
    if isinstance(value, list):
        return [e.model_copy(update={"error": fix(e.error, True)}) if isinstance(e, ir.ErrorEvent) else e
                for e in value]  # fmt: skip
    return value


def _error_status(value: Any) -> Any:
    return _on_errors(
        value, lambda e, mid: e.model_copy(update={"status": None if mid else common.KIND_STATUS[e.kind]})
    )


def _error_code(value: Any) -> Any:
    def fix(error: ir.IRError, mid: bool) -> ir.IRError:
        wire = error_object(error)
        return error.model_copy(update={"code": wire["code"] or wire["type"]})

    return _on_errors(value, fix)


def _error_retry(value: Any) -> Any:
    return _on_errors(value, lambda e, mid: e.model_copy(update={"retry_after": None}) if mid else e)


def _no_url_file_types(messages: list[ir.Message]) -> list[ir.Message]:
    def fix(p: ir.ContentPart) -> ir.ContentPart:
        return p.model_copy(update={"media_type": None}) if isinstance(p, ir.FilePart) and p.url else p

    return [m.model_copy(update={"content": [fix(p) for p in m.content]}) for m in messages]


def _whole_builtin_calls(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    builtin = {e.index for e in value if isinstance(e, ir.ToolCallStart) and e.call_type not in (None, "custom")}
    out: list[Any] = []
    for event in value:
        if isinstance(event, ir.ToolCallDelta) and event.index in builtin and isinstance(out[-1], ir.ToolCallDelta):
            out[-1] = event.model_copy(update={"arguments": out[-1].arguments + event.arguments})
        else:
            out.append(event)
    return out


RULES: dict[str, Callable[[Any], Any]] = {
    "ToolCallDelta of a built-in client call": _whole_builtin_calls,
    "Request.stop": _request(lambda r: {"stop": []}),
    "request.FilePart.media_type:None": lambda v: _on_messages(v, _no_url_file_types),
    "ThinkingConfig.budget_tokens": _budget,
    "Message(role=tool) text, ToolResultPart in other turns": lambda v: _on_messages(v, _tool_turns),
    "ImagePart, FilePart in assistant messages": lambda v: _on_messages(v, _assistant_images),
    "Message runs of one role": lambda v: _on_messages(v, _runs),
    "a leading system message without Request.system": _leading_system,
    "ToolResultPart.name": _tool_result_names,
    "ToolResultPart.is_error": _no_error_flag,
    "Response.id:None": _placeholder(ir.Response, "id", PLACEHOLDER_RESPONSE_ID),
    "Response.model:None": _placeholder(ir.Response, "model", ""),
    "MessageStart.id:None": _placeholder(ir.MessageStart, "id", PLACEHOLDER_RESPONSE_ID),
    "Response.id, MessageStart.id not in the resp_ format": _resp_ids,
    "MessageStart.model:None": _placeholder(ir.MessageStart, "model", ""),
    # stop reasons: kinds without a status first, then what the output says, then the raw value
    "Response.stop_reason:None": _stop_none,
    "Done.stop_reason:None": _stop_none,
    "StopReason.kind:stop_sequence": _completed("stop_sequence"),
    "StopReason.kind:refusal": _completed("refusal"),
    "StopReason.kind:error": _completed("error"),
    "StopReason.kind:other": _completed("other"),
    "StopReason.kind follows the output": _follows_output,
    "StopReason.raw": _stop_raw,
    "StopReason.sequence": _stop_sequence,
    # usage: fold the start's and mid-stream usage into Done before the per-figure rules
    "MessageStart.usage": _start_usage,
    "UsageEvent": _usage_events,
    "Usage.input_tokens:None": _zero("input_tokens"),
    "Usage.output_tokens:None": _zero("output_tokens"),
    "Usage.cache_read_tokens:None": _zero("cache_read_tokens"),
    "Usage.cache_write_tokens:None": _zero("cache_write_tokens"),
    "Usage.reasoning_tokens:None": _zero("reasoning_tokens"),
    "IRError.status": _error_status,
    "IRError.code": _error_code,
    "IRError.retry_after mid-stream": _error_retry,
}


def project(value: Any) -> Any:
    """What an IR value (request, response, event list or error) looks like after a trip through the wire."""
    for rule in RULES.values():  # in this order: some rules build on others (see the comments)
        value = rule(value)
    return value


# --- properties -------------------------------------------------------------------------------------------


@given(strategies.responses(), strategies.usages, strategies.usages)
def test_start_and_midstream_usage_round_trip(response: ir.Response, start: ir.Usage, middle: ir.Usage) -> None:
    events = strategies.events_for(response)
    events[0] = events[0].model_copy(update={"usage": start})
    events.insert(1, ir.UsageEvent(usage=middle))
    assert decode_events(CODEC, [encode_events(CODEC, events)]) == project(events)


@given(strategies.errors)
def test_an_error_before_the_stream_began_round_trips(error: ir.IRError) -> None:
    events: list[ir.StreamEvent] = [ir.MessageStart(), ir.ErrorEvent(error=error)]
    body = encode_events(CODEC, events)
    assert [data["type"] for data in assert_stream_schema(body)] == ["error"]
    assert decode_events(CODEC, [body]) == project(events)


def _client_call(part: ir.ToolCallPart) -> ir.ToolCallPart:
    """A generated call as a custom tool call (free text) or a built-in client call (its fields as JSON), by its
    id: the Responses wire carries both kinds (`client_calls`), so the generic round trips cover them too."""
    kind = sum(map(ord, part.id)) % 3
    if kind == 0:
        return part
    if kind == 1:
        raw = f"patch: {part.arguments_raw}"  # never JSON
        return part.model_copy(update={"call_type": "custom", "arguments_raw": raw, "arguments": None})
    fields = {"operation": {"type": "update_file", "path": part.name, "diff": part.arguments_raw}}
    raw = json.dumps(fields, ensure_ascii=False)
    return part.model_copy(update={"call_type": "apply_patch", "name": "apply_patch", "arguments_raw": raw,
                                   "arguments": fields})  # fmt: skip


def with_client_calls(response: ir.Response) -> ir.Response:
    """The generated response with some of its tool calls client-executed calls (`_client_call`)."""
    content = [_client_call(p) if isinstance(p, ir.ToolCallPart) else p for p in response.content]
    return response.model_copy(update={"content": content})


@given(strategies.requests)
def test_client_calls_in_the_history_are_carried_opaquely(request: ir.Request) -> None:
    # A request keeps client-executed items (and their outputs) opaque in provider_fields: re-sent as they came.
    def fix(part: ir.ContentPart) -> ir.ContentPart:
        return _client_call(part) if isinstance(part, ir.ToolCallPart) else part

    request = _parts(request, fix)
    wire = CODEC.encode_request(request)
    sent = [i for i in json.loads(wire.body)["input"] if i.get("type") in client_calls.CALL_TYPES]
    calls = [p for m in request.messages for p in m.content if isinstance(p, ir.ToolCallPart) and p.call_type]
    assert [(i["call_id"], client_calls.CALL_TYPES[i["type"]]) for i in sent] == [(c.id, c.call_type) for c in calls]
    assert CODEC.encode_request(CODEC.decode_request(wire)).body == wire.body


def _check_request(wire: HttpRequest, request: ir.Request) -> None:
    schemas.validate("request", json.loads(wire.body))
    assert wire.method == "POST" and wire.path == "/v1/responses"


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        rules=frozenset(RULES),
        expect_request=project,
        expect_response=project,
        check_request=_check_request,
        check_response=lambda wire: schemas.validate("response", json.loads(wire.body)),
        prepare_response=with_client_calls,
        expect_stream=lambda response, chunk: project(strategies.events_for(response, chunk=chunk)),
        check_stream=lambda body, _events: assert_stream_schema(body),
        expect_stream_error=project,
        expect_error=project,
        check_error=lambda wire, _error: schemas.validate("error", json.loads(wire.body)),
        reencodes_byte_for_byte=True,
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
