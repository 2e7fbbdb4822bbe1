"""IR events -> a streamed Workers AI reply in the native form, written the way the text models write it.

Each text delta is `data: {"response": "...", "tool_calls": [], "p": "..."}` (the padding `p` of varying length
hides token sizes; here a deterministic prefix of the alphabet the llama models use); the stream opens with an
empty such event; a tool call goes whole once its arguments are complete (`{"id", "type": "function", "index",
"function": {"name", "arguments"}}`); the end is the cumulative `{"response": "", "usage": {...}}` event and
`data: [DONE]`; a mid-stream `UsageEvent` is an event of the same shape with the cumulative figures so far
(newer models' OpenAI-form chunks carry them on every chunk). The native form has no thinking, finish reason or
id: thinking is not sent (see the losses). An `ErrorEvent` becomes a data event holding Cloudflare's error
envelope, with no `[DONE]` after it. Workers AI extras fill in what the first event (`MessageStart`'s) and the
usage event (`Done`'s) lack. The native stream has no event types: a Workers AI `ProviderEvent` is written back
as the data event it would have been; another protocol's is skipped.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.cloudflare.errors import envelope
from harness.protocols.cloudflare.paths import PROTOCOL
from harness.protocols.cloudflare.response import wire_usage, with_extras

_PAD = "abdefghijklmnoprstuvxyz1234567890"
DONE = b"data: [DONE]\n\n"
"""The stream's last event."""


def sse(data: dict[str, Any]) -> bytes:
    """One `data:` event."""
    return b"data: " + common.dump_json(data) + b"\n\n"


def _text_event(text: str, padding: str) -> dict[str, Any]:
    return {"response": text, "tool_calls": [], "p": padding}


class CloudflareStreamEncoder:
    """Incremental IR -> SSE encoder for one streamed native reply."""

    def __init__(self) -> None:
        self._usage = ir.Usage()
        self._calls: dict[int, tuple[str, str, list[str]]] = {}
        self._ordinal = 0
        self._count = 0
        self._done = False
        self._start: ir.ProviderExtras | None = None  # MessageStart's extras, for the first event
        self._template: common.JsonTemplate | None = None
        """The template of a text event without extras (`_text`); None if it has no usable template or is not
        made yet (`_made`)."""
        self._made = False

    def encode(self, event: ir.StreamEvent) -> bytes:
        """The SSE bytes for this event (empty when it has no native form)."""
        match event:
            case ir.MessageStart():
                self._usage = self._usage.merged(event.usage)
                self._start = event.extras
                return self._text("")
            case ir.TextDelta() if event.text:
                return self._text(event.text)
            case ir.ToolCallStart():
                self._calls[event.index] = (event.id, event.name, [])
            case ir.ToolCallDelta() if event.index in self._calls:
                self._calls[event.index][2].append(event.arguments)
            case ir.ToolCallEnd() if event.index in self._calls:
                return self._call(*self._calls.pop(event.index))
            case ir.UsageEvent():
                self._usage = self._usage.merged(event.usage)
                return sse({"response": "", "usage": wire_usage(self._usage)})
            case ir.Done():
                self._done = True
                final = {"response": "", "usage": wire_usage(self._usage.merged(event.usage))}
                return sse(with_extras(final, event.extras))
            case ir.ErrorEvent():
                return sse(envelope(event.error))
            case ir.ProviderEvent() if event.protocol == PROTOCOL and isinstance(event.data, dict):
                return sse(event.data)
        return b""

    def close(self) -> bytes:
        """`data: [DONE]` after a successful stream; nothing after an error or a stream cut before its end."""
        return DONE if self._done else b""

    def _pad(self) -> str:
        self._count += 1
        size = 1 + (self._count * 13) % 49
        return (_PAD * 2)[:size]

    def _text(self, text: str) -> bytes:
        """A text event; unless it carries the start's extras, written from a template instead of building and
        encoding it per delta."""
        if self._start is None:
            if not self._made:
                self._made, self._template = True, common.JsonTemplate.of(_text_event, 2)
            if self._template is not None:
                return f"data: {self._template.fill(text, self._pad())}\n\n".encode()
        data = _text_event(text, self._pad())
        if self._start is not None:
            data, self._start = with_extras(data, self._start), None  # the first event only
        return sse(data)

    def _call(self, call_id: str, name: str, fragments: list[str]) -> bytes:
        function = {"name": name, "arguments": "".join(fragments)}
        call = {"id": call_id, "type": "function", "index": self._ordinal, "function": function}
        self._ordinal += 1
        return sse({"response": "", "tool_calls": [call], "p": self._pad()})
