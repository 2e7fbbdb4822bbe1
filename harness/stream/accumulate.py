"""Folding a stream of IR events into the final response, the way a client would.

The accumulator never raises: a stream that breaks the grammar still folds into whatever can be made of it,
and each thing that could not be folded cleanly is written down in `Accumulated.problems`. Grammar checking
proper is `harness.stream.grammar`'s job; problems here are only about what the fold had to guess or drop.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness import ir


@dataclass(frozen=True, slots=True)
class Accumulated:
    """The result of folding a stream: the response, the terminal error if any, and what went wrong."""

    response: ir.Response
    """Everything that arrived, as a response (on an error stream: what arrived before the error)."""
    error: ir.IRError | None = None
    """The error of a terminal `error` event; None for a stream that ended with `done` or not at all."""
    problems: list[str] = field(default_factory=list)
    """What could not be folded cleanly (unknown block indices, unparsable tool arguments, ...)."""
    terminated: bool = False
    """Whether the stream reached a terminal `done` or `error` event."""


_BLOCKS = {"text_delta": "text", "thinking_delta": "thinking"}
"""The block a text or thinking delta adds to."""


@dataclass
class _Block:
    """A content block being built up."""

    kind: str
    parts: list[str] = field(default_factory=list)
    signature: str | None = None
    id: str = ""
    name: str = ""
    call_type: str | None = None
    ended: bool = False


def parse_tool_arguments(raw: str) -> tuple[Any, str | None]:
    """Tool arguments parsed from JSON text, and the JSON error if any ("" means no arguments: `{}`).

    The same rule as `harness.protocols.common.parse_arguments`, kept here because `stream` imports only `ir`.
    """
    if raw.strip() == "":
        return {}, None
    try:
        return json.loads(raw), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} (char {exc.pos})"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:  # an integer literal longer than Python converts
        return None, str(exc)


class Accumulator:
    """Incremental fold: `add` each event in order, then `result()` (callable at any point)."""

    def __init__(self) -> None:
        self._id: str | None = None
        self._model: str | None = None
        self._usage = ir.Usage()
        self._extras: ir.ProviderExtras | None = None
        self._stop: ir.StopReason | None = None
        self._error: ir.IRError | None = None
        self._blocks: dict[int, _Block] = {}
        self._problems: list[str] = []
        self._started = False
        self._terminated = False
        self._position = 0

    def add(self, event: ir.StreamEvent) -> None:
        """Fold one event in; grammar breaches become problems, never exceptions."""
        at = self._position
        self._position += 1
        if self._terminated:
            # A client stops reading at the terminal event, so later events do not change the response.
            self._problems.append(f"event {at}: {event.kind} after the terminal event ignored")
            return
        match event:  # the classes are disjoint: deltas, by far the most common, are matched first
            case ir.TextDelta() | ir.ThinkingDelta():
                self._append(at, event.index, _BLOCKS[event.kind], event.text, event.kind)
            case ir.ToolCallDelta():
                self._append(at, event.index, "tool_call", event.arguments, event.kind)
            case ir.MessageStart():
                self._message_start(at, event)
            case ir.TextStart() | ir.ThinkingStart() | ir.ToolCallStart() | ir.RedactedThinking():
                self._start(at, event)
            case ir.TextEnd() | ir.ThinkingEnd() | ir.ToolCallEnd():
                self._end(at, event)
            case ir.UsageEvent():
                self._usage = self._usage.merged(event.usage)
            case ir.ProviderEvent():
                pass  # the IR has no form for it, so the response has none either
            case ir.Done():
                self._stop = event.stop_reason
                self._usage = self._usage.merged(event.usage)
                self._extras = ir.merge_extras(self._extras, event.extras)
                self._terminated = True
            case ir.ErrorEvent():
                self._error = event.error
                self._terminated = True

    def result(self) -> Accumulated:
        """The response as it stands now, with the problems found so far."""
        problems = list(self._problems)
        content = [self._part(index, block, problems) for index, block in sorted(self._blocks.items())]
        response = ir.Response(
            id=self._id,
            model=self._model,
            content=content,
            stop_reason=self._stop,
            usage=self._usage,
            extras=self._extras,
        )
        return Accumulated(response=response, error=self._error, problems=problems, terminated=self._terminated)

    def _message_start(self, at: int, event: ir.MessageStart) -> None:
        if self._started:
            # Keep the first id and model; a second start only fills what the first left out.
            self._problems.append(f"event {at}: a second message_start")
        self._started = True
        self._id = self._id if self._id is not None else event.id
        self._model = self._model if self._model is not None else event.model
        self._usage = self._usage.merged(event.usage)
        self._extras = ir.merge_extras(self._extras, event.extras)

    def _start(self, at: int, event: ir.TextStart | ir.ThinkingStart | ir.ToolCallStart | ir.RedactedThinking) -> None:
        kind = event.kind.removesuffix("_start")
        existing = self._blocks.get(event.index)
        if existing is not None:
            self._problems.append(
                f"event {at}: {event.kind} on index {event.index}, already a {existing.kind} block; start ignored"
            )
            return
        block = _Block(kind=kind)
        if isinstance(event, ir.ToolCallStart):
            block.id, block.name, block.call_type = event.id, event.name, event.call_type
        elif isinstance(event, ir.RedactedThinking):
            block.parts.append(event.data)
            block.ended = True
        self._blocks[event.index] = block

    def _append(self, at: int, index: int, kind: str, fragment: str, event_kind: str) -> None:
        block = self._blocks.get(index)
        if block is None:
            self._problems.append(f"event {at}: {event_kind} on index {index}, never started; block created")
            block = self._blocks[index] = _Block(kind=kind)
        elif block.kind != kind:
            self._problems.append(f"event {at}: {event_kind} on index {index}, a {block.kind} block; delta dropped")
            return
        elif block.ended:
            self._problems.append(f"event {at}: {event_kind} on index {index} after its end; appended")
        block.parts.append(fragment)

    def _end(self, at: int, event: ir.TextEnd | ir.ThinkingEnd | ir.ToolCallEnd) -> None:
        kind = event.kind.removesuffix("_end")
        block = self._blocks.get(event.index)
        if block is None:
            self._problems.append(f"event {at}: {event.kind} on index {event.index}, never started; block created")
            block = self._blocks[event.index] = _Block(kind=kind)
        elif block.kind != kind:
            self._problems.append(f"event {at}: {event.kind} on index {event.index}, a {block.kind} block; ignored")
            return
        block.ended = True
        if isinstance(event, ir.ThinkingEnd) and event.signature is not None:
            block.signature = event.signature

    @staticmethod
    def _part(index: int, block: _Block, problems: list[str]) -> ir.OutputPart:
        text = "".join(block.parts)
        if block.kind == "text":
            return ir.TextPart(text=text)
        if block.kind == "thinking":
            return ir.ThinkingPart(text=text, signature=block.signature)
        if block.kind == "redacted_thinking":
            return ir.RedactedThinkingPart(data=text)
        arguments, error = parse_tool_arguments(text)
        if error is not None and block.call_type is None:  # only a function call's arguments must be JSON
            problems.append(
                f"tool call {block.name!r} (id {block.id!r}, index {index}): arguments are not valid JSON: {error}"
            )
        return ir.ToolCallPart(
            id=block.id, name=block.name, arguments=arguments, arguments_raw=text, call_type=block.call_type
        )


def accumulate(events: Iterable[ir.StreamEvent]) -> Accumulated:
    """Fold a whole stream into its final response."""
    acc = Accumulator()
    for event in events:
        acc.add(event)
    return acc.result()
