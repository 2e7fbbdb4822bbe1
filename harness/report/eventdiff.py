"""The event diff of a case's view: the two compared views cut into blocks (the message start, each content block
with its start, deltas and end, each tool call, the terminal event) and aligned block by block, so that a
dropped tool call is one removed block instead of every later event shifting by three.

It reads the views exactly as the verdict compared them (`harness.diff.compared_views`: coalesced, losses
applied, normalized), so what it shows is what was judged. Blocks are matched by kind and, for tool calls, by
name; a block's content index and its normalized id are shown but not compared, as a dropped block shifts both
for every later block.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

BLOCK_KINDS = {
    "text_start": "text",
    "text_delta": "text",
    "text_end": "text",
    "thinking_start": "thinking",
    "thinking_delta": "thinking",
    "thinking_end": "thinking",
    "redacted_thinking": "redacted thinking",
    "tool_call_start": "tool call",
    "tool_call_delta": "tool call",
    "tool_call_end": "tool call",
}
"""Event kinds that belong to a content block, and the block's kind."""
_IGNORED = frozenset({"index", "id"})
"""Not compared within aligned blocks: both are positional after normalization (`<call:N>` ids are numbered in
order), so one dropped block renumbers every later one; the divergence list still has any real id change."""


@dataclass
class Block:
    """Consecutive events of one block (or one event that stands alone)."""

    kind: str
    """`message start`, `text`, `thinking`, `tool call`, `done`, `error`, ..."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Its events as compared."""
    first: int = 0
    """Index of its first event in the view's event list."""

    @property
    def key(self) -> str:
        """What must agree for two blocks to be aligned: the kind, and a tool call's name."""
        name = next((e.get("name") for e in self.events if e.get("name")), None)
        return f"{self.kind} {name}" if name else self.kind

    @property
    def content(self) -> str:
        """The block without its content index and id, as comparable text."""
        return json.dumps([{k: v for k, v in e.items() if k not in _IGNORED} for e in self.events], sort_keys=True)

    def summary(self) -> dict[str, Any]:
        """What the report shows of the block: kind, index, event range and a readable digest."""
        index = next((e.get("index") for e in self.events if "index" in e), None)
        return {
            "kind": self.kind,
            "index": index,
            "events": [self.first, self.first + len(self.events) - 1],
            "text": digest(self.events),
        }


def digest(events: list[dict[str, Any]]) -> str:
    """A block in one readable line: joined text or arguments, a tool call's name and id, a stop reason."""
    parts: list[str] = []
    for event in events:
        kind = event.get("kind", "")
        if kind == "tool_call_start":
            parts.append(f"{event.get('name')}#{event.get('id')}(")
        elif kind in ("text_delta", "thinking_delta"):
            parts.append(str(event.get("text", "")))
        elif kind == "tool_call_delta":
            parts.append(str(event.get("arguments", "")))
        elif kind == "tool_call_end":
            parts.append(")")
        elif kind not in ("text_start", "text_end", "thinking_start", "thinking_end"):
            rest = {k: v for k, v in event.items() if k != "kind" and v is not None}
            parts.append(json.dumps(rest, sort_keys=True, ensure_ascii=False) if rest else kind)
    return "".join(parts)


def blocks(events: Iterable[dict[str, Any]]) -> list[Block]:
    """The events cut into blocks: a content block's events stay together even when another block's events come
    between them (interleaved tool calls)."""
    out: list[Block] = []
    open_blocks: dict[tuple[str, Any], Block] = {}
    for position, event in enumerate(events):
        kind = str(event.get("kind", ""))
        block_kind = BLOCK_KINDS.get(kind)
        if block_kind is None:
            out.append(Block(kind.replace("_", " "), [event], position))
            continue
        key = (block_kind, event.get("index"))
        block = open_blocks.get(key)
        if block is None or kind.endswith("_start"):
            block = Block(block_kind, [], position)
            open_blocks[key] = block
            out.append(block)
        block.events.append(event)
        if kind.endswith("_end") or kind == "redacted_thinking":
            open_blocks.pop(key, None)
    return out


def _rows(left: list[Block], right: list[Block]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(a=[b.key for b in left], b=[b.key for b in right], autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            for a, b in zip(left[a0:a1], right[b0:b1], strict=True):
                same = a.content == b.content
                rows.append({"op": "same" if same else "changed", "left": a.summary(), "right": b.summary()})
            continue
        rows += [{"op": "removed", "left": a.summary(), "right": None} for a in left[a0:a1]]
        rows += [{"op": "added", "left": None, "right": b.summary()} for b in right[b0:b1]]
    return rows


def _parts(view: dict[str, Any]) -> list[dict[str, Any]]:
    """A non-streamed view's content parts as single-event blocks' events (their kind names the part)."""
    response = view.get("response") or {}
    return [dict(part, kind=f"{part.get('kind', 'part')}_part") for part in response.get("content") or []]


def event_diff(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Rows aligning the reference view's blocks with the compared view's (`op`: same, changed, removed, added),
    and how many changes there are; streamed views by events, others by response content parts."""
    streamed = isinstance(left.get("events"), list) and isinstance(right.get("events"), list)
    if streamed:
        rows = _rows(blocks(left["events"]), blocks(right["events"]))
    else:
        rows = _rows(
            [Block(p["kind"].replace("_", " "), [p], i) for i, p in enumerate(_parts(left))],
            [Block(p["kind"].replace("_", " "), [p], i) for i, p in enumerate(_parts(right))],
        )
    return {"by": "events" if streamed else "content", "rows": rows, "changes": sum(r["op"] != "same" for r in rows)}
