"""The wire against the providers' own specs: findings in one answer body, stream event, error body or request.

A protocol's facts name its vendored spec documents (`ProtocolFacts.wire_specs`, a profile inheriting its
family's): compact JSON Schemas (Draft 2020-12) written by `scripts/refresh_specs.py` from the providers' published
specs or their SDKs' generated types, each with its provenance (`<package>/PROVENANCE.json`, docs/specs.md). Each
document is compiled once into plain Python checks (`functools.cache`) that walk a parsed JSON value:

- a missing required field, a wrong type, null where not allowed, an enum or constant value outside the spec, and
  (in a request to an API that rejects unknown fields) an unknown field are violations: `governs=True` when the
  document governs (the provider's own spec), a warning otherwise (a second spec, such as Open Responses);
- an undocumented extra field in an answer, or an undocumented stream event type, is a warning (`governs=False`).

The documents use a subset of JSON Schema (`type`, `properties`, `required`, `additionalProperties` for maps,
`items`, `anyOf`, `enum`, `const`, `$ref`) plus OpenAPI's `discriminator` on unions told apart by `type`, so a
value is checked against its own branch; `jsonschema` reads the same documents (the tests hold the two together).
Bedrock's stream events are one event-stream frame each, given as `{"<:event-type>": payload}`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from harness.protocols import registry
from harness.wire.eventstream import EventStreamDecoder
from harness.wire.sse import SSEDecoder

AnswerKind = Literal["body", "event", "error", "socket_error"]
SOCKET_FRAMES = "frames=websocket"
"""The media-type parameter saying that SSE-framed chunks are the frames of a WebSocket mode (`runner/socket_run`):
there an `error` event with a nested `error` is the mode's own (`socket_error`, e.g. the Responses API's
`ResponseWsError`: `status`, nested `error`), which a document without that entry does not judge."""

__all__ = ["SchemaFinding", "answer_findings", "answer_payloads", "has_spec", "request_findings"]


@dataclass(frozen=True)
class SchemaFinding:
    """One place where a payload departs from a spec."""

    path: str
    """JSON path in the instance (`output[0].phase`, `created`; `$` for the whole value)."""
    message: str
    """One line: what is wrong (`required field 'completed_at' is missing`)."""
    spec: str
    """Which spec and version, and the definition it failed (`OpenAI openai-python 3.57.0 types ... #/Response`)."""
    governs: bool
    """True: a violation of the governing spec (a proxy bug); False: a warning (a wire deviation)."""


_BUG, _EXTRA = True, False
_Raw = tuple[str, str, str, bool]
"""(path, message, definition, is_violation) before the document's label and weight are applied."""


class _Ctx:
    __slots__ = ("event", "extras_violate", "out", "request", "top_only")

    def __init__(self, *, extras_violate: bool, top_only: bool, event: bool, request: bool) -> None:
        self.out: list[_Raw] = []
        self.extras_violate = extras_violate
        """An unknown field is a violation (a request to an API that rejects them)..."""
        self.top_only = top_only
        """...at the top level of the body only (OpenAI rejects unknown parameters, not unknown nested keys)."""
        self.event = event
        """The payload is a stream event (an unknown event type only warns)."""
        self.request = request
        """The payload is a request (a missing required field that may be null only warns)."""


_Check = Callable[[Any, str, _Ctx], None]
"""A compiled check: (value, its path, where to write findings). Which definition a finding names is fixed when
the check is compiled (the nearest enclosing `$defs` entry), so it is no argument."""


def _noop(value: Any, path: str, ctx: _Ctx) -> None:
    return None


def _key(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _json_type_of(kind: type) -> str:
    return {str: "string", dict: "object", list: "array", bool: "boolean", int: "integer", float: "number"}.get(
        kind, "null"
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "object": (dict,),
    "array": (list,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}
_ALL_TYPES = (str, dict, list, bool, type(None), int, float)


def _accepted(kinds: list[str]) -> frozenset[type]:
    """The exact Python types of parsed JSON a `type` keyword accepts (an integral float is an `integer` too)."""
    return frozenset(t for kind in kinds for t in _PY_TYPES.get(kind, ())) | (
        frozenset({float}) if "integer" in kinds else frozenset()
    )


def _type_ok(value: Any, types: frozenset[type], integral_only: bool) -> bool:
    kind = type(value)
    return kind in types and not (integral_only and kind is float and not value.is_integer())


def _snake(name: str) -> str:
    """A lowerCamel proto field name as its original snake_case one (`maxOutputTokens` -> `max_output_tokens`)."""
    return re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), name)


