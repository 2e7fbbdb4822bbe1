"""Frame every streamed response body in the real-traffic corpus, in several chunkings.

Which framing applies is decided per interaction from the status, the content type and the request (Ollama
Cloud streams NDJSON labelled application/json; Gemini streams a JSON array unless asked for `alt=sse`). The
expectations table lists every corpus file, so a file added to the corpus without an expectation fails here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from harness.capture import Interaction, load_interactions
from harness.wire.jsonarray import JSONArrayDecoder
from harness.wire.ndjson import NDJSONDecoder, load_json
from harness.wire.sse import SSEDecoder, SSEEvent
from tests.conftest import CORPUS, corpus_dir, corpus_files
from tests.wire.chunking import Decoder, chunkings, run

pytestmark = pytest.mark.corpus

# Per file, per interaction: (framing, number of SSE events / NDJSON values / array elements). None = not framed.
EXPECTED: dict[str, list[tuple[str | None, int]]] = {
    "anthropic/error-400-invalid-request.yaml": [(None, 0)],
    "anthropic/error-401-authentication.yaml": [(None, 0)],
    "anthropic/error-404-not-found-stream-request.yaml": [(None, 0)],
    "anthropic/nonstream-parallel-tool-use.yaml": [(None, 0), (None, 0)],
    "anthropic/nonstream-text.yaml": [(None, 0)],
    "anthropic/nonstream-thinking.yaml": [(None, 0)],
    "anthropic/stream-max-tokens.yaml": [("sse", 13)],
    "anthropic/stream-parallel-tool-use-empty-input-gzip.yaml": [("sse", 10)],
    "anthropic/stream-parallel-tool-use.yaml": [("sse", 23), ("sse", 21)],
    "anthropic/stream-redacted-thinking.yaml": [("sse", 27)],
    "anthropic/stream-text.yaml": [("sse", 8)],
    "anthropic/stream-thinking-gzip.yaml": [("sse", 17)],
    "anthropic/stream-thinking-tool-use.yaml": [("sse", 13)],
    "anthropic/stream-thinking.yaml": [("sse", 200)],
    "anthropic/stream-web-search-citations.yaml": [("sse", 120)],
    "gemini/error-400-api-key-invalid-stream-request.yaml": [(None, 0)],
    "gemini/error-404-not-found.yaml": [(None, 0)],
    "gemini/error-429-resource-exhausted.yaml": [(None, 0)],
    "gemini/json-array-stream-thought-function-call.yaml": [("jsonarray", 2), ("jsonarray", 1), ("jsonarray", 2)],
    "gemini/nonstream-parallel-function-calls.yaml": [(None, 0)],
    "gemini/nonstream-text.yaml": [(None, 0)],
    "gemini/sse-stream-function-call-thought-signature-gemini3.yaml": [("sse", 2), ("sse", 3)],
    "gemini/sse-stream-max-tokens.yaml": [("sse", 1)],
    "gemini/sse-stream-parallel-function-calls.yaml": [("sse", 1), ("sse", 3)],
    "gemini/sse-stream-text.yaml": [("sse", 2)],
    "gemini/sse-stream-thought-summaries.yaml": [("sse", 5)],
    "gemini/sse-stream-thoughts-crlf.yaml": [("sse", 23)],
    "ollama/api-chat-error-400-tools-unsupported.httprr": [(None, 0)],
    "ollama/api-chat-stream-local.httprr": [("ndjson", 22)],
    "ollama/api-chat-stream-thinking-cloud.httprr": [("ndjson", 48)],
    "ollama/api-chat-tool-call-thinking-cloud.httprr": [(None, 0)],
    "ollama/openai-compat-v1-chat-nonstream.yaml": [(None, 0)],
    "openai_chat/error-400-unsupported-value.yaml": [(None, 0)],
    "openai_chat/error-401-invalid-api-key-stream-request.yaml": [(None, 0)],
    "openai_chat/error-404-model-not-found.yaml": [(None, 0)],
    "openai_chat/nonstream-finish-length.yaml": [(None, 0)],
    "openai_chat/nonstream-parallel-tool-calls.yaml": [(None, 0), (None, 0)],
    "openai_chat/nonstream-text.yaml": [(None, 0)],
    "openai_chat/stream-finish-length.yaml": [("sse", 54)],
    "openai_chat/stream-parallel-tool-calls.yaml": [("sse", 16), ("sse", 31)],
    "openai_chat/stream-reasoning-model-finish-length-empty.yaml": [("sse", 4)],
    "openai_chat/stream-text-include-usage.yaml": [("sse", 14)],
    "openai_chat/stream-tool-call-then-text.yaml": [("sse", 15), ("sse", 28)],
    "openai_compat/deepseek-stream-reasoning-content.yaml": [("sse", 212)],
    "openai_compat/groq-stream-midstream-error-event.yaml": [("sse", 95)],
    "openai_compat/groq-stream-parallel-tool-calls.yaml": [("sse", 23), ("sse", 33)],
    "openai_compat/groq-stream-text-x-groq-usage.yaml": [("sse", 7)],
    "openai_compat/llamacpp-stream-reasoning-content-tool-call.yaml": [("sse", 28), ("sse", 18)],
    "openai_compat/mistral-stream-thinking-content-array.yaml": [("sse", 159)],
    "openai_compat/openrouter-error-429.yaml": [(None, 0)],
    "openai_compat/openrouter-kimi-stream-tool-args-single-chunk.yaml": [("sse", 5)],
    "openai_compat/openrouter-stream-comments-and-error-chunk.yaml": [("sse", 5)],
    "openai_compat/together-nonstream-gzip.yaml": [(None, 0)],
    "openai_compat/xai-stream-tool-call.yaml": [("sse", 4), ("sse", 45)],
    "openai_responses/error-400-model-not-found-stream-request.yaml": [(None, 0)],
    "openai_responses/nonstream-text.yaml": [(None, 0)],
    "openai_responses/stream-function-call.yaml": [("sse", 17), ("sse", 22)],
    "openai_responses/stream-incomplete-max-output-tokens.yaml": [("sse", 58)],
    "openai_responses/stream-reasoning-summary.yaml": [("sse", 340)],
    "openai_responses/stream-text.yaml": [("sse", 9)],
}

DECODERS: dict[str, Callable[[], Decoder]] = {"sse": SSEDecoder, "ndjson": NDJSONDecoder, "jsonarray": JSONArrayDecoder}

PROTOCOLS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
ALL_FILES = [path for protocol in PROTOCOLS for path in corpus_files(protocol)]


def key(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def framing(interaction: Interaction) -> str | None:
    """Which framing a response body uses, from status, content type and request; None for a plain body."""
    response, request = interaction.response, interaction.request
    if response.status >= 400:
        return None  # error bodies are plain JSON, even when labelled text/event-stream (see the quirk test)
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "text/event-stream":
        return "sse"
    if content_type == "application/x-ndjson":
        return "ndjson"
    if request.path == "/api/chat" and json.loads(request.body).get("stream", True):
        return "ndjson"  # Ollama streams by default, and Ollama Cloud labels the stream application/json
    if request.path.endswith(":streamGenerateContent") and request.query.get("alt") != "sse":
        return "jsonarray"
    return None


def interactions(name: str) -> list[Interaction]:
    """The interactions of one corpus file named 'protocol/file'; skips the test when the corpus is absent."""
    protocol, _, file = name.partition("/")
    return load_interactions(corpus_dir(protocol) / file)


def sse_events(name: str, index: int = 0) -> tuple[list[SSEEvent], SSEDecoder]:
    decoder = SSEDecoder()
    body = interactions(name)[index].response.body
    return decoder.feed(body) + decoder.close(), decoder


def sse_interactions(protocols: tuple[str, ...]) -> list[tuple[str, int]]:
    return [
        (key(path), i)
        for path in ALL_FILES
        if path.parent.name in protocols
        for i, interaction in enumerate(load_interactions(path))
        if framing(interaction) == "sse"
    ]


def httpx2_events(body: bytes, chunks: list[bytes]) -> list[tuple[str, str]]:
    """The same stream through httpx2's own SSE parser (public EventSource API), as an independent oracle."""
    response = httpx2.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=iter(chunks),
        request=httpx2.Request("POST", "http://corpus.test/"),
    )
    return [(e.event, e.data) for e in httpx2.EventSource(response)]


