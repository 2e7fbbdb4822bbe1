"""Hypothesis strategies over a scenario: an IR request, its scripted reply and the expectations that follow
from the reply, kept within what every party of one (frontend, backend) pair can express.

The capabilities a case needs are what its content uses (tools, parallel calls, images, files, thinking, stop
sequences, the token limit, an overloaded or not-found error); `Space` holds the ones the whole pair has, so a
generated example is never unsupported: a feature the pair lacks is never drawn. Expectations are derived from the reply
(the text, the calls with their arguments, the stop reason, usage), so a baseline that fails them points at the
reference backends, not at the example.
"""

from __future__ import annotations

import base64
import string
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from harness import ir
from harness.ir import Capability
from harness.scenarios.model import Chunking, ReplyOk, Scenario
from harness.scenarios.script import full_events

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

SIGNATURE = st.binary(min_size=6, max_size=30).map(lambda raw: base64.b64encode(raw).decode("ascii"))
"""A thinking signature: base64, as every provider's are (the Gemini SDK reads `thoughtSignature` as base64 bytes
and rejects a response whose signature is not)."""

IDENT = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12).filter(lambda s: s[0] != "_")
"""A tool, property or enum name: what every protocol accepts as a function or key name."""


def _text() -> st.SearchStrategy[str]:
    plain = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)
    mixed = st.lists(st.one_of(plain, st.sampled_from(SPECIAL_TEXT)), min_size=1, max_size=4).map("".join)
    # Leading and trailing blanks are a protocol's own business (some strip them): keep the text's meaning whole.
    return mixed.map(str.strip).filter(bool)


TEXT = _text()

LONE_SURROGATES = ("\ud800", "\udfff", "\udbff", "\udc00")
"""High and low surrogates on their own: no UTF-8 form, so a JSON encoder must write them as `\\udXXX` escapes,
and a decoder that checks pairs, or a re-encoder to UTF-8, trips on them."""


def reply_text(space: Space) -> st.SearchStrategy[str]:
    """Text of the scripted reply: `TEXT`, with lone surrogates mixed in where every run of the pair carries them.

    Only in the reply: the openai and anthropic SDKs encode a request as UTF-8 JSON without ASCII escapes and
    raise UnicodeEncodeError before sending one that holds a lone surrogate, so no request of theirs can.
    """
    if not space.lone_surrogates:
        return TEXT
    return st.lists(st.one_of(TEXT, st.sampled_from(LONE_SURROGATES)), min_size=1, max_size=4).map("".join)


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
    lone_surrogates: bool = False
    """Whether every run of the pair carries reply text holding a lone surrogate (JSON `"\\ud800"` on the wire):
    probed by `harness.fuzz.engine.carries_lone_surrogates`, never assumed."""

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
        "status": 403,
        "kind": "permission",
        "code": "permission_error",
        "exception": "permission_denied",
        # swink's client reads every 401 and 403 as an auth failure (`classify_http_status`).
        "seen_as": {"kind": ["permission", "auth"], "exception": ["permission_denied", "authentication"]},
        "message": "Your API key does not have permission to use the specified resource.",
    },
    {
        "status": 400,
        "kind": "invalid_request",
        "code": "invalid_request_error",
        "exception": "bad_request",
        "message": "Invalid value for 'temperature': expected a number between 0 and 2, got {n}.",
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
    expect: dict[str, Any] = {"kind": row["kind"], "exception": row["exception"], **row.get("seen_as", {})}
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


IMAGE_MAGIC = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff\xe0",
    "image/gif": b"GIF89a",
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 ",
}
"""The image types every codec maps (Bedrock's `format` enum), each with its magic bytes: Ollama's images carry no
media type and its decoder sniffs it from them (its declared `Base64Image.media_type` loss)."""


@st.composite
def image(draw: st.DrawFn) -> dict[str, Any]:
    """An inline image part: magic bytes of its type and a few more. Inline only: Bedrock and Ollama declare
    `UrlImage` lost, and an image by URL is not sent to them."""
    media_type = draw(st.sampled_from(sorted(IMAGE_MAGIC)))
    raw = IMAGE_MAGIC[media_type] + draw(st.binary(min_size=1, max_size=24))
    source = {"type": "base64", "media_type": media_type, "data": base64.b64encode(raw).decode("ascii")}
    return {"kind": "image", "source": source}


PDF_HEAD = b"%PDF-1.4\n"
"""A PDF's first line: what a reader (and a provider) checks first."""
FILE_NAME = st.from_regex(r"[a-z][a-z0-9_\-]{0,11}\.pdf", fullmatch=True)


@st.composite
def file_part(draw: st.DrawFn) -> dict[str, Any]:
    """An inline PDF part (the file form every protocol with `files` maps), with or without a name: the name is a
    declared loss of Anthropic and Gemini and rewritten by Bedrock, so the diff must apply those losses."""
    raw = PDF_HEAD + draw(st.binary(min_size=1, max_size=32))
    part = {"kind": "file", "media_type": "application/pdf", "data": base64.b64encode(raw).decode("ascii")}
    if draw(st.booleans()):
        part["filename"] = draw(FILE_NAME)
    return part


