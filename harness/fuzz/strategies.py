"""Hypothesis strategies over a scenario: an IR request, its scripted reply and the expectations that follow
from the reply, kept within what every party of one (frontend, backend) pair can express.

The capabilities a case needs are what its content uses (tools, parallel calls, images, thinking, stop sequences,
the token limit, an overloaded or not-found error); `Space` holds the ones the whole pair has, so a generated
example is never unsupported: a feature the pair lacks is never drawn. Expectations are derived from the reply
(the text, the calls with their arguments, the stop reason, usage), so a baseline that fails them points at the
reference backends, not at the example.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from harness.ir import Capability
from harness.scenarios.model import Scenario

FUZZ_ID = "fuzz"
"""The id every example runs under while fuzzing (a found failure is written under an id of its own)."""

SPECIAL_TEXT = (
    "\U0001f600",  # astral: one code point, two UTF-16 units, four UTF-8 bytes
    "\U0001f469\u200d\U0001f4bb",  # a ZWJ sequence
    "\u05e9\u05dc\u05d5\u05dd",  # right-to-left
    "e\u0301",  # a combining mark
    "\u00e9t\u00e9 \u2014 caf\u00e9",
    '"quoted" \\ back\\slash',
    "line\nbreak\ttab",
    '{"json": [1, 2]}',
    "\u4f60\u597d",
)
"""Text that framing and re-encoding get wrong: split inside UTF-8 sequences, escaped, or shaped by direction."""

IDENT = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12).filter(lambda s: s[0] != "_")
"""A tool, property or enum name: what every protocol accepts as a function or key name."""


def _text() -> st.SearchStrategy[str]:
    plain = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)
    mixed = st.lists(st.one_of(plain, st.sampled_from(SPECIAL_TEXT)), min_size=1, max_size=4).map("".join)
    # Leading and trailing blanks are a protocol's own business (some strip them): keep the text's meaning whole.
    return mixed.map(str.strip).filter(bool)


TEXT = _text()

JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**31), max_value=2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f != int(f) or abs(f) < 2**31),
    TEXT,
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(IDENT, inner, max_size=3)),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(IDENT, JSON_VALUE, max_size=4)
"""Tool-call arguments: any JSON object (every protocol carries arguments as an object)."""


def _schema_leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.sampled_from([{"type": "string"}, {"type": "number"}, {"type": "integer"}, {"type": "boolean"}]),
        st.lists(IDENT, min_size=1, max_size=4, unique=True).map(lambda e: {"type": "string", "enum": e}),
        TEXT.map(lambda d: {"type": "string", "description": d}),
    )


def _schema_object(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(IDENT, children, max_size=4))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if props:
            required = draw(st.lists(st.sampled_from(sorted(props)), unique=True, max_size=len(props)))
            if required:
                schema["required"] = required
        return schema

    return build()


SCHEMA_PROPERTY = st.recursive(
    _schema_leaf(),
    lambda inner: st.one_of(_schema_object(inner), inner.map(lambda item: {"type": "array", "items": item})),
    max_leaves=6,
)
PARAMETERS = _schema_object(SCHEMA_PROPERTY)
"""A tool's parameters: an object schema with nested objects and arrays, enums, empty `properties` and
`required` lists."""


@dataclass(frozen=True)
class Space:
    """What the examples of one (frontend, backend, streaming) cell may use: the capabilities every party of the
    pair has."""

    capabilities: frozenset[Capability]
    stream: bool

    def has(self, capability: Capability) -> bool:
        """Whether every party can express `capability`."""
        return capability in self.capabilities


ERRORS: tuple[dict[str, Any], ...] = (
    {
        "status": 429,
        "kind": "throttled",
        "code": "rate_limit_exceeded",
        "exception": "rate_limit",
        "retry": True,
        "message": "Rate limit reached for requests. Please retry after {n} seconds.",
    },
    {
        "status": 401,
        "kind": "auth",
        "code": "invalid_api_key",
        "exception": "authentication",
        "expect": [401, 403],
        "message": "Incorrect API key provided.",
    },
    {
        "status": 500,
        "kind": "server",
        "code": "api_error",
        "exception": "server_error",
        "message": "The server had an error while processing your request.",
    },
    {
        "status": 400,
        "kind": "context_window_exceeded",
        "code": "context_length_exceeded",
        "exception": "bad_request",
        "message": "prompt is too long: {n} tokens > 200000 maximum (context_length_exceeded)",
    },
    {
        "kind": "not_found",
        "code": "model_not_found",
        "exception": "not_found",
        "expect": [404, 400],
        "needs": Capability.NOT_FOUND_ERROR,
        "message": "The model `no-such-model-{n}` does not exist.",
    },
    {
        "kind": "overloaded",
        "code": "overloaded_error",
        "exception": "overloaded",
        "expect": [529, 503, 429],
        "needs": Capability.OVERLOADED_ERROR,
        "message": "Overloaded",
    },
)
"""Error replies and what every SDK raises for them: the committed error scenarios' table, one row each."""


