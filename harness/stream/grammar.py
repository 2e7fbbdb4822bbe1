"""The IR stream-event grammar, checked one event at a time.

A valid stream is: one `message_start` first; then content blocks, each `*_start` -> `*_delta`* -> `*_end`
on its own content index (several may be open at once: OpenAI parallel tool calls interleave), or one whole
`redacted_thinking` event; `usage` and `provider_event` events (which open and close nothing) anywhere in
between; exactly one terminal `done` or `error`, with every block closed before it and nothing after it.

Violations are data, not exceptions, because the diff engine and reports show them. Rule names are stable:

| rule                  | raised by                | meaning                                                        |
|-----------------------|--------------------------|----------------------------------------------------------------|
| `start_first`         | any event, finish()      | the stream does not begin with `message_start`                 |
| `duplicate_start`     | `message_start`          | a second `message_start`                                       |
| `block_restarted`     | `*_start`, redacted      | a block start on a content index that was already used         |
| `index_order`         | `*_start`, redacted      | a new block's index is not the next one (0, 1, 2, ...)         |
| `delta_without_start` | `*_delta`                | a delta for an index that was never started                    |
| `delta_type_mismatch` | `*_delta`                | a delta of another type than its block (text delta on thinking)|
| `delta_after_end`     | `*_delta`                | a delta for a block that already ended                         |
| `empty_delta`         | text / thinking delta    | a text or thinking delta with no text (codecs never emit one)  |
| `end_without_start`   | `*_end`                  | an end for an index that was never started                     |
| `end_type_mismatch`   | `*_end`                  | an end of another type than its block                          |
| `duplicate_end`       | `*_end`                  | a second end for the same block                                |
| `block_not_closed`    | terminal event, finish() | a block still open when the stream ends                        |
| `event_after_terminal`| any event                | anything after the terminal `done` / `error`                   |
| `missing_terminal`    | finish()                 | the stream ended with no terminal event                        |

`index` of a violation is the position of the offending event in the stream (0-based); violations found by
`finish()` carry the number of events seen, i.e. the position where the terminal event was expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from harness import ir

# Block type of each start / delta / end event kind. Redacted thinking is a whole block and has none of these.
_STARTS = {"text_start": "text", "thinking_start": "thinking", "tool_call_start": "tool_call"}
_DELTAS = {"text_delta": "text", "thinking_delta": "thinking", "tool_call_delta": "tool_call"}
_ENDS = {"text_end": "text", "thinking_end": "thinking", "tool_call_end": "tool_call"}
_DELTA_TYPES: frozenset[type] = frozenset((ir.TextDelta, ir.ThinkingDelta, ir.ToolCallDelta))


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of the event grammar: which rule, at which event, and what exactly."""

    rule: str
    """Stable rule identifier (see the module table)."""
    index: int
    """Position of the offending event in the stream (events seen, for violations found at the end)."""
    detail: str
    """Human-readable specifics (content index, kinds involved)."""

    def __str__(self) -> str:
        return f"{self.rule} at event {self.index}: {self.detail}"