class _Compiler:
    """Turns one document's schemas into checks; a `$ref` to a definition still being compiled (a recursive one)
    resolves when first run."""

    def __init__(self, defs: dict[str, Any], *, proto_json: bool = False) -> None:
        self.defs = defs
        self.table: dict[str, _Check] = {}
        self.compiling: set[str] = set()
        self.proto_json = proto_json
        """proto3 JSON (`x-proto-json`): a lowerCamel field is read by its snake_case name too."""

    def definition(self, name: str) -> _Check:
        if name in self.table:
            return self.table[name]
        if name not in self.defs:
            raise KeyError(f"spec has no definition {name!r}")
        table = self.table
        if name in self.compiling:  # a recursive reference: looked up when run, once the definition is compiled

            def later(value: Any, path: str, ctx: _Ctx) -> None:
                table[name](value, path, ctx)

            return later
        self.compiling.add(name)
        table[name] = self.compile(self.defs[name], name)
        self.compiling.discard(name)
        return table[name]

    def kinds(self, node: Any, depth: int = 0) -> frozenset[type] | None:
        """The Python types a schema can accept at its root (None: any), to pick a union's branches fast."""
        if not isinstance(node, dict) or depth > 30:
            return None
        if "$ref" in node:
            return self.kinds(self.defs.get(node["$ref"].rsplit("/", 1)[-1]), depth + 1)
        if "anyOf" in node:
            found: set[type] = set()
            for branch in node["anyOf"]:
                sub = self.kinds(branch, depth + 1)
                if sub is None:
                    return None
                found |= sub
            return frozenset(found)
        if "type" in node:
            kinds = node["type"]
            return _accepted(kinds if isinstance(kinds, list) else [kinds])
        values = [node["const"]] if "const" in node else node.get("enum")
        if isinstance(values, list):
            return frozenset(float if type(v) is int else type(v) for v in values) | {type(v) for v in values}
        return None

    def compile(self, node: Any, where: str) -> _Check:
        """The check of one schema node inside the definition `where` (which its findings name)."""
        if not isinstance(node, dict) or not node:
            return _noop
        if "$ref" in node:
            return self.definition(node["$ref"].rsplit("/", 1)[-1])
        if "anyOf" in node:
            return self._any_of(node, where)
        kinds = node.get("type")
        names = (kinds if isinstance(kinds, list) else [kinds]) if kinds is not None else []
        types = _accepted(names) if names else None
        integral_only = "integer" in names and "number" not in names
        want = " or ".join(names)
        value_check = (
            self._const(node["const"], where)
            if "const" in node
            else self._enum(node["enum"], where)
            if "enum" in node
            else None
        )
        shaped = "properties" in node or "additionalProperties" in node or "required" in node
        if shaped and value_check is None and "items" not in node:  # an object's node: its type check in one
            return self._object(node, where, (types, integral_only, want))
        obj = self._object(node, where, None) if shaped else None
        item = self.compile(node["items"], where) if "items" in node else None
        if types is None and value_check is None and obj is None and item is None:
            return _noop
        if types is not None and value_check is None and obj is None and item is None:
            return _typed(types, integral_only, want, where)

        def check(value: Any, path: str, ctx: _Ctx) -> None:
            if types is not None and not _type_ok(value, types, integral_only):
                _wrong_type(value, path, want, where, ctx)
                return
            if value_check is not None:
                value_check(value, path, ctx)
            kind = type(value)
            if obj is not None and kind is dict:
                obj(value, path, ctx)
            elif item is not None and kind is list:
                for i, element in enumerate(value):
                    item(element, f"{path}[{i}]", ctx)

        return check

    @staticmethod
    def _const(expected: Any, where: str) -> _Check:
        def check(value: Any, path: str, ctx: _Ctx) -> None:
            if value != expected:
                ctx.out.append((path or "$", f"value {_show(value)} is not {_show(expected)}", where, _BUG))

        return check

    @staticmethod
    def _enum(values: list[Any], where: str) -> _Check:
        allowed = set(map(json.dumps, values))
        listed = ", ".join(map(str, values[:8])) + (", ..." if len(values) > 8 else "")

        def check(value: Any, path: str, ctx: _Ctx) -> None:
            if value is not None and json.dumps(value) not in allowed:
                ctx.out.append((path or "$", f"value {_show(value)} is not one of the spec's ({listed})", where, _BUG))

        return check

    def _object(
        self, node: dict[str, Any], where: str, typed: tuple[frozenset[type] | None, bool, str] | None
    ) -> _Check:
        """An object's fields; with `typed` (the node's types, whether only integral numbers, their names), the
        node's type check too (a dict its types allow has its fields checked), else run on a dict only."""
        types, integral_only, want = typed or (None, False, "")
        fields = types is None or dict in types
        props = {name: self.compile(sub, where) for name, sub in node.get("properties", {}).items()}
        if self.proto_json:
            props |= {_snake(name): check for name, check in props.items() if _snake(name) not in props}
        required = tuple(node.get("required", ()))
        # A required field that may be null: in a request the SDKs type it so (`Required[Optional[X]]`) where the
        # API takes its absence as null (a function tool's `strict`), so its absence there only warns.
        nullable = {n for n in required if type(None) in (self.kinds(node.get("properties", {}).get(n)) or ())}
        extra = node.get("additionalProperties")
        more = self.compile(extra, where) if isinstance(extra, dict) else None
        closed = extra is False

        def check(value: Any, path: str, ctx: _Ctx) -> None:
            if type(value) is not dict or not fields:
                if types is not None and not _type_ok(value, types, integral_only):
                    _wrong_type(value, path, want, where, ctx)
                return
            for name in required:
                if name not in value:
                    lenient = ctx.request and name in nullable
                    ctx.out.append((_key(path, name), f"required field {name!r} is missing", where, not lenient))
            for name, item in value.items():
                sub = props.get(name)
                if sub is not None:
                    sub(item, _key(path, name), ctx)
                elif more is not None:
                    more(item, _key(path, str(name)), ctx)
                else:
                    violation = closed or (ctx.extras_violate and not (ctx.top_only and path))
                    what = "unknown field" if violation else "undocumented field"
                    ctx.out.append((_key(path, str(name)), f"{what} {name!r}", where, violation))

        return check

    def _any_of(self, node: dict[str, Any], where: str) -> _Check:
        branches = [b for b in node["anyOf"] if b != {"type": "null"}]
        nullable = len(branches) < len(node["anyOf"])
        checks = [self.compile(b, where) for b in branches]
        tagged = node.get("discriminator")
        prop = tagged["propertyName"] if tagged else ""
        by_tag = {tag: self.compile(b, where) for tag, b in tagged["mapping"].items()} if tagged else {}
        tags = ", ".join(sorted(by_tag)[:6]) + (", ..." if len(by_tag) > 6 else "")
        roots = [self.kinds(b) for b in branches]
        # The branches that can take a value of each Python type: most unions have one per type.
        by_type = {t: [c for c, r in zip(checks, roots, strict=True) if r is None or t in r] for t in _ALL_TYPES}
        want = " or ".join(sorted({_json_type_of(t) for r in roots if r is not None for t in r}))

        def check(value: Any, path: str, ctx: _Ctx) -> None:
            if value is None:
                if not nullable:
                    ctx.out.append((path or "$", "null where the spec does not allow it", where, _BUG))
                return
            if by_tag and isinstance(value, dict) and isinstance(value.get(prop), str):
                branch = by_tag.get(value[prop])
                if branch is not None:
                    branch(value, path, ctx)
                elif ctx.event and not path:
                    ctx.out.append(("type", f"undocumented event type {value[prop]!r}", where, _EXTRA))
                else:
                    msg = f"{prop} {_show(value[prop])} is not one of the spec's ({tags})"
                    ctx.out.append((_key(path, prop), msg, where, _BUG))
                return
            candidates = by_type.get(type(value), checks)
            if len(candidates) == 1:
                candidates[0](value, path, ctx)
            elif not candidates:
                ctx.out.append((path or "$", f"expected {want}, got {_json_type(value)}", where, _BUG))
            else:
                _best_branch(candidates, value, path, ctx)

        return check


