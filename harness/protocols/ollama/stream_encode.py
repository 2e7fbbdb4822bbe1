"""IR events -> a streamed `/api/chat` body, written the way Ollama writes it, one event at a time.

One NDJSON line per text or thinking delta (`{"model", "created_at", "message": {"role": "assistant",
"content": ...}, "done": false}`), one line per tool call once its arguments are complete (Ollama sends
calls whole, arguments as an object), then the final `done: true` line with `done_reason` and eval counts.
An `ErrorEvent` becomes Ollama's mid-stream `{"error": "..."}` line. Block starts/ends and redacted thinking
have no wire form.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.ollama._fields import encode_tool_call
from harness.protocols.ollama.errors import stream_error_line
from harness.protocols.ollama.response import chunk_head, done_reason, usage_fields, with_extras
from harness.wire.ndjson import encode_ndjson


def _delta_message(field: str, text: str) -> dict[str, Any]:
    """The message of a text (`content`) or thinking line."""
    if field == "content":
        return {"role": "assistant", "content": text}
    return {"role": "assistant", "content": "", field: text}


def _line_object(head: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    return head | {"message": message, "done": False}


class OllamaStreamEncoder:
    """Incremental IR -> NDJSON encoder for one streamed `/api/chat` reply."""

    def __init__(self, *, request: ir.Request | None = None) -> None:
        self._request = request
        self._model: str | None = None
        self._extras: ir.ProviderExtras | None = None
        self._usage = ir.Usage()
        self._calls: dict[int, tuple[str, str, list[str]]] = {}  # IR index -> (id, name, argument fragments)
        self._ordinal = 0
        self._templates: dict[str, tuple[int, common.JsonTemplate | None]] = {}
        """Per delta field, the second its template was made in and the template of its line (`_delta`); None
        where the line has no usable template."""

    def encode(self, event: ir.StreamEvent) -> bytes:
        """The NDJSON bytes for this event (empty when it has no wire form of its own)."""
        match event:
            case ir.MessageStart():
                self._model = event.model
                self._extras = event.extras
                self._templates.clear()
                if event.usage is not None:
                    self._usage = self._usage.merged(event.usage)
            case ir.TextDelta() if event.text:
                return self._delta("content", event.text)
            case ir.ThinkingDelta() if event.text:
                return self._delta("thinking", event.text)
            case ir.ToolCallStart():
                self._calls[event.index] = (event.id, event.name, [])
            case ir.ToolCallDelta() if event.index in self._calls:
                self._calls[event.index][2].append(event.arguments)
            case ir.ToolCallEnd() if event.index in self._calls:
                return self._tool_call(*self._calls.pop(event.index))
            case ir.UsageEvent():
                self._usage = self._usage.merged(event.usage)
            case ir.Done():
                return self._done(event)
            case ir.ErrorEvent():
                return encode_ndjson(stream_error_line(event.error))
        return b""

    def close(self) -> bytes:
        """Nothing follows the final line in Ollama streams."""
        return b""

    def _line(self, message: dict[str, Any]) -> bytes:
        return encode_ndjson(_line_object(chunk_head(self._model, self._request, self._extras), message))

    def _delta(self, field: str, text: str) -> bytes:
        """`_line(_delta_message(field, text))`, written from a template of the line (`common.JsonTemplate`, one
        per field) instead of building and encoding it per delta. The template is made again when the clock
        (`common.unix_now`, whole seconds) has moved on: the head is the same within a second (its `created_at`
        is that second, or the extras' fixed time), so it is not built per delta either."""
        second = common.unix_now()
        made = self._templates.get(field)
        if made is None or made[0] != second:
            head = chunk_head(self._model, self._request, self._extras)
            build = lambda hole: _line_object(head, _delta_message(field, hole))  # noqa: E731
            made = self._templates[field] = (second, common.JsonTemplate.of(build, 1))
        template = made[1]
        if template is None:
            return self._line(_delta_message(field, text))
        return f"{template.fill(text)}\n".encode()

    def _tool_call(self, call_id: str, name: str, fragments: list[str]) -> bytes:
        raw = "".join(fragments)
        part = ir.ToolCallPart(id=call_id, name=name, arguments=common.parse_arguments(raw), arguments_raw=raw)
        self._ordinal += 1
        call = encode_tool_call(part, self._ordinal - 1)
        return self._line({"role": "assistant", "content": "", "tool_calls": [call]})

    def _done(self, event: ir.Done) -> bytes:
        final: dict[str, Any] = {"message": {"role": "assistant", "content": ""}, "done": True}
        reason = done_reason(event.stop_reason)
        if reason is not None:
            final["done_reason"] = reason
        final.update(usage_fields(self._usage.merged(event.usage)))
        return encode_ndjson(with_extras(chunk_head(self._model, self._request, self._extras) | final, event.extras))
