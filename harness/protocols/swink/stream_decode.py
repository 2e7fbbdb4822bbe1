"""swink proxy SSE stream -> IR events, incrementally.

Each SSE `data` is a JSON object tagged by `type` (`SseEventData` in `adapters/src/proxy.rs`): `start`;
`text_start` / `text_delta` / `text_end`, `thinking_start` / `thinking_delta` / `thinking_end` (with the
signature), `tool_call_start` (`id`, `name`) / `tool_call_delta` / `tool_call_end`, each with `content_index`;
then exactly one terminal `done` (`stop_reason`, `usage`, `cost`) or `error` (`stop_reason`, `error_message`,
`usage`?, `error_kind`?). Like `ProxyStreamFn`:
- a stream that ends without a terminal event, or whose transport says `data: [DONE]` first, ends with a
  terminal `malformed_stream` error (swink: "SSE stream ended unexpectedly" / "ended before protocol terminal
  event"); blocks still open are closed first, in content-index order, as swink drains them.
- JSON that is not a known event is undecodable (swink: "malformed SSE event JSON"): `DecodeError`; its serde
  enum has no catch-all, so swink's wire has no room for new event types and none is kept as a `ProviderEvent`.
- unknown fields, which serde ignores, are kept: those of `start` as the start's extras, those of `done` as the
  end's (`cost` is swink's and not kept: the encoder writes its own); `content_index` values are renumbered
  densely in the order blocks open.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from harness import ir
from harness.protocols import common
from harness.protocols.base import DecodeError, decode_each
from harness.protocols.swink.errors import stream_error
from harness.protocols.swink.events import PROTOCOL, READ, stop_reason, usage
from harness.wire.errors import CutOff
from harness.wire.sse import SSEDecoder, SSEEvent

_BLOCKS = {"text": "text", "thinking": "thinking", "tool_call": "tool_call"}


class SwinkStreamDecoder:
    """Incremental SSE -> IR decoder for one `/v1/stream` body."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._started = False
        self._done = False
        self._open: dict[int, tuple[str, int]] = {}  # wire content_index -> (block kind, IR index)
        self._next = 0

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events they complete."""
        return decode_each(self._sse.feed(chunk), self._event)

    def close(self) -> list[ir.StreamEvent]:
        """End of body: a stream with no terminal event ends with a `malformed_stream` error."""
        out: list[ir.StreamEvent] = []
        try:
            tail = self._sse.close()  # a malformed whole line raises a FramingError: not forgiven here
        except CutOff:
            if self._done:
                raise
            tail = []
        for event in tail:
            if event.terminated or _is_json(event.data):
                out += self._event(event)
        if not self._done:
            out += self._fail("network error: SSE stream ended unexpectedly")
        return out

    def _event(self, event: SSEEvent) -> list[ir.StreamEvent]:
        if event.data == "":
            return []
        if event.data == "[DONE]":
            # A transport sentinel is no substitute for the protocol's terminal event (swink issue #543).
            return [] if self._done else self._fail("proxy SSE transport ended before protocol terminal event")
        if self._done:
            raise READ.error("event after the terminal event", offset=event.offset)
        data = common.load_object(PROTOCOL, event.data, offset=event.offset, what="event data")
        try:
            return self._dispatch(data)
        except DecodeError as exc:
            if exc.offset is not None:
                raise
            raise READ.error(exc.message.removeprefix(f"{PROTOCOL}: "), offset=event.offset) from exc
        except ValidationError as exc:  # a value the IR refuses
            raise READ.error(f"event does not map to IR: {exc.errors()[0]['msg']}", offset=event.offset) from exc

    def _dispatch(self, data: dict[str, Any]) -> list[ir.StreamEvent]:
        kind = READ.need_str(data, "type", "event")
        out = self._start(data if kind == "start" else None)
        if kind == "start":
            return out
        if kind in ("done", "error"):
            out += self._close_all()
            self._done = True
            if kind == "done":
                return [
                    *out,
                    ir.Done(
                        stop_reason=stop_reason(data.get("stop_reason"), "done"),
                        usage=usage(data.get("usage"), "done.usage"),
                        extras=_extras(data, _DONE_KEYS),
                    ),
                ]
            stop_reason(data.get("stop_reason"), "error")  # required by swink, checked, not kept
            message = READ.need_str(data, "error_message", "error")
            return [*out, ir.ErrorEvent(error=stream_error(message, READ.get_str(data, "error_kind", "error")))]
        block, _, step = kind.rpartition("_")
        if block not in _BLOCKS or step not in ("start", "delta", "end"):
            raise READ.error(f"unknown event type {kind!r}")
        wire = READ.get_count(data, "content_index", kind)
        if wire is None:
            raise READ.error(f"{kind} has no content_index")
        handler = {"start": self._begin, "delta": self._delta, "end": self._end}[step]
        return out + handler(block, wire, data, kind)

    def _start(self, data: dict[str, Any] | None = None) -> list[ir.StreamEvent]:
        if self._started:
            return []
        self._started = True
        return [ir.MessageStart(extras=_extras(data, frozenset({"type"})) if data is not None else None)]

    def _begin(self, block: str, wire: int, data: dict[str, Any], kind: str) -> list[ir.StreamEvent]:
        if wire in self._open:
            raise READ.error(f"{kind}: content_index {wire} is already open")
        index = self._next
        self._next += 1
        self._open[wire] = (block, index)
        if block == "text":
            return [ir.TextStart(index=index)]
        if block == "thinking":
            return [ir.ThinkingStart(index=index)]
        return [
            ir.ToolCallStart(index=index, id=READ.need_str(data, "id", kind), name=READ.need_str(data, "name", kind))
        ]

    def _delta(self, block: str, wire: int, data: dict[str, Any], kind: str) -> list[ir.StreamEvent]:
        index = self._index(block, wire, kind)
        delta = READ.need_str(data, "delta", kind)
        if block == "text":
            return [ir.TextDelta(index=index, text=delta)]
        if block == "thinking":
            return [ir.ThinkingDelta(index=index, text=delta)]
        return [ir.ToolCallDelta(index=index, arguments=delta)]

    def _end(self, block: str, wire: int, data: dict[str, Any], kind: str) -> list[ir.StreamEvent]:
        index = self._index(block, wire, kind)
        del self._open[wire]
        if block == "text":
            return [ir.TextEnd(index=index)]
        if block == "thinking":
            return [ir.ThinkingEnd(index=index, signature=READ.get_str(data, "signature", kind))]
        return [ir.ToolCallEnd(index=index)]

    def _index(self, block: str, wire: int, kind: str) -> int:
        found = self._open.get(wire)
        if found is None or found[0] != block:
            raise READ.error(f"{kind}: content_index {wire} has no open {block} block")
        return found[1]

    def _close_all(self) -> list[ir.StreamEvent]:
        out: list[ir.StreamEvent] = []
        for wire in sorted(self._open):
            out += self._end(self._open[wire][0], wire, {}, "end")
        return out

    def _fail(self, message: str) -> list[ir.StreamEvent]:
        out = self._start() + self._close_all()
        self._done = True
        return [*out, ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, message))]


_DONE_KEYS = frozenset({"type", "stop_reason", "usage", "cost"})
"""Keys of `done` the codec reads or writes."""


def _extras(data: dict[str, Any], known: frozenset[str]) -> ir.ProviderExtras | None:
    found = {k: v for k, v in data.items() if k not in known}
    return {PROTOCOL: found} if found else None


def _is_json(data: str) -> bool:
    try:
        common.load_object(PROTOCOL, data)
    except DecodeError:
        return False
    return True
