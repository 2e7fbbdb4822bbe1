"""Hooks of the faults modelled on the bugs the real-gateway gates found (LiteLLM 1.106.2, Portkey 1.15.2,
claude-code-router 2.0.0, MLflow; `docs/gateways.md`). Each reproduces one bug class on the built-in proxy, so that the
gate is proven to catch the class in any gateway. Same rules as `harness.faults.hooks`: per-stream state is built
per request, and a hook meant for one protocol changes nothing elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from harness import ir
from harness.faults.hooks import MIDSTREAM_ERROR_AS_STOP, map_request_parts, without_parts
from harness.faults.wire_edits import edit_sse
from harness.proxy import HookContext, TranslateHooks

Events = Sequence[ir.StreamEvent]


def _per_request(build: Callable[[HookContext], TranslateHooks]) -> TranslateHooks:
    return TranslateHooks(per_request=build)


def _when(test: Callable[[HookContext], bool], hooks: TranslateHooks) -> TranslateHooks:
    return _per_request(lambda c: hooks.bind(c) if test(c) else TranslateHooks())


# --- request side --------------------------------------------------------------------------------------------

MAX_TOKENS_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"max_tokens": None}))
SAMPLING_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"top_p": None, "stop": []}))
TOOL_CHOICE_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"tool_choice": None}))
JSON_MODE_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"response_format": None}))
THINKING_CONFIG_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"thinking": None}))


def _system_as_turn(role: Literal["user", "assistant"]) -> Callable[[ir.Request], ir.Request]:
    """The system prompt moved into a leading turn of `role`."""

    def move(request: ir.Request) -> ir.Request:
        if not request.system:
            return request
        turn = ir.Message(role=role, content=[ir.TextPart(text=request.system)])
        return request.model_copy(update={"system": None, "messages": [turn, *request.messages]})

    return move


SYSTEM_AS_USER_TURN = TranslateHooks(on_upstream_request=_system_as_turn("user"))


def _empty_schemas(request: ir.Request) -> ir.Request:
    tools = [t.model_copy(update={"parameters": {"type": "object", "properties": {}}}) for t in request.tools]
    return request.model_copy(update={"tools": tools})


TOOL_SCHEMA_EMPTIED = TranslateHooks(on_upstream_request=_empty_schemas)

_PROPERTY_FIELDS = ("type", "description", "enum", "items")
"""What MLflow's `ParamProperty` keeps of each parameter and of an array's items; the rest (a nested object's
`properties`, `required`, `anyOf`, ...) is dropped."""


def _property(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    kept = {k: v for k, v in spec.items() if k in _PROPERTY_FIELDS}
    if "items" in kept:  # an array's items are parsed as a property too
        kept["items"] = _property(kept["items"])
    return kept


def _first_level_schemas(request: ir.Request) -> ir.Request:
    def flat(parameters: dict[str, Any]) -> dict[str, Any]:
        properties = parameters.get("properties")
        if not isinstance(properties, dict):
            return parameters
        return {**parameters, "properties": {name: _property(spec) for name, spec in properties.items()}}

    tools = [t.model_copy(update={"parameters": flat(t.parameters)}) for t in request.tools]
    return request.model_copy(update={"tools": tools})


NESTED_TOOL_SCHEMA_FLATTENED = TranslateHooks(on_upstream_request=_first_level_schemas)


FILE_DROPPED = TranslateHooks(on_upstream_request=without_parts(ir.FilePart))


def _data_url_as_data(part: Any) -> Any:
    if not isinstance(part, ir.FilePart):
        return part
    return part.model_copy(update={"data": f"data:{part.media_type};base64,{part.data}"})


FILE_DATA_URL_AS_BASE64 = TranslateHooks(on_upstream_request=lambda r: map_request_parts(r, _data_url_as_data))


def _widen_tool_choice(request: ir.Request) -> ir.Request:
    if isinstance(request.tool_choice, ir.ToolChoiceTool):
        return request.model_copy(update={"tool_choice": ir.ToolChoiceRequired()})
    return request


TOOL_CHOICE_WIDENED = TranslateHooks(on_upstream_request=_widen_tool_choice)


def _stringify_result(part: Any) -> Any:
    if not isinstance(part, ir.ToolResultPart) or not part.content:
        return part
    blocks = [{"type": "text", "text": p.text} for p in part.content if isinstance(p, ir.TextPart)]
    text = json.dumps(blocks, ensure_ascii=False, separators=(",", ":"))
    return part.model_copy(update={"content": [ir.TextPart(text=text)]})


TOOL_RESULT_STRINGIFIED = TranslateHooks(on_upstream_request=lambda r: map_request_parts(r, _stringify_result))


def _unnamed_result(part: Any) -> Any:
    return part.model_copy(update={"name": None}) if isinstance(part, ir.ToolResultPart) else part


TOOL_RESULT_NAME_DROPPED = TranslateHooks(on_upstream_request=lambda r: map_request_parts(r, _unnamed_result))


# --- errors ----------------------------------------------------------------------------------------------------


def _as_server_error(error: ir.IRError) -> ir.IRError:
    # The gateway's catch-all handler: status 500, its own text around the upstream's.
    return ir.IRError.of(ir.ErrorKind.SERVER, f"gateway error: {error.message}", status=500)


ERROR_STATUS_FLATTENED = TranslateHooks(on_error=_as_server_error)


def _overloaded_as_server(error: ir.IRError) -> ir.IRError:
    return _as_server_error(error) if error.kind == ir.ErrorKind.OVERLOADED else error


OVERLOADED_AS_SERVER_ERROR = TranslateHooks(on_error=_overloaded_as_server)
RETRY_AFTER_DROPPED = TranslateHooks(on_error=lambda e: e.model_copy(update={"retry_after": None}))
STREAM_ERROR_AFTER_200 = TranslateHooks(on_stream_error=lambda e: (ir.MessageStart(), ir.ErrorEvent(error=e)))


def _midstream_kind_lost(event: ir.StreamEvent) -> Events:
    if isinstance(event, ir.ErrorEvent) and event.error.kind == ir.ErrorKind.OVERLOADED:
        return (ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER, event.error.message)),)
    return (event,)


MIDSTREAM_ERROR_KIND_LOST = TranslateHooks(on_upstream_event=_midstream_kind_lost)


def _openai_shaped_error(name: str, data: Any) -> Any:
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        # An OpenAI-shaped error object with a string code, in a Gemini stream.
        return {"error": {"message": error.get("message", ""), "type": None, "param": None, "code": "500"}}
    return data


GEMINI_STREAM_ERROR_OPENAI_SHAPED = _when(
    lambda c: c.frontend_protocol == "gemini",
    TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _openai_shaped_error)),
)


def _truncation_only(context: HookContext) -> TranslateHooks:
    swallow = MIDSTREAM_ERROR_AS_STOP.bind(context).on_upstream_event

    def event(e: ir.StreamEvent) -> Events:
        # Only the end without a terminal marker becomes a stop; a real error event stays one.
        if isinstance(e, ir.ErrorEvent) and e.error.kind != ir.ErrorKind.MALFORMED_STREAM:
            return (e,)
        return swallow(e)

    return TranslateHooks(on_upstream_event=event)


TRUNCATED_STREAM_AS_STOP = _per_request(_truncation_only)


# --- response side ---------------------------------------------------------------------------------------------


def _tool_use_as_stop(reason: ir.StopReason | None) -> ir.StopReason | None:
    if reason is not None and reason.kind == "tool_use":
        return ir.StopReason(kind="end_turn", raw="stop")
    return reason


TOOL_CALLS_REPORTED_AS_STOP = TranslateHooks(
    on_upstream_event=lambda e: (
        (e.model_copy(update={"stop_reason": _tool_use_as_stop(e.stop_reason)}),) if isinstance(e, ir.Done) else (e,)
    ),
    on_upstream_response=lambda r: r.model_copy(update={"stop_reason": _tool_use_as_stop(r.stop_reason)}),
)


def _zero(usage: ir.Usage | None) -> ir.Usage | None:
    return ir.Usage(input_tokens=0, output_tokens=0) if usage is not None else None


def _zero_stream_usage(event: ir.StreamEvent) -> Events:
    if isinstance(event, ir.UsageEvent):
        return (ir.UsageEvent(usage=ir.Usage(input_tokens=0, output_tokens=0)),)
    if isinstance(event, ir.MessageStart | ir.Done) and event.usage is not None:
        return (event.model_copy(update={"usage": _zero(event.usage)}),)
    return (event,)


STREAM_USAGE_ZEROED = TranslateHooks(on_upstream_event=_zero_stream_usage)


def _without_cache(usage: ir.Usage | None) -> ir.Usage | None:
    return usage.model_copy(update={"cache_read_tokens": None}) if usage is not None else None


def _drop_cache_event(event: ir.StreamEvent) -> Events:
    if isinstance(event, ir.UsageEvent):
        return (ir.UsageEvent(usage=_without_cache(event.usage) or event.usage),)
    if isinstance(event, ir.MessageStart | ir.Done):
        return (event.model_copy(update={"usage": _without_cache(event.usage)}),)
    return (event,)


CACHED_TOKENS_DROPPED = TranslateHooks(
    on_upstream_event=_drop_cache_event,
    on_upstream_response=lambda r: r.model_copy(update={"usage": _without_cache(r.usage)}),
)


def _unsigned_event(event: ir.StreamEvent) -> Events:
    return (event.model_copy(update={"signature": ""}),) if isinstance(event, ir.ThinkingEnd) else (event,)


def _unsigned_part(part: Any) -> Any:
    return part.model_copy(update={"signature": ""}) if isinstance(part, ir.ThinkingPart) else part


THINKING_SIGNATURE_DROPPED = TranslateHooks(
    on_upstream_event=_unsigned_event,
    on_upstream_response=lambda r: r.model_copy(update={"content": [_unsigned_part(p) for p in r.content]}),
)


def _empty_text_first(response: ir.Response) -> ir.Response:
    if not any(isinstance(p, ir.ToolCallPart) for p in response.content):
        return response
    return response.model_copy(update={"content": [ir.TextPart(text=""), *response.content]})


EMPTY_TEXT_BEFORE_TOOL_CALL = TranslateHooks(on_upstream_response=_empty_text_first)


class _EmptyCallDropper:
    """Holds each tool call's start until arguments arrive; a call whose arguments stay empty is dropped whole."""

    def __init__(self) -> None:
        self.held: dict[int, ir.ToolCallStart] = {}

    def event(self, event: ir.StreamEvent) -> Events:
        if isinstance(event, ir.ToolCallStart):
            self.held[event.index] = event
            return ()
        if isinstance(event, ir.ToolCallDelta) and event.index in self.held:
            if not event.arguments:
                return ()
            return (self.held.pop(event.index), event)
        if isinstance(event, ir.ToolCallEnd) and event.index in self.held:
            del self.held[event.index]
            return ()
        return (event,)


