"""Real Chat Completions answers of OpenAI and OpenAI-compatible providers recorded by vercel/ai, decoded by the
profile's codec.

Provenance (read from the snapshot, never copied; see docs/protocols.md), vercel/ai `packages/<dir>/__fixtures__/`:
`openai/src/chat` (OpenAI; Azure's model router), `azure/src` (`azure-deepseek-reasoning`: DeepSeek on Azure AI
Foundry), `deepseek/src/chat`, `groq/src`, `xai/src` and `openai-compatible/src/chat` (xAI), `mistral/src`,
`alibaba/src` (Qwen on DashScope's compatible mode), `perplexity/src`. `*.chunks.txt` keep each chunk's JSON (the
closing `data: [DONE]` is not kept, and is added back); `*.json` are bodies.

Expected facts come from the chunks themselves: content joined, reasoning joined (`reasoning_content`,
`reasoning`, or Mistral's `thinking` content items), tool calls assembled by `index`, the last `finish_reason`, the
last `usage` (Groq's in `x_groq.usage`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.captures.vercel_ai import Facts, arguments, body, decoded, events, ir_facts, listing, params, sse

CODECS = {
    "packages/openai/src/chat/__fixtures__/": "openai",
    "packages/azure/src/__fixtures__/azure-deepseek-reasoning": "azure",
    "packages/deepseek/src/chat/__fixtures__/": "deepseek",
    "packages/groq/src/__fixtures__/": "groq",
    "packages/xai/src/__fixtures__/": "xai",
    "packages/openai-compatible/src/chat/__fixtures__/": "xai",
    "packages/mistral/src/__fixtures__/": "mistral",
    "packages/alibaba/src/__fixtures__/": "openai",
    "packages/perplexity/src/__fixtures__/": "openai",
}
"""Which codec reads the files under each prefix."""
NOT_READ = {
    "packages/openai/src/chat/__fixtures__/reasoning-model-legacy-parameter-error.json": "an error body (test_errors)",
    "packages/openai-compatible/src/chat/__fixtures__/anthropic-fallback-tool-call.sse": "ids replaced (sanitized)",
    "packages/groq/src/__fixtures__/groq-transcription-text.json": "a transcription, not a chat answer",
    "packages/mistral/src/__fixtures__/mistral-transcription.json": "a transcription, not a chat answer",
}
FILES = [p for p in listing() if p.startswith(tuple(CODECS)) and p not in NOT_READ]


def codec_of(path: str) -> str:
    """The codec for a fixture path."""
    return next(name for prefix, name in CODECS.items() if path.startswith(prefix))


def _content(facts: Facts, content: Any) -> None:
    if isinstance(content, str):
        facts.texts[0] += content
        return
    for item in content or []:  # Mistral: a list of typed items
        if item["type"] == "text":
            facts.texts[0] += item["text"]
        elif item["type"] == "thinking":
            facts.thinking += "".join(t["text"] for t in item["thinking"] if t["type"] == "text")


def _reasoning(source: dict[str, Any]) -> str:
    return source.get("reasoning_content") or source.get("reasoning") or ""


def _usage(facts: Facts, usage: dict[str, Any] | None) -> None:
    if not usage:
        return
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    if reasoning and usage.get("total_tokens") == (prompt or 0) + (completion or 0) + reasoning:
        completion = (completion or 0) + reasoning  # xAI: the total says completion_tokens left reasoning out
    facts.usage = (prompt, completion)


def expected_stream(chunks: list[dict[str, Any]]) -> Facts:
    """The facts of a streamed answer, from its chunks."""
    facts = Facts(texts=[""])
    calls: dict[int, list[Any]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            _content(facts, delta.get("content"))
            facts.thinking += _reasoning(delta)
            for position, call in enumerate(delta.get("tool_calls") or []):
                slot = calls.setdefault(call.get("index", position), [None, "", ""])  # Mistral sends no index
                function = call.get("function") or {}
                slot[0] = slot[0] or call.get("id")
                slot[1] += function.get("name") or ""
                slot[2] += function.get("arguments") or ""
            facts.stop = choice.get("finish_reason") or facts.stop
        _usage(facts, chunk.get("usage") or (chunk.get("x_groq") or {}).get("usage"))
    facts.calls = [(i, name, arguments(raw)) for i, name, raw in (calls[k] for k in sorted(calls))]
    return facts


def expected_body(response: dict[str, Any]) -> Facts:
    """The facts of a chat completion body."""
    facts = Facts(texts=[""])
    choice = response["choices"][0]
    message = choice["message"]
    _content(facts, message.get("content"))
    facts.thinking += _reasoning(message)
    for call in message.get("tool_calls") or []:
        function = call["function"]  # OpenRouter leaves `arguments` out of a call without any
        facts.calls.append((call["id"], function["name"], arguments(function.get("arguments", ""))))
    facts.stop = choice.get("finish_reason")
    _usage(facts, response.get("usage"))
    return facts


@pytest.mark.parametrize("path", params([p for p in FILES if p.endswith(".chunks.txt")]))
def test_recorded_chat_stream_decodes_to_the_answers_facts(path: str) -> None:
    chunks = events(path)
    got = ir_facts(decoded(codec_of(path), sse(chunks, done=True), stream=True), join=True)
    assert got == expected_stream(chunks), path


@pytest.mark.parametrize("path", params([p for p in FILES if p.endswith(".json")]))
def test_recorded_chat_body_decodes_to_the_answers_facts(path: str) -> None:
    got = ir_facts(decoded(codec_of(path), body(path), stream=False), join=True)
    assert got == expected_body(json.loads(body(path))), path
