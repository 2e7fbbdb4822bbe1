"""Incremental ConverseStream body (AWS event stream framing) -> IR events.

Frames carry `:message-type` event / exception / error; an event's type is its `:event-type` header and its
payload the event object itself (`{"contentBlockIndex": 0, "delta": {"text": "Hi"}, "p": "abc"}`; `p` is
padding Bedrock adds and means nothing). As recorded from real Bedrock: text and reasoning blocks have no
contentBlockStart (their first delta opens them, an empty text delta included), only tool calls do; a
reasoning block's signature is a delta of its own; a redacted block is one `redactedContent` delta; server
tool calls and their results (`toolUse.type` server_tool_use, `toolResult` starts) have no IR form and are
skipped; messageStop names the stop reason and the final `metadata` event carries usage and latency, so
`done` is emitted at `metadata` (or at the end of the body when it never came). An exception or error message
ends the stream with an IR `error` event; a body that ends before messageStop, or inside a frame, ends with one
of kind `malformed_stream`. An event type the IR does not know is kept as a `ProviderEvent` (botocore skips
the types its model lacks, so the service may add some); the fields of messageStart, messageStop and metadata
the IR has no place for (`additionalModelResponseFields`, `trace`, `performanceConfig`, unknown usage figures)
are kept as extras of `MessageStart` and `Done`, shaped like a Converse body (see `response.decode_extras`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness import ir
from harness.protocols.base import DecodeError, decode_each
from harness.protocols.bedrock.blocks import SERVER_TOOL_USE, redacted_from_wire
from harness.protocols.bedrock.errors import stream_error
from harness.protocols.bedrock.mapping import NAME, READ, fail, load_object, stop_from_wire, usage_from_wire
from harness.protocols.bedrock.response import BODY_KEYS, decode_extras
from harness.wire.errors import CutOff, FramingError
from harness.wire.eventstream import EventMessage, EventStreamDecoder


@dataclass
class _Block:
    index: int
    kind: str  # text, thinking, tool_call; redacted and skipped (no IR form) are ended from the start
    signature: str = ""
    ended: bool = False  # its IR end event was emitted (or it needs none)
    stopped: bool = False  # its contentBlockStop arrived


class BedrockStreamDecoder:
    """Feed ConverseStream bytes as they arrive, get IR events."""

    def __init__(self) -> None:
        self._frames = EventStreamDecoder()
        self._blocks: dict[int, _Block] = {}  # wire contentBlockIndex -> block
        self._next_index = 0
        self._started = False
        self._stop: ir.StopReason | None = None
        self._stopped = False
        self._usage: ir.Usage | None = None
        self._extras: ir.ProviderExtras | None = None  # from messageStop and metadata, for the Done
        self._done = False

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events they complete."""
        try:
            messages = self._frames.feed(chunk)
        except FramingError as exc:
            raise DecodeError(NAME, exc.message, offset=exc.offset) from exc
        return decode_each(messages, self._message)

    def close(self) -> list[ir.StreamEvent]:
        """End of the body: a stream cut off before messageStop, or inside a frame, ends in malformed_stream."""
        try:
            self._frames.close()
        except CutOff as exc:
            if self._done:
                raise DecodeError(NAME, f"bytes after the end of the stream: {exc.message}", offset=exc.offset) from exc
            return self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"{NAME}: {exc}"))
        except FramingError as exc:  # a malformed whole frame: raised as `feed` raises it, not forgiven as a cut-off
            raise DecodeError(NAME, exc.message, offset=exc.offset) from exc
        if self._done:
            return []
        if self._stopped:
            return self._finish()
        return self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"{NAME}: stream ended without messageStop"))

    def _message(self, message: EventMessage) -> list[ir.StreamEvent]:
        if self._done:
            raise fail("a message after the stream's end (metadata or an exception)", message.offset)
        kind = message.headers.get(":message-type")
        if kind in ("exception", "error"):
            return self._fail(stream_error(message.headers, message.payload))
        if kind != "event":
            raise fail(f":message-type is {kind!r}, expected event, exception or error", message.offset)
        event_type = str(message.headers.get(":event-type"))
        handler = _HANDLERS.get(event_type)
        if handler is None:
            return self._provider_event(event_type, message)
        data = load_object(message.payload, offset=message.offset, what=f"{event_type} payload")
        out: list[ir.StreamEvent] = []
        if not self._started:
            extras = decode_extras(data, {"role": None}) if event_type == "messageStart" else None
            out.append(ir.MessageStart(extras=extras))
        self._started = True
        try:
            return out + handler(self, data)
        except DecodeError as exc:
            if exc.offset is not None:
                raise
            raise fail(exc.message.removeprefix(f"{NAME}: "), message.offset) from exc

    def _provider_event(self, event_type: str, message: EventMessage) -> list[ir.StreamEvent]:
        text = message.payload.decode("utf-8", errors="replace")
        try:
            payload: Any = load_object(message.payload, offset=message.offset, what=f"{event_type} payload")
        except DecodeError:
            payload = text  # kept as it came: its meaning is the service's
        out: list[ir.StreamEvent] = [] if self._started else [ir.MessageStart()]
        self._started = True
        return [*out, ir.ProviderEvent(protocol=NAME, type=event_type, data=payload)]

    def _message_start(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        READ.need_str(data, "role", "messageStart")
        return []

    def _content_block_start(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        wire = READ.need_int(data, "contentBlockIndex", "contentBlockStart")
        start = READ.need_obj(data, "start", "contentBlockStart")
        if wire in self._blocks:
            raise fail(f"contentBlockStart for block {wire}, which already started")
        use = start.get("toolUse")
        if not isinstance(use, dict) or use.get("type") == SERVER_TOOL_USE:
            self._blocks[wire] = _Block(-1, "skipped", ended=True)  # server tool calls, tool results, images
            return []
        block = self._open(wire, "tool_call")
        tool_id = READ.need_str(use, "toolUseId", "contentBlockStart.start.toolUse")
        name = READ.need_str(use, "name", "contentBlockStart.start.toolUse")
        return [ir.ToolCallStart(index=block.index, id=tool_id, name=name)]

    def _open(self, wire: int, kind: str) -> _Block:
        block = _Block(self._next_index, kind)
        self._next_index += 1
        self._blocks[wire] = block
        return block

    def _block_for(self, wire: int, kind: str, out: list[ir.StreamEvent]) -> _Block:
        """The open block at `wire` (opening a text or thinking block on its first delta)."""
        block = self._blocks.get(wire)
        if block is None:
            if kind == "tool_call":
                raise fail(f"toolUse delta for block {wire}, which had no contentBlockStart")
            block = self._open(wire, kind)
            out.append(ir.TextStart(index=block.index) if kind == "text" else ir.ThinkingStart(index=block.index))
        if block.ended or block.kind != kind:
            state = "closed" if block.ended else f"a {block.kind} block"
            raise fail(f"{kind} delta for block {wire}, which is {state}")
        return block

    def _content_block_delta(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        wire = READ.need_int(data, "contentBlockIndex", "contentBlockDelta")
        delta = READ.need_obj(data, "delta", "contentBlockDelta")
        known = self._blocks.get(wire)
        if known is not None and known.kind == "skipped":
            return []
        out: list[ir.StreamEvent] = []
        if "text" in delta:
            block = self._block_for(wire, "text", out)
            text = READ.need_str(delta, "text", "contentBlockDelta.delta")
            return out + ([ir.delta("text", block.index, text)] if text else [])
        if "toolUse" in delta:
            block = self._block_for(wire, "tool_call", out)
            fragment = READ.need_str(READ.need_obj(delta, "toolUse", "delta"), "input", "delta.toolUse")
            return out + ([ir.delta("tool_call", block.index, fragment)] if fragment else [])
        if "reasoningContent" in delta:
            return self._reasoning(wire, READ.need_obj(delta, "reasoningContent", "delta"))
        return []  # citations, tool results and images of server tools: no IR form

    def _reasoning(self, wire: int, reasoning: dict[str, Any]) -> list[ir.StreamEvent]:
        if "redactedContent" in reasoning:
            if wire in self._blocks:
                raise fail(f"redactedContent for block {wire}, which already started")
            block = self._open(wire, "redacted")
            block.ended = True  # a whole block in one event; its contentBlockStop only confirms it
            data = redacted_from_wire(reasoning["redactedContent"], "delta.reasoningContent")
            return [ir.RedactedThinking(index=block.index, data=data)]
        out: list[ir.StreamEvent] = []
        block = self._block_for(wire, "thinking", out)
        if "signature" in reasoning:
            block.signature += READ.need_str(reasoning, "signature", "delta.reasoningContent")
        text = optional_text(reasoning)
        return out + ([ir.delta("thinking", block.index, text)] if text else [])

    def _content_block_stop(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        wire = READ.need_int(data, "contentBlockIndex", "contentBlockStop")
        block = self._blocks.get(wire)
        if block is None:
            raise fail(f"contentBlockStop for block {wire}, which never started")
        if block.stopped:
            raise fail(f"contentBlockStop for block {wire}, which is already closed")
        block.stopped = True
        if block.ended:
            return []
        block.ended = True
        return [_end(block)]

    def _message_stop(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        self._stop = stop_from_wire(data.get("stopReason"))
        self._extras = ir.merge_extras(self._extras, decode_extras(data, {"stopReason": None}))
        self._stopped = True
        return self._finish() if self._usage is not None else []

    def _metadata(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        self._usage = usage_from_wire(READ.need_obj(data, "usage", "metadata"))
        self._extras = ir.merge_extras(self._extras, decode_extras(data, BODY_KEYS))
        return self._finish() if self._stopped else []

    def _finish(self) -> list[ir.StreamEvent]:
        out = self._close_blocks()
        self._done = True
        return [*out, ir.Done(stop_reason=self._stop, usage=self._usage, extras=self._extras)]

    def _fail(self, error: ir.IRError) -> list[ir.StreamEvent]:
        # The IR wants message_start first; a stream that failed before any event gets an empty one.
        out: list[ir.StreamEvent] = [] if self._started else [ir.MessageStart()]
        self._started = True
        out += self._close_blocks()
        self._done = True
        return [*out, ir.ErrorEvent(error=error)]

    def _close_blocks(self) -> list[ir.StreamEvent]:
        out = []
        for block in self._blocks.values():
            if not block.ended:
                block.ended = True
                out.append(_end(block))
        return out


def optional_text(reasoning: dict[str, Any]) -> str:
    """The `text` of a reasoningContent delta ('' when the delta carries only a signature)."""
    return READ.as_str(reasoning.get("text", ""), "delta.reasoningContent.text")


def _end(block: _Block) -> ir.StreamEvent:
    if block.kind == "text":
        return ir.TextEnd(index=block.index)
    if block.kind == "thinking":
        return ir.ThinkingEnd(index=block.index, signature=block.signature or None)
    return ir.ToolCallEnd(index=block.index)


_HANDLERS: dict[str, Callable[[BedrockStreamDecoder, dict[str, Any]], list[ir.StreamEvent]]] = {
    "messageStart": BedrockStreamDecoder._message_start,
    "contentBlockStart": BedrockStreamDecoder._content_block_start,
    "contentBlockDelta": BedrockStreamDecoder._content_block_delta,
    "contentBlockStop": BedrockStreamDecoder._content_block_stop,
    "messageStop": BedrockStreamDecoder._message_stop,
    "metadata": BedrockStreamDecoder._metadata,
}
