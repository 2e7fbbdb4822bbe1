"""Streamed Workers AI replies (SSE, `data: {...}` events, `data: [DONE]` last) -> IR events, incrementally.

Two forms arrive on the native route, sometimes in one stream (see `response.read`):
- native events `{"response": "...", "tool_calls": [], "p": "..."}`: `p` is padding that hides token lengths
  and is ignored; the last event before `[DONE]` is `{"response": "", "usage": {...}}` with the cumulative usage;
- OpenAI chunks (`choices[0].delta` with `content`, `reasoning_content` or `reasoning`, `tool_calls`) from newer
  models, which carry per-chunk `usage` and end with the same native usage event.
The last `usage` seen is the reply's (the final native event is cumulative; per-chunk figures before it are not
summed): each is passed on as a `UsageEvent` (figures so far) and the last goes into `Done`. Tool calls stream
as in OpenAI: a first fragment with `id`, `index` and `function.name`, then argument fragments by `index`; a
fragment with null id, type and name closes the last call (Workers AI's finalization sentinel), and a whole call
may come in one fragment; calls without an id get a deterministic one. A data event holding Cloudflare's error
envelope (`{"errors": [...]}`) or an `error` ends the stream with an error event; a body that ends without
`[DONE]` ends with a `malformed_stream` error from `close()`. Keys the codec does not know (see
`response.decode_extras`) are kept: the first event's as the start's extras, those of the events that carry
`usage` as the end's. The native stream has no event types, so there is no unknown one to keep.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from harness import ir
from harness.protocols import common
from harness.protocols.base import DecodeError, decode_each
from harness.protocols.cloudflare.errors import envelope_error
from harness.protocols.cloudflare.paths import PROTOCOL, READ
from harness.protocols.cloudflare.request import call_id_for
from harness.protocols.cloudflare.response import Piece, decode_extras, read, stop_reason
from harness.wire.errors import CutOff
from harness.wire.sse import SSEDecoder, SSEEvent


class CloudflareStreamDecoder:
    """Incremental SSE -> IR decoder for one streamed Workers AI reply."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._started = False
        self._done = False
        self._flow: tuple[str, int] | None = None  # open text/thinking block: (kind, IR index)
        self._calls: dict[int, int] = {}  # wire tool-call index -> IR index, while open
        self._last_call: int | None = None
        self._called = 0
        self._next = 0
        self._finish: str | None = None
        self._usage: ir.Usage | None = None
        self._extras: ir.ProviderExtras | None = None  # of the events with usage, for the Done

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events they complete."""
        return decode_each(self._sse.feed(chunk), self._event)

    def close(self) -> list[ir.StreamEvent]:
        """End of body: a stream cut before `[DONE]` ends with a `malformed_stream` error event."""
        out: list[ir.StreamEvent] = []
        try:
            tail = self._sse.close()  # a malformed whole line raises a FramingError: not forgiven here
        except CutOff:
            if self._done:
                raise
            tail = []
        for event in tail:
            if event.terminated or event.data == "[DONE]" or _is_json(event.data):
                out += self._event(event)
        if not self._done:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "cloudflare stream ended without data: [DONE]")
            out += self._finish_with(ir.ErrorEvent(error=error))
        return out

    def _event(self, event: SSEEvent) -> list[ir.StreamEvent]:
        if event.data == "":
            return []
        if self._done:
            raise READ.error("data after the end of the stream", offset=event.offset)
        if event.data == "[DONE]":
            called = self._called > 0
            done = ir.Done(stop_reason=stop_reason(self._finish, called), usage=self._usage, extras=self._extras)
            return self._finish_with(done)
        data = common.load_object(PROTOCOL, event.data, offset=event.offset, what="event data")
        try:
            return self._chunk(data)
        except DecodeError as exc:
            if exc.offset is not None:
                raise
            raise READ.error(exc.message.removeprefix(f"{PROTOCOL}: "), offset=event.offset) from exc
        except ValidationError as exc:
            raise READ.error(f"event does not map to IR: {exc.errors()[0]['msg']}", offset=event.offset) from exc

    def _chunk(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        if "errors" in data or "error" in data:
            return self._finish_with(ir.ErrorEvent(error=envelope_error(data, status=None)))
        piece = read(data, "event", delta=True)
        out = self._head(piece, data)
        if piece.reasoning:
            out += self._flow_delta("thinking", piece.reasoning)
        if piece.text:
            out += self._flow_delta("text", piece.text)
        for position, call in enumerate(piece.calls):
            out += self._call(call, position)
        self._finish = piece.finish or self._finish
        if piece.usage is not None:
            self._usage = piece.usage
            self._extras = ir.merge_extras(self._extras, decode_extras(data))
            out.append(ir.UsageEvent(usage=piece.usage))
        return out

    def _head(self, piece: Piece, data: dict[str, Any] | None = None) -> list[ir.StreamEvent]:
        if self._started:
            return []
        self._started = True
        extras = decode_extras(data) if data is not None else None
        return [ir.MessageStart(id=piece.id, model=piece.model, extras=extras)]

    def _flow_delta(self, kind: str, text: str) -> list[ir.StreamEvent]:
        out: list[ir.StreamEvent] = []
        if self._flow is None or self._flow[0] != kind:
            out += self._close_flow()
            self._flow = (kind, self._take())
            out.append(
                ir.ThinkingStart(index=self._flow[1]) if kind == "thinking" else ir.TextStart(index=self._flow[1])
            )
        index = self._flow[1]
        out.append(ir.delta("thinking" if kind == "thinking" else "text", index, text))
        return out

    def _close_flow(self) -> list[ir.StreamEvent]:
        if self._flow is None:
            return []
        kind, index = self._flow
        self._flow = None
        return [ir.ThinkingEnd(index=index) if kind == "thinking" else ir.TextEnd(index=index)]

    def _call(self, call: dict[str, Any], position: int) -> list[ir.StreamEvent]:
        function = READ.get_obj(call, "function", "tool call") or call
        name = READ.get_str(function, "name", "tool call")
        call_id = READ.get_str(call, "id", "tool call")
        arguments = function.get("arguments")
        if call_id is None and name is None and arguments in (None, ""):
            return self._close_call(self._last_call)  # the finalization sentinel
        wire = READ.get_count(call, "index", "tool call")
        wire = position if wire is None else wire
        raw = arguments if isinstance(arguments, str) or arguments is None else common.dump_text(arguments)
        out: list[ir.StreamEvent] = []
        if wire not in self._calls:
            out += self._close_flow() + self._close_call(self._last_call)
            self._calls[wire] = index = self._take()
            ident = call_id or call_id_for(self._called, name or "", raw or "")
            self._called += 1
            out.append(ir.ToolCallStart(index=index, id=ident, name=name or ""))
        self._last_call = wire
        if raw:
            out.append(ir.delta("tool_call", self._calls[wire], raw))
        return out

    def _close_call(self, wire: int | None) -> list[ir.StreamEvent]:
        if wire is None or wire not in self._calls:
            return []
        return [ir.ToolCallEnd(index=self._calls.pop(wire))]

    def _finish_with(self, terminal: ir.StreamEvent) -> list[ir.StreamEvent]:
        out = self._head(Piece()) + self._close_flow()
        for wire in sorted(self._calls, key=self._calls.__getitem__):
            out += self._close_call(wire)
        self._done = True
        return [*out, terminal]

    def _take(self) -> int:
        self._next += 1
        return self._next - 1


def _is_json(data: str) -> bool:
    try:
        common.load_object(PROTOCOL, data)
    except DecodeError:
        return False
    return True
