"""Incremental decoding of `streamGenerateContent` bodies, whichever framing the server chose.

The framing is detected from the first non-whitespace byte: `[` is the JSON-array stream (no `alt=sse`),
`{` is a plain JSON body (Google answers a failed `alt=sse` request with its usual pretty-printed error JSON
under content-type text/event-stream), anything else is SSE (`data: {...}\\r\\n\\r\\n`). The terminal marker
is the finishReason (or a prompt blockReason); a stream that ends without one, a cut-off SSE event or a
JSON array whose framing fails at the end of input (never closed) decodes to a `malformed_stream` error event
from `close()`. Framing errors found while feeding raise `FramingError`.
"""

from __future__ import annotations

import re

from harness import ir
from harness.protocols.base import decode_each
from harness.protocols.gemini.chunks import ChunkDecoder
from harness.protocols.gemini.fields import fail, load_object
from harness.wire.errors import CutOff
from harness.wire.jsonarray import JSONArrayDecoder
from harness.wire.sse import SSEDecoder, SSEEvent

_NON_WS = re.compile(rb"[^ \t\r\n]")
_MAX_PLAIN = 16 * 1024 * 1024  # a plain (unframed) JSON body is buffered whole; it is an error body in practice


class GeminiStreamDecoder:
    """Feed a streamed body chunk by chunk; get IR events. The same events for any chunking."""

    def __init__(self) -> None:
        self._chunks = ChunkDecoder()
        self._mode: str | None = None  # "sse", "array" or "plain" once the first byte is seen
        self._head = bytearray()  # bytes held until the framing is known, or the whole plain body
        self._sse = SSEDecoder()
        self._array = JSONArrayDecoder()

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events they complete."""
        if self._mode is None:
            self._head += chunk
            match = _NON_WS.search(self._head)
            if match is None:
                return []
            first = self._head[match.start()]
            self._mode = "array" if first == ord("[") else "plain" if first == ord("{") else "sse"
            chunk, self._head = bytes(self._head), bytearray()
        if self._mode == "sse":
            return self._from_sse(self._sse.feed(chunk))
        if self._mode == "array":
            return self._from_array(self._array.feed(chunk))
        self._head += chunk
        if len(self._head) > _MAX_PLAIN:
            raise fail(f"unframed JSON body larger than {_MAX_PLAIN} bytes", 0)
        return []

    def close(self) -> list[ir.StreamEvent]:
        """End of the body: the remaining events, ending in Done or a terminal ErrorEvent."""
        out: list[ir.StreamEvent] = []
        if self._mode == "sse":
            tail = self._sse.close()
            cut = [e for e in tail if not e.terminated]
            out += self._from_sse([e for e in tail if e.terminated])
            if cut:
                return out + self._malformed(f"SSE event cut off by the end of the stream at byte {cut[0].offset}")
        elif self._mode == "array":
            try:  # malformed before the end raises a FramingError: not forgiven here
                out += self._from_array(self._array.close())
            except CutOff as exc:
                return out + self._malformed(exc.message + (f" at byte {exc.offset}" if exc.offset is not None else ""))
        elif self._mode == "plain":
            body = bytes(self._head)
            out += self._chunks.chunk(load_object(body), 0, http_error=True)
        return out + self._chunks.finish(require_terminal=True)

    def _from_sse(self, events: list[SSEEvent]) -> list[ir.StreamEvent]:
        return decode_each(events, self._sse_event)

    def _sse_event(self, event: SSEEvent) -> list[ir.StreamEvent]:
        if event.data == "":
            return []  # an event with only comments or fields carries no chunk
        return self._chunks.chunk(load_object(event.data, offset=event.offset, what="SSE data"), event.offset)

    def _from_array(self, values: list[object]) -> list[ir.StreamEvent]:
        return decode_each(values, self._chunks.chunk)

    def _malformed(self, message: str) -> list[ir.StreamEvent]:
        if self._chunks.terminated:
            return []
        error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, message)
        return self._chunks.finish_with(ir.ErrorEvent(error=error))
