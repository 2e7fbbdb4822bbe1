"""Real error answers in pydantic/pydantic-ai's cassettes, decoded by each protocol's error decoder.

Provenance (read from the snapshot, never copied; see docs/protocols.md), pydantic-ai `tests/`: error bodies of
OpenAI (Chat and Responses: unknown models, refused parameters and files), Anthropic, Gemini and Vertex, Groq
(`tool_use_failed`), OpenRouter (429s) and DeepSeek's Responses API (sent as application/octet-stream); and errors
inside a 200 stream (OpenRouter's `error` chunk, Groq's `tool_use_failed` event). The cassettes keep the status and
the body (pydantic-ai's serializer dropped headers such as `retry-after`). The facts expected are read from the
body: `error.message`, the code (`error.code`, else `error.type`; Gemini's `error.status`), and the kind the status
and that code name.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.stream import accumulate
from tests.captures.pydantic_ai import exchanges, listing, params, sse_payloads
from tests.captures.test_pydantic_ai import route

M = "tests/models/cassettes/"
N = "tests/cassettes/test_model_name_suggestions/"
T = "tests/models/cassettes/test_multimodal_tool_returns/test_multimodal_tool_return_matrix"
BODIES = [
    f"{N}test_inferred_model_name_suggestion.yaml",
    *(f"{N}test_model_name_suggestion[{p}].yaml" for p in ("anthropic", "google", "groq", "openai-chat")),
    f"{N}test_model_name_suggestion[openai-responses].yaml",
    f"{M}test_anthropic/test_anthropic_explicit_effort_xhigh_unsupported_model_errors.yaml",
    f"{M}test_groq/test_tool_regular_error.yaml",
    f"{M}test_groq/test_tool_use_failed_error.yaml",
    f"{M}test_groq/test_tool_use_failed_error_with_text.yaml",
    f"{M}test_multimodal_tool_returns/test_model_sees_multiple_images[google_vertex].yaml",
    f"{T}[direct-binary-audio-openai_chat].yaml",
    f"{T}[direct-url-audio-openai_responses].yaml",
    f"{T}[direct-url-image-google_vertex].yaml",
    f"{M}test_openai/test_openai_o1_mini_system_role[developer].yaml",
    f"{M}test_openai/test_openai_web_search_tool_model_not_supported.yaml",
    f"{M}test_openai_responses/test_openai_responses_model_http_error.yaml",
    f"{M}test_openai_responses/test_openai_responses_thinking_with_modified_history.yaml",
    f"{M}test_openrouter/test_openrouter_errors_raised.yaml",
    f"{M}test_deepseek_responses/test_deepseek_responses_rejects_interleaved_function_calls.yaml",  # octet-stream
]
"""Cassettes holding a provider's error body (each read whole: every non-2xx answer in it is checked)."""
STREAMS = [
    f"{M}test_openrouter/test_openrouter_stream_error.yaml",
    f"{M}test_groq/test_tool_use_failed_error_streaming.yaml",
    f"{M}test_groq/test_tool_use_failed_error_streaming_with_text.yaml",
]
"""Cassettes holding a 200 stream that ends in an error chunk."""
PRESENT = set(listing())


def _code(codec: str, error: dict[str, Any]) -> str:
    key = "status" if codec == "gemini" else "code"
    return str(error.get(key) or error.get("type"))


def _kind(status: int, code: str) -> ir.ErrorKind:
    if status == 404 or "not_found" in code.lower():
        return ir.ErrorKind.NOT_FOUND
    return ir.ErrorKind.THROTTLED if status == 429 else ir.ErrorKind.INVALID_REQUEST


@pytest.mark.parametrize("path", params([p for p in BODIES if p in PRESENT]))
def test_recorded_error_body_keeps_kind_status_message_and_code(path: str) -> None:
    read = [(x, route(x)) for x in exchanges(path) if x.status >= 400]
    assert read, f"{path}: no error answer"
    for exchange, codec in read:
        assert codec is not None, exchange.where
        wire = exchange.json()["error"]
        headers = {"content-type": exchange.content_type}
        error = registry.get(codec).decode_error(exchange.status, headers, exchange.body)
        code = _code(codec, wire)
        assert (error.kind, error.status, error.message, error.code) == (
            _kind(exchange.status, code),
            exchange.status,
            wire["message"],
            code,
        ), exchange.where
        assert error.retryable == (exchange.status == 429), exchange.where


@pytest.mark.parametrize("path", params([p for p in STREAMS if p in PRESENT]))
def test_recorded_error_in_a_stream_ends_it_with_that_error(path: str) -> None:
    failed = [(x, route(x)) for x in exchanges(path) if x.stream and any("error" in p for p in sse_payloads(x.body))]
    assert failed, f"{path}: no stream with an error chunk"
    for exchange, codec in failed:
        assert codec is not None, exchange.where
        wire = next(p["error"] for p in sse_payloads(exchange.body) if "error" in p)
        error = accumulate(decode_events(registry.get(codec), [exchange.body])).error
        assert error is not None, exchange.where
        status = wire.get("status_code") or wire.get("code")  # Groq says the status beside its code
        code = str(wire.get("code"))
        assert (error.kind, error.message, error.code) == (_kind(int(status), code), wire["message"], code)
        assert not error.retryable, exchange.where


@pytest.mark.parametrize("path", params(sorted([*BODIES, *STREAMS]) if PRESENT else []))
def test_a_named_error_cassette_is_in_the_snapshot(path: str) -> None:
    assert path in PRESENT
