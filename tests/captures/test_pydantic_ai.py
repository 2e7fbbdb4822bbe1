"""Real provider answers recorded in pydantic/pydantic-ai's vcrpy cassettes, decoded by each protocol's codec.

Provenance (read from the snapshot, never copied; see docs/protocols.md): every request/response cassette under
pydantic-ai's `tests/models/`, `tests/cassettes/` and `tests/providers/` but those `NOT_READ_DIRS` names. Among
them, the classes `CLASSES` names: Gemini and Vertex code execution (`executableCode`, `codeExecutionResult`,
Gemini 3's signed parts), Google Search and File Search grounding, Vertex `logprobsResult`, generated images
(`inlineData`), a prompt Model Armor blocked; OpenRouter's `reasoning_details` (Anthropic's thinking signature,
OpenAI's encrypted reasoning), usage, `: OPENROUTER PROCESSING` comments; Anthropic code execution, web search
and other server tools, `pause_turn`; Chat Completions of OpenAI, Groq, DeepSeek, Mistral, Azure, Cerebras,
Hugging Face's router, Z.ai, Snowflake Cortex, Ollama and Gemini's compatible endpoint; Responses of OpenAI,
DeepSeek and Bedrock Mantle; Responses `logprobs`.

Each exchange goes to the codec its request URI names (`ROUTES`), as recorded: an SSE body is the bytes the
provider sent. The facts expected are read from the exchange itself by the vercel/ai capture tests' reader of
that wire (test_gemini, test_chat, test_anthropic, test_responses), so one wire has one reading; the thinking
signatures (and redacted thinking) are read here.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness import ir
from tests.captures import test_anthropic, test_chat, test_gemini, test_responses
from tests.captures.pydantic_ai import Exchange, exchanges, listing, params, sse_payloads
from tests.captures.vercel_ai import Facts, decoded, ir_facts

M = "tests/models/cassettes/"
G = "tests/models/google/cassettes/"
DIRS = ("tests/models/", "tests/cassettes/", "tests/providers/")
"""Where the cassettes of provider calls are (`tests/realtime/` holds websocket recordings)."""
NOT_READ_DIRS = {
    f"{M}test_multimodal_tool_returns/": (
        "a matrix of tool returns in every input form (354 cassettes, half this file's time): its answers are short "
        "texts like those read here; its error bodies are read by test_pydantic_ai_errors"
    ),
    "tests/cassettes/test_embeddings/": "embeddings, not answers",
    f"{M}test_bedrock/": "Bedrock (tests/protocols/bedrock/recordings.py reads them)",
    "tests/models/bedrock/": "Bedrock (tests/protocols/bedrock/recordings.py reads them)",
    f"{M}test_xai/": "xAI's gRPC SDK, not HTTP",
    "tests/models/xai/": "xAI's gRPC SDK, not HTTP",
}
ROUTES = (
    ("openrouter.ai", "/chat/completions", "openrouter"),
    ("api.groq.com", "/chat/completions", "groq"),
    ("api.deepseek.com", "/chat/completions", "deepseek"),
    ("api.mistral.ai", "/chat/completions", "mistral"),
    (".openai.azure.com", "/chat/completions", "azure"),
    ("", "/chat/completions", "openai"),
    ("", "/responses", "responses"),
    ("", "/v1/messages", "anthropic"),
    ("", ":generateContent", "gemini"),
    ("", ":streamGenerateContent", "gemini"),
)
"""(host suffix, path suffix, codec), the first that matches reads an exchange: a provider's own profile where the
harness has one, else the wire as OpenAI, Anthropic or Google specify it (Cerebras, Hugging Face's router, Z.ai,
Snowflake Cortex, Ollama, DeepSeek's and Bedrock Mantle's Responses, pydantic's gateway). Other exchanges (file
downloads, token counts, embeddings, Bedrock, which tests/protocols/bedrock reads) are not answers read here."""
FINAL = ("response.completed", "response.incomplete")
"""A Responses stream's terminal events, whose `response` holds the answer."""
R = f"{M}test_openai_responses/"
NOT_READ = {
    f"{R}test_openai_previous_response_id.yaml": "hand-written (resp_1234, status 'complete')",
    f"{R}test_openai_previous_response_id_auto_mode.yaml": "hand-written (resp_1234, status 'complete')",
    f"{R}test_openai_responses_verbosity.yaml": "hand-written (status 'complete')",
    f"{R}test_background_mode_vcr.yaml": "background mode: `queued`, not an answer (its polls are GETs)",
    f"{R}test_background_mode_reasoning_vcr.yaml": "background mode: `queued`, not an answer",
    f"{R}test_background_mode_with_tool_vcr.yaml": "background mode: `queued`, not an answer",
    f"{R}test_background_mode_streaming_without_starting_after_vcr.yaml": "background mode: `queued`",
    f"{M}test_openai/test_invalid_response.yaml": "not a provider: pydantic's demo endpoint echoing the request",
    f"{M}test_openai/test_text_response.yaml": "not a provider: pydantic's demo endpoint answering text/plain",
    f"{M}test_openrouter/test_openrouter_stream_error.yaml": "an error in the stream (test_pydantic_ai_errors)",
    f"{M}test_groq/test_tool_use_failed_error_streaming.yaml": "an error in the stream (test_pydantic_ai_errors)",
    f"{M}test_groq/test_tool_use_failed_error_streaming_with_text.yaml": "an error in the stream (errors test)",
}
FILES = [p for p in listing() if p.startswith(DIRS) and not p.startswith(tuple(NOT_READ_DIRS)) and p not in NOT_READ]
CLASSES = {
    "Gemini code execution": f"{G}test_code_execution/test_code_execution.yaml",
    "Gemini code execution, streamed": f"{G}test_code_execution/test_code_execution_stream.yaml",
    "Gemini File Search": f"{M}test_google/test_google_model_file_search_tool.yaml",
    "Gemini File Search, streamed": f"{M}test_google/test_google_model_file_search_tool_stream.yaml",
    "Gemini Google Search": f"{M}test_google/test_google_model_web_search_tool.yaml",
    "Gemini Google Search, streamed": f"{M}test_google/test_google_model_web_search_tool_stream.yaml",
    "Vertex logprobs": f"{M}test_google/test_google_vertex_logprobs.yaml",
    "Gemini generated image": f"{M}test_google/test_google_image_generation_with_text.yaml",
    "OpenRouter reasoning_details signature": f"{M}test_openrouter/test_openrouter_map_messages_reasoning.yaml",
    "OpenRouter reasoning_details, streamed": f"{M}test_openrouter/test_openrouter_streaming_reasoning.yaml",
    "OpenRouter encrypted reasoning": f"{M}test_openrouter/test_openrouter_preserve_reasoning_block.yaml",
    "OpenRouter usage": f"{M}test_openrouter/test_openrouter_usage.yaml",
    "Responses logprobs": f"{M}test_openai/test_openai_instructions_with_responses_logprobs.yaml",
    "Responses logprobs, streamed": f"{M}test_openai/test_openai_instructions_with_responses_logprobs_streaming.yaml",
    "Anthropic code execution": f"{M}test_anthropic/test_anthropic_code_execution_tool.yaml",
    "Anthropic code execution, streamed": f"{M}test_anthropic/test_anthropic_code_execution_tool_stream.yaml",
    "Anthropic web search, streamed": f"{M}test_anthropic/test_anthropic_web_search_tool_stream.yaml",
}
"""The classes of capture this file was written for, each with one cassette that holds it (kept in the snapshot by
`test_a_named_cassette_is_in_the_snapshot`)."""


