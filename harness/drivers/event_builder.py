"""Builds a valid IR event stream from what an SDK yields, one piece at a time.

Blocks get IR content indices 0, 1, 2, ... in the order they open. SDKs with explicit blocks (Anthropic) use
the keyed calls (`open` / `delta` / `close`); SDKs where text just flows (OpenAI, Gemini, Ollama) use
`flow_text` / `flow_thinking`, which open a block at the first non-empty text and close it when something
else starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from harness import ir

BlockKind = Literal["text", "thinking", "tool_call"]
_FLOW = "~flow"


class ImpossibleStream(ValueError):
    """The SDK delivered an event no client can build a message from (a delta or signature for a block that was
    never started): the answer's fault, which the runner reports as the client crashing on it, not a harness bug."""


@dataclass
class _Block:
    index: int
    kind: BlockKind
    signature: str | None = None


@dataclass
class EventBuilder:
    """Accumulates IR events; `done` / `fail` close open blocks and add the one terminal event."""

    events: list[ir.StreamEvent] = field(default_factory=list)
    usage: ir.Usage | None = None
    _open: dict[object, _Block] = field(default_factory=dict)
    _next_index: int = 0
    _finished: bool = False

    def start(self, *, id: str | None = None, model: str | None = None, usage: ir.Usage | None = None) -> None:
        """Emit `message_start` (once)."""
        if not self.events:
            self.events.append(ir.MessageStart(id=id, model=model, usage=usage))
            self.add_usage(usage)

    def add_usage(self, usage: ir.Usage | None) -> None:
        """Merge newer usage figures into what the terminal event will report."""
        if usage is not None:
            self.usage = usage if self.usage is None else self.usage.merged(usage)

    @property
    def started(self) -> bool:
        """Whether `message_start` has been emitted."""
        return bool(self.events)

    def open(self, key: object, kind: BlockKind, *, id: str = "", name: str = "") -> int:
        """Open a block under `key`; returns its IR index."""
        self.start()
        block = _Block(self._next_index, kind)
        self._next_index += 1
        self._open[key] = block
        if kind == "text":
            self.events.append(ir.TextStart(index=block.index))
        elif kind == "thinking":
            self.events.append(ir.ThinkingStart(index=block.index))
        else:
            self.events.append(ir.ToolCallStart(index=block.index, id=id, name=name))
        return block.index

    def is_open(self, key: object) -> bool:
        """Whether a block is open under `key`."""
        return key in self._open

    def delta(self, key: object, text: str) -> None:
        """Text, thinking text or argument fragment for the block under `key` (empty text is dropped)."""
        if text == "":
            return
        block = self._block(key, "delta")
        self.events.append(ir.delta(block.kind, block.index, text))

    def sign(self, key: object, signature: str) -> None:
        """Record the signature of the thinking block under `key` (sent with its end event)."""
        block = self._block(key, "signature")
        block.signature = (block.signature or "") + signature

    def _block(self, key: object, what: str) -> _Block:
        block = self._open.get(key)
        if block is None:
            raise ImpossibleStream(f"a {what} for block {key!r}, which was never started")
        return block

    def close(self, key: object) -> None:
        """Close the block under `key`, if open."""
        block = self._open.pop(key, None)
        if block is None:
            return
        if block.kind == "text":
            self.events.append(ir.TextEnd(index=block.index))
        elif block.kind == "thinking":
            self.events.append(ir.ThinkingEnd(index=block.index, signature=block.signature))
        else:
            self.events.append(ir.ToolCallEnd(index=block.index))

    def redacted(self, data: str) -> None:
        """A whole redacted-thinking block."""
        self.start()
        self.events.append(ir.RedactedThinking(index=self._next_index, data=data))
        self._next_index += 1

    def flow_text(self, text: str) -> None:
        """Flowing answer text: continues the open text block or opens one."""
        self._flow("text", text)

    def flow_thinking(self, text: str, signature: str | None = None) -> None:
        """Flowing reasoning text: continues the open thinking block or opens one."""
        self._flow("thinking", text)
        if signature and self.is_open(_FLOW):
            self.sign(_FLOW, signature)

    def sign_flow(self, signature: str) -> bool:
        """Attach a signature to the open flowing thinking block; False when none is open."""
        block = self._open.get(_FLOW)
        if block is None or block.kind != "thinking":
            return False
        self.sign(_FLOW, signature)
        return True

    def end_flow(self) -> None:
        """Close the flowing text or thinking block (something else starts)."""
        self.close(_FLOW)

    def tool_call(self, key: object, *, id: str, name: str, arguments: str) -> None:
        """A whole tool call at once (SDKs that deliver complete argument objects)."""
        self.end_flow()
        self.open(key, "tool_call", id=id, name=name)
        self.delta(key, arguments)
        self.close(key)

    def done(self, stop_reason: ir.StopReason | None) -> list[ir.StreamEvent]:
        """Close everything and end with `done`; returns the finished event list."""
        self._finish(ir.Done(stop_reason=stop_reason, usage=self.usage))
        return self.events

    def fail(self, error: ir.IRError) -> list[ir.StreamEvent]:
        """Close everything and end with an `error` event; returns the finished event list."""
        self._finish(ir.ErrorEvent(error=error))
        return self.events

    def _flow(self, kind: BlockKind, text: str) -> None:
        if text == "":
            return
        block = self._open.get(_FLOW)
        if block is not None and block.kind == kind:  # the block flows on: what `delta` does, without the calls
            self.events.append(ir.delta(kind, block.index, text))
            return
        if block is not None:
            self.close(_FLOW)
        self.open(_FLOW, kind)
        self.delta(_FLOW, text)

    def _finish(self, terminal: ir.StreamEvent) -> None:
        if self._finished:
            raise RuntimeError("the event stream already ended")
        self.start()
        for key in sorted(self._open, key=lambda k: self._open[k].index):
            self.close(key)
        self.events.append(terminal)
        self._finished = True
