"""Which difference heads a case: the most specific one, by an explicit ranking of difference kinds.

A case usually differs in several places, and the first in stream order is often not the one to act on (a
`message_start` usage count comes before a lost tool call). The ranking, most specific first:

| kind | what it is (by IR path or value) |
|---|---|
| `broken` | an error where the reference has none (the client's stream or answer broke) |
| `tool call` | a tool call, its name or arguments, a tool definition or result, lost, extra or changed |
| `text` | answer text, thinking, a message's content |
| `stop` | the stop reason, an error, a status |
| `other` | any other field (a request parameter such as temperature) |
| `usage` | a token count |
| `id` | an id (any `*_id`), a model name, a creation time, an index, a signature |

The headline is the divergence of the best kind, the first in stream order among equals. Once a list lost or
gained an item, the items after it are shifted copies of the same cause, so only a list's first whole-item
divergence is a candidate (and an error the compared side alone has: the stream broke). The failing checks
map onto the same kinds (`check_kind`), so the report can tell a check a divergence already explains from one
that is a defect of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Any, Protocol, TypeVar


class Kind(IntEnum):
    """Difference kinds, most specific first (the smaller, the better a headline)."""

    BROKEN = 0
    TOOL_CALL = 1
    TEXT = 2
    STOP = 3
    OTHER = 4
    USAGE = 5
    ID = 6

    @property
    def label(self) -> str:
        """How a title names the kind."""
        return _LABELS[self]


_LABELS = {
    Kind.BROKEN: "answer broke",
    Kind.TOOL_CALL: "tool call",
    Kind.TEXT: "text",
    Kind.STOP: "stop reason or error",
    Kind.OTHER: "field",
    Kind.USAGE: "usage count",
    Kind.ID: "id",
}


class DivergenceLike(Protocol):
    """What the ranking reads of a divergence (`compare.Divergence` and the trace's `DivergenceJSON` both fit)."""

    @property
    def path(self) -> str: ...

    @property
    def left(self) -> Any: ...

    @property
    def right(self) -> Any: ...

    @property
    def change(self) -> str: ...


D = TypeVar("D", bound=DivergenceLike)

_MISSING = "<missing>"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX = re.compile(r"\[\d+\]")
_ID_FIELDS = frozenset(
    {"id", "model", "created", "created_at", "system_fingerprint", "call_id", "item_id", "response_id", "index"}
    | {"output_index", "content_index", "sequence_number", "signature"}
)
_TOOL_FIELDS = frozenset({"tools", "tool_choice", "tool_calls", "arguments", "name", "function_call"})
_TEXT_FIELDS = frozenset({"text", "thinking", "content", "messages", "system", "refusal", "parts"})
_STOP_FIELDS = frozenset({"stop_reason", "finish_reason", "status", "error", "stop_sequence"})

CHECK_KINDS: dict[str, Kind] = {
    "client_crash": Kind.BROKEN,
    "tool_calls": Kind.TOOL_CALL,
    "upstream.tool_call_ids_unique": Kind.TOOL_CALL,
    "text_equals": Kind.TEXT,
    "text_contains": Kind.TEXT,
    "text_is_json": Kind.TEXT,
    "text_matches_schema": Kind.TEXT,
    "thinking_present": Kind.TEXT,
    "thinking_signature": Kind.TEXT,
    "stop_reason": Kind.STOP,
    "no_error": Kind.STOP,
    "error.kind": Kind.STOP,
    "error.status": Kind.STOP,
    "error.exception": Kind.STOP,
    "usage_present": Kind.USAGE,
    "cache_read_present": Kind.USAGE,
    "start_usage_reported": Kind.USAGE,
}
"""The kind of difference each check judges (a check not listed is a defect of its own kind, never covered)."""


def check_kind(name: str) -> Kind | None:
    """The kind of difference a failed check (by name) judges; None for a check of no listed kind."""
    return CHECK_KINDS.get(name)


def _value_kind(value: Any) -> Kind | None:
    if not isinstance(value, dict):
        return None
    kind = str(value.get("kind") or value.get("type") or "")
    if kind.startswith(("tool", "function")):
        return Kind.TOOL_CALL
    if kind.startswith(("text", "thinking", "reasoning", "refusal")):
        return Kind.TEXT
    if kind in ("done", "error"):
        return Kind.STOP
    return None


def _is_error(path: str, value: Any) -> bool:
    if isinstance(value, dict) and value.get("kind") == "error":
        return True
    return path == "error" and value not in (None, _MISSING)


def kind_of(divergence: DivergenceLike) -> Kind:
    """The kind of one divergence: an error only the compared side has is `BROKEN`; else from the value of a whole
    item (a lost tool call is a tool call, whatever took its place) or of a changed `kind`, else from the path's
    names, its last name first (`content[1].id` is an id)."""
    path, left, right = divergence.path, divergence.left, divergence.right
    if _is_error(path, right) and not _is_error(path, left):
        return Kind.BROKEN
    names = _NAME.findall(path)
    last = names[-1] if names else ""
    if path.endswith("].kind") and isinstance(left, str) and isinstance(right, str):  # an item's kind changed
        left, right = {"kind": left}, {"kind": right}
    by_value = [k for k in (_value_kind(left), _value_kind(right)) if k is not None]
    if by_value:
        return min(by_value)
    if last in _ID_FIELDS or last.endswith("_id"):
        return Kind.ID
    if last.endswith("_tokens") or "usage" in names:
        return Kind.USAGE
    for fields, kind in ((_TOOL_FIELDS, Kind.TOOL_CALL), (_STOP_FIELDS, Kind.STOP), (_TEXT_FIELDS, Kind.TEXT)):
        if any(n in fields for n in names):
            return kind
    return Kind.OTHER


def field_of(path: str) -> str:
    """The part of a path that names the field, the same on a stream and an answer: what follows the last index
    (`events[5].stop_reason.kind` and `response.stop_reason.kind` are both `stop_reason.kind`), or the path
    without its root name when it has no index; empty for a whole item (`events[3]`)."""
    cut = max(path.rfind("]") + 1, 0)
    if cut:
        return path[cut:].lstrip(".")
    root, _, rest = path.partition(".")
    return rest or root


def cause_field(divergence: DivergenceLike) -> str:
    """The field a divergence's cause is named by: `field_of` its path, where an item whose kind changed is a
    whole item (`events[2].kind` is `events[2]`), and a whole item or answer that is an error on either side is
    `error` (a stream's error event and a non-streamed answer's error are one cause)."""
    path = divergence.path
    field = "" if path.endswith("].kind") else field_of(path)
    if path == "error" or (field == "" and any(_is_error(path, v) for v in (divergence.left, divergence.right))):
        return "error"
    return field


def candidates(divergences: Iterable[D]) -> list[D]:
    """The divergences that can head a case or name a cause: all but the whole-item divergences that follow the
    first one in the same list (they are its shifted copies), save an error only the compared side has."""
    seen_lists: set[str] = set()
    out: list[D] = []
    for d in divergences:
        whole = _INDEX.search(d.path) is not None and d.path.endswith("]")
        if whole and kind_of(d) is not Kind.BROKEN:
            the_list = d.path[: d.path.rfind("[")]
            if the_list in seen_lists:
                continue
            seen_lists.add(the_list)
        out.append(d)
    return out


def ranked(divergences: Sequence[D]) -> list[D]:
    """The candidates, best kind first; stream order among equals."""
    return sorted(candidates(divergences), key=kind_of)


def headline(divergences: Sequence[D]) -> D | None:
    """The divergence that heads a case: the most specific one (None when there is none)."""
    best = ranked(divergences)
    return best[0] if best else None