def route(exchange: Exchange) -> str | None:
    """The codec that reads an exchange's answer, None when it is not an answer read here."""
    host, _, path = exchange.uri.split("://", 1)[-1].partition("/")
    path = "/" + path.split("?", 1)[0].split("#", 1)[0]
    return next((c for h, p, c in ROUTES if host.endswith(h) and path.endswith(p)), None)


def answers(path: str) -> list[tuple[Exchange, str]]:
    """The successful answers of a cassette, with their codecs."""
    routed = [(x, route(x)) for x in exchanges(path)]
    return [(x, codec) for x, codec in routed if codec is not None and 200 <= x.status < 300]


def expected(codec: str, exchange: Exchange) -> Facts:
    """The facts of one recorded answer, read from the exchange by its wire's capture reader."""
    payloads = sse_payloads(exchange.body) if exchange.stream else None
    if codec == "gemini":
        return test_gemini.expected(payloads if payloads is not None else [exchange.json()])
    if codec == "anthropic":
        if payloads is not None:
            return test_anthropic.expected_stream(payloads)
        return test_anthropic.expected_body(exchange.json())
    if codec == "responses":
        final = [p["response"] for p in payloads or [] if p.get("type") in FINAL]
        return test_responses.expected(final[-1] if payloads is not None else exchange.json())
    if payloads is not None:
        return test_chat.expected_stream(payloads)
    return test_chat.expected_body(exchange.json())