def _wrong_type(value: Any, path: str, want: str, where: str, ctx: _Ctx) -> None:
    if value is None:
        ctx.out.append((path or "$", "null where the spec does not allow it", where, _BUG))
    else:
        ctx.out.append((path or "$", f"expected {want}, got {_json_type(value)}", where, _BUG))


def _typed(types: frozenset[type], integral_only: bool, want: str, where: str) -> _Check:
    """The check of a node that only names its types (most leaves: `{"type": "string"}`)."""

    def check(value: Any, path: str, ctx: _Ctx) -> None:
        if not _type_ok(value, types, integral_only):
            _wrong_type(value, path, want, where, ctx)

    return check


def _best_branch(checks: list[_Check], value: Any, path: str, ctx: _Ctx) -> None:
    """The first branch the value satisfies (its warnings kept), else the nearest one's violations (a branch
    rejecting the value's type at this very path is the farthest, and each of the value's fields a branch does
    not name counts half a violation: a Chat chunk with a bad choice is nearer the chunk than the error body,
    which names none of its fields)."""
    best: list[_Raw] | None = None
    best_score = 0.0
    for branch in checks:
        trial = _Ctx(extras_violate=ctx.extras_violate, top_only=ctx.top_only, event=ctx.event, request=ctx.request)
        branch(value, path, trial)
        bugs = [f for f in trial.out if f[3]]
        if not bugs:
            ctx.out.extend(trial.out)
            return
        score = sum(1000 if f[0] == (path or "$") else 1 for f in bugs) + (len(trial.out) - len(bugs)) / 2
        if best is None or score < best_score:
            best, best_score = trial.out, score
    if best is not None:
        ctx.out.extend(best)


