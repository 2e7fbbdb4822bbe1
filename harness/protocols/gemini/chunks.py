"""One GenerateContentResponse object (a whole response or one stream chunk) -> IR events.

The same decoder serves `decode_response` (one object) and the stream decoder (one object per SSE event or
JSON-array element), so a streamed and a non-streamed answer decode alike. Only the candidate with index 0
is read: the IR holds one choice, and clients ask for more (candidateCount) only outside this harness's scope.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.gemini.enums import BLOCK_REASON, FINISH_REASON, enum_name
from harness.protocols.gemini.errors import error_from_object
from harness.protocols.gemini.extras import decode_extras
from harness.protocols.gemini.fields import as_list, as_object, get, has, opt_int, opt_object, opt_str
from harness.protocols.gemini.ids import ToolIds
from harness.protocols.gemini.mapping import block_stop_reason, stop_reason, usage_from
from harness.protocols.gemini.parts import ContentMachine


class ChunkDecoder:
    """Turns successive response objects into one IR event stream; `finish` ends it."""

    def __init__(self) -> None:
        self._machine = ContentMachine(ToolIds())
        self._started = False
        self._finish: str | None = None
        self._blocked: str | None = None
        self._usage = ir.Usage()
        self.terminated = False
        """Whether a terminal event (Done or ErrorEvent) has been emitted."""

    def chunk(self, value: Any, offset: int | None = None, *, http_error: bool = False) -> list[ir.StreamEvent]:
        """The events one response object adds. An `{"error": ...}` object ends the stream with an ErrorEvent
        (`http_error`: the object is the whole body of a failed request, so its `code` is the HTTP status)."""
        obj = as_object(value, "response chunk", offset)
        if self.terminated:
            return []
        out = self._start(obj)
        if has(obj, "error"):
            error = error_from_object(as_object(get(obj, "error"), "error", offset), http_error=http_error)
            return out + self._end(ir.ErrorEvent(error=error))
        meta = opt_object(get(obj, "usageMetadata"), "usageMetadata", offset)
        if meta is not None:
            # Every chunk repeats the running totals: the last one counts.
            self._usage = usage_from(meta)
        candidate = self._candidate(as_list(get(obj, "candidates"), "candidates", offset), offset)
        if candidate is not None:
            content = opt_object(get(candidate, "content"), "candidate.content", offset) or {}
            for i, part in enumerate(as_list(get(content, "parts"), "candidate.content.parts", offset)):
                out += self._machine.part(part, f"candidate.content.parts[{i}]")
            raw_finish = enum_name(FINISH_REASON, get(candidate, "finishReason"))
            finish = opt_str(raw_finish, "candidate.finishReason", offset)
            self._finish = finish if finish is not None else self._finish
        feedback = opt_object(get(obj, "promptFeedback"), "promptFeedback", offset)
        if feedback is not None:
            raw_block = enum_name(BLOCK_REASON, get(feedback, "blockReason"))
            block = opt_str(raw_block, "promptFeedback.blockReason", offset)
            self._blocked = block if block is not None else self._blocked
        return out

    def finish(self, *, require_terminal: bool) -> list[ir.StreamEvent]:
        """End of input: close the open block and emit Done, or a malformed-stream error when no
        finishReason (or blockReason) arrived and `require_terminal` (streams must end with one)."""
        if self.terminated:
            return []
        out = self._start({})
        if self._finish is not None:
            stop: ir.StopReason | None = stop_reason(self._finish, has_tool_calls=self._machine.tool_calls > 0)
        elif self._blocked is not None:
            stop = block_stop_reason(self._blocked)
        elif require_terminal:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a finishReason")
            return out + self._end(ir.ErrorEvent(error=error))
        else:
            stop = None
        return out + self._end(ir.Done(stop_reason=stop, usage=self._usage))

    def finish_with(self, terminal: ir.ErrorEvent) -> list[ir.StreamEvent]:
        """End the stream with this error (a framing failure found at the end of input)."""
        if self.terminated:
            return []
        return self._start({}) + self._end(terminal)

    def _start(self, obj: dict[str, Any]) -> list[ir.StreamEvent]:
        if self._started:
            return []
        self._started = True
        model = opt_str(get(obj, "modelVersion"), "modelVersion")
        extras = decode_extras(obj) if "error" not in obj else None
        response_id = opt_str(get(obj, "responseId"), "responseId")
        return [ir.MessageStart(id=response_id, model=model, usage=_start_usage(obj), extras=extras)]

    def _end(self, terminal: ir.Done | ir.ErrorEvent) -> list[ir.StreamEvent]:
        self.terminated = True
        return [*self._machine.close(), terminal]

    @staticmethod
    def _candidate(candidates: list[Any], offset: int | None) -> dict[str, Any] | None:
        for i, value in enumerate(candidates):
            candidate = as_object(value, f"candidates[{i}]", offset)
            if (opt_int(get(candidate, "index"), f"candidates[{i}].index", offset) or 0) == 0:
                return candidate
        return None


def _start_usage(obj: dict[str, Any]) -> ir.Usage | None:
    """The input figures of the first chunk's usageMetadata: Gemini counts the prompt before it answers and
    reports the count on every chunk, so a translation can pass the real count on at the start (Anthropic's
    message_start needs one)."""
    meta = opt_object(get(obj, "usageMetadata"), "usageMetadata")
    if meta is None:
        return None
    usage = usage_from(meta)
    start = ir.Usage(input_tokens=usage.input_tokens, cache_read_tokens=usage.cache_read_tokens)
    return None if start == ir.Usage() else start