def got(codec: str, exchange: Exchange) -> Facts:
    """The facts the harness's codec reads from the recorded bytes."""
    response = decoded(codec, exchange.body, stream=exchange.stream)
    return ir_facts(response, join=codec not in ("anthropic", "responses"), ids=codec != "gemini")


def unnamed_calls_named(want: Facts, have: Facts) -> Facts:
    """`want` with each call the wire gave no id (Gemini's OpenAI-compatible endpoint sends `"id": ""`) taking the
    id the decoder made for it, which must be one."""
    made = [call[0] for call in have.calls] + [None] * len(want.calls)
    calls = [(made[i], *call[1:]) if not call[0] and made[i] else call for i, call in enumerate(want.calls)]
    return Facts(want.texts, want.thinking, calls, want.stop, want.usage)


def _payloads(exchange: Exchange) -> list[Any]:
    return sse_payloads(exchange.body) if exchange.stream else [exchange.json()]


def _gemini_signatures(exchange: Exchange) -> list[str]:
    parts = [
        part
        for chunk in _payloads(exchange)
        for candidate in chunk.get("candidates") or []
        for part in (candidate.get("content") or {}).get("parts") or []
    ]
    return [p["thoughtSignature"] for p in parts if p.get("thoughtSignature")]


def _anthropic_signatures(exchange: Exchange) -> list[str]:
    if not exchange.stream:
        blocks = exchange.json()["content"]
        return [b.get("signature") or b["data"] for b in blocks if b["type"] in ("thinking", "redacted_thinking")]
    out = []
    for event in sse_payloads(exchange.body):
        block, delta = event.get("content_block") or {}, event.get("delta") or {}
        out += [block["data"]] if block.get("type") == "redacted_thinking" else []
        out += [delta["signature"]] if delta.get("type") == "signature_delta" else []
    return out


def _responses_signatures(exchange: Exchange) -> list[str]:
    """A stream's items as `response.output_item.done` gave them (OpenAI encrypts the reasoning anew for the
    terminal `response`, so its `encrypted_content` differs from the item's)."""
    if exchange.stream:
        items = [p["item"] for p in sse_payloads(exchange.body) if p.get("type") == "response.output_item.done"]
    else:
        items = exchange.json().get("output") or []
    return [i["encrypted_content"] for i in items if i["type"] == "reasoning" and i.get("encrypted_content")]


def wire_signatures(codec: str, exchange: Exchange) -> list[str]:
    """The thinking signatures (and redacted thinking) an answer carries, in order, read from the exchange."""
    readers = {
        "gemini": _gemini_signatures,
        "anthropic": _anthropic_signatures,
        "responses": _responses_signatures,
        "openrouter": _openrouter_signatures,
    }
    return readers[codec](exchange) if codec in readers else []


def kept_signatures(response: ir.Response) -> list[str]:
    """The signatures of the IR answer's thinking blocks and its redacted thinking, in order."""
    out = []
    for part in response.content:
        if isinstance(part, ir.ThinkingPart) and part.signature:
            out.append(part.signature)
        elif isinstance(part, ir.RedactedThinkingPart):
            out.append(part.data)
    return out


@pytest.mark.parametrize("path", params(FILES))
def test_recorded_answer_decodes_to_the_answers_facts(path: str) -> None:
    """Text, thinking, tool calls, stop reason and usage (`Facts`), and the thinking signatures."""
    read = answers(path)
    if not read:
        pytest.skip("no provider answer in this cassette (a download, a token count, another provider)")
    for exchange, codec in read:
        have = got(codec, exchange)
        assert have == unnamed_calls_named(expected(codec, exchange), have), exchange.where
        response = decoded(codec, exchange.body, stream=exchange.stream)
        assert kept_signatures(response) == wire_signatures(codec, exchange), exchange.where