@st.composite
def error_scenario(draw: st.DrawFn, space: Space) -> dict[str, Any]:
    """A request answered with an HTTP error: its kind, status and (429) retry-after, as the SDK must see it."""
    row = draw(st.sampled_from([e for e in ERRORS if "needs" not in e or space.has(e["needs"])]))
    expect: dict[str, Any] = {"kind": row["kind"], "exception": row["exception"]}
    number = draw(st.integers(min_value=200_001, max_value=999_999))
    if row.get("retry"):
        number = expect["retry_after"] = draw(st.integers(min_value=1, max_value=120))
    # The provider's own words: some protocols carry no error kind and their readers tell it from the message
    # (a context overflow), so a made-up message would make every baseline fail, not the proxy.
    error: dict[str, Any] = {"kind": row["kind"], "message": row["message"].format(n=number), "code": row["code"]}
    if row.get("retry"):
        error["retry_after"] = number
    reply: dict[str, Any] = {"kind": "error", "error": error}
    if "status" in row:
        reply["status"] = row["status"]
    expect["status"] = row.get("expect", row.get("status"))
    requires = [row["needs"]] if "needs" in row else []
    return {
        "request": draw(_request(space, tools=False)),
        "reply": reply,
        "expect": {"error": expect},
        "requires": requires,
    }


