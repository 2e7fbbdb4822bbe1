"""Real Bedrock Converse answers recorded by vercel/ai, decoded by the `bedrock` codec.

Provenance (read from the snapshot, never copied; see docs/protocols.md): vercel/ai
`packages/amazon-bedrock/src/__fixtures__/amazon-bedrock-{text,reasoning}.chunks.txt` (ConverseStream events, one
`{"<eventType>": {...}}` a line, framed back into AWS event-stream messages here) and
`amazon-bedrock-{text,reasoning,json-other-tool.1}.json` (Converse bodies). The folder's other files are
hand-written (tool ids such as `json-tool-id`, `tool-1`) or reordered, and are not read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.wire.eventstream import encode_message
from tests.captures.vercel_ai import Facts, body, decoded, events, ir_facts, listing, params

DIR = "packages/amazon-bedrock/src/__fixtures__/"
STREAMS = [f"{DIR}amazon-bedrock-text.chunks.txt", f"{DIR}amazon-bedrock-reasoning.chunks.txt"]
BODIES = [
    f"{DIR}amazon-bedrock-text.json",
    f"{DIR}amazon-bedrock-reasoning.json",
    f"{DIR}amazon-bedrock-json-other-tool.1.json",
]
PRESENT = set(listing())


def framed(payloads: list[dict[str, Any]]) -> bytes:
    """The event-stream bytes of ConverseStream events."""
    out = b""
    for payload in payloads:
        ((kind, data),) = payload.items()
        headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
        out += encode_message(headers, json.dumps(data).encode("utf-8"))
    return out


def _usage(usage: dict[str, Any]) -> tuple[int, int]:
    cached = usage.get("cacheReadInputTokens", 0) + usage.get("cacheWriteInputTokens", 0)
    return (usage["inputTokens"] + cached, usage["outputTokens"])


def _block(facts: Facts, block: dict[str, Any]) -> None:
    if "text" in block:
        facts.texts.append(block["text"])
    elif "reasoningContent" in block:
        facts.thinking += block["reasoningContent"].get("reasoningText", {}).get("text", "")
    elif "toolUse" in block:
        tool = block["toolUse"]
        facts.calls.append((tool["toolUseId"], tool["name"], tool["input"]))


def expected_stream(payloads: list[dict[str, Any]]) -> Facts:
    """The facts of a ConverseStream answer, from its events."""
    facts = Facts()
    blocks: dict[int, dict[str, Any]] = {}
    for payload in payloads:
        ((kind, data),) = payload.items()
        if kind == "contentBlockDelta":
            block, delta = blocks.setdefault(data["contentBlockIndex"], {}), data["delta"]
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "reasoningContent" in delta and "text" in delta["reasoningContent"]:
                reasoning = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})
                reasoning["reasoningText"]["text"] += delta["reasoningContent"]["text"]
        elif kind == "contentBlockStop":
            _block(facts, blocks.pop(data["contentBlockIndex"], {}))
        elif kind == "messageStop":
            facts.stop = data["stopReason"]
        elif kind == "metadata":
            facts.usage = _usage(data["usage"])
    return facts


def expected_body(response: dict[str, Any]) -> Facts:
    """The facts of a Converse body."""
    facts = Facts(stop=response["stopReason"], usage=_usage(response["usage"]))
    for block in response["output"]["message"]["content"]:
        _block(facts, block)
    return facts


@pytest.mark.parametrize("path", params([p for p in STREAMS if p in PRESENT]))
def test_recorded_converse_stream_decodes_to_the_answers_facts(path: str) -> None:
    payloads = events(path)
    got = ir_facts(decoded("bedrock", framed(payloads), stream=True), join=False)
    assert got == expected_stream(payloads), path


@pytest.mark.parametrize("path", params([p for p in BODIES if p in PRESENT]))
def test_recorded_converse_body_decodes_to_the_answers_facts(path: str) -> None:
    got = ir_facts(decoded("bedrock", body(path), stream=False), join=False)
    assert got == expected_body(json.loads(body(path))), path