def _openrouter_signatures(exchange: Exchange) -> list[str]:
    """The signatures of OpenRouter's `reasoning_details`, in order: a `reasoning.text` entry's `signature`, a
    `reasoning.encrypted` entry's `data` (the last of each message or delta)."""
    if exchange.stream:
        messages = [c.get("delta") or {} for p in sse_payloads(exchange.body) for c in p.get("choices") or []]
    else:
        messages = [c["message"] for c in exchange.json()["choices"]]
    out = []
    for message in messages:
        found = [d.get("signature") or d.get("data") for d in message.get("reasoning_details") or []]
        out += [s for s in found if s][-1:]
    return out


SIGNED = [
    f"{M}test_openrouter/test_openrouter_map_messages_reasoning.yaml",  # Anthropic's, in a body
    f"{M}test_openrouter/test_openrouter_streaming_reasoning.yaml",  # Anthropic's, streamed (and an empty one)
    f"{M}test_openrouter/test_openrouter_preserve_reasoning_block.yaml",  # OpenAI's encrypted reasoning, body
    f"{M}test_openrouter/test_openrouter_file_annotation.yaml",
    f"{M}test_openrouter/test_openrouter_stream_with_reasoning.yaml",  # openai/o3's encrypted reasoning, streamed
    f"{M}test_openrouter/test_openrouter_stream_with_native_options.yaml",
]
"""OpenRouter answers whose `reasoning_details` carry a signature."""


@pytest.mark.parametrize("path", params([p for p in SIGNED if p in FILES]))
def test_openrouter_reasoning_details_signature_is_kept(path: str) -> None:
    read = [x for x, codec in answers(path) if codec == "openrouter"]
    signed = [(x, _openrouter_signatures(x)) for x in read]
    assert any(s for _, s in signed), f"{path}: no signed reasoning_details (the table needs a new row)"
    for exchange, signatures in signed:
        kept = kept_signatures(decoded("openrouter", exchange.body, stream=exchange.stream))
        assert kept == signatures, exchange.where


LOGPROBS = [
    f"{M}test_google/test_google_vertex_logprobs.yaml",
    f"{M}test_google/test_google_vertex_logprobs_structure.yaml",
    f"{M}test_openai/test_openai_instructions_with_responses_logprobs.yaml",
    f"{M}test_openai/test_openai_instructions_with_responses_logprobs_streaming.yaml",
]


def _filled(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_filled(v) for v in value.values())
    return any(_filled(v) for v in value) if isinstance(value, list) else value is not None


def _has_logprobs(value: Any) -> bool:
    """Whether a log probability is anywhere in `value` (Snowflake's `{"content": null}` placeholder is none)."""
    if isinstance(value, dict):
        return any(("logprob" in k.lower() and _filled(v)) or _has_logprobs(v) for k, v in value.items())
    return isinstance(value, list) and any(_has_logprobs(v) for v in value)


@pytest.mark.parametrize("path", params([p for p in LOGPROBS if p in FILES]))
def test_logprobs_are_read_past_and_not_carried(path: str) -> None:
    """Token log probabilities have no IR form: the answer around them decodes whole (the facts test above), and
    the IR answer holds none of them, so a translated answer has none (a declared limit, not a silent one)."""
    read = answers(path)
    wire = [x for x, _ in read if _has_logprobs(sse_payloads(x.body) if x.stream else x.json())]
    assert wire, f"{path}: no logprobs in the capture"
    for exchange, codec in read:
        response = decoded(codec, exchange.body, stream=exchange.stream)
        assert not _has_logprobs(response.model_dump()), exchange.where


NAMED = sorted({*CLASSES.values(), *NOT_READ, *SIGNED, *LOGPROBS})


@pytest.mark.parametrize("path", params(NAMED if listing() else []))
def test_a_named_cassette_is_in_the_snapshot(path: str) -> None:
    assert path in listing()
