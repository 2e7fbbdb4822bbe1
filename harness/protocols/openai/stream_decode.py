"""Incremental decoding of a Chat Completions SSE stream into IR events.

Wire facts this follows (all seen in the corpus):
- The first chunk carries `delta.role` (often with `content: ""`, or `null` before tool calls); role-only and
  empty deltas open nothing. Compatible servers repeat the role chunk (OpenRouter).
- Text, reasoning (`reasoning_content` / `reasoning`) and tool calls arrive one after another; each opens an IR
  block at the next IR index, and a different kind of delta closes the open block.
- Tool calls come as fragments keyed by `index`: `id` and `function.name` only in the first fragment (or all of
  it in one fragment); a name may come after argument fragments, so arguments wait until the name is known.
- `finish_reason` comes BEFORE the usage-only chunk (`choices: []`): block ends are emitted at once, the `Done`
  is held until `data: [DONE]` (or a clean end) so the usage lands in it.
- `data: {"error": {...}}` (any chunk carrying an `error` object) and `event: error` (Groq) end the stream with an
  `ErrorEvent`; another SSE event name becomes a `ProviderEvent` (kept, not an error); anything after a
  terminal event is ignored. A stream that stops without `[DONE]` ends with a `malformed_stream` error from
  `close()`. SSE comments (OpenRouter `: OPENROUTER PROCESSING`) are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from harness import ir
from harness.protocols import common
from harness.protocols.base import DecodeError, decode_each
from harness.protocols.jsonread import Reader
from harness.protocols.openai.errors import error_from_object
from harness.protocols.openai.mapping import content_text, decode_usage, first_reasoning, legacy_call, stop_reason
from harness.protocols.openai.profile import REASONING_SIGNATURE, JSONDict, Profile
from harness.protocols.openai.response import decode_extras
from harness.wire.sse import SSEDecoder, SSEEvent

BlockKind = Literal["text", "thinking", "tool"]


@dataclass
class _ToolCall:
    """A tool call being assembled from fragments."""

    id: str | None = None
    name: str | None = None
    pending: str = ""
    """Argument text received before the name (and so before the IR block could open)."""
    ir_index: int | None = None
    closed: bool = False


class _ChoicePaths(NamedTuple):
    """The paths of one choice's fields, as errors name them (built once per choice index, not per chunk)."""

    choice: str
    choice_index: str
    delta: str
    finish_reason: str
    signature: str
    content: str
    refusal: str
    tool_calls: str


@lru_cache(maxsize=64)
def _choice_paths(i: int) -> _ChoicePaths:
    delta = f"choices[{i}].delta"
    return _ChoicePaths(
        f"choices[{i}]",
        f"choices[{i}].index",
        delta,
        f"choices[{i}].finish_reason",
        f"{delta}.{REASONING_SIGNATURE}",
        f"{delta}.content",
        f"{delta}.refusal",
        f"{delta}.tool_calls",
    )


