"""Round trips through the Ollama wire: IR -> encode -> decode gives the IR back, projected through `losses`."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common, decode_events, encode_events
from harness.protocols.ollama import LOSSES
from harness.protocols.ollama.images import sniff_media_type
from tests import strategies
from tests.protocols.ollama import support
from tests.protocols.ollama.support import CODEC

JOIN = "\n"  # how one Ollama message's `content` joins several IR text parts


def _raw(args: Any) -> str:
    return common.dump_json(args).decode("utf-8")


def project(value: Any, *, streamed: bool = False) -> Any:
    """`value` (a Request, Response, IRError) with what Ollama cannot carry normalized, per LOSSES."""
    if isinstance(value, ir.Request):
        return _project_request(value)
    if isinstance(value, ir.Response):
        return _project_response(value, streamed=streamed)
    if isinstance(value, ir.IRError):
        return _project_error(value)
    raise TypeError(type(value))


def _project_request(req: ir.Request) -> ir.Request:
    updates: dict[str, Any] = {"messages": [m for msg in req.messages for m in _project_message(msg)]}
    if "Request.tool_choice" in LOSSES:
        updates["tool_choice"] = None
    if "Request.parallel_tool_calls" in LOSSES:
        updates["parallel_tool_calls"] = None
    if req.thinking is not None and "ThinkingConfig.budget_tokens" in LOSSES:
        updates["thinking"] = ir.ThinkingConfig(enabled=req.thinking.enabled)
    fmt = req.response_format
    if isinstance(fmt, ir.ResponseFormatJsonSchema) and "ResponseFormatJsonSchema.name" in LOSSES:
        updates["response_format"] = ir.ResponseFormatJsonSchema(schema_=fmt.schema_)
    return req.model_copy(update=updates)


def _project_part(part: Any) -> Any:
    image = isinstance(part, ir.ImagePart) and isinstance(part.source, ir.Base64Image)
    if image and "Base64Image.media_type" in LOSSES:
        source = ir.Base64Image(media_type=sniff_media_type(part.source.data), data=part.source.data)
        return ir.ImagePart(source=source)
    if isinstance(part, ir.ToolCallPart) and "ToolCallPart.arguments_raw" in LOSSES:
        return part.model_copy(update={"arguments_raw": _raw(part.arguments)})
    if isinstance(part, ir.ThinkingPart) and "ThinkingPart.signature" in LOSSES:
        return ir.ThinkingPart(text=part.text)
    return part


def _project_message(msg: ir.Message) -> list[ir.Message]:
    """Ollama: each tool result its own `tool` message; other parts as thinking, text, images, tool calls."""
    assert "Message.content" in LOSSES
    out: list[ir.Message] = []
    group: list[Any] = []

    def flush() -> None:
        parts: list[Any] = []
        thinking = [p.text for p in group if isinstance(p, ir.ThinkingPart)]
        if thinking:
            parts.append(ir.ThinkingPart(text=JOIN.join(thinking)))
        text = [p.text for p in group if isinstance(p, ir.TextPart)]
        if text:
            parts.append(ir.TextPart(text=JOIN.join(text)))
        images = [p for p in group if isinstance(p, ir.ImagePart)]
        if "UrlImage" in LOSSES:
            images = [p for p in images if isinstance(p.source, ir.Base64Image)]
        parts += images
        parts += [p for p in group if isinstance(p, ir.ToolCallPart)]
        out.append(ir.Message(role=msg.role, content=[_project_part(p) for p in parts]))

    for part in msg.content:
        if isinstance(part, ir.ToolResultPart):
            if group:
                flush()
                group.clear()
            out.append(ir.Message(role="tool", content=[_project_result(part)]))
        else:
            group.append(part)
    if group or not msg.content:
        flush()
    return out


def _project_result(part: ir.ToolResultPart) -> ir.ToolResultPart:
    text = JOIN.join(p.text for p in part.content if isinstance(p, ir.TextPart))
    content: list[Any] = [ir.TextPart(text=text)] if text else []
    content += [_project_part(p) for p in part.content if isinstance(p, ir.ImagePart)]
    is_error = False if "ToolResultPart.is_error" in LOSSES else part.is_error
    return part.model_copy(update={"content": content, "is_error": is_error})


def _project_response(resp: ir.Response, *, streamed: bool) -> ir.Response:
    parts = [p for p in resp.content if not isinstance(p, ir.RedactedThinkingPart)]
    parts = [_project_part(p) for p in parts]
    if streamed:
        content = _merge_adjacent(parts)
    else:
        thinking = "".join(p.text for p in parts if isinstance(p, ir.ThinkingPart))
        text = "".join(p.text for p in parts if isinstance(p, ir.TextPart))
        content = [ir.ThinkingPart(text=thinking)] if thinking else []
        content += [ir.TextPart(text=text)] if text else []
        content += [p for p in parts if isinstance(p, ir.ToolCallPart)]
    stop = resp.stop_reason
    if stop is not None:
        kind = "end_turn" if stop.kind == "stop_sequence" and "StopReason.kind" in LOSSES else stop.kind
        stop = ir.StopReason(kind=kind)
    usage = ir.Usage(input_tokens=resp.usage.input_tokens, output_tokens=resp.usage.output_tokens)
    return ir.Response(id=None, model=resp.model, content=content, stop_reason=stop, usage=usage)


def _merge_adjacent(parts: list[Any]) -> list[Any]:
    out: list[Any] = []
    for part in parts:
        prev: Any = out[-1] if out else None
        if isinstance(part, ir.TextPart | ir.ThinkingPart) and type(prev) is type(part):
            out[-1] = part.model_copy(update={"text": prev.text + part.text})
        else:
            out.append(part)
    return out


def _project_error(error: ir.IRError) -> ir.IRError:
    kind = error.kind
    if "IRError.kind" in LOSSES:
        kind = {ir.ErrorKind.NETWORK: ir.ErrorKind.SERVER, ir.ErrorKind.MALFORMED_STREAM: ir.ErrorKind.SERVER}.get(
            kind, kind
        )
        if kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not common.is_context_message(error.message):
            kind = ir.ErrorKind.INVALID_REQUEST
    return ir.IRError.of(kind, error.message, status=common.KIND_STATUS[error.kind], retry_after=error.retry_after)


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


@given(strategies.requests)
def test_request_round_trip(request: ir.Request) -> None:
    wire = CODEC.encode_request(request)
    support.check_request(wire)
    assert CODEC.is_stream_request(wire) is request.stream
    assert CODEC.decode_request(wire) == project(request)


@given(strategies.responses())
def test_response_round_trip(response: ir.Response) -> None:
    wire = CODEC.encode_response(response)
    support.check_response(wire)
    assert _no_stop_raw(CODEC.decode_response(wire.body)) == project(response)


@given(strategies.responses(), st.integers(1, 5))
def test_stream_round_trip(response: ir.Response, chunk: int) -> None:
    body = encode_events(CODEC, strategies.events_for(response, chunk=chunk))
    support.check_stream(body)
    decoded = decode_events(CODEC, [body])
    assert canonical(decoded) == canonical(strategies.events_for(project(response, streamed=True)))
    assert decode_events(CODEC, [body[i : i + 1] for i in range(len(body))]) == decoded


@given(strategies.errors)
def test_error_round_trip(error: ir.IRError) -> None:
    lower = error.message.lower()
    assume(not any(m in lower for m in ("not found", "does not support", "unauthorized", "invalid api key")))
    assume(not any(m in lower for m in ("rate limit", "too many requests", "server busy", "overloaded")))
    assume(not common.is_context_message(error.message) or error.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED)
    wire = CODEC.encode_error(error)
    support.check_error(wire)
    decoded = CODEC.decode_error(wire.status, wire.headers, wire.body)
    assert decoded == project(error)
    assert (decoded.kind, decoded.message, decoded.retry_after) == (
        project(error).kind,
        error.message,
        error.retry_after,
    )
