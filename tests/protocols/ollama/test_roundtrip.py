"""Round trips through the Ollama wire: IR -> encode -> decode gives the IR back, projected through the losses.

`project` is the one projection: one rule per key of the codec's `LOSSES` and `RESHAPES` tables (a test checks
the key sets agree), applied in order to a Request, Response or IRError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.ollama.images import sniff_media_type
from tests import strategies
from tests.protocols.ollama import support
from tests.protocols.ollama.support import CODEC
from tests.protocols.roundtrip import RoundTrip

JOIN = "\n"  # how one Ollama message's `content` joins several IR text parts

Rule = Callable[[Any, bool], Any]  # (value, streamed) -> projected value


def _request_field(name: str, value: Any) -> Rule:
    return lambda v, streamed: v.model_copy(update={name: value}) if isinstance(v, ir.Request) else v


def _no_budget(v: Any, streamed: bool) -> Any:
    if isinstance(v, ir.Request) and v.thinking is not None:
        return v.model_copy(update={"thinking": ir.ThinkingConfig(enabled=v.thinking.enabled)})
    return v


def _schema_field(name: str, value: Any) -> Rule:
    def rule(v: Any, streamed: bool) -> Any:
        if isinstance(v, ir.Request) and isinstance(v.response_format, ir.ResponseFormatJsonSchema):
            return v.model_copy(update={"response_format": v.response_format.model_copy(update={name: value})})
        return v

    return rule


def _on_messages(fix: Callable[[ir.Message], list[ir.Message]]) -> Rule:
    def rule(v: Any, streamed: bool) -> Any:
        if isinstance(v, ir.Request):
            return v.model_copy(update={"messages": [out for m in v.messages for out in fix(m)]})
        return v

    return rule


def _split_results(msg: ir.Message) -> list[ir.Message]:
    """Each tool result its own `tool` message; the parts around it keep the message's role."""
    out: list[ir.Message] = []
    group: list[Any] = []
    for part in msg.content:
        if isinstance(part, ir.ToolResultPart):
            if group:
                out.append(ir.Message(role=msg.role, content=group))
                group = []
            out.append(ir.Message(role="tool", content=[part]))
        else:
            group.append(part)
    if group or not msg.content:
        out.append(ir.Message(role=msg.role, content=group))
    return out


def _layout(msg: ir.Message) -> list[ir.Message]:
    """A message other than a tool result: thinking, text (each joined), images, tool calls."""
    if any(isinstance(p, ir.ToolResultPart) for p in msg.content):
        return [msg]
    group = msg.content
    parts: list[Any] = []
    thinking = [p.text for p in group if isinstance(p, ir.ThinkingPart)]
    if thinking:
        parts.append(ir.ThinkingPart(text=JOIN.join(thinking)))
    text = [p.text for p in group if isinstance(p, ir.TextPart)]
    if text and JOIN.join(text):
        parts.append(ir.TextPart(text=JOIN.join(text)))
    parts += [p for p in group if isinstance(p, ir.ImagePart)]
    parts += [p for p in group if isinstance(p, ir.ToolCallPart)]
    return [msg.model_copy(update={"content": parts})]


def _on_parts(fix: Callable[[Any], Any | None]) -> Rule:
    """`fix` applied to every part of messages, tool results and responses; a part it maps to None goes."""

    def each(parts: list[Any]) -> list[Any]:
        out = []
        for part in parts:
            if isinstance(part, ir.ToolResultPart):
                part = part.model_copy(update={"content": each(part.content)})
            part = fix(part)
            if part is not None:
                out.append(part)
        return out

    def rule(v: Any, streamed: bool) -> Any:
        if isinstance(v, ir.Request):
            return v.model_copy(
                update={"messages": [m.model_copy(update={"content": each(m.content)}) for m in v.messages]}
            )
        if isinstance(v, ir.Response):
            return v.model_copy(update={"content": each(v.content)})
        return v

    return rule


def _url_image(part: Any) -> Any:
    return None if isinstance(part, ir.ImagePart) and isinstance(part.source, ir.UrlImage) else part


def _media_type(part: Any) -> Any:
    if isinstance(part, ir.ImagePart) and isinstance(part.source, ir.Base64Image):
        return ir.ImagePart(source=ir.Base64Image(media_type=sniff_media_type(part.source.data), data=part.source.data))
    return part