def test_every_corpus_file_has_an_expectation() -> None:
    if not ALL_FILES:
        pytest.skip(f"real-traffic corpus not found at {CORPUS} (set CONFORMANCE_CORPUS)")
    assert sorted(key(p) for p in ALL_FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", ALL_FILES, ids=key)
def test_every_body_frames_the_same_in_every_chunking(path: Path) -> None:
    expected = EXPECTED[key(path)]
    found = load_interactions(path)
    assert len(found) == len(expected)
    for interaction, (kind, count) in zip(found, expected, strict=True):
        assert framing(interaction) == kind
        if kind is None:
            continue
        body = interaction.response.body
        outputs = {name: run(DECODERS[kind], chunks) for name, chunks in chunkings(body).items()}
        whole = outputs["whole"]
        assert len(whole) == count
        for name, output in outputs.items():
            assert output == whole, f"{key(path)}: chunking {name!r} differs from the whole body"
        if kind == "sse":
            assert all(e.terminated for e in whole)
            assert [(e.event, e.data) for e in whole] == httpx2_events(body, chunkings(body)["random-1-64"])


def test_anthropic_stream_text_event_sequence() -> None:
    events, decoder = sse_events("anthropic/stream-text.yaml")
    assert [e.event for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "ping",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [e.offset for e in events[:3]] == [0, 436, 564]
    assert decoder.comments == []
    deltas = [json.loads(e.data)["delta"] for e in events if e.event == "content_block_delta"]
    assert "".join(d["text"] for d in deltas) == "4200 + 42 = 4242"


@pytest.mark.parametrize(("name", "index"), sse_interactions(("anthropic", "openai_responses")), ids=lambda v: str(v))
def test_event_name_mirrors_data_type(name: str, index: int) -> None:
    # Anthropic and the Responses API repeat the SSE event name as the payload's "type".
    events, _ = sse_events(name, index)
    assert [e.event for e in events] == [json.loads(e.data)["type"] for e in events]


def test_anthropic_redacted_thinking_pings_between_blocks() -> None:
    events, _ = sse_events("anthropic/stream-redacted-thinking.yaml")
    assert [e.event for e in events[:9]] == [
        "message_start",
        "content_block_start",
        "content_block_stop",
        "content_block_start",
        "ping",
        "content_block_stop",
        "ping",
        "content_block_start",
        "ping",
    ]


GROQ_ERROR = "openai_compat/groq-stream-midstream-error-event.yaml"  # ends with `event: error`, tested below


@pytest.mark.parametrize(
    ("name", "index"),
    [c for c in sse_interactions(("openai_chat", "openai_compat")) if c[0] != GROQ_ERROR],
    ids=lambda v: str(v),
)
def test_openai_streams_end_with_done(name: str, index: int) -> None:
    events, _ = sse_events(name, index)
    assert events[-1] == SSEEvent("message", "[DONE]", None, None, events[-1].offset)
    assert [e.data for e in events].count("[DONE]") == 1
    assert {json.loads(e.data)["object"] for e in events[:-1]} == {"chat.completion.chunk"}


def test_groq_midstream_error_event_ends_without_done() -> None:
    events, _ = sse_events(GROQ_ERROR)
    assert [e.event for e in events].count("error") == 1
    assert events[-1].event == "error"
    error = json.loads(events[-1].data)["error"]
    assert (error["code"], error["status_code"]) == ("tool_use_failed", 400)
    assert "[DONE]" not in [e.data for e in events]


def test_openrouter_stream_comments_and_error_chunk() -> None:
    events, decoder = sse_events("openai_compat/openrouter-stream-comments-and-error-chunk.yaml")
    assert decoder.comments == ["OPENROUTER PROCESSING"] * 17
    assert events[0].offset == 425  # after the comment blocks
    assert json.loads(events[-2].data)["error"]["code"] == 400
    assert events[-1].data == "[DONE]"


@pytest.mark.parametrize("path", [p for p in ALL_FILES if p.name.startswith("sse-stream")], ids=key)
def test_gemini_sse_uses_crlf(path: Path) -> None:
    for interaction in load_interactions(path):
        body = interaction.response.body
        assert body.count(b"\r\n") == body.count(b"\n") == body.count(b"\r") > 0
        assert body.endswith(b"\r\n\r\n")
        decoder = SSEDecoder()
        events = decoder.feed(body) + decoder.close()
        lf_decoder = SSEDecoder()
        lf_events = lf_decoder.feed(body.replace(b"\r\n", b"\n")) + lf_decoder.close()
        assert [(e.event, e.data) for e in events] == [(e.event, e.data) for e in lf_events]
        assert all("candidates" in json.loads(e.data) for e in events)


def test_gemini_json_array_elements_per_interaction() -> None:
    found = interactions("gemini/json-array-stream-thought-function-call.yaml")
    elements = [run(JSONArrayDecoder, [i.response.body]) for i in found]
    assert [len(e) for e in elements] == [2, 1, 2]
    assert [b"\n,\r\n" in i.response.body for i in found] == [True, False, True]
    assert all("candidates" in element for batch in elements for element in batch)
    # The function call arrives whole in one element, as Gemini sends it.
    parts = elements[1][0]["candidates"][0]["content"]["parts"]
    assert parts == [{"functionCall": {"name": "pelican_name_generator", "args": {}}}]


@pytest.mark.parametrize(
    ("name", "count"),
    [("ollama/api-chat-stream-local.httprr", 22), ("ollama/api-chat-stream-thinking-cloud.httprr", 48)],
)
def test_ollama_ndjson_lines_end_with_done(name: str, count: int) -> None:
    values: list[Any] = run(NDJSONDecoder, [interactions(name)[0].response.body])
    assert len(values) == count
    assert [v["done"] for v in values] == [False] * (count - 1) + [True]
    assert values[-1]["done_reason"] == "stop"


def test_ollama_cloud_stream_labelled_application_json_is_ndjson() -> None:
    interaction = interactions("ollama/api-chat-stream-thinking-cloud.httprr")[0]
    assert interaction.response.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(interaction.response.body)
    assert framing(interaction) == "ndjson"


def test_gemini_error_labelled_event_stream_is_plain_json() -> None:
    interaction = interactions("gemini/error-400-api-key-invalid-stream-request.yaml")[0]
    assert (interaction.response.status, interaction.response.headers["content-type"]) == (400, "text/event-stream")
    decoder = SSEDecoder()
    # Every line is an unknown SSE field ('{', '  "error": {', ...): nothing is dispatched.
    assert decoder.feed(interaction.response.body) + decoder.close() == []
    error = load_json(interaction.response.body, 0)["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
