"""The wire state a Responses stream decoder keeps per output item, and the IR events it owes for it.

Every event after `response.output_item.added` names its item twice, by `output_index` and `item_id`, and its
part by `content_index` (message text, full reasoning text) or `summary_index` (reasoning summaries). `Items`
checks those against what was added: an index that matches no open item, a reused or skipped part index, a
`.done` text that contradicts its deltas are `DecodeError`s, since a client that trusts them reads the wrong
item. The item is the one its `output_index` names, as the SDK's accumulator reads it: GitHub Copilot's
Responses endpoint gives every event a new `item_id` (and every response object a new `id`), so a new id is read
past; only another item's id is a contradiction. A proxy that rotates ids is still judged by `frontend_wire`
(the defect rule `responses.ids_kept`). A `.done` text that only extends its deltas (a server that skipped some)
is accepted: the rest is emitted as a delta.

IR blocks open in wire order. A reasoning item's thinking blocks end late: the block of a finished part waits
for the next part of the same item (ending without a signature) or for the item's `output_item.done`, whose
`encrypted_content` is the signature of its last block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness import ir
from harness.protocols.responses import client_calls
from harness.protocols.responses.reader import NAME, JSONDict, Reader


@dataclass
class Part:
    """A content or summary part of an output item, mapped to one IR block."""

    kind: str  # text | thinking
    ir_index: int
    text: str = ""
    ended: bool = False
    """Whether the wire part is done (a thinking block's IR end may still be held)."""


@dataclass
class Item:
    """An output item seen in the stream."""

    kind: str  # message | reasoning | function_call | client_call | other
    output_index: int
    id: str | None
    content: dict[int, Part] = field(default_factory=dict)
    summary: dict[int, Part] = field(default_factory=dict)
    held: Part | None = None
    """A finished thinking part whose end waits (see the module docstring)."""
    call_id: str = ""
    name: str = ""
    call_type: str | None = None
    """A client call's `ToolCallPart.call_type`."""
    arguments: str = ""
    ir_index: int = -1
    done: bool = False


@dataclass
class Items:
    """Every output item of one stream, and the IR indices handed out so far."""

    r: Reader = field(default_factory=lambda: Reader(NAME))
    by_index: dict[int, Item] = field(default_factory=dict)
    next_ir: int = 0
    last_output: int = -1
    refused: bool = False
    calls: bool = False

    def ir_index(self) -> int:
        """The next IR content index."""
        self.next_ir += 1
        return self.next_ir - 1

    def open(self, data: JSONDict, kind: str) -> Item:
        """The open item an event names by `output_index` (its `item_id` must be there, but is not matched: see the
        module docstring)."""
        index = self.r.int_(data.get("output_index"), f"{kind}.output_index")
        item = self.by_index.get(index)
        if item is None or item.done:
            self.r.fail(f"{kind}.output_index", f"{index} names no open output item")
        self.named(item, self.r.str_(data.get("item_id"), f"{kind}.item_id"), f"{kind}.item_id")
        return item

    def named(self, item: Item, item_id: str | None, what: str) -> None:
        """An id an event gives `item`: a new one is read past (see the module docstring), another item's id is a
        contradiction no client can resolve."""
        if item_id is None or item_id == item.id:
            return
        other = next((i for i in self.by_index.values() if i.id == item_id), None)
        if other is not None:
            self.r.fail(what, f"{item_id!r} is the id of output item {other.output_index}, not {item.output_index}")

    def kind(self, wire: JSONDict) -> str:
        """The `Item.kind` of an output item's wire form."""
        kind = self.r.str_(wire.get("type"), "item.type")
        if kind in ("message", "reasoning", "function_call"):
            return kind
        return "client_call" if client_calls.is_client_call(wire) else "other"

    def add(self, index: int, value: Any) -> Item | None:
        """Register an `output_item.added` (a null item only uses up its index)."""
        if index in self.by_index or index <= self.last_output:
            self.r.fail("output_item.added.output_index", f"{index} after output item {self.last_output}")
        self.last_output = index
        if value is None:
            return None
        wire = self.r.obj(value, "item")
        item = Item(self.kind(wire), index, None)
        item.id = self.r.opt_str(wire.get("id"), "item.id")
        self.by_index[index] = item
        return item

    def new_part(self, item: Item, parts: dict[int, Part], index: int, kind: str, *, dense: bool) -> Part:
        """A new part under its index: never reused, and (content parts, which clients index) without gaps."""
        if index in parts or (dense and index != len(parts)):
            self.r.fail("part index", f"{index} in output item {item.output_index}, which has parts {sorted(parts)}")
        part = Part(kind, self.ir_index())
        parts[index] = part
        return part

    def part(self, parts: dict[int, Part], index: Any, what: str) -> Part:
        """The open part an event names."""
        at = self.r.int_(index, what)
        part = parts.get(at)
        if part is None or part.ended:
            self.r.fail(what, f"{at} names no open part")
        return part


def extend(r: Reader, part: Part, full: str, what: str, emit: Callable[[str], None]) -> None:
    """A `.done` text against the deltas so far: the rest is emitted when it extends them; a contradiction fails."""
    if not full.startswith(part.text):
        r.fail(what, "the final text is not the text of its deltas")
    rest = full[len(part.text) :]
    if rest:
        part.text = full
        emit(rest)


def text_event(kind: str, index: int, text: str) -> ir.StreamEvent:
    """A text or thinking delta."""
    return ir.delta("text" if kind == "text" else "thinking", index, text)


def end_event(part: Part, signature: str | None = None) -> ir.StreamEvent:
    """The end of a part's block."""
    if part.kind == "text":
        return ir.TextEnd(index=part.ir_index)
    return ir.ThinkingEnd(index=part.ir_index, signature=signature)