def _result_text(part: Any) -> Any:
    if not isinstance(part, ir.ToolResultPart):
        return part
    text = JOIN.join(p.text for p in part.content if isinstance(p, ir.TextPart))
    content: list[Any] = [ir.TextPart(text=text)] if text else []
    return part.model_copy(update={"content": content + [p for p in part.content if isinstance(p, ir.ImagePart)]})


def _part_field(kind: type[ir.IRModel], name: str, value: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def fix(part: Any) -> Any:
        return part.model_copy(update={name: value(part)}) if isinstance(part, kind) else part

    return fix


def _response_content(v: Any, streamed: bool) -> Any:
    if not isinstance(v, ir.Response):
        return v
    parts = v.content
    if streamed:
        return v.model_copy(update={"content": _merge_adjacent(parts)})
    thinking = "".join(p.text for p in parts if isinstance(p, ir.ThinkingPart))
    text = "".join(p.text for p in parts if isinstance(p, ir.TextPart))
    content: list[Any] = [ir.ThinkingPart(text=thinking)] if thinking else []
    content += [ir.TextPart(text=text)] if text else []
    content += [p for p in parts if isinstance(p, ir.ToolCallPart)]
    return v.model_copy(update={"content": content})


def _merge_adjacent(parts: list[Any]) -> list[Any]:
    out: list[Any] = []
    for part in parts:
        prev: Any = out[-1] if out else None
        if isinstance(part, ir.TextPart | ir.ThinkingPart) and type(prev) is type(part):
            out[-1] = part.model_copy(update={"text": prev.text + part.text})
        else:
            out.append(part)
    return out


def _on_stop(fix: Callable[[ir.StopReason], ir.StopReason]) -> Rule:
    def rule(v: Any, streamed: bool) -> Any:
        if isinstance(v, ir.Response) and v.stop_reason is not None:
            return v.model_copy(update={"stop_reason": fix(v.stop_reason)})
        return v

    return rule


def _usage_field(name: str) -> Rule:
    def rule(v: Any, streamed: bool) -> Any:
        return (
            v.model_copy(update={"usage": v.usage.model_copy(update={name: None})}) if isinstance(v, ir.Response) else v
        )

    return rule


def _on_error(fix: Callable[[ir.IRError], ir.IRError]) -> Rule:
    return lambda v, streamed: fix(v) if isinstance(v, ir.IRError) else v


def _error_kind(old: ir.ErrorKind, new: Callable[[ir.IRError], ir.ErrorKind]) -> Rule:
    def fix(error: ir.IRError) -> ir.IRError:
        if error.kind != old:
            return error
        kind = new(error)
        return error.model_copy(update={"kind": kind, "retryable": kind.retryable})

    return _on_error(fix)


def _context(error: ir.IRError) -> ir.ErrorKind:
    return error.kind if common.is_context_message(error.message) else ir.ErrorKind.INVALID_REQUEST


def _identity(v: Any, streamed: bool) -> Any:
    # Stream-only losses: events are built from the projected response, so there is nothing to project here.
    return v


SERVER = ir.ErrorKind.SERVER

RULES: dict[str, Rule] = {
    "Request.tool_choice": _request_field("tool_choice", None),
    "Request.parallel_tool_calls": _request_field("parallel_tool_calls", None),
    "ThinkingConfig.budget_tokens": _no_budget,
    "ResponseFormatJsonSchema.name": _schema_field("name", "response"),
    "ResponseFormatJsonSchema.strict": _schema_field("strict", None),
    "Message(role=tool) per result": _on_messages(_split_results),
    "RedactedThinkingPart": _on_parts(lambda p: None if isinstance(p, ir.RedactedThinkingPart) else p),
    "Message.content layout": _on_messages(_layout),
    "UrlImage": _on_parts(_url_image),
    "FilePart": _on_parts(lambda p: None if isinstance(p, ir.FilePart) else p),
    "Base64Image.media_type": _on_parts(_media_type),
    "ToolResultPart.content text": _on_parts(_result_text),
    "ToolResultPart.is_error": _on_parts(_part_field(ir.ToolResultPart, "is_error", lambda p: False)),
    "ToolCallPart.arguments_raw": _on_parts(
        _part_field(ir.ToolCallPart, "arguments_raw", lambda p: common.dump_json(p.arguments).decode())
    ),
    "ThinkingPart.signature": _on_parts(_part_field(ir.ThinkingPart, "signature", lambda p: None)),
    "Response.id": lambda v, streamed: v.model_copy(update={"id": None}) if isinstance(v, ir.Response) else v,
    "MessageStart.id": _identity,
    "UsageEvent": _identity,
    "Response.content layout": _response_content,
    "StopReason.kind:stop_sequence": _on_stop(
        lambda s: s.model_copy(update={"kind": "end_turn"}) if s.kind == "stop_sequence" else s
    ),
    "StopReason.raw": _on_stop(lambda s: s.model_copy(update={"raw": None})),
    "StopReason.sequence": _on_stop(lambda s: s.model_copy(update={"sequence": None})),
    "Usage.cache_read_tokens": _usage_field("cache_read_tokens"),
    "Usage.cache_write_tokens": _usage_field("cache_write_tokens"),
    "Usage.reasoning_tokens": _usage_field("reasoning_tokens"),
    # the status follows the kind the error was sent with: before the kind rules
    "IRError.status follows the kind": _on_error(lambda e: e.model_copy(update={"status": common.KIND_STATUS[e.kind]})),
    "IRError.code": _on_error(lambda e: e.model_copy(update={"code": None})),
    "IRError.kind:network": _error_kind(ir.ErrorKind.NETWORK, lambda e: SERVER),
    "IRError.kind:malformed_stream": _error_kind(ir.ErrorKind.MALFORMED_STREAM, lambda e: SERVER),
    "IRError.kind:context_window_exceeded": _error_kind(ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, _context),
}


def project(value: Any, *, streamed: bool = False) -> Any:
    """`value` (a Request, Response, IRError) with what Ollama cannot carry normalized, rule by rule."""
    for rule in RULES.values():
        value = rule(value, streamed)
    return value


def canonical(events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    """Events with consecutive deltas of one block merged and stop reasons' raw value dropped."""
    out: list[ir.StreamEvent] = []
    for event in events:
        prev = out[-1] if out else None
        if isinstance(event, ir.TextDelta | ir.ThinkingDelta) and type(prev) is type(event):
            assert isinstance(prev, ir.TextDelta | ir.ThinkingDelta)
            if prev.index == event.index:
                out[-1] = prev.model_copy(update={"text": prev.text + event.text})
                continue
        if isinstance(event, ir.ToolCallDelta) and isinstance(prev, ir.ToolCallDelta) and prev.index == event.index:
            out[-1] = prev.model_copy(update={"arguments": prev.arguments + event.arguments})
            continue
        if isinstance(event, ir.Done) and event.stop_reason is not None:
            event = event.model_copy(update={"stop_reason": ir.StopReason(kind=event.stop_reason.kind)})
        out.append(event)
    return out


def _no_stop_raw(resp: ir.Response) -> ir.Response:
    stop = resp.stop_reason
    return resp.model_copy(update={"stop_reason": None if stop is None else ir.StopReason(kind=stop.kind)})


def _expect_error(error: ir.IRError) -> Any:
    projected = project(error)
    assert (projected.message, projected.retry_after) == (error.message, error.retry_after)  # the wire keeps both
    return projected


def _judged(error: ir.IRError) -> bool:
    """An error whose message reads as no other kind: Ollama's error body is a message, and some phrases decide
    the kind it is read as."""
    lower = error.message.lower()
    if any(m in lower for m in ("not found", "does not support", "unauthorized", "invalid api key")):
        return False
    if any(m in lower for m in ("rate limit", "too many requests", "server busy", "overloaded")):
        return False
    return not common.is_context_message(error.message) or error.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        rules=frozenset(RULES),
        expect_request=project,
        expect_response=project,
        check_request=lambda wire, _request: support.check_request(wire),
        check_response=support.check_response,
        seen_response=_no_stop_raw,
        expect_stream=lambda response, _chunk: canonical(strategies.events_for(project(response, streamed=True))),
        seen_stream=canonical,
        check_stream=lambda body, _events: support.check_stream(body),
        expect_error=_expect_error,
        check_error=lambda wire, _error: support.check_error(wire),
        error_cases=_judged,
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
