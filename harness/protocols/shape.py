"""Wire shapes: what a response body looks like with its values taken out, to hold the reference backends
against real recordings.

A codec that can be measured splits a body into typed wire events (`ShapeProbe.wire_events`: one per SSE
event, NDJSON line, JSON-array element, or the whole body). The shape of a body is then:

- its *sequence*: the event types in order, each run of one type collapsed into one entry (so chunking does
  not count, but where an optional event falls does: a `ping` between two runs of deltas splits them);
- its *key paths*: per event type, every JSON key path (`choices[].delta.content`) with the JSON types its
  values had (`string`, `null`, ...).

`differences` lists what one shape has that the other lacks; the shape test (tests/protocols/test_shape.py)
and `docs/shape.md` (`python -m harness.protocols.shape_table`) read real recordings, re-encode their IR with
the reference backend (`harness.protocols.reference`) and compare.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal, Protocol, runtime_checkable

from harness.protocols.base import Codec


@dataclass(frozen=True)
class WireEvent:
    """One typed piece of a body: an SSE event, an NDJSON line, an array element, or the whole body."""

    type: str
    """The event's type as the protocol names it, refined where one name covers several shapes
    (`content_block_delta:text_delta`, `chunk:content`)."""
    data: Any
    """The parsed JSON payload (None for a marker such as `[DONE]`)."""
    opaque: frozenset[str] = frozenset()
    """Keys whose values are the user's data, not the wire's shape (tool arguments as an object: Anthropic
    `input`, Gemini `args`): their key path counts, what is inside does not."""


@runtime_checkable
class ShapeProbe(Protocol):
    """A codec that can split its bodies into typed wire events (optional part of a codec)."""

    def wire_events(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
        """The typed events of a response body (status >= 400: an error body). Raises `DecodeError`."""
        ...


def probe(codec: Codec) -> ShapeProbe | None:
    """The codec as a shape probe, or None when it cannot split its bodies."""
    return codec if isinstance(codec, ShapeProbe) else None


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def key_paths(value: Any, opaque: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """Every key path of a JSON value with the types found there; list items share one `[]` path segment, and
    the values of `opaque` keys are not entered."""
    out: dict[str, set[str]] = {}

    def walk(node: Any, path: str, key: str | None) -> None:
        if path:
            out.setdefault(path, set()).add(json_type(node))
        if key in opaque:
            return
        if isinstance(node, dict):
            for name, item in node.items():
                walk(item, f"{path}.{name}" if path else str(name), str(name))
        elif isinstance(node, list):
            for item in node:
                walk(item, f"{path}[]", None)

    walk(value, "", None)
    return out


@dataclass
class Shape:
    """The shape of one or more bodies: their collapsed event sequences and key paths per event type."""

    sequences: list[tuple[str, ...]] = field(default_factory=list)
    """One collapsed event-type sequence per body."""
    paths: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    """Event type -> key path -> JSON types seen there."""
    headers: set[str] = field(default_factory=set)
    """Names (lower case) of the response headers that count (see `shape_of`)."""

    def add(self, events: Iterable[WireEvent], headers: Iterable[str] = ()) -> None:
        """Take in one more body."""
        sequence: list[str] = []
        for event in events:
            if not sequence or sequence[-1] != event.type:
                sequence.append(event.type)
            found = self.paths.setdefault(event.type, {})
            for path, types in key_paths(event.data, event.opaque).items():
                found.setdefault(path, set()).update(types)
        self.sequences.append(tuple(sequence))
        self.headers.update(headers)

    @property
    def event_types(self) -> set[str]:
        """Every event type seen."""
        return set(self.paths)

    def path_count(self) -> int:
        """Key paths summed over event types."""
        return sum(len(p) for p in self.paths.values())


def shape_of(events: Iterable[WireEvent], headers: Iterable[str] = ()) -> Shape:
    """The shape of one body."""
    shape = Shape()
    shape.add(events, headers)
    return shape


DifferenceKind = Literal["event", "path", "type", "sequence", "header"]


@dataclass(frozen=True)
class Difference:
    """One way two shapes disagree, named so that a reason can be declared for it."""

    kind: DifferenceKind
    """`event`: an event type one side lacks; `path`: a key path one side lacks; `type`: a key path whose value
    types differ; `sequence`: the event order differs; `header`: a response header one side lacks."""
    event: str
    """The event type (the header name for `header`; the first differing position for `sequence`)."""
    path: str = ""
    """The key path (`type`, `path`), or a short description (`sequence`)."""
    side: Literal["real", "ours", "both"] = "both"
    """Who has what the other lacks: `real` (the recording has it, the reference does not), `ours`, or `both`
    (a type or sequence mismatch)."""

    @property
    def key(self) -> str:
        """`kind event path` with the side, the string reason patterns are matched against."""
        return f"{self.kind} {self.side} {self.event} {self.path}".rstrip()


def differences(real: Shape, ours: Shape) -> list[Difference]:
    """What `real` and `ours` disagree on: event types, key paths, value types, sequences and headers."""
    out: list[Difference] = []
    for event in sorted(real.event_types | ours.event_types):
        if event not in ours.paths:
            out.append(Difference("event", event, side="real"))
            continue
        if event not in real.paths:
            out.append(Difference("event", event, side="ours"))
            continue
        mine, theirs = ours.paths[event], real.paths[event]
        for path in sorted(set(mine) | set(theirs)):
            if path not in mine:
                out.append(Difference("path", event, path, "real"))
            elif path not in theirs:
                out.append(Difference("path", event, path, "ours"))
            elif mine[path] != theirs[path]:
                types = f"{path}: {'/'.join(sorted(theirs[path]))} vs {'/'.join(sorted(mine[path]))}"
                out.append(Difference("type", event, types, "both"))
    for left, right in zip(real.sequences, ours.sequences, strict=False):
        if left != right:
            out.append(Difference("sequence", _first_difference(left, right), _describe(left, right)))
    out += [Difference("header", name, side="real") for name in sorted(real.headers - ours.headers)]
    out += [Difference("header", name, side="ours") for name in sorted(ours.headers - real.headers)]
    return out


def _first_difference(left: tuple[str, ...], right: tuple[str, ...]) -> str:
    for i, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return f"@{i}"
    return f"@{min(len(left), len(right))}"


def _describe(left: tuple[str, ...], right: tuple[str, ...]) -> str:
    return f"{' > '.join(left)} vs {' > '.join(right)}"


def reason_for(difference: Difference, reasons: Mapping[str, str]) -> str | None:
    """The declared reason whose pattern (fnmatch, against `Difference.key`) matches, or None."""
    for pattern, reason in reasons.items():
        if fnmatchcase(difference.key, pattern):
            return reason
    return None


@dataclass
class Agreement:
    """How far our shape agrees with the real one, counted over the union of both."""

    event_types: tuple[int, int]
    """(event types both have, event types either has)."""
    key_paths: tuple[int, int]
    """(key paths both have with the same value types, key paths either has), over event types both have."""
    sequences: tuple[int, int]
    """(bodies whose collapsed sequences are equal, bodies compared)."""
    headers: tuple[int, int]
    """(headers both send, headers either sends)."""


def agreement(real: Shape, ours: Shape) -> Agreement:
    """Agreement counts of two shapes (see `Agreement`)."""
    both = real.event_types & ours.event_types
    same = total = 0
    for event in both:
        mine, theirs = ours.paths[event], real.paths[event]
        total += len(set(mine) | set(theirs))
        same += sum(1 for p in set(mine) & set(theirs) if mine[p] == theirs[p])
    equal = sum(1 for a, b in zip(real.sequences, ours.sequences, strict=False) if a == b)
    return Agreement(
        event_types=(len(both), len(real.event_types | ours.event_types)),
        key_paths=(same, total),
        sequences=(equal, min(len(real.sequences), len(ours.sequences))),
        headers=(len(real.headers & ours.headers), len(real.headers | ours.headers)),
    )