@st.composite
def _request(draw: st.DrawFn, space: Space, *, tools: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        messages.append({"role": "user", "content": [{"kind": "text", "text": draw(TEXT)}]})
        messages.append({"role": "assistant", "content": [{"kind": "text", "text": draw(TEXT)}]})
    content: list[dict[str, Any]] = [{"kind": "text", "text": draw(TEXT)}]
    messages.append({"role": "user", "content": content})
    request: dict[str, Any] = {"messages": messages, "max_tokens": draw(st.integers(min_value=16, max_value=4096))}
    if draw(st.booleans()):
        request["system"] = draw(TEXT)
    if tools:
        names = draw(st.lists(IDENT, min_size=1, max_size=3, unique=True))
        request["tools"] = [{"name": name, "description": draw(TEXT), "parameters": draw(PARAMETERS)} for name in names]
    return request


def _tool_choice(draw: st.DrawFn, space: Space, request: dict[str, Any]) -> str | None:
    """Where the pair carries a tool choice, maybe one the reply's calls keep to (`required`, or one named tool,
    which every call then uses); returns the name every call must use ("" for any). Not `auto`: with tools
    offered it is every protocol's default, so a proxy may leave it out (the request diff reads them as one)."""
    if not space.has(Capability.TOOL_CHOICE) or not draw(st.booleans()):
        return None
    kind = draw(st.sampled_from(("required", "tool")))
    if kind != "tool":
        request["tool_choice"] = {"kind": kind}
        return ""
    name = draw(st.sampled_from([t["name"] for t in request["tools"]]))
    request["tool_choice"] = {"kind": "tool", "name": name}
    return str(name)


@st.composite
def ok_scenario(draw: st.DrawFn, space: Space) -> dict[str, Any]:
    """A request answered with content: text, tool calls (1 to 5 in one turn where the pair has parallel calls,
    under a tool choice they keep to where the pair carries one), a thinking block with its signature, usage;
    the stop reason that follows from them."""
    requires: set[Capability] = set()
    calls = 0
    if space.has(Capability.TOOLS) and draw(st.booleans()):
        most = 5 if space.has(Capability.PARALLEL_TOOLS) else 1
        calls = draw(st.integers(min_value=1, max_value=most))
        requires.add(Capability.TOOLS)
        if calls > 1:
            requires.add(Capability.PARALLEL_TOOLS)
    request = draw(_request(space, tools=calls > 0))
    content: list[dict[str, Any]] = []
    if space.has(Capability.THINKING) and draw(st.booleans()):
        content.append(
            {
                "kind": "thinking",
                "text": draw(TEXT),
                "signature": draw(
                    st.text(alphabet=string.ascii_letters + string.digits + "+/", min_size=8, max_size=40)
                ),
            }
        )
        request["thinking"] = {"enabled": True, "budget_tokens": 1024}
        request["max_tokens"] = max(request["max_tokens"], 2048)
        requires.add(Capability.THINKING)
    text = draw(TEXT) if calls == 0 or draw(st.booleans()) else None
    if text is not None:
        content.append({"kind": "text", "text": text})
    forced = _tool_choice(draw, space, request) if calls else None
    if forced is not None:
        requires.add(Capability.TOOL_CHOICE)
    expected_calls = []
    for i in range(calls):
        name = forced or draw(st.sampled_from([t["name"] for t in request["tools"]]))
        arguments = draw(ARGUMENTS)
        content.append({"kind": "tool_call", "id": f"call_{i}_{name}", "name": name, "arguments": arguments})
        expected_calls.append({"name": name, "arguments": arguments})
    stop = "tool_use" if calls else "end_turn"
    if not calls and space.has(Capability.STOP_MAX_TOKENS) and draw(st.booleans()):
        stop = "max_tokens"
        requires.add(Capability.STOP_MAX_TOKENS)
    usage: dict[str, Any] = {
        "input_tokens": draw(st.integers(min_value=1, max_value=100_000)),
        "output_tokens": draw(st.integers(min_value=1, max_value=8192)),
    }
    expect: dict[str, Any] = {"stop_reason": stop, "usage_present": True, "tool_calls": expected_calls}
    if Capability.TOOL_CHOICE in requires:
        expect["request_fields"] = ["tool_choice"]
    if text is not None:
        expect["text_equals"] = text
    if Capability.THINKING in requires:
        expect["thinking_present"] = True
    reply = {"kind": "ok", "content": content, "stop_reason": {"kind": stop}, "usage": usage}
    return {"request": request, "reply": reply, "expect": expect, "requires": sorted(requires)}


@st.composite
def chunking(draw: st.DrawFn) -> dict[str, Any]:
    """How the reference backend cuts the answer: delta sizes and HTTP chunk sizes (odd sizes split UTF-8)."""
    out: dict[str, Any] = {}
    for key, top in (("text_chunk_size", 12), ("arguments_chunk_size", 12), ("transport_chunk_bytes", 64)):
        # One example in four: a byte-sized cut costs a chunk per byte in every run and cassette.
        if draw(st.sampled_from((False, False, False, True))):
            out[key] = draw(st.integers(min_value=1, max_value=top))
    return out


@st.composite
def scenarios(draw: st.DrawFn, space: Space) -> Scenario:
    """One example: a scenario under `FUZZ_ID` that the pair can express in `space.stream`'s mode."""
    body = draw(st.one_of(ok_scenario(space), error_scenario(space)))
    doc = {
        "id": FUZZ_ID,
        "description": "Generated by conformance fuzz.",
        **body,
        "requires": [str(c) for c in body["requires"]],
        "streaming": ["stream" if space.stream else "nonstream"],
        "chunking": draw(chunking()),
    }
    return Scenario.model_validate(doc)
