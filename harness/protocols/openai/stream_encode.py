"""Incremental encoding of IR events into a Chat Completions SSE stream, in OpenAI's own order.

- `MessageStart` -> the profile's preamble chunks (Azure's prompt-filter chunk), then the role chunk
  (`delta: {"role": "assistant", "content": ""}`).
- Text deltas -> `delta.content`; thinking deltas -> `delta.<profile.reasoning_field>` (OpenAI has no wire
  field for reasoning text; `reasoning_content` is what DeepSeek, vLLM and llama.cpp send). Signatures and
  redacted thinking have no wire form (listed losses).
- A tool call -> a first fragment with `id`, `type`, `function.name` and `arguments: ""`, then one fragment
  per argument delta; the wire `index` counts tool calls from 0.
- `Done` -> the finish_reason chunk (`delta: {}`), then, when the client asked `stream_options.include_usage`
  (or the request is unknown), the usage-only chunk with `choices: []`; `close()` then writes `data: [DONE]`.
  Mid-stream `UsageEvent`s are merged into that final usage (Chat Completions has no mid-stream usage).
  A profile with `usage_on_finish_chunk` (Mistral) always sends the usage on the finish_reason chunk instead.
- Every chunk passes through the profile's `encode_chunk` hook (Mistral content arrays, Azure filter results).
- `ErrorEvent` -> `data: {"error": {...}}` and no `[DONE]`: that is what OpenAI itself sends when a stream fails,
  and the official SDK raises `APIError` on it; a `[DONE]` after it would claim a clean end.
"""

from __future__ import annotations

from harness import ir
from harness.protocols import common
from harness.protocols.openai.errors import error_object
from harness.protocols.openai.mapping import encode_usage, finish_reason
from harness.protocols.openai.profile import JSONDict, Profile
from harness.protocols.openai.response import PLACEHOLDER_ID
from harness.wire.sse import encode_sse

DONE = b"data: [DONE]\n\n"


class ChatStreamEncoder:
    """One IR event in, the SSE bytes to send now out; one instance per streamed response."""

    def __init__(self, profile: Profile, *, include_usage: bool) -> None:
        self.profile = profile
        self.include_usage = include_usage
        self._id = PLACEHOLDER_ID
        self._model = ""
        self._tool_slots: dict[int, int] = {}
        self._usage: ir.Usage | None = None
        self._done = False

    def _chunk(self, choices: list[JSONDict], **extra: object) -> bytes:
        chunk: JSONDict = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self._model,
            "choices": choices,
            **extra,
        }
        return encode_sse(common.dump_json(self.profile.encode_chunk(chunk)).decode("utf-8"))

    def _delta(self, delta: JSONDict, finish: str | None = None) -> bytes:
        return self._chunk([{"index": 0, "delta": delta, "finish_reason": finish}])

    def encode(self, event: ir.StreamEvent) -> bytes:
        """Bytes for this event (empty for events with no wire form of their own, e.g. block ends)."""
        if isinstance(event, ir.MessageStart):
            self._id = event.id or PLACEHOLDER_ID
            self._model = event.model or ""
            if event.usage is not None:
                self._merge_usage(event.usage)
            preamble = b"".join(encode_sse(common.dump_json(c).decode("utf-8")) for c in self.profile.encode_preamble())
            return preamble + self._delta({"role": "assistant", "content": ""})
        if isinstance(event, ir.TextDelta):
            return self._delta({"content": event.text}) if event.text else b""
        if isinstance(event, ir.ThinkingDelta):
            return self._delta({self.profile.reasoning_field: event.text}) if event.text else b""
        if isinstance(event, ir.ToolCallStart):
            slot = self._tool_slots[event.index] = len(self._tool_slots)
            call_id = self.profile.encode_tool_id(event.id)
            function = {"name": event.name, "arguments": ""}
            return self._delta(
                {"tool_calls": [{"index": slot, "id": call_id, "type": "function", "function": function}]}
            )
        if isinstance(event, ir.ToolCallDelta):
            if not event.arguments:
                return b""
            if event.index not in self._tool_slots:
                raise ValueError(f"ToolCallDelta for index {event.index} without a ToolCallStart")
            slot = self._tool_slots[event.index]
            return self._delta({"tool_calls": [{"index": slot, "function": {"arguments": event.arguments}}]})
        if isinstance(event, ir.UsageEvent):
            self._merge_usage(event.usage)
            return b""
        if isinstance(event, ir.Done):
            return self._encode_done(event)
        if isinstance(event, ir.ErrorEvent):
            return encode_sse(common.dump_json({"error": error_object(event.error)}).decode("utf-8"))
        return b""  # block starts/ends and redacted thinking have no wire form of their own

    def _merge_usage(self, usage: ir.Usage) -> None:
        self._usage = usage if self._usage is None else self._usage.merged(usage)

    def _encode_done(self, event: ir.Done) -> bytes:
        self._done = True
        if event.usage is not None:
            self._merge_usage(event.usage)
        finish = finish_reason(event.stop_reason)
        if self.profile.usage_on_finish_chunk:
            usage = encode_usage(self.profile, self._usage or ir.Usage())
            return self._chunk([{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage)
        out = b""
        if finish is not None:
            out += self._delta({}, finish)
        if self.include_usage:
            out += self._chunk([], usage=encode_usage(self.profile, self._usage or ir.Usage()))
        return out

    def close(self) -> bytes:
        """`data: [DONE]` after a successful stream; nothing after an error or an unfinished stream."""
        return DONE if self._done else b""
