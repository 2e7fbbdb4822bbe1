"""Incremental encoding of IR events as a `streamGenerateContent` body, the way Google sends it.

SSE (`alt=sse`): one `data: {...}\\r\\n\\r\\n` event per chunk, CRLF like Google. With `json_array=True` the
same chunks form a streamed JSON array (`[{...}\\n,\\r\\n{...}]`). Text and thought deltas go out as they
come; a function call goes out whole when it ends (Gemini has no argument fragments); every chunk carries the
usage known so far; the finishReason goes on a last chunk of its own with an empty text part, as Gemini 3 does.
"""

from __future__ import annotations

import copy
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.gemini.errors import error_object
from harness.protocols.gemini.fields import PROTOCOL, EncodeError
from harness.protocols.gemini.ids import ToolIds
from harness.protocols.gemini.mapping import finish_reason
from harness.protocols.gemini.parts import function_call
from harness.protocols.gemini.response import chunk_object
from harness.wire.jsonarray import JSONArrayEncoder
from harness.wire.sse import encode_sse


def _text_part(text: str, thought: bool) -> dict[str, Any]:
    return {"text": text, "thought": True} if thought else {"text": text}


class GeminiStreamEncoder:
    """One IR event in, the bytes to send now out."""

    def __init__(self, *, json_array: bool = False) -> None:
        self._array = JSONArrayEncoder(b"\n,\r\n") if json_array else None
        self._id: str | None = None
        self._model: str | None = None
        self._usage: ir.Usage | None = None
        self._pending: str | None = None  # a thinking signature waiting for the next non-thought part
        self._ids = ToolIds()
        self._ordinal = 0
        self._call: ir.ToolCallStart | None = None
        self._args: list[str] = []
        self._ended = False
        self._extras: ir.ProviderExtras | None = None
        self._calls = False
        self._templates: dict[bool, common.JsonTemplate | None] = {}
        """Per kind of delta (thought or not), the template of its SSE chunk (`_text`) while the usage stays as
        it is; None where the chunk has no usable template."""

    def encode(self, event: ir.StreamEvent) -> bytes:
        """The bytes for this event (empty when Gemini has nothing to send for it yet)."""
        if self._ended:
            raise EncodeError(f"{event.kind} event after the end of the stream")
        match event:
            case ir.MessageStart():
                self._id, self._model = event.id, event.model
                self._usage = event.usage
                self._extras = event.extras
                self._templates.clear()
            case ir.ThinkingStart():
                return self._flush_signature()
            case ir.ThinkingDelta():
                return self._text(event.text, thought=True)
            case ir.ThinkingEnd():
                self._pending = event.signature
            case ir.TextDelta():
                if self._pending is not None:
                    return self._chunk([self._attach({"text": event.text})])
                return self._text(event.text, thought=False)
            case ir.ToolCallStart():
                self._call, self._args = event, []
            case ir.ToolCallDelta():
                self._args.append(event.arguments)
            case ir.ToolCallEnd():
                return self._function_call()
            case ir.UsageEvent():
                self._usage = (self._usage or ir.Usage()).merged(event.usage)
                self._templates.clear()
            case ir.Done():
                return self._done(event)
            case ir.ProviderEvent() if event.protocol == PROTOCOL and isinstance(event.data, dict):
                return self._frame(self._signed(event.data))
            case ir.ErrorEvent():
                # A signature still waiting for its next part goes first: the error ends the stream, and the
                # thinking block before it was complete (its signature was given).
                signature = self._flush_signature()
                self._ended = True
                return signature + self._frame(error_object(event.error)[1])
        return b""

    def close(self) -> bytes:
        """Trailing bytes: nothing for SSE, the closing `]` of a JSON array."""
        self._ended = True
        return self._array.close() if self._array is not None else b""

    def _frame(self, obj: dict[str, Any]) -> bytes:
        if self._array is not None:
            return self._array.encode(obj)
        return encode_sse(common.dump_text(obj), newline="\r\n")

    def _chunk(
        self, parts: list[dict[str, Any]], finish: str | None = None, extras: ir.ProviderExtras | None = None
    ) -> bytes:
        return self._frame(self._chunk_object(parts, finish, extras))

    def _chunk_object(
        self, parts: list[dict[str, Any]], finish: str | None = None, extras: ir.ProviderExtras | None = None
    ) -> dict[str, Any]:
        return chunk_object(
            parts,
            response_id=self._id,
            model=self._model,
            usage=self._usage,
            finish=finish,
            calls=self._calls,
            extras=ir.merge_extras(self._extras, extras),
        )

    def _text(self, text: str, *, thought: bool) -> bytes:
        """`_chunk([_text_part(text, thought)])`: in SSE, written from a template of the chunk (`common.JsonTemplate`,
        one per kind until the usage changes) instead of building and encoding the whole chunk per delta."""
        if self._array is not None:
            return self._chunk([_text_part(text, thought)])
        if thought not in self._templates:
            build = lambda hole: self._chunk_object([_text_part(hole, thought)])  # noqa: E731
            self._templates[thought] = common.JsonTemplate.of(build, 1)
        template = self._templates[thought]
        if template is None:
            return self._chunk([_text_part(text, thought)])
        return encode_sse(template.fill(text), newline="\r\n")

    def _attach(self, part: dict[str, Any]) -> dict[str, Any]:
        if self._pending is not None:
            part["thoughtSignature"], self._pending = self._pending, None
        return part

    def _signed(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """A provider event's chunk (a code-execution part, `parts`) with the pending thinking signature put back
        on its first part, where Gemini sent it."""
        if self._pending is None:
            return chunk
        out = copy.deepcopy(chunk)
        candidates = out.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        content = first.get("content") if isinstance(first, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], dict):
            self._attach(parts[0])
        return out

    def _flush_signature(self) -> bytes:
        if self._pending is None:
            return b""
        return self._chunk([self._attach({"text": ""})])

    def _function_call(self) -> bytes:
        if self._call is None:
            raise EncodeError("tool_call_end without tool_call_start")
        raw = "".join(self._args)
        call = ir.ToolCallPart(
            id=self._call.id, name=self._call.name, arguments=common.parse_arguments(raw), arguments_raw=raw
        )
        part = {"functionCall": function_call(call, self._ids, turn=0, ordinal=self._ordinal)}
        self._ordinal += 1
        self._calls = True
        self._call = None
        return self._chunk([self._attach(part)])

    def _done(self, event: ir.Done) -> bytes:
        self._ended = True
        if event.usage is not None:
            self._usage = (self._usage or ir.Usage()).merged(event.usage)
        finish = finish_reason(event.stop_reason)
        return self._chunk([self._attach({"text": ""})], finish=finish, extras=event.extras)