@st.composite
def _user_content(draw: st.DrawFn, space: Space) -> list[dict[str, Any]]:
    """A user turn: text, and where the pair has vision or files, maybe images or files after or between texts."""
    content: list[dict[str, Any]] = [{"kind": "text", "text": draw(TEXT)}]
    kinds = [
        kind
        for capability, kind in ((Capability.VISION, image), (Capability.FILES, file_part))
        if space.has(capability)
    ]
    if kinds and draw(st.sampled_from((False, False, True))):
        for _ in range(draw(st.integers(min_value=1, max_value=2))):
            content.append(draw(draw(st.sampled_from(kinds))()))
            if draw(st.booleans()):
                content.append({"kind": "text", "text": draw(TEXT)})
    return content


def uses_images(request: dict[str, Any]) -> bool:
    """Whether a drawn request holds an image (the case then needs vision)."""
    return any(p["kind"] == "image" for m in request["messages"] for p in m["content"])


def uses_files(request: dict[str, Any]) -> bool:
    """Whether a drawn request holds a file (the case then needs files)."""
    return any(p["kind"] == "file" for m in request["messages"] for p in m["content"])


@st.composite
def _request(draw: st.DrawFn, space: Space, *, tools: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        messages.append({"role": "user", "content": draw(_user_content(space))})
        messages.append({"role": "assistant", "content": [{"kind": "text", "text": draw(TEXT)}]})
    messages.append({"role": "user", "content": draw(_user_content(space))})
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
                "signature": draw(SIGNATURE),
            }
        )
        request["thinking"] = {"enabled": True, "budget_tokens": 1024}
        request["max_tokens"] = max(request["max_tokens"], 2048)
        requires.add(Capability.THINKING)
    text = draw(reply_text(space)) if calls == 0 or draw(st.booleans()) else None
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


MIDSTREAM_ERRORS: tuple[dict[str, Any], ...] = (
    {"kind": "server", "code": "api_error", "message": "The server had an error while processing your request."},
    # Ollama's stream errors are a bare message: the SDK drivers read the kind from a code-like word in it.
    {"kind": "throttled", "code": "rate_limit_exceeded", "message": "Rate limit reached (rate_limit_exceeded)."},
    {"kind": "overloaded", "code": "overloaded_error", "message": "Overloaded", "needs": Capability.OVERLOADED_ERROR},
)
"""Errors a provider sends inside a 200 stream, after content began: the kinds every protocol names there (swink's
stream errors cannot name an overloaded backend: it needs the capability)."""


@st.composite
def midstream_scenario(draw: st.DrawFn, space: Space) -> dict[str, Any]:
    """A streamed answer (maybe thinking, then text) cut by an error event after at least one content delta: the
    client must see the text sent before the cut, then raise the error, never end as if the answer were whole."""
    requires: set[Capability] = set()
    request = draw(_request(space, tools=False))
    content: list[dict[str, Any]] = []
    if space.has(Capability.THINKING) and draw(st.booleans()):
        content.append({"kind": "thinking", "text": draw(TEXT), "signature": "c2lnbmF0dXJl"})
        request["thinking"] = {"enabled": True, "budget_tokens": 1024}
        request["max_tokens"] = max(request["max_tokens"], 2048)
        requires.add(Capability.THINKING)
    content.append({"kind": "text", "text": draw(reply_text(space))})
    usage = {"input_tokens": draw(st.integers(min_value=1, max_value=100_000)), "output_tokens": 1}
    cuts = draw(chunking())
    # Said, not left to each backend's typical size: the cut then falls after the same text on every backend.
    cuts.setdefault("text_chunk_size", draw(st.integers(min_value=1, max_value=12)))
    reply: dict[str, Any] = {"kind": "ok", "content": content, "stop_reason": {"kind": "end_turn"}, "usage": usage}
    events = full_events(ReplyOk.model_validate(reply), Chunking.model_validate(cuts))
    first = next(i for i, e in enumerate(events) if isinstance(e, ir.TextDelta | ir.ThinkingDelta))
    cut = draw(st.integers(min_value=first + 1, max_value=len(events) - 1))
    row = draw(st.sampled_from([e for e in MIDSTREAM_ERRORS if "needs" not in e or space.has(e["needs"])]))
    if "needs" in row:
        requires.add(row["needs"])
    error = {"kind": row["kind"], "code": row["code"], "message": row["message"]}
    reply["midstream_error"] = {"after_events": cut, "error": error}
    expect: dict[str, Any] = {"error": {"kind": row["kind"], "exception": "stream_error"}}
    sent = "".join(e.text for e in events[:cut] if isinstance(e, ir.TextDelta))
    if sent:
        expect["text_contains"] = [sent]
    return {"request": request, "reply": reply, "expect": expect, "requires": sorted(requires), "chunking": cuts}


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
    kinds = [ok_scenario(space), error_scenario(space)]
    if space.stream:
        kinds.append(midstream_scenario(space))
    body = draw(st.one_of(kinds))
    requires = {str(c) for c in body["requires"]}
    if uses_images(body["request"]):
        requires.add(str(Capability.VISION))
    if uses_files(body["request"]):
        requires.add(str(Capability.FILES))
    doc = {
        "id": FUZZ_ID,
        "description": "Generated by conformance fuzz.",
        **body,
        "requires": sorted(requires),
        "streaming": ["stream" if space.stream else "nonstream"],
        "chunking": body["chunking"] if "chunking" in body else draw(chunking()),
    }
    return Scenario.model_validate(doc)
