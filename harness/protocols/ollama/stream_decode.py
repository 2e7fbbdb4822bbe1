"""Streamed `/api/chat` replies (NDJSON, one reply object per line) -> IR events, incrementally.

Each line is `{model, created_at, message: {role, content, thinking?, tool_calls?}, done}`; the last one has
`done: true`, `done_reason` and the eval counts. Quirks handled:
- `message.thinking` deltas come before `message.content` deltas (gpt-oss on Ollama Cloud); a change from one
  to the other closes the open block and opens the next, so blocks come out in wire order.
- tool calls arrive whole (arguments as an object), on any line, often only on the final `done` line; each
  becomes start / one delta with the compact JSON / end. Calls without an `id` get a deterministic one.
- empty `content` strings (every thinking line, the final line) open no block.
- a line `{"error": "..."}` is Ollama's mid-stream error and ends the stream with an `ErrorEvent`.
- a body that ends without a `done: true` line (or in the middle of a line) ends with a `malformed_stream`
  error event from `close()`.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.base import decode_each
from harness.protocols.ollama._fields import READ, decode_tool_call
from harness.protocols.ollama.errors import error_kind
from harness.protocols.ollama.response import decode_extras, stop_reason, usage
from harness.wire.errors import CutOff
from harness.wire.ndjson import NDJSONDecoder


class OllamaStreamDecoder:
    """Incremental NDJSON -> IR decoder for one streamed `/api/chat` body."""

    def __init__(self) -> None:
        self._lines = NDJSONDecoder()
        self._started = False
        self._finished = False
        self._open: tuple[str, int] | None = None  # (block kind, IR index) of the open text/thinking block
        self._next_index = 0
        self._calls = 0

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events of the lines they complete."""
        return decode_each(self._lines.feed(chunk), self._line)

    def close(self) -> list[ir.StreamEvent]:
        """End of body: the events of a last unterminated line, or a malformed-stream error event."""
        out: list[ir.StreamEvent] = []
        problem = "the stream ended without a done:true line"
        try:
            values = self._lines.close()  # a whole line that was no JSON raises a FramingError: not forgiven here
        except CutOff as exc:
            if self._finished:
                raise
            # A body cut in the middle of a line is a stream that ended early, not undecodable input.
            values, problem = [], f"the stream ended inside a line ({exc})"
        for value in values:
            out += self._line(value)
        if not self._finished:
            out += self._head(None)
            out += self._close_block()
            out.append(ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, problem)))
            self._finished = True
        return out

    def _line(self, value: Any) -> list[ir.StreamEvent]:
        if self._finished:
            raise READ.error("data after the final line of the stream")
        chunk = READ.as_obj(value, "stream line")
        out = self._head(chunk)
        if "error" in chunk:
            out += self._close_block()
            out.append(ir.ErrorEvent(error=_stream_error(chunk["error"])))
            self._finished = True
            return out
        message = READ.get_obj(chunk, "message", "stream line") or {}
        thinking = READ.get_str(message, "thinking", "stream line.message")
        if thinking:
            out += self._delta("thinking", thinking)
        content = READ.get_str(message, "content", "stream line.message")
        if content:
            out += self._delta("text", content)
        for value in READ.get_list(message, "tool_calls", "stream line.message"):
            out += self._close_block()
            out += self._tool_call(value)
        done = chunk.get("done", False)
        if not isinstance(done, bool):
            raise READ.error(f"stream line.done is {type(done).__name__}, expected a boolean")
        if done:
            out += self._close_block()
            reason = stop_reason(READ.get_str(chunk, "done_reason", "stream line"), self._calls > 0)
            out.append(ir.Done(stop_reason=reason, usage=usage(chunk), extras=decode_extras(chunk)))
            self._finished = True
        return out

    def _head(self, chunk: dict[str, Any] | None) -> list[ir.StreamEvent]:
        if self._started:
            return []
        self._started = True
        model = READ.get_str(chunk, "model", "stream line") if chunk is not None else None
        return [ir.MessageStart(model=model)]

    def _delta(self, kind: str, text: str) -> list[ir.StreamEvent]:
        out: list[ir.StreamEvent] = []
        if self._open is None or self._open[0] != kind:
            out += self._close_block()
            index = self._take_index()
            self._open = (kind, index)
            out.append(ir.ThinkingStart(index=index) if kind == "thinking" else ir.TextStart(index=index))
        index = self._open[1]
        out.append(ir.delta("thinking" if kind == "thinking" else "text", index, text))
        return out

    def _close_block(self) -> list[ir.StreamEvent]:
        if self._open is None:
            return []
        kind, index = self._open
        self._open = None
        return [ir.ThinkingEnd(index=index) if kind == "thinking" else ir.TextEnd(index=index)]

    def _tool_call(self, value: Any) -> list[ir.StreamEvent]:
        call = decode_tool_call(value, self._calls, f"tool call {self._calls}")
        self._calls += 1
        index = self._take_index()
        return [
            ir.ToolCallStart(index=index, id=call.id, name=call.name),
            ir.ToolCallDelta(index=index, arguments=call.arguments_raw),
            ir.ToolCallEnd(index=index),
        ]

    def _take_index(self) -> int:
        index = self._next_index
        self._next_index += 1
        return index


def _stream_error(value: Any) -> ir.IRError:
    # Ollama sends a flat string; an object with a message (OpenAI-style proxies in front of Ollama) is read too.
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        message = value["message"]
    elif isinstance(value, str):
        message = value
    else:
        message = common.dump_text(value)
    return ir.IRError.of(error_kind(None, message), message)
