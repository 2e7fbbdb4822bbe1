"""Incremental Anthropic SSE stream -> IR events.

Wire blocks map one to one to IR blocks (the wire has explicit starts), except blocks with no IR part
(server_tool_use, web_search_tool_result, other server-tool results, unknown types): those are skipped with
their deltas, and IR indices stay dense (0, 1, 2, ... in the order mapped blocks open). `citations_delta`s
are dropped and the text kept. `ping` may come anywhere and is ignored; so are event types this decoder does
not know, as Anthropic's versioning policy asks of clients. The stream never ends with `[DONE]`:
`message_stop` is the terminal marker, a mid-stream `event: error` the failed end.

Nothing the IR cannot hold is lost silently where it has a place: unknown fields of message_start's message
become `MessageStart.extras`, unknown fields of message_delta (`usage.server_tool_use`, a non-null
`stop_details`, `context_management`) `Done.extras`, and an event type added after this decoder was written a
`ProviderEvent`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from harness import ir
from harness.protocols.anthropic.blocks import tool_call
from harness.protocols.anthropic.errors import error_from_object
from harness.protocols.anthropic.mapping import (
    NAME,
    READ,
    dumps,
    load_object,
    merge_wire_usage,
    stop_reason_from_wire,
    usage_from_wire,
)
from harness.protocols.anthropic.response import MESSAGE_KEYS, USAGE_KEYS, decode_extras
from harness.protocols.base import DecodeError, decode_each
from harness.wire.sse import SSEDecoder, SSEEvent

_DELTA_FIELDS = frozenset({"stop_reason", "stop_sequence"})
"""Keys of message_delta's `delta` the IR reads; the others are kept as extras."""

_DELTA_BLOCK = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
    "input_json_delta": "tool_call",
    "citations_delta": "text",
}


@dataclass
class _Block:
    """An open wire block that maps to an IR block."""

    kind: str  # text | thinking | tool_call
    index: int  # IR content index
    signature: str = ""


