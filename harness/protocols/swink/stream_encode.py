"""IR events -> a swink proxy SSE body, one event at a time, and the whole-response form built on it.

Every IR event has its swink twin with the same start / delta / end shape, so the encoder is nearly one to one:
`MessageStart` -> `start`; a block's `content_index` is its place among the blocks sent (its IR index, unless a
block without a swink form came before it); mid-stream `UsageEvent`s fold into the
terminal `done`, which always carries the full `usage` and a zero `cost` (the harness prices nothing);
`ErrorEvent` -> `error` with `stop_reason: "error"`. Redacted thinking has no swink form and is not sent.
Each event is `data: <json>` and a blank line; nothing follows the terminal event (no `[DONE]`). swink extras
fill in what `start` (`MessageStart`'s) and `done` (`Done`'s) lack. No `ProviderEvent` is sent, swink's own
included: swink's client rejects an event type it does not know (see `stream_decode`).
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.swink.errors import error_fields
from harness.protocols.swink.events import PROTOCOL, wire_stop, wire_usage
from harness.protocols.swink.request import ZERO_COST


def sse(data: dict[str, Any]) -> bytes:
    """One SSE event carrying `data` as compact JSON."""
    return b"data: " + common.dump_json(data) + b"\n\n"


class SwinkStreamEncoder:
    """Incremental IR -> SSE encoder for one `/v1/stream` answer."""

    def __init__(self) -> None:
        self._usage = ir.Usage()
        # IR index -> content_index: the block's place among the blocks sent. A block with no swink form (redacted
        # thinking) takes no place, or every later start would name a place accumulate_message refuses.
        self._places: dict[int, int] = {}
        self._templates: dict[tuple[str, int], common.JsonTemplate | None] = {}
        """Per delta type and content_index, the template of its delta event (`_delta`); None where the event has
        no usable template."""

    def encode(self, event: ir.StreamEvent) -> bytes:
        """The SSE bytes for this event (empty when it has no swink form)."""
        if isinstance(event, ir.TextDelta | ir.ThinkingDelta):
            return self._delta(event.kind, event.index, event.text)
        if isinstance(event, ir.ToolCallDelta):
            return self._delta("tool_call_delta", event.index, event.arguments)
        if isinstance(event, ir.TextStart | ir.ThinkingStart | ir.ToolCallStart):
            self._places.setdefault(event.index, len(self._places))
        data = self._data(event)
        if data is not None and "content_index" in data:
            data["content_index"] = self._places.get(data["content_index"], data["content_index"])
        return b"" if data is None else sse(data)

    def _delta(self, kind: str, index: int, delta: str) -> bytes:
        """A delta event, written from a template (`common.JsonTemplate`, one per type and block) instead of
        building and encoding it per delta."""
        place = self._places.get(index, index)
        key = (kind, place)
        if key not in self._templates:
            self._templates[key] = common.JsonTemplate.of(lambda hole: _delta_data(kind, place, hole), 1)
        template = self._templates[key]
        if template is None:
            return sse(_delta_data(kind, place, delta))
        return f"data: {template.fill(delta)}\n\n".encode()

    def close(self) -> bytes:
        """Nothing follows the terminal event."""
        return b""

    def _data(self, event: ir.StreamEvent) -> dict[str, Any] | None:
        match event:
            case ir.MessageStart():
                if event.usage is not None:
                    self._usage = self._usage.merged(event.usage)
                return _with_extras({"type": "start"}, event.extras)
            case ir.TextStart() | ir.ThinkingStart() | ir.TextEnd() | ir.ToolCallEnd():
                return {"type": event.kind, "content_index": event.index}
            case ir.ThinkingEnd():
                return {"type": "thinking_end", "content_index": event.index, "signature": event.signature}
            case ir.ToolCallStart():
                return {"type": "tool_call_start", "content_index": event.index, "id": event.id, "name": event.name}
            case ir.UsageEvent():
                self._usage = self._usage.merged(event.usage)
            case ir.Done():
                usage = wire_usage(self._usage.merged(event.usage))
                done = {"type": "done", "stop_reason": wire_stop(event.stop_reason), "usage": usage}
                return _with_extras({**done, "cost": dict(ZERO_COST)}, event.extras)
            case ir.ErrorEvent():
                return {"type": "error", "stop_reason": "error", **error_fields(event.error), "usage": None}
        return None


def _delta_data(kind: str, place: int, delta: str) -> dict[str, Any]:
    return {"type": kind, "content_index": place, "delta": delta}


def _with_extras(data: dict[str, Any], extras: ir.ProviderExtras | None) -> dict[str, Any]:
    mine = (extras or {}).get(PROTOCOL)
    return ir.fill_missing(data, mine) if mine else data


def response_events(response: ir.Response) -> list[ir.StreamEvent]:
    """The stream that says `response`: swink answers every request with a stream, so a whole response is one
    (its swink extras, folded from both ends of a stream, go with `done`)."""
    events: list[ir.StreamEvent] = [ir.MessageStart(id=response.id, model=response.model)]
    for i, part in enumerate(response.content):
        if isinstance(part, ir.TextPart):
            events += [ir.TextStart(index=i), ir.TextDelta(index=i, text=part.text), ir.TextEnd(index=i)]
        elif isinstance(part, ir.ThinkingPart):
            events += [ir.ThinkingStart(index=i), ir.ThinkingDelta(index=i, text=part.text)]
            events.append(ir.ThinkingEnd(index=i, signature=part.signature))
        elif isinstance(part, ir.ToolCallPart):
            events.append(ir.ToolCallStart(index=i, id=part.id, name=part.name))
            events += [ir.ToolCallDelta(index=i, arguments=part.arguments_raw), ir.ToolCallEnd(index=i)]
    return [*events, ir.Done(stop_reason=response.stop_reason, usage=response.usage, extras=response.extras)]