@dataclass(frozen=True)
class _Document:
    label: str
    governs: bool
    rejects_unknown: bool | Literal["top"]
    entries: dict[str, _Check]


@functools.cache
def _document(package: str, name: str) -> _Document:
    text = resources.files(package).joinpath(f"{name}.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    compiler = _Compiler(doc["$defs"], proto_json=bool(doc.get("x-proto-json")))
    entries = {kind: compiler.definition(target) for kind, target in doc["x-entries"].items()}
    rejects = doc["x-rejects-unknown-request-fields"]
    return _Document(doc["x-spec"], bool(doc["x-governs"]), "top" if rejects == "top" else bool(rejects), entries)


@functools.cache
def _documents(protocol: str) -> list[tuple[_Document, bool]]:
    return [(_document(ref.package, ref.document), ref.strict_requests) for ref in registry.facts(protocol).wire_specs]


def has_spec(protocol: str) -> bool:
    """Whether a spec of `protocol`'s wire is vendored (its own, or its family's for a profile)."""
    return bool(registry.facts(protocol).wire_specs)


UNDOCUMENTED = "undocumented field"
"""How a finding of an extra field the spec does not name begins."""


def _run(protocol: str, kind: str, payload: object, *, request: bool) -> list[SchemaFinding]:
    """Every document's findings, but an extra field that is no violation is reported only when no document of
    the protocol names it: where OpenAI's types and Open Responses disagree on a field (the stream error event's
    flat `code` against its nested `error`), a field one of them documents is not undocumented."""
    found: list[list[SchemaFinding]] = []
    for doc, strict in _documents(protocol):
        if kind not in doc.entries:  # a document that does not describe WebSocket mode (`socket_error`)
            continue
        violate = request and strict and bool(doc.rejects_unknown)
        ctx = _Ctx(
            extras_violate=violate, top_only=doc.rejects_unknown == "top", event=kind == "event", request=request
        )
        doc.entries[kind](payload, "", ctx)
        found.append([SchemaFinding(p, m, f"{doc.label} #/{w}", doc.governs and v) for p, m, w, v in ctx.out])
    if not any(found):  # most payloads: nothing to weigh
        return []
    flagged = [{f.path for f in fs if f.message.startswith(UNDOCUMENTED)} for fs in found]
    everywhere = set.intersection(*flagged) if flagged else set()
    return [
        f for fs in found for f in fs if f.governs or not f.message.startswith(UNDOCUMENTED) or f.path in everywhere
    ]


def answer_findings(protocol: str, kind: AnswerKind, payload: object) -> list[SchemaFinding]:
    """What in one parsed answer departs from `protocol`'s specs: a non-streamed body, one stream event's payload
    (an SSE event's data, an NDJSON line or array element, or a Bedrock frame as `{event_type: payload}`), or an
    error body. Empty when none is vendored (`has_spec`)."""
    if kind not in ("body", "event", "error", "socket_error"):
        raise ValueError(f"kind must be body, event, error or socket_error, not {kind!r}")
    return _run(protocol, kind, payload, request=False)


def _event_kind(payload: Any, *, socket: bool = False) -> AnswerKind:
    """An SSE event that holds only `error` is the provider's error body sent inside the stream (Gemini's
    `{"error": {"code", "message", "status"}}`, OpenAI Chat's `{"error": {...}}`): held to the error shape. A
    WebSocket mode's frame (`socket`) of type `error` with a nested `error` is the mode's own error event."""
    nested = isinstance(payload, dict) and payload.get("type") == "error" and isinstance(payload.get("error"), dict)
    if socket and nested:
        return "socket_error"
    return "error" if isinstance(payload, dict) and list(payload) == ["error"] else "event"


AnswerPart = tuple[str, str | bytes]
"""One payload's text as an answer holds it (an SSE event's data as the decoder gave it, else the bytes), and how
it is read (`part_payloads`): `error` (an error body), `sse` or `socket` (an SSE event's data; a WebSocket frame),
`line` (an NDJSON line), `json` (a body, or a JSON array of events), `frame <event type>` (an AWS event-stream
frame's payload)."""


@functools.lru_cache(maxsize=4)
def sse_data(body: bytes) -> tuple[str, ...]:
    """The data of every event of a whole SSE body, in order (empty data and `[DONE]` kept), as `iter_sse` reads
    them; raises `FramingError` on broken framing. Split once for every reader of one answer (the answer spec, the
    raw fields, the frontend's wire rules; they only read it): the last few bodies are kept, and a run's checks
    pass the same bytes object, whose hash Python keeps."""
    decoder = SSEDecoder()
    return tuple(e.data for e in (*decoder.feed(body), *decoder.close()))


EVENT_TEXTS = 8192
"""SSE event data texts whose parsed JSON is kept (`event_json`): more than the events of a long answer, so that
reading one answer's events in order again finds each of them."""


@functools.lru_cache(maxsize=EVENT_TEXTS)
def event_json(data: str) -> Any:
    """One SSE event's data parsed as JSON (raises `json.JSONDecodeError` on a text that is none), kept: the
    answer spec, the raw fields and each protocol's wire rules read the same events of one answer (the same
    `sse_data` strings, whose hash Python keeps), and parse each once between them. Readers only read the value."""
    return json.loads(data)


def answer_parts(body: bytes, *, media_type: str, status: int) -> tuple[AnswerPart, ...]:
    """An answer's raw body cut into its payloads' texts by its media type alone, none of them parsed: with
    `part_payloads`, what `answer_payloads` gives, for a caller that reads the same texts again and again (a
    matrix repeats its payloads) and need not parse one it has seen. Raises `ValueError` (a `WireError`) on framing
    that is not what the media type says."""
    media, *params = (p.strip().lower() for p in media_type.split(";"))
    if status >= 400 and media != "text/event-stream":
        return (("error", body),)
    if media == "text/event-stream":
        how = "socket" if SOCKET_FRAMES in params else "sse"
        return tuple((how, data) for data in sse_data(body) if data.strip() not in ("", "[DONE]"))
    if media == "application/vnd.amazon.eventstream":
        stream = EventStreamDecoder()
        out: list[AnswerPart] = []
        for message in [*stream.feed(body), *stream.close()]:
            name = message.headers.get(":event-type") or message.headers.get(":exception-type")
            out.append(("frame " + str(name), message.payload))
        return tuple(out)
    if media in ("application/x-ndjson", "application/jsonl", "application/ndjson"):
        return tuple(("line", line) for line in body.splitlines() if line.strip())
    return (("json", body),)


def part_payloads(how: str, text: str | bytes) -> tuple[tuple[AnswerKind, Any], ...]:
    """The parsed payloads of one `answer_parts` part (one, or a JSON array's elements); raises `ValueError` (a
    JSON error) on a text that is no JSON."""
    if how == "error":
        return (("error", json.loads(text)),)
    if how in ("sse", "socket"):
        payload = event_json(text) if isinstance(text, str) else json.loads(text)
        return ((_event_kind(payload, socket=how == "socket"), payload),)
    if how.startswith("frame "):
        return (("event", {how.removeprefix("frame "): json.loads(text) if text else {}}),)
    if how == "line":
        return (("event", json.loads(text)),)
    value = json.loads(text)
    if isinstance(value, list):
        return tuple(("event", item) for item in value)
    return (("body", value),)


@functools.lru_cache(maxsize=2)
def answer_payloads(body: bytes, *, media_type: str, status: int) -> tuple[tuple[AnswerKind, Any], ...]:
    """An answer's raw body as the parsed payloads `answer_findings` takes, by its media type alone: an error
    body (status >= 400); SSE events' data (`[DONE]` and empty data left out; WebSocket frames: `SOCKET_FRAMES`); AWS
    event-stream frames as `{event_type: payload}`; NDJSON lines; a JSON array's elements (Gemini's stream without
    `alt=sse`); else the body. Raises `ValueError` (a `WireError` or a JSON error) on a body that is not what its
    media type says. Cached: the answer checks of one run read the same payloads (they only read them)."""
    parts = answer_parts(body, media_type=media_type, status=status)
    return tuple(payload for how, text in parts for payload in part_payloads(how, text))


def request_findings(protocol: str, payload: object) -> list[SchemaFinding]:
    """What in one parsed request body sent to `protocol`'s API departs from its specs; an unknown field is a
    violation where the API rejects unknown fields."""
    return _run(protocol, "request", payload, request=True)
