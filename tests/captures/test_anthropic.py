"""Real Anthropic Messages answers recorded by vercel/ai, decoded by the `anthropic` codec.

Provenance (read from the snapshot, never copied; see docs/protocols.md): vercel/ai
`packages/anthropic/src/__fixtures__/*.chunks.txt` (streams, with server tools, code execution, compaction, context
editing, tool search, thinking) and `*.json` (bodies). Expected facts are read from each answer's own events:
text / thinking / tool_use blocks (a tool's input from its `input_json_delta`s), `message_delta`'s stop reason and
usage (input = fresh + cache read + cache creation, the IR convention).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.captures.vercel_ai import Facts, body, decoded, events, ir_facts, listing, params, split, sse

DIR = "packages/anthropic/src/__fixtures__/"
NOT_READ = {
    f"{DIR}anthropic-advisor-stop-reasons.chunks.txt": "hand-written (msg_advisor_stop_reasons)",
    f"{DIR}anthropic-advisor-stop-reasons.json": "hand-written (msg_advisor_stop_reasons)",
    f"{DIR}anthropic-fallback.chunks.txt": "hand-written (msg_01FallbackStreamAbcdefghij)",
    f"{DIR}anthropic-fallback.json": "hand-written (msg_01FallbackExampleAbcdefghij)",
    f"{DIR}anthropic-refusal.chunks.txt": "hand-written (msg_01RefusalStreamAbcdefghijk)",
    f"{DIR}anthropic-refusal.json": "hand-written (msg_01RefusalExampleAbcdefghijk)",
    f"{DIR}anthropic-refusal-no-details.json": "hand-written (msg_01RefusalNoDetailsAbcdefghij)",
    f"{DIR}duplicate-message-start.chunks.txt": "hand-written (msg_dup), a broken stream",
    f"{DIR}spliced-message-start.chunks.txt": "hand-written (msg_first), a broken stream",
}
FILES = [p for p in listing() if p.startswith(DIR) and p not in NOT_READ]


def _usage(facts: Facts, usage: dict[str, Any]) -> None:
    fresh = usage.get("input_tokens")
    cached = (usage.get("cache_read_input_tokens") or 0) + (usage.get("cache_creation_input_tokens") or 0)
    before_in, before_out = facts.usage
    facts.usage = (
        before_in if fresh is None else fresh + cached,
        usage.get("output_tokens", before_out),
    )


def _block(facts: Facts, block: dict[str, Any], input_json: str) -> None:
    if block["type"] == "text":
        facts.texts.append(block["text"])
    elif block["type"] == "thinking":
        facts.thinking += block["thinking"]
    elif block["type"] == "tool_use":
        facts.calls.append((block["id"], block["name"], json.loads(input_json) if input_json else block["input"]))


def expected_stream(answer: list[dict[str, Any]]) -> Facts:
    """The facts of one streamed answer, from its events."""
    facts = Facts()
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for event in answer:
        kind = event["type"]
        if kind == "message_start":
            _usage(facts, event["message"]["usage"])
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
            inputs[event["index"]] = ""
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "input_json_delta":
                inputs[event["index"]] += delta["partial_json"]
        elif kind == "content_block_stop":
            _block(facts, blocks[event["index"]], inputs[event["index"]])
        elif kind == "message_delta":
            facts.stop = event["delta"]["stop_reason"]
            _usage(facts, event.get("usage") or {})
    return facts


def expected_body(message: dict[str, Any]) -> Facts:
    """The facts of a Messages response body."""
    facts = Facts(stop=message["stop_reason"])
    for block in message["content"]:
        _block(facts, block, "")
    _usage(facts, message["usage"])
    return facts


@pytest.mark.parametrize("path", params([p for p in FILES if p.endswith(".chunks.txt")]))
def test_recorded_anthropic_stream_decodes_to_the_answers_facts(path: str) -> None:
    for answer in split(events(path), "message_start"):
        assert answer[-1]["type"] == "message_stop", path
        got = ir_facts(decoded("anthropic", sse(answer, named=True), stream=True), join=False)
        assert got == expected_stream(answer), path


@pytest.mark.parametrize("path", params([p for p in FILES if p.endswith(".json")]))
def test_recorded_anthropic_body_decodes_to_the_answers_facts(path: str) -> None:
    got = ir_facts(decoded("anthropic", body(path), stream=False), join=False)
    assert got == expected_body(json.loads(body(path))), path
