"""The event pipe of a translated stream: upstream bytes -> IR events -> grammar check -> frontend bytes.

Every event is encoded the moment it is decoded, so text and thinking deltas reach the client without
buffering. The pipe guarantees the client a terminated stream: if the upstream breaks off, open blocks are
closed and a terminal error event is encoded in the frontend's own mid-stream error form.
"""

from __future__ import annotations

from harness import ir
from harness.protocols import DecodeError, StreamDecoder, StreamEncoder
from harness.proxy.models import IDENTITY_HOOKS, TranslateHooks
from harness.proxy.tap import Recorder
from harness.stream import GrammarChecker

_END_EVENT = {"text": ir.TextEnd, "thinking": ir.ThinkingEnd, "tool_call": ir.ToolCallEnd}


def stop_for_client(stop: ir.StopReason | None, *, tool_called: bool) -> ir.StopReason:
    """The stop reason a translated answer tells its client. An upstream that ends its answer without one (an
    OpenAI-compatible stream with no `finish_reason`) still means one, and the client's protocol needs it: an
    agent acts on its tool calls only when the answer says `tool_use`, and Anthropic, Gemini and Ollama clients
    never get an answer without a stop reason from their own provider."""
    if stop is not None:
        return stop
    return ir.StopReason(kind="tool_use" if tool_called else "end_turn")


class EventPipe:
    """One translated stream: feed upstream bytes, get frontend bytes to send now."""

    def __init__(
        self, decoder: StreamDecoder, encoder: StreamEncoder, hooks: TranslateHooks, recorder: Recorder
    ) -> None:
        self.decoder = decoder
        self.encoder = encoder
        self.hooks = hooks
        self.recorder = recorder
        self.checker = GrammarChecker()
        self.terminated = False
        self._decoder_failed = False
        self._finished = False
        # Content index -> block type of the blocks open on the frontend side, to close them on a failure.
        self._open: dict[int, str] = {}
        self._tool_called = False
        # The identity hooks (no fault injected) are skipped per event: they change nothing.
        self._same_events = hooks.on_upstream_event is IDENTITY_HOOKS.on_upstream_event
        self._same_bytes = hooks.on_frontend_bytes is IDENTITY_HOOKS.on_frontend_bytes
        self._same_upstream_bytes = hooks.on_upstream_bytes is IDENTITY_HOOKS.on_upstream_bytes

    def feed(self, chunk: bytes) -> list[bytes]:
        """Decode a chunk of the upstream body; the frontend bytes it produces."""
        if self._decoder_failed:
            return []
        try:
            events = self.decoder.feed(chunk if self._same_upstream_bytes else self.hooks.on_upstream_bytes(chunk))
        except DecodeError as exc:
            self._decoder_failed = True
            self.recorder.problem(f"upstream stream: {exc}")
            return self._terminate(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"upstream stream: {exc}"))
        return self._pass(events)

    def close(self) -> list[bytes]:
        """The upstream body ended; the closing frontend bytes (a terminal error if the upstream had none)."""
        out: list[bytes] = []
        if not self._decoder_failed:
            try:
                out = self._pass(self.decoder.close())
            except DecodeError as exc:
                self.recorder.problem(f"upstream stream: {exc}")
        if not self.terminated:
            # The decoder contract promises a terminal event on close; never leave the client hanging if not.
            self.recorder.problem("upstream decoder closed without a terminal event")
            out += self._terminate(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "upstream stream ended early"))
        return out

    def fail(self, error: ir.IRError) -> list[bytes]:
        """The upstream connection failed mid-stream; the frontend's mid-stream error (if not yet terminated)."""
        if self.terminated:
            self.recorder.problem(f"after the terminal event: {error.message}")
            return []
        return self._terminate(error)

    def finish(self) -> None:
        """Record the grammar checker's end-of-stream findings (once)."""
        if not self._finished:
            self._finished = True
            self.recorder.events([], self.checker.finish())

    def _terminate(self, error: ir.IRError) -> list[bytes]:
        self.recorder.error = error
        closing: list[ir.StreamEvent] = [_END_EVENT[kind](index=index) for index, kind in self._open.items()]
        closing.append(ir.ErrorEvent(error=error))
        return self._emit(closing)

    def _pass(self, events: list[ir.StreamEvent]) -> list[bytes]:
        if not events:
            return []
        for event in events:
            if isinstance(event, ir.TextDelta) and event.text:
                self.recorder.upstream_text()
                break
        if self._same_events:
            return self._emit(events)
        hooked: list[ir.StreamEvent] = []
        for event in events:
            hooked.extend(self.hooks.on_upstream_event(event))
        return self._emit(hooked)

    def _emit(self, events: list[ir.StreamEvent]) -> list[bytes]:
        out: list[bytes] = []
        recorder, check, encode = self.recorder, self.checker.check, self.encoder.encode
        for event in events:
            recorder.event(event, check(event))
            if self.terminated:
                continue  # recorded (the checker flags it) but never sent after the terminal event
            terminal = event.kind in ir.TERMINAL_KINDS
            try:
                data = encode(self._for_client(event) if terminal else event)
                if terminal:
                    data += self.encoder.close() + self.hooks.on_frontend_end()
            except ValueError as exc:
                # An event the frontend cannot express (e.g. a delta for a block that never started): it is
                # already a grammar violation in the trace; the client's stream goes on without it.
                recorder.problem(f"frontend encoder refused {event.kind}: {exc}")
                continue
            if not isinstance(event, ir.TextDelta):
                self._track(event)
            if terminal:
                self.terminated = True
                if isinstance(event, ir.ErrorEvent):
                    recorder.error = event.error
            if data:
                if not self._same_bytes:
                    data = self.hooks.on_frontend_bytes(data)
                recorder.frontend_chunk(data, text=isinstance(event, ir.TextDelta) and bool(event.text))
                out.append(data)
        return out

    def _for_client(self, event: ir.StreamEvent) -> ir.StreamEvent:
        if isinstance(event, ir.Done) and event.stop_reason is None:
            return event.model_copy(update={"stop_reason": stop_for_client(None, tool_called=self._tool_called)})
        return event

    def _track(self, event: ir.StreamEvent) -> None:
        if isinstance(event, ir.ToolCallStart):
            self._tool_called = True
        if isinstance(event, ir.TextStart):
            self._open[event.index] = "text"
        elif isinstance(event, ir.ThinkingStart):
            self._open[event.index] = "thinking"
        elif isinstance(event, ir.ToolCallStart):
            self._open[event.index] = "tool_call"
        elif isinstance(event, ir.TextEnd | ir.ThinkingEnd | ir.ToolCallEnd):
            self._open.pop(event.index, None)