class AnthropicStreamDecoder:
    """Feed SSE bytes, get IR events; `close()` at end of input."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._started = False
        self._done = False
        self._next_index = 0
        self._open: dict[int, _Block | None] = {}  # wire index -> block (None: skipped, no IR form)
        self._seen: set[int] = set()
        self._usage: dict[str, Any] = {}  # cumulative wire usage
        self._stop: ir.StopReason | None = None
        self._extras: ir.ProviderExtras | None = None  # from message_delta, for the Done

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the IR events they complete."""
        return decode_each(self._sse.feed(chunk), self._event)

    def close(self) -> list[ir.StreamEvent]:
        """End of input; a stream cut before `message_stop` ends with a malformed_stream error event."""
        out: list[ir.StreamEvent] = []
        for event in self._sse.close():
            # An event cut off by EOF counts only if its data is complete JSON; otherwise it is the truncation.
            if event.terminated or _is_json(event.data):
                out += self._event(event)
        if not self._done:
            where = "before message_start" if not self._started else "without message_stop"
            out += self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"anthropic stream ended {where}"))
        return out

    # --- one SSE event ------------------------------------------------------------------------------------

    def _event(self, event: SSEEvent) -> list[ir.StreamEvent]:
        if event.data == "":
            return []  # no data: nothing to dispatch (an SSE keep-alive)
        if self._done:
            if event.event == "ping":
                return []
            raise DecodeError(NAME, f"{event.event} event after the end of the stream", offset=event.offset)
        if event.event == "error" and not _is_json(event.data):
            # The official SDK reports a non-JSON error event with its raw text; so do we.
            return self._fail(ir.IRError.of(ir.ErrorKind.SERVER, event.data))
        data = load_object(event.data, offset=event.offset, what=f"{event.event} event data")
        try:
            return self._dispatch(data)
        except DecodeError as exc:
            if exc.offset is not None:
                raise
            raise DecodeError(NAME, exc.message.removeprefix(f"{NAME}: "), offset=event.offset) from exc

    def _dispatch(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        kind = READ.need_str(data, "type", "event data")
        if kind == "ping":
            return []
        if kind == "error":
            return self._fail(error_from_object(data.get("error"), status=None))
        if kind == "message_start":
            return self._message_start(data)
        handler = _HANDLERS.get(kind)
        if not self._started:
            raise DecodeError(NAME, f"{kind} before message_start")
        if handler is None:
            # An event type added after this decoder was written: kept, as Anthropic's versioning policy asks
            # clients to tolerate new events.
            return [ir.ProviderEvent(protocol=NAME, type=kind, data=data)]
        return handler(self, data)

    def _content_block_start(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        index = READ.need_int(data, "index", "content_block_start")
        return self._block_start(index, READ.need_obj(data, "content_block", "content_block_start"))

    def _content_block_delta(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        block = self._block(READ.need_int(data, "index", "content_block_delta"), "content_block_delta")
        return [] if block is None else self._delta(block, READ.need_obj(data, "delta", "content_block_delta"))

    def _content_block_stop(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        index = READ.need_int(data, "index", "content_block_stop")
        block = self._block(index, "content_block_stop")
        del self._open[index]
        return [] if block is None else [_end_event(block)]

    def _message_start(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        if self._started:
            raise DecodeError(NAME, "a second message_start")
        self._started = True
        message = READ.need_obj(data, "message", "message_start")
        usage = message.get("usage")
        self._usage = merge_wire_usage({}, usage) if usage is not None else {}
        return [
            ir.MessageStart(
                id=READ.get_str(message, "id", "message"),
                model=READ.get_str(message, "model", "message"),
                usage=usage_from_wire(self._usage) if usage is not None else None,
                extras=decode_extras(message, MESSAGE_KEYS),
            )
        ]

    def _block_start(self, index: int, block: dict[str, Any]) -> list[ir.StreamEvent]:
        if index in self._seen:
            raise DecodeError(NAME, f"content_block_start for index {index}, which already started")
        self._seen.add(index)
        block_type = READ.need_str(block, "type", "content_block")
        out: list[ir.StreamEvent] = []
        at = self._next_index
        if block_type == "text":
            self._open[index] = _Block("text", at)
            out += [ir.TextStart(index=at), *_text("text", at, READ.need_str(block, "text", "content_block"))]
        elif block_type == "thinking":
            signature = READ.get_str(block, "signature", "content_block") or ""
            self._open[index] = _Block("thinking", at, signature)
            thinking = READ.need_str(block, "thinking", "content_block")
            out += [ir.ThinkingStart(index=at), *_text("thinking", at, thinking)]
        elif block_type == "tool_use":
            call = tool_call(block, "content_block")
            self._open[index] = _Block("tool_call", at)
            out.append(ir.ToolCallStart(index=at, id=call.id, name=call.name))
            if call.arguments not in ({}, None):  # input normally arrives as input_json_delta fragments
                out.append(ir.ToolCallDelta(index=at, arguments=dumps(call.arguments)))
        elif block_type == "redacted_thinking":
            self._open[index] = None  # whole at start; its content_block_stop adds nothing
            out.append(ir.RedactedThinking(index=at, data=READ.need_str(block, "data", "content_block")))
        else:
            self._open[index] = None  # server tools and unknown blocks: no IR form (see module doc)
            return []
        self._next_index += 1
        return out

    def _block(self, index: int, kind: str) -> _Block | None:
        if index not in self._open:
            raise DecodeError(NAME, f"{kind} for index {index}, which is not open")
        return self._open[index]

    def _delta(self, block: _Block, delta: dict[str, Any]) -> list[ir.StreamEvent]:
        delta_type = READ.need_str(delta, "type", "delta")
        expected = _DELTA_BLOCK.get(delta_type)
        if expected is None:
            return []  # a delta type added after this decoder was written
        if expected != block.kind:
            raise DecodeError(NAME, f"{delta_type} on a {block.kind} block")
        if delta_type == "text_delta":
            return _text("text", block.index, READ.need_str(delta, "text", delta_type))
        if delta_type == "thinking_delta":
            return _text("thinking", block.index, READ.need_str(delta, "thinking", delta_type))
        if delta_type == "signature_delta":
            block.signature += READ.need_str(delta, "signature", delta_type)
            return []
        if delta_type == "input_json_delta":
            fragment = READ.need_str(delta, "partial_json", delta_type)
            return [ir.delta("tool_call", block.index, fragment)] if fragment else []
        return []  # citations_delta: citations have no IR form (see losses)

    def _message_delta(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        delta = READ.need_obj(data, "delta", "message_delta")
        self._stop = stop_reason_from_wire(delta.get("stop_reason"), delta.get("stop_sequence"))
        if data.get("usage") is not None:
            self._usage = merge_wire_usage(self._usage, data["usage"])
        nested = {"delta": _DELTA_FIELDS, "usage": USAGE_KEYS}
        self._extras = ir.merge_extras(self._extras, decode_extras(data, frozenset({"type"}), nested))
        return []

    def _message_stop(self, _data: dict[str, Any]) -> list[ir.StreamEvent]:
        out = self._close_blocks()
        self._done = True
        usage = usage_from_wire(self._usage) if self._usage else None
        return [*out, ir.Done(stop_reason=self._stop, usage=usage, extras=self._extras)]

    def _fail(self, error: ir.IRError) -> list[ir.StreamEvent]:
        # The IR wants message_start first; a stream that failed before the wire's gets an empty one.
        out: list[ir.StreamEvent] = [] if self._started else [ir.MessageStart()]
        self._started = True
        out += self._close_blocks()
        self._done = True
        return [*out, ir.ErrorEvent(error=error)]

    def _close_blocks(self) -> list[ir.StreamEvent]:
        out = [_end_event(b) for b in self._open.values() if b is not None]
        self._open.clear()
        return out


_HANDLERS: dict[str, Callable[[AnthropicStreamDecoder, dict[str, Any]], list[ir.StreamEvent]]] = {
    "content_block_start": AnthropicStreamDecoder._content_block_start,
    "content_block_delta": AnthropicStreamDecoder._content_block_delta,
    "content_block_stop": AnthropicStreamDecoder._content_block_stop,
    "message_delta": AnthropicStreamDecoder._message_delta,
    "message_stop": AnthropicStreamDecoder._message_stop,
}


def _text(kind: Literal["text", "thinking"], index: int, text: str) -> list[ir.StreamEvent]:
    # The IR never carries an empty text or thinking delta (Anthropic sends one before signature_delta).
    return [ir.delta(kind, index, text)] if text else []


def _end_event(block: _Block) -> ir.StreamEvent:
    if block.kind == "text":
        return ir.TextEnd(index=block.index)
    if block.kind == "thinking":
        return ir.ThinkingEnd(index=block.index, signature=block.signature or None)
    return ir.ToolCallEnd(index=block.index)


def _is_json(text: str) -> bool:
    try:
        load_object(text)
    except DecodeError:
        return False
    return True