class GrammarChecker:
    """Incremental grammar check: feed events in order with `check`, then call `finish` once.

    Constant work per event (the terminal event also lists the blocks still open), so a proxy can run it
    on every event it forwards.
    """

    def __init__(self) -> None:
        self._position = 0
        self._started = False
        self._terminated = False
        self._next_index = 0
        # Content index -> block type, for every block ever opened; open ones are also in `_open`.
        self._blocks: dict[int, str] = {}
        self._open: dict[int, str] = {}

    def check(self, event: ir.StreamEvent) -> list[Violation]:
        """The violations this event causes, given everything checked before it."""
        at = self._position
        self._position += 1
        if type(event) in _DELTA_TYPES and self._started and not self._terminated:
            # The common case settled first, as `_delta` finds it: a delta of the open block of its type.
            delta = cast(ir.DeltaEvent, event)
            said = isinstance(delta, ir.ToolCallDelta) or delta.text != ""
            if said and self._open.get(delta.index) == _DELTAS[delta.kind]:
                return []
        if self._terminated:
            return [Violation("event_after_terminal", at, f"{event.kind} after the terminal event")]
        out: list[Violation] = []
        if event.kind == "message_start":
            # A late first message_start is not reported again: event 0 already broke `start_first`.
            if self._started:
                out.append(Violation("duplicate_start", at, "a second message_start"))
            self._started = True
            return out
        if not self._started and at == 0:
            out.append(Violation("start_first", at, f"stream begins with {event.kind}, not message_start"))
        match event:  # the classes are disjoint: deltas, by far the most common, are matched first
            case ir.TextDelta() | ir.ThinkingDelta() | ir.ToolCallDelta():
                out += self._delta(at, event)
            case ir.TextStart() | ir.ThinkingStart() | ir.ToolCallStart():
                out += self._open_block(at, event.index, _STARTS[event.kind], whole=False)
            case ir.RedactedThinking():
                out += self._open_block(at, event.index, "redacted_thinking", whole=True)
            case ir.TextEnd() | ir.ThinkingEnd() | ir.ToolCallEnd():
                out += self._end(at, event.index, _ENDS[event.kind])
            case ir.Done() | ir.ErrorEvent():
                out += self._unclosed(at)
                self._terminated = True
        return out

    def finish(self) -> list[Violation]:
        """The violations only the end of the stream reveals (no terminal event, blocks left open)."""
        if self._terminated:
            return []
        at = self._position
        out = []
        if at == 0:
            out.append(Violation("start_first", at, "the stream is empty"))
        out.append(Violation("missing_terminal", at, "the stream ended without done or error"))
        return out + self._unclosed(at)

    def _open_block(self, at: int, index: int, block: str, *, whole: bool) -> list[Violation]:
        if index in self._blocks:
            known = self._blocks[index]
            return [Violation("block_restarted", at, f"{block} block on index {index}, already a {known} block")]
        out = []
        if index != self._next_index:
            out.append(Violation("index_order", at, f"{block} block opens index {index}, expected {self._next_index}"))
        self._next_index = max(self._next_index, index + 1)
        self._blocks[index] = block
        if not whole:
            self._open[index] = block
        return out

    def _delta(self, at: int, event: ir.TextDelta | ir.ThinkingDelta | ir.ToolCallDelta) -> list[Violation]:
        out = []
        if not isinstance(event, ir.ToolCallDelta) and event.text == "":
            out.append(Violation("empty_delta", at, f"{event.kind} on index {event.index} has no text"))
        block = self._blocks.get(event.index)
        if block is None:
            out.append(Violation("delta_without_start", at, f"{event.kind} on index {event.index}, never started"))
        elif block != _DELTAS[event.kind]:
            out.append(Violation("delta_type_mismatch", at, f"{event.kind} on index {event.index}, a {block} block"))
        elif event.index not in self._open:
            out.append(Violation("delta_after_end", at, f"{event.kind} on index {event.index}, already ended"))
        return out

    def _end(self, at: int, index: int, block: str) -> list[Violation]:
        known = self._blocks.get(index)
        if known is None:
            return [Violation("end_without_start", at, f"{block}_end on index {index}, never started")]
        if known != block:
            return [Violation("end_type_mismatch", at, f"{block}_end on index {index}, a {known} block")]
        if index not in self._open:
            return [Violation("duplicate_end", at, f"{block}_end on index {index}, already ended")]
        del self._open[index]
        return []

    def _unclosed(self, at: int) -> list[Violation]:
        return [
            Violation("block_not_closed", at, f"{block} block on index {index} still open")
            for index, block in sorted(self._open.items())
        ]


def validate(events: Iterable[ir.StreamEvent]) -> list[Violation]:
    """Every grammar violation of a whole stream, in event order (an empty list means valid)."""
    checker = GrammarChecker()
    out: list[Violation] = []
    for event in events:
        out += checker.check(event)
    return out + checker.finish()
