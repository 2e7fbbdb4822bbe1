"""Incremental IR events -> Anthropic SSE stream, shaped like the real API.

message_start (with the usage known at start: a translation whose upstream has not reported input tokens yet
sends an estimate from the request, never 0, and the exact count follows in message_delta), then per block
content_block_start / content_block_delta* / content_block_stop (a tool_use block starts with an empty
input_json_delta, a thinking block's signature is one signature_delta right before its stop), one `ping` early
in the first block (after its first delta; right after a tool_use or redacted_thinking start, which wait for
their content), then message_delta (stop_reason, stop_sequence, stop_details, cumulative usage) and
message_stop. An error event becomes `event: error` with `{"type":"error","error":{...}}`; nothing follows it
(there is no `[DONE]`). A provider event of this protocol goes out as it came.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.anthropic.errors import error_body
from harness.protocols.anthropic.mapping import (
    NAME,
    dumps,
    estimate_input_tokens,
    stop_reason_to_wire,
    usage_to_wire,
)
from harness.protocols.anthropic.response import message_object, with_extras
from harness.wire.sse import encode_sse

_PING = encode_sse(dumps({"type": "ping"}), event="ping")


def sse(data: dict[str, Any]) -> bytes:
    """One SSE event named after its data's `type`, as Anthropic sends them."""
    return encode_sse(dumps(data), event=data["type"])