class ChatStreamDecoder:
    """Feed SSE bytes, get IR events; one instance per streamed response."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._sse = SSEDecoder()
        self._events: list[ir.StreamEvent] = []
        self._started = False
        self._ended = False
        self._next_index = 0
        self._open: tuple[BlockKind, int] | None = None
        self._tools: dict[int, _ToolCall] = {}
        self._last_tool: int | None = None
        self._response_id: str | None = None
        self._stop: ir.StopReason | None = None
        self._refused = False
        self._usage: ir.Usage | None = None
        self._reasoning_fields = frozenset(profile.reasoning_fields_read)

    # --- public ---------------------------------------------------------------------------------------
    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events they complete."""
        return decode_each(self._sse.feed(chunk), self._one)

    def close(self) -> list[ir.StreamEvent]:
        """End of input: flush a final unterminated event, and end a stream that lacked `[DONE]` as malformed."""
        for event in self._sse.close():
            if self._ended:
                break
            try:
                self._on_event(event)
            except DecodeError as exc:
                if event.terminated:
                    raise
                # An event cut off by EOF is a truncated stream, not undecodable bytes.
                self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"stream cut inside an event: {exc}"))
        if not self._ended:
            self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without data: [DONE]"))
        return self._take()

    # --- events ---------------------------------------------------------------------------------------
    def _take(self) -> list[ir.StreamEvent]:
        out, self._events = self._events, []
        return out

    def _one(self, event: SSEEvent) -> list[ir.StreamEvent]:
        """The events of one SSE event."""
        self._on_event(event)
        return self._take()

    def _on_event(self, event: SSEEvent) -> None:
        if self._ended:
            return  # nothing follows a terminal event (OpenRouter sends [DONE] after its error chunk)
        if event.data.strip() == "[DONE]":
            self._finish()
            return
        if event.event in self.profile.stream_error_events:
            self._fail(self._error_event(event))
            return
        r = Reader(self.profile.name, event.offset)
        payload = common.load_json(self.profile.name, event.data, offset=event.offset, what="stream chunk")
        if event.event != "message":
            # An SSE event name this decoder does not know (none is documented besides `error`): kept for the
            # profile's own encoder, not an error.
            self._ensure_started()
            self._events.append(ir.ProviderEvent(protocol=self.profile.name, type=event.event, data=payload))
            return
        chunk = r.obj(self.profile.decode_chunk(r.obj(payload, "chunk")), "chunk")
        if chunk:  # a profile hook empties a chunk that carries nothing for the IR (Azure's prompt filter)
            self._on_chunk(r, chunk)

    def _error_event(self, event: SSEEvent) -> ir.IRError:
        """The error an `event: error` carries; its data is normally `{"error": {...}}` but any text is kept."""
        try:
            payload: Any = json.loads(event.data)
        except (ValueError, RecursionError):
            payload = None  # not (usable) JSON: the raw text is the message (below)
        body = payload.get("error", payload) if isinstance(payload, dict) else None
        if not isinstance(body, dict):
            body = {"message": event.data}
        return error_from_object(self.profile, body, None, None)

    def _on_chunk(self, r: Reader, chunk: JSONDict) -> None:
        if not self._started:
            self._start(r, chunk)
        raw_usage = chunk.get("usage")
        if raw_usage is not None:
            usage = decode_usage(self.profile, r, raw_usage)
            if usage is not None:
                self._usage = usage if self._usage is None else self._usage.merged(usage)
        error = chunk.get("error")
        if error is not None:
            inner = r.obj(error, "error") if not isinstance(error, str) else {"message": error}
            self._fail(error_from_object(self.profile, inner, None, None))
            return
        # The checks below are the Reader's, made inline for the values that pass them (this runs per chunk).
        for i, item in enumerate(r.opt_lst(chunk.get("choices"), "choices")):
            paths = _choice_paths(i)
            choice = item if isinstance(item, dict) else r.obj(item, paths.choice)
            index = choice.get("index", 0)
            if (type(index) is not int or index != 0) and r.opt_int(index, paths.choice_index) != 0:
                r.fail(paths.choice_index, "only n=1 streams are supported")
            delta = choice.get("delta")
            self._on_delta(r, delta if isinstance(delta, dict) else r.opt_obj(delta, paths.delta) or {}, paths)
            finish = choice.get("finish_reason")
            if finish is not None:
                finish = r.str_(finish, paths.finish_reason)
                # Block ends go out now; the Done waits for the usage chunk and [DONE].
                self._close_all()
                self._stop = stop_reason(self.profile, finish, refused=self._refused)

    def _start(self, r: Reader, chunk: JSONDict) -> None:
        self._started = True
        self._response_id = r.opt_str(chunk.get("id"), "id")
        model = r.opt_str(chunk.get("model"), "model")
        extras = decode_extras(self.profile, chunk)
        self._events.append(ir.MessageStart(id=self._response_id, model=model, extras=extras))

    def _on_delta(self, r: Reader, delta: JSONDict, paths: _ChoicePaths) -> None:
        path = paths.delta
        if delta.get("function_call") is not None and legacy_call(delta["function_call"]):
            r.fail(f"{path}.function_call", "the legacy functions API is not supported")
        if not self._reasoning_fields.isdisjoint(delta):
            thinking = first_reasoning(self.profile, r, delta, path)
            if thinking:
                self._text("thinking", thinking)
        signature = delta.get(REASONING_SIGNATURE)
        if signature is not None:
            self._sign(r.str_(signature, paths.signature))
        content = delta.get("content")
        text = content if isinstance(content, str) else content_text(r, content, paths.content)
        refusal = delta.get("refusal")
        if refusal is not None and r.str_(refusal, paths.refusal):
            self._refused = True
            text += refusal
        if text:
            self._text("text", text, refusal=bool(refusal) and text == refusal)
        tool_calls = delta.get("tool_calls")
        if tool_calls is not None:
            for j, item in enumerate(r.lst(tool_calls, paths.tool_calls)):
                self._on_tool_fragment(r, r.obj(item, f"{path}.tool_calls[{j}]"), f"{path}.tool_calls[{j}]")

    # --- blocks ---------------------------------------------------------------------------------------
    def _open_block(self, kind: BlockKind) -> int:
        self._close_open()
        index = self._next_index
        self._next_index += 1
        self._open = (kind, index)
        return index

    def _close_open(self) -> None:
        if self._open is None:
            return
        kind, index = self._open
        self._open = None
        if kind == "text":
            self._events.append(ir.TextEnd(index=index))
        elif kind == "thinking":
            self._events.append(ir.ThinkingEnd(index=index))
        else:
            self._events.append(ir.ToolCallEnd(index=index))
            for call in self._tools.values():
                if call.ir_index == index:
                    call.closed = True

    def _text(self, kind: Literal["text", "thinking"], text: str, *, refusal: bool = False) -> None:
        """More text or thinking; a text block that opens with `delta.refusal` is a refusal block."""
        if self._open is not None and self._open[0] == kind:
            index = self._open[1]
        else:
            index = self._open_block(kind)
            start = ir.TextStart(index=index, refusal=refusal) if kind == "text" else ir.ThinkingStart(index=index)
            self._events.append(start)
        self._events.append(ir.delta(kind, index, text))

    def _sign(self, signature: str) -> None:
        """A thinking signature (a profile hook found it): it ends the open thinking block, or an empty one."""
        if self._open is None or self._open[0] != "thinking":
            index = self._open_block("thinking")
            self._events.append(ir.ThinkingStart(index=index))
        else:
            index = self._open[1]
        self._open = None
        self._events.append(ir.ThinkingEnd(index=index, signature=signature))

    def _on_tool_fragment(self, r: Reader, fragment: JSONDict, path: str) -> None:
        wire_index = r.opt_int(fragment.get("index"), f"{path}.index")
        fragment_id = r.opt_str(fragment.get("id"), f"{path}.id")
        if wire_index is None:
            # Some compatible servers omit `index`: a new id starts a new call, anything else continues the last.
            known = any(c.id == fragment_id for c in self._tools.values())
            if self._last_tool is None or (fragment_id is not None and not known):
                wire_index = max(self._tools, default=-1) + 1
            else:
                wire_index = self._last_tool
        call = self._tools.setdefault(wire_index, _ToolCall())
        if call.closed:
            r.fail(path, f"fragment for tool call {wire_index} after its block closed")
        self._last_tool = wire_index
        if call.id is None:
            call.id = fragment_id
        function = r.opt_obj(fragment.get("function"), f"{path}.function") or {}
        name = r.opt_str(function.get("name"), f"{path}.function.name")
        if name and call.name is None:
            call.name = name
        arguments = r.opt_str(function.get("arguments"), f"{path}.function.arguments") or ""
        if call.ir_index is None:
            call.pending += arguments
            if call.name is not None:
                self._open_tool(call, wire_index)
        elif arguments:
            if self._open != ("tool", call.ir_index):
                r.fail(path, f"fragment for tool call {wire_index} after another block opened")
            self._events.append(ir.delta("tool_call", call.ir_index, arguments))

    def _open_tool(self, call: _ToolCall, wire_index: int) -> None:
        index = self._open_block("tool")
        call.ir_index = index
        call_id = call.id or common.synth_tool_id(self.profile.tool_id_prefix, self._response_id, wire_index)
        self._events.append(ir.ToolCallStart(index=index, id=call_id, name=call.name or ""))
        if call.pending:
            self._events.append(ir.ToolCallDelta(index=index, arguments=call.pending))
            call.pending = ""

    # --- terminal -------------------------------------------------------------------------------------
    def _close_all(self) -> None:
        self._close_open()
        for wire_index, call in self._tools.items():
            if call.ir_index is None:
                raise DecodeError(self.profile.name, f"tool call {wire_index} never received a function name")

    def _ensure_started(self) -> None:
        if not self._started:
            self._started = True
            self._events.append(ir.MessageStart())

    def _finish(self) -> None:
        self._ensure_started()
        self._close_all()
        self._events.append(ir.Done(stop_reason=self._stop, usage=self._usage))
        self._ended = True

    def _fail(self, error: ir.IRError) -> None:
        self._ensure_started()
        self._close_open()  # a failed stream may leave a nameless tool call behind; it is not reported
        self._events.append(ir.ErrorEvent(error=error))
        self._ended = True
