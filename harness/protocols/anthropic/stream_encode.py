"""Incremental IR events -> Anthropic SSE stream, shaped like the real API.

message_start (with usage), then per block content_block_start / content_block_delta* / content_block_stop
(a thinking block's signature as one signature_delta right before its stop), a `ping` after the first block
start, then message_delta (stop_reason, stop_sequence, cumulative usage) and message_stop. An error event
becomes `event: error` with `{"type":"error","error":{...}}`; nothing follows it (there is no `[DONE]`).
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.anthropic.errors import error_body
from harness.protocols.anthropic.mapping import dumps, stop_reason_to_wire, usage_to_wire
from harness.protocols.anthropic.response import message_object
from harness.wire.sse import encode_sse

_PING = encode_sse(dumps({"type": "ping"}), event="ping")


def sse(data: dict[str, Any]) -> bytes:
    """One SSE event named after its data's `type`, as Anthropic sends them."""
    return encode_sse(dumps(data), event=data["type"])


class AnthropicStreamEncoder:
    """Feed IR events one at a time, get the SSE bytes to send now."""

    def __init__(self) -> None:
        self._wire_index: dict[int, int] = {}  # IR content index -> wire index (order of block starts)
        self._open: set[int] = set()  # IR indices of open blocks
        self._pinged = False
        self._held: ir.MessageStart | None = None
        self._usage = ir.Usage()  # UsageEvent figures, folded into message_delta's usage

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
        match event:
            case ir.MessageStart():
                return self._message_start(event)
            case ir.TextStart():
                return self._start(event.index, {"type": "text", "text": ""})
            case ir.ThinkingStart():
                return self._start(event.index, {"type": "thinking", "thinking": "", "signature": ""})
            case ir.ToolCallStart():
                block = {"type": "tool_use", "id": event.id, "name": event.name, "input": {}}
                return self._start(event.index, block)
            case ir.RedactedThinking():
                block = {"type": "redacted_thinking", "data": event.data}
                return self._start(event.index, block) + self._stop(event.index)
            case ir.TextDelta():
                return self._delta(event.index, {"type": "text_delta", "text": event.text})
            case ir.ThinkingDelta():
                return self._delta(event.index, {"type": "thinking_delta", "thinking": event.text})
            case ir.ToolCallDelta():
                return self._delta(event.index, {"type": "input_json_delta", "partial_json": event.arguments})
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
            case ir.Done():
                return self._done(event)
            case ir.ErrorEvent():
                return sse(error_body(event.error))
        raise TypeError(f"not an IR stream event: {event!r}")

    def _message_start(self, event: ir.MessageStart) -> bytes:
        message = message_object(message_id=event.id, model=event.model, content=[], stop=None, usage=event.usage)
        return sse({"type": "message_start", "message": message})

    def _start(self, index: int, block: dict[str, Any]) -> bytes:
        wire = len(self._wire_index)
        self._wire_index[index] = wire
        self._open.add(index)
        out = sse({"type": "content_block_start", "index": wire, "content_block": block})
        if not self._pinged:  # the real API pings right after the first block start
            self._pinged = True
            out += _PING
        return out

    def _delta(self, index: int, delta: dict[str, Any]) -> bytes:
        return sse({"type": "content_block_delta", "index": self._wire(index), "delta": delta})

    def _stop(self, index: int) -> bytes:
        self._open.discard(index)
        return sse({"type": "content_block_stop", "index": self._wire(index)})

    def _wire(self, index: int) -> int:
        if index not in self._wire_index:
            raise ValueError(f"IR event for content index {index}, which was never started")
        return self._wire_index[index]

    def _done(self, event: ir.Done) -> bytes:
        # A grammar-valid stream has closed every block already; close any left so clients stay consistent.
        out = b"".join(self._stop(i) for i in sorted(self._open))
        stop_reason, stop_sequence = stop_reason_to_wire(event.stop_reason)
        usage = usage_to_wire(self._usage.merged(event.usage), required=False)
        delta = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
        out += sse({"type": "message_delta", "delta": delta, "usage": usage})
        return out + sse({"type": "message_stop"})