def _delta_event(wire: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": wire, "delta": delta}


class AnthropicStreamEncoder:
    """Feed IR events one at a time, get the SSE bytes to send now."""

    def __init__(self, request: ir.Request | None = None) -> None:
        self._request = request
        self._wire_index: dict[int, int] = {}  # IR content index -> wire index (order of block starts)
        self._open: set[int] = set()  # IR indices of open blocks
        self._pinged = False
        self._held: ir.MessageStart | None = None
        self._usage = ir.Usage()  # cumulative: message_start figures, then UsageEvents, then Done's
        self._templates: dict[tuple[int, str], common.JsonTemplate | None] = {}
        """Per wire index and delta type, the template of its content_block_delta (`_leaf`); None where the
        event has no usable template."""

    def encode(self, event: ir.StreamEvent) -> bytes:
        """Bytes for one IR event (possibly empty)."""
        if isinstance(event, ir.MessageStart) and event == ir.MessageStart():
            # An empty start is what a decoder synthesizes for a stream that failed before its own
            # message_start: hold it, and send it only if the stream goes on instead of failing.
            self._held = event
            return b""
        out = b""
        if self._held is not None and not isinstance(event, ir.ErrorEvent):
            out += self._message_start(self._held)
        self._held = None
        return out + self._encode(event)

    def close(self) -> bytes:
        """Nothing follows message_stop or an error event on the Anthropic wire."""
        held, self._held = self._held, None
        return self._message_start(held) if held is not None else b""

    def _encode(self, event: ir.StreamEvent) -> bytes:
        match event:  # the classes are disjoint: deltas, by far the most common, are matched first
            case ir.TextDelta():
                return self._leaf(event.index, "text_delta", "text", event.text)
            case ir.ThinkingDelta():
                return self._leaf(event.index, "thinking_delta", "thinking", event.text)
            case ir.ToolCallDelta():
                return self._leaf(event.index, "input_json_delta", "partial_json", event.arguments)
            case ir.MessageStart():
                return self._message_start(event)
            case ir.TextStart():
                return self._start(event.index, {"type": "text", "text": ""})
            case ir.ThinkingStart():
                return self._start(event.index, {"type": "thinking", "thinking": "", "signature": ""})
            case ir.ToolCallStart():
                block = {"type": "tool_use", "id": event.id, "name": event.name, "input": {}}
                out = self._start(event.index, block, ping=True)
                return out + self._delta(event.index, {"type": "input_json_delta", "partial_json": ""})
            case ir.RedactedThinking():
                block = {"type": "redacted_thinking", "data": event.data}
                return self._start(event.index, block, ping=True) + self._stop(event.index)
            case ir.ThinkingEnd():
                signature = b""
                if event.signature:
                    signature = self._delta(event.index, {"type": "signature_delta", "signature": event.signature})
                return signature + self._stop(event.index)
            case ir.TextEnd() | ir.ToolCallEnd():
                return self._stop(event.index)
            case ir.UsageEvent():
                self._usage = self._usage.merged(event.usage)  # no wire event of its own (see losses)
                return b""
            case ir.ProviderEvent():
                return self._provider_event(event)
            case ir.Done():
                return self._done(event)
            case ir.ErrorEvent():
                return sse(error_body(event.error))
        raise TypeError(f"not an IR stream event: {event!r}")

    def _message_start(self, event: ir.MessageStart) -> bytes:
        usage = event.usage or ir.Usage()
        if usage.input_tokens is None:
            # The real API knows the input count here; a translation whose upstream reports it only at the end
            # sends an estimate (an agent reading 0 would think its context empty). message_delta corrects it.
            usage = usage.model_copy(update={"input_tokens": estimate_input_tokens(self._request)})
        self._usage = usage
        message = message_object(
            message_id=event.id,
            model=event.model,
            content=[],
            stop=None,
            usage=usage,
            extras=event.extras,
            in_stream=True,
        )
        return sse({"type": "message_start", "message": message})

    def _ping(self) -> bytes:
        if self._pinged:
            return b""
        self._pinged = True
        return _PING

    def _start(self, index: int, block: dict[str, Any], *, ping: bool = False) -> bytes:
        wire = len(self._wire_index)
        self._wire_index[index] = wire
        self._open.add(index)
        out = sse({"type": "content_block_start", "index": wire, "content_block": block})
        return out + (self._ping() if ping else b"")

    def _delta(self, index: int, delta: dict[str, Any]) -> bytes:
        out = sse(_delta_event(self._wire(index), delta))
        # The real API pings once, early: after the first block's first delta (a tool_use pings on start).
        return out + self._ping()

    def _leaf(self, index: int, kind: str, field: str, leaf: str) -> bytes:
        """`_delta(index, {"type": kind, field: leaf})`, written from a template of the event
        (`common.JsonTemplate`, one per block and delta type) instead of building and encoding it per delta."""
        wire = self._wire(index)
        key = (wire, kind)
        if key not in self._templates:
            build = lambda hole: _delta_event(wire, {"type": kind, field: hole})  # noqa: E731
            self._templates[key] = common.JsonTemplate.of(build, 1)
        template = self._templates[key]
        if template is None:
            return self._delta(index, {"type": kind, field: leaf})
        out = encode_sse(template.fill(leaf), event="content_block_delta")
        return out if self._pinged else out + self._ping()

    def _stop(self, index: int) -> bytes:
        self._open.discard(index)
        return self._ping() + sse({"type": "content_block_stop", "index": self._wire(index)})

    def _wire(self, index: int) -> int:
        if index not in self._wire_index:
            raise ValueError(f"IR event for content index {index}, which was never started")
        return self._wire_index[index]

    def _provider_event(self, event: ir.ProviderEvent) -> bytes:
        if event.protocol != NAME:
            return b""  # another provider's event has no meaning on this wire
        data = event.data if isinstance(event.data, str) else dumps(event.data)
        return encode_sse(data, event=event.type)

    def _done(self, event: ir.Done) -> bytes:
        # A grammar-valid stream has closed every block already; close any left so clients stay consistent.
        out = b"".join(self._stop(i) for i in sorted(self._open))
        stop_reason, stop_sequence = stop_reason_to_wire(event.stop_reason)
        usage = usage_to_wire(self._usage.merged(event.usage), required=False)
        delta = {"stop_reason": stop_reason, "stop_sequence": stop_sequence, "stop_details": None}
        message_delta = with_extras({"type": "message_delta", "delta": delta, "usage": usage}, event.extras)
        out += sse(message_delta)
        return out + sse({"type": "message_stop"})