EMPTY_ARGUMENTS_CALL_DROPPED = _per_request(lambda _: TranslateHooks(on_upstream_event=_EmptyCallDropper().event))


def _all_index_zero(name: str, data: Any) -> Any:
    choices = data.get("choices") if isinstance(data, dict) else None
    for choice in choices or []:
        for call in (choice.get("delta") or {}).get("tool_calls") or []:
            call["index"] = 0
    return data


PARALLEL_CALLS_SAME_INDEX = _when(
    lambda c: c.frontend_protocol == "openai",
    TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _all_index_zero)),
)


SYSTEM_AS_ASSISTANT_TURN = TranslateHooks(on_upstream_request=_system_as_turn("assistant"))
"""The system prompt sent as a leading assistant turn (nullplatform NP8)."""


def _text_again(_context: HookContext) -> TranslateHooks:
    sent: list[ir.StreamEvent] = []

    def event(e: ir.StreamEvent) -> Events:
        # The block's text is sent once more as it closes (nullplatform NP19: after a stop sequence).
        if isinstance(e, ir.TextDelta):
            sent.append(e)
        elif isinstance(e, ir.TextEnd):
            again = [d for d in sent if isinstance(d, ir.TextDelta) and d.index == e.index]
            sent.clear()
            return (*again, e)
        return (e,)

    return TranslateHooks(on_upstream_event=event)


TEXT_SENT_AGAIN = _per_request(_text_again)
