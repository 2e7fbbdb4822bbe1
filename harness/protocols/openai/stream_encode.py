"""Incremental encoding of IR events into a Chat Completions SSE stream, laid out as the profile's provider does
(`Profile.wire`, measured against the real wire in docs/shape.md).

- `MessageStart` -> the profile's preamble chunks (Azure's prompt-filter chunk); the role goes out with the
  next event, so that it can say `content: null` when the answer starts with a tool call (OpenAI), ride on the
  first chunk with content (xAI), or repeat on every chunk (OpenRouter).
- Text deltas -> `delta.content`; thinking deltas -> `delta.<profile.reasoning_field>` (OpenAI has no wire
  field for reasoning text; `reasoning_content` is what DeepSeek, vLLM and llama.cpp send). Signatures and
  redacted thinking have no wire form (listed losses).
- A tool call -> a first fragment with `id`, `type`, `function.name` and `arguments: ""` (or, for providers
  that send calls whole, the first argument fragment), then one fragment per argument delta; the wire `index`
  counts tool calls from 0.
- `Done` -> the finish_reason chunk (`delta: {}`), and the usage where the provider puts it (a chunk of its own
  with `choices: []` when the client asked `stream_options.include_usage`, or the finish chunk); `close()` then
  writes `data: [DONE]`. Mid-stream `UsageEvent`s are merged into that final usage.
- Every chunk carries the profile's own extras (`system_fingerprint`, ...) and optional keys (`logprobs`,
  `usage: null`, `obfuscation`), then passes through the profile's `encode_chunk` hook.
- `ErrorEvent` -> `data: {"error": {...}}` and no `[DONE]`: that is what OpenAI itself sends when a stream fails,
  and the official SDK raises `APIError` on it (Groq names the event `error`; OpenRouter puts the error in a
  normal chunk and still ends with `[DONE]`).
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.openai.errors import error_object
from harness.protocols.openai.mapping import encode_usage, finish_reason
from harness.protocols.openai.profile import JSONDict, Profile, same
from harness.protocols.openai.response import PLACEHOLDER_ID
from harness.protocols.reference import number, token
from harness.wire.sse import encode_sse

DONE = b"data: [DONE]\n\n"

_UNSET: Any = object()


def obfuscation(chunk: JSONDict) -> str:
    """OpenAI's `obfuscation` padding for a chunk: 0-15 random-looking characters, here derived from the chunk
    itself so the same stream always pads the same."""
    return _pad(common.dump_text(chunk))


def _pad(seed: str) -> str:
    """The padding for a chunk whose JSON text is `seed` (a lone surrogate fails in `number`, as it would when
    the chunk is encoded to UTF-8)."""
    return token(seed, number(seed, 0, 15))


class ChatStreamEncoder:
    """One IR event in, the SSE bytes to send now out; one instance per streamed response."""

    def __init__(self, profile: Profile, *, include_usage: bool) -> None:
        self.profile = profile
        self.style = profile.wire
        self.include_usage = include_usage
        self._id = PLACEHOLDER_ID
        self._created = common.unix_now()
        """Every chunk's `created`: when this stream began (the upstream's own time is not in the IR)."""
        self._model = ""
        self._extras: JSONDict = {}
        self._first = True
        self._role_pending = False
        self._held_call: ir.ToolCallStart | None = None
        self._tool_slots: dict[int, int] = {}
        self._usage: ir.Usage | None = None
        self._done = False
        self._templates: dict[str, common.JsonTemplate | None] = {}
        """Per delta field, the template of its chunk (`_text`); None where the chunk has no usable template."""

    # --- chunks ---------------------------------------------------------------------------------------------
    def _chunk(self, choices: list[JSONDict], *, usage: Any = _UNSET, error: JSONDict | None = None) -> bytes:
        chunk = self._chunk_value(choices, usage=usage, error=error)
        if self.style.obfuscation:
            if "obfuscation" not in chunk and self.profile.encode_chunk is same:
                return self._padded(common.dump_text(chunk))
            chunk["obfuscation"] = obfuscation(chunk)
        return encode_sse(common.dump_text(self.profile.encode_chunk(chunk)))

    def _padded(self, seed: str) -> bytes:
        """The chunk whose JSON text is `seed`, its padding appended as its last key: nothing rewrites the chunk
        (no `encode_chunk` hook), so this is the text of encoding the padded chunk again."""
        return encode_sse(f'{seed[:-1]},"obfuscation":{common.dump_str(_pad(seed))}}}')

    def _text(self, field: str, text: str) -> bytes:
        """`_delta({field: text})`: once the chunks' envelope is fixed (the first chunk and the role are out, no
        `encode_chunk` hook), written from a template of the chunk (`common.JsonTemplate`, one per field and
        stream) instead of building and encoding the whole chunk for every delta."""
        if self._first or self._role_pending or self.profile.encode_chunk is not same:
            return self._delta({field: text})
        if field not in self._templates:
            value = self._chunk_value([self._choice({field: ""})])
            fixed = not self.style.obfuscation or "obfuscation" not in value
            build = lambda leaf: self._chunk_value([self._choice({field: leaf})])  # noqa: E731
            self._templates[field] = common.JsonTemplate.of(build, 1) if fixed else None
        template = self._templates[field]
        if template is None:
            return self._delta({field: text})
        seed = template.fill(text)
        return self._padded(seed) if self.style.obfuscation else encode_sse(seed)

    def _chunk_value(self, choices: list[JSONDict], *, usage: Any = _UNSET, error: JSONDict | None = None) -> JSONDict:
        """A chunk before its padding and the profile's `encode_chunk` hook."""
        chunk: JSONDict = {"id": self._id, "object": "chat.completion.chunk", "created": self._created}
        chunk["model"] = self._model
        for key, value in self._extras.items():
            if self._first or key not in self.style.first_chunk_extras:
                chunk.setdefault(key, value)
        self._first = False
        chunk["choices"] = choices
        if error is not None:
            chunk["error"] = error
        if usage is not _UNSET:
            chunk["usage"] = usage
        elif self.style.usage_null == "always" or (self.style.usage_null == "with_usage" and self.include_usage):
            chunk["usage"] = None
        return chunk

    def _choice(self, delta: JSONDict, finish: str | None = None) -> JSONDict:
        if self.style.role_chunk == "every":
            # OpenRouter: the role, and content "" (null beside tool calls), on every chunk.
            delta = {"role": "assistant", "content": None if "tool_calls" in delta else "", **delta}
        elif self._role_pending and self.style.role_chunk == "merged":
            delta = {"role": "assistant", **delta}
            self._role_pending = False
        choice: JSONDict = {"index": 0, "delta": delta}
        if self.style.logprobs:
            choice["logprobs"] = None
        if finish is not None or self.style.finish_reason_null:
            choice["finish_reason"] = finish
        return choice

    def _delta(self, delta: JSONDict, finish: str | None = None, **extra: Any) -> bytes:
        return self._chunk([self._choice(delta, finish)], **extra)

    def _role(self, event: ir.StreamEvent) -> bytes:
        """The role chunk that waited for the first event after MessageStart (see the module docstring)."""
        if not self._role_pending or self.style.role_chunk == "merged":
            return b""
        self._role_pending = False
        delta: JSONDict = {"role": "assistant", "content": ""}
        if isinstance(event, ir.ToolCallStart) and self.style.role_chunk == "separate":
            delta["content"] = None
        elif self.style.refusal:
            delta["refusal"] = None
        choice: JSONDict = {"index": 0, "delta": delta}
        if self.style.logprobs:
            choice["logprobs"] = None
        choice["finish_reason"] = None
        return self._chunk([choice])

    # --- events ---------------------------------------------------------------------------------------------
    def encode(self, event: ir.StreamEvent) -> bytes:
        """Bytes for this event (empty for events with no wire form of their own, e.g. block ends)."""
        if isinstance(event, ir.MessageStart):
            return self._start(event)
        out = b""
        held = self._held_call
        if held is not None:
            out += self._flush_call(event)
            if isinstance(event, ir.ToolCallDelta) and event.index == held.index:
                return out  # its arguments went out with the call
        if self._role_pending:  # else `_role` has nothing to send
            empty = isinstance(event, ir.TextDelta | ir.ThinkingDelta) and not event.text
            if (
                isinstance(event, ir.TextDelta | ir.ThinkingDelta | ir.ToolCallStart | ir.Done | ir.ErrorEvent)
                and not empty
            ):
                out += self._role(event)
        return out + self._event(event)

    def _start(self, event: ir.MessageStart) -> bytes:
        self._id = event.id or PLACEHOLDER_ID
        self._model = event.model or ""
        self._extras = dict((event.extras or {}).get(self.profile.name, {}))
        self._templates.clear()
        if event.usage is not None:
            self._merge_usage(event.usage)
        self._role_pending = True
        preamble = self.profile.encode_preamble()
        return b"".join(encode_sse(common.dump_text(c)) for c in preamble)

    def _event(self, event: ir.StreamEvent) -> bytes:
        if isinstance(event, ir.TextDelta):
            return self._text("content", event.text) if event.text else b""
        if isinstance(event, ir.ThinkingDelta):
            return self._text(self.profile.reasoning_field, event.text) if event.text else b""
        if isinstance(event, ir.ToolCallStart):
            self._tool_slots[event.index] = len(self._tool_slots)
            if self.style.whole_tool_calls:
                self._held_call = event
                return b""
            return self._call_chunk(event, "")
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
            return self._encode_error(event.error)
        if isinstance(event, ir.ProviderEvent) and event.protocol == self.profile.name:
            data = event.data if isinstance(event.data, str) else common.dump_text(event.data)
            return encode_sse(data, event=event.type)
        return b""  # block starts/ends, redacted thinking and other providers' events have no wire form

    def _call_chunk(self, event: ir.ToolCallStart, arguments: str) -> bytes:
        call_id = self.profile.encode_tool_id(event.id)
        function = {"name": event.name, "arguments": arguments}
        call = {"index": self._tool_slots[event.index], "id": call_id, "type": "function", "function": function}
        return self._delta({"tool_calls": [call]})

    def _flush_call(self, event: ir.StreamEvent) -> bytes:
        """The held whole-call chunk: with this event's arguments when it is the call's first fragment."""
        held, self._held_call = self._held_call, None
        assert held is not None
        out = self._role(held)
        if isinstance(event, ir.ToolCallDelta) and event.index == held.index:
            return out + self._call_chunk(held, event.arguments)
        return out + self._call_chunk(held, "")

    def _merge_usage(self, usage: ir.Usage) -> None:
        self._usage = usage if self._usage is None else self._usage.merged(usage)

    def _encode_done(self, event: ir.Done) -> bytes:
        self._done = True
        if event.usage is not None:
            self._merge_usage(event.usage)
        finish = finish_reason(event.stop_reason)
        usage = encode_usage(self.profile, self._usage or ir.Usage())
        where = self.style.usage_chunk
        out = b""
        if where in ("finish", "both") and self.include_usage:
            out += self._delta({}, finish, usage=usage)
        elif finish is not None:
            out += self._delta({}, finish)
        if where in ("separate", "both") and self.include_usage:
            # A usage-only chunk has no choice, except where every chunk repeats the role (OpenRouter).
            choices = [self._choice({})] if self.style.role_chunk == "every" else []
            out += self._chunk(choices, usage=usage)
        return out

    def _encode_error(self, error: ir.IRError) -> bytes:
        body = error_object(error, self.style.error_object)
        if self.style.error_chunk == "event":
            return encode_sse(common.dump_text({"error": body}), event="error")
        if self.style.error_chunk == "in_chunk":
            self._done = True  # the provider still ends the stream with [DONE]
            usage = encode_usage(self.profile, self._usage or ir.Usage())
            return self._delta({}, None, usage=usage, error=body)
        return encode_sse(common.dump_text({"error": body}))

    def close(self) -> bytes:
        """`data: [DONE]` after a successful stream (and after OpenRouter's in-chunk error); nothing after an error
        or an unfinished stream."""
        return DONE if self._done else b""
