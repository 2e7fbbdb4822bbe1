"""Every Gemini corpus file decodes, in every role its status says, with concrete values asserted per file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness import ir
from harness.protocols import decode_events, encode_events
from harness.protocols.gemini import schemas
from harness.stream import accumulate, validate
from tests.conftest import corpus_dir, corpus_files
from tests.protocols.gemini.support import (
    CODEC,
    check_request,
    check_stream,
    chunkings,
    corpus,
    decode_stream,
    kinds,
    stream_payloads,
    texts,
)

pytestmark = pytest.mark.corpus

FILES = corpus_files("gemini")
INTERACTIONS = [(path.name, i) for path in FILES for i in range(len(corpus(path.name)))] if FILES else []


@pytest.mark.parametrize(("name", "index"), INTERACTIONS)
def test_every_interaction_decodes_in_its_role(name: str, index: int) -> None:
    item = corpus(name)[index]
    request = CODEC.decode_request(item.request)
    assert request.stream == CODEC.is_stream_request(item.request)
    check_request(item.request)
    status, body = item.response.status, item.response.body
    if status >= 400:
        error = CODEC.decode_error(status, item.response.headers, body)
        assert error.status == status
        assert error.message
        return
    if request.stream:
        events = decode_stream(body)
        assert validate(events) == []
        assert isinstance(events[-1], ir.Done)
        check_stream(body)
    else:
        CODEC.decode_response(body)
        check_stream(body)  # a whole response is also a valid stream chunk


@pytest.mark.parametrize(("name", "index"), [c for c in INTERACTIONS if not c[0].startswith("error")])
def test_stream_chunking_does_not_matter(name: str, index: int) -> None:
    body = corpus(name)[index].response.body
    expected = decode_stream(body)
    for how, chunks in chunkings(body).items():
        assert decode_events(CODEC, chunks) == expected, how


@pytest.mark.parametrize(("name", "index"), INTERACTIONS)
def test_pass_through_loses_nothing(name: str, index: int) -> None:
    """decode -> encode -> decode gives the same IR for every recorded request and answer."""
    item = corpus(name)[index]
    request = CODEC.decode_request(item.request)
    encoded = CODEC.encode_request(request)
    check_request(encoded)
    assert CODEC.decode_request(encoded) == request
    assert encoded.path == item.request.path
    assert encoded.query.get("alt") == item.request.query.get("alt")
    status, body = item.response.status, item.response.body
    if status >= 400:
        error = CODEC.decode_error(status, item.response.headers, body)
        again = CODEC.encode_error(error)
        assert CODEC.decode_error(again.status, again.headers, again.body).kind == error.kind
        return
    events = decode_stream(body)
    replayed = encode_events(CODEC, events, request)
    check_stream(replayed)
    assert decode_stream(replayed) == events
    assert replayed.lstrip().startswith(b"[") == body.lstrip().startswith(b"[")


@pytest.mark.parametrize(("name", "index"), [c for c in INTERACTIONS if not c[0].startswith("error")])
def test_whole_response_decodes_like_the_stream(name: str, index: int) -> None:
    """A generateContent body and the same object as a one-chunk stream give the same response."""
    body = corpus(name)[index].response.body
    for payload in stream_payloads(body)[-1:]:
        one = json.dumps(payload).encode()
        assert CODEC.decode_response(one) == accumulate(decode_stream(b"data: " + one + b"\r\n\r\n")).response


@dataclass(frozen=True)
class Case:
    """What one recorded answer must decode to."""

    file: str
    index: int
    text: str
    stop: tuple[str, str]
    usage: tuple[int | None, int | None, int | None]
    """input, output, reasoning tokens."""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    thinking: tuple[str, int] | None = None
    """(start of the thinking text, signature length); None when there is no thinking part."""
    response_id: str = ""
    model: str = ""


CASES = [
    Case(
        "json-array-stream-thought-function-call.yaml",
        0,
        "",
        ("tool_use", "STOP"),
        (32, 54, 42),
        calls=[("pelican_name_generator", {})],
        kinds=["thinking", "tool_call"],
        thinking=("**Generating Pelican Names**\n\nOkay, I'm thinking", 336),
        response_id="OYpyaqycKd2V_uMP65TsgA0",
        model="gemini-2.5-flash",
    ),
    Case(
        "json-array-stream-thought-function-call.yaml",
        1,
        "",
        ("tool_use", "STOP"),
        (105, 13, None),
        calls=[("pelican_name_generator", {})],
        kinds=["tool_call"],
        response_id="OopyavzdMqTQjrEPqLCdqAc",
        model="gemini-2.5-flash",
    ),
    Case(
        "json-array-stream-thought-function-call.yaml",
        2,
        "How about Charles and Sammy?",
        ("end_turn", "STOP"),
        (137, 6, None),
        kinds=["text"],
    ),
    Case(
        "nonstream-parallel-function-calls.yaml",
        0,
        "",
        ("tool_use", "STOP"),
        (70, 116, 76),
        calls=[("secret_retrieval_tool", {"password": "mellon"}), ("secret_retrieval_tool", {"password": "radiance"})],
        kinds=["thinking", "tool_call", "tool_call"],
        thinking=("", 456),
        response_id="AJnyaJv6GPulqtsP5Z6fgAs",
    ),
    Case(
        "nonstream-text.yaml",
        0,
        "To calculate 4200 + 42:\n\n*   **Hundreds, thousands:** 4200\n*   **Tens, ones:** 42\n\n"
        "Adding them together:\n4200\n+  42\n-----\n4242\n\nSo, 4200 + 42 = **4242**.",
        ("end_turn", "STOP"),
        (13, 102, 25),
        kinds=["text"],
        response_id="SJfyaMbrNJKlqtsPvNOW8Ao",
        model="gemini-2.5-flash",
    ),
    Case(
        "sse-stream-function-call-thought-signature-gemini3.yaml",
        0,
        "",
        ("tool_use", "STOP"),
        (29, 212, 202),
        calls=[("get_country", {})],
        kinds=["thinking", "tool_call"],
        thinking=("", 1408),
        model="gemini-3-pro-preview",
    ),
    Case(
        "sse-stream-function-call-thought-signature-gemini3.yaml",
        1,
        "The capital of Mexico is Mexico City.",
        ("end_turn", "STOP"),
        (257, 8, None),
        kinds=["text"],
    ),
    Case(
        "sse-stream-max-tokens.yaml",
        0,
        "Here are all 50 U.S.",
        ("max_tokens", "MAX_TOKENS"),
        (9, 48, 38),
        kinds=["text"],
    ),
    Case(
        "sse-stream-parallel-function-calls.yaml",
        0,
        "",
        ("tool_use", "STOP"),
        (70, 101, 61),
        calls=[("secret_retrieval_tool", {"password": "mellon"}), ("secret_retrieval_tool", {"password": "radiance"})],
        kinds=["thinking", "tool_call", "tool_call"],
        thinking=("", 484),
    ),
    Case(
        "sse-stream-parallel-function-calls.yaml",
        1,
        'The secrets associated with the passwords "mellon" and "radiance" are "Welcome to Moria!" and '
        '"Life before Death" respectively.',
        ("end_turn", "STOP"),
        (211, 30, None),
        kinds=["text"],
    ),
    Case(
        "sse-stream-text.yaml",
        0,
        "To find the sum of 4200 + 42, we can align the numbers by their place values:\n\n  4200\n+   42\n------\n"
        "  4242\n\nSo, 4200 + 42 = **4242**.",
        ("end_turn", "STOP"),
        (13, 138, 75),
        kinds=["text"],
        response_id="VJfyaP7eE_6zmtkP4qLV6Ao",
    ),
    Case(
        "sse-stream-thought-summaries.yaml",
        0,
        "3",
        ("end_turn", "STOP"),
        (30, 1947, 1947),
        kinds=["thinking", "text"],
        thinking=("**Analyzing Prime Substrings**\n\nOkay, so I'm starting", 0),
    ),
    Case(
        "sse-stream-thoughts-crlf.yaml",
        0,
        "",  # checked separately: long
        ("end_turn", "STOP"),
        (34, 1256, 787),
        kinds=["thinking", "text"],
        thinking=("**Clarifying User Goals**\n\nI'm currently focused", 6152),
        model="gemini-2.5-pro",
    ),
]


def _decoded(item_file: str, index: int) -> ir.Response:
    item = corpus(item_file)[index]
    if CODEC.is_stream_request(item.request):
        return accumulate(decode_stream(item.response.body)).response
    return CODEC.decode_response(item.response.body)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.file}[{c.index}]")
def test_recorded_answer_values(case: Case) -> None:
    response = _decoded(case.file, case.index)
    if case.text or not any(k == "text" for k in case.kinds):
        assert texts(response) == case.text
    assert kinds(response) == case.kinds
    assert response.stop_reason is not None
    assert (response.stop_reason.kind, response.stop_reason.raw) == case.stop
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == case.usage
    assert usage.cache_write_tokens is None
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert [(c.name, c.arguments) for c in calls] == case.calls
    assert all(c.id.startswith("call_") and c.arguments_raw for c in calls)
    thinking = [p for p in response.content if isinstance(p, ir.ThinkingPart)]
    if case.thinking is None:
        assert thinking == []
    else:
        start, sig_len = case.thinking
        assert thinking[0].text.startswith(start)
        assert len(thinking[0].signature or "") == sig_len
    if case.response_id:
        assert response.id == case.response_id
    if case.model:
        assert response.model == case.model


def test_cases_cover_every_successful_interaction() -> None:
    corpus_dir("gemini")  # skips, with the reason, when the corpus is absent
    ok = {(name, i) for name, i in INTERACTIONS if not name.startswith("error")}
    assert ok == {(c.file, c.index) for c in CASES}


def test_thoughts_crlf_answer_text() -> None:
    response = _decoded("sse-stream-thoughts-crlf.yaml", 0)
    text = texts(response)
    assert text.startswith("This is a great question! Safely crossing the street is all about being aware")
    assert text.endswith("Always assume a driver might not see you.")
    assert len(text) == 1938
    assert response.content[0].kind == "thinking"
    assert "**Crafting Safe Instructions**" in response.content[0].text


@pytest.mark.parametrize(
    ("name", "kind", "status", "code", "message_start"),
    [
        ("error-400-api-key-invalid-stream-request.yaml", "auth", 400, "INVALID_ARGUMENT", "API key not valid."),
        ("error-404-not-found.yaml", "not_found", 404, "NOT_FOUND", "models/this-model-does-not-exist-12345 is"),
        ("error-429-resource-exhausted.yaml", "throttled", 429, "RESOURCE_EXHAUSTED", "Resource exhausted."),
    ],
)
def test_recorded_errors(name: str, kind: str, status: int, code: str, message_start: str) -> None:
    (item,) = corpus(name)
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert (error.kind, error.status, error.code) == (kind, status, code)
    assert error.message.startswith(message_start)
    assert error.retryable == (kind == "throttled")
    schemas.validate("error", json.loads(item.response.body))


def test_recorded_requests() -> None:
    """Concrete request IR of the richest recorded requests."""
    (item,) = corpus("nonstream-parallel-function-calls.yaml")
    request = CODEC.decode_request(item.request)
    assert request.model == "gemini-2.5-flash"
    assert request.system == "Use parallel tool calling."
    assert request.stream is False
    assert [m.role for m in request.messages] == ["user"]
    (tool,) = request.tools
    assert tool.name == "secret_retrieval_tool"
    assert tool.parameters == {
        "properties": {"password": {"title": "Password", "type": "string"}},
        "required": ["password"],
        "type": "object",
    }
    summaries = CODEC.decode_request(corpus("sse-stream-thought-summaries.yaml")[0].request)
    assert summaries.thinking == ir.ThinkingConfig(enabled=True, budget_tokens=6400)
    assert summaries.provider_fields == {}
    max_tokens = CODEC.decode_request(corpus("sse-stream-max-tokens.yaml")[0].request)
    assert max_tokens.max_tokens == 50


def test_corpus_files_are_all_covered() -> None:
    corpus_dir("gemini")  # skips, with the reason, when the corpus is absent
    assert {Path(p).name for p in FILES} == {name for name, _ in INTERACTIONS}
    assert len(FILES) == 12
