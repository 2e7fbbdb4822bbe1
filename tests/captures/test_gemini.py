"""Real Gemini generateContent answers recorded by vercel/ai, decoded by the `gemini` codec.

Provenance (read from the snapshot, never copied; see docs/protocols.md): vercel/ai
`packages/google/src/__fixtures__/*.chunks.txt` (streamGenerateContent?alt=sse chunks, Gemini 2.5/3 and Vertex,
thought signatures, Vertex's streamed function-call arguments) and `*.json` (generateContent bodies). Its
`interactions/` fixtures are Google's Interactions API, which the harness has no codec for, and are not read.

Expected facts come from the chunks themselves: non-thought text joined (the wire has no block boundary), thought
text, `functionCall` names and args (Gemini sends no call ids), the last `finishReason` and the last
`usageMetadata` (output = candidates + thoughts, the IR convention; none when neither is counted); a prompt
blocked before any candidate stops with `promptFeedback.blockReason`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.captures.vercel_ai import Facts, body, decoded, events, ir_facts, listing, params, sse

DIR = "packages/google/src/__fixtures__/"
NOT_READ = {f"{DIR}google-429-retry-info.json": "an error body (test_errors)"}
FILES = [p for p in listing() if p.startswith(DIR) and p not in NOT_READ]


GAPS: dict[str, str] = {}
"""Decoder gaps, as strict xfails (none left: Vertex's streamed function-call arguments were one)."""
STREAMED = (
    f"{DIR}google-stream-no-args-tool-call.chunks.txt",
    f"{DIR}google-stream-tool-call-arguments.chunks.txt",
    f"{DIR}google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt",
    f"{DIR}google-vertex-stream-tool-call-arguments-nested.1.chunks.txt",
)
"""Vertex's streamed function-call arguments (`partialArgs` by `jsonPath`, `willContinue`)."""


def _marks(path: str) -> Any:
    if path in GAPS:
        return pytest.param(path, marks=pytest.mark.xfail(reason=GAPS[path], strict=True))
    return path


def _assign(args: dict[str, Any], path: str, value: Any, append: bool) -> None:
    """Set `$.a.b[0].c` in `args` (appending to the string there when `append`)."""
    keys: list[Any] = [int(k) if k.isdigit() else k for k in re.findall(r"[^.\[\]$]+", path)]
    node: Any = args
    for key, following in zip(keys, [*keys[1:], None], strict=True):
        if following is None:
            break
        if isinstance(node, list) and key == len(node):
            node.append([] if isinstance(following, int) else {})
        elif isinstance(node, dict) and key not in node:
            node[key] = [] if isinstance(following, int) else {}
        node = node[key]
    last = keys[-1]
    if isinstance(node, list) and last == len(node):
        node.append(None)
    node[last] = node[last] + value if append else value


class _Streamed:
    """The function call whose arguments are being streamed."""

    def __init__(self, call: dict[str, Any]) -> None:
        self.name, self.args, self.open = call["name"], dict[str, Any](), set[str]()

    def add(self, call: dict[str, Any]) -> None:
        for entry in call.get("partialArgs", []):
            path = entry["jsonPath"]
            value = next(entry[k] for k in ("stringValue", "numberValue", "boolValue", "nullValue") if k in entry)
            value = None if "nullValue" in entry else value
            _assign(self.args, path, value, append="stringValue" in entry and path in self.open)
            (self.open.add if entry.get("willContinue") else self.open.discard)(path)


def expected(chunks: list[dict[str, Any]]) -> Facts:
    """The facts of a Gemini answer: its chunks (one for a body)."""
    facts = Facts(texts=[""])
    streamed: _Streamed | None = None
    for chunk in chunks:
        for candidate in chunk.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "text" in part and part.get("thought"):
                    facts.thinking += part["text"]
                elif "text" in part:
                    facts.texts[0] += part["text"]
                elif "functionCall" in part:
                    call = part["functionCall"]
                    if streamed is None and call.get("willContinue"):
                        streamed = _Streamed(call)
                    elif streamed is not None:
                        streamed.add(call)
                        if not call.get("willContinue"):
                            facts.calls.append((None, streamed.name, streamed.args))
                            streamed = None
                    else:
                        facts.calls.append((None, call["name"], call.get("args", {})))
            facts.stop = candidate.get("finishReason", facts.stop)
        blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
        facts.stop = blocked if blocked and not chunk.get("candidates") else facts.stop
        meta = chunk.get("usageMetadata") or {}
        if "promptTokenCount" in meta:
            counts = [meta[k] for k in ("candidatesTokenCount", "thoughtsTokenCount") if k in meta]
            facts.usage = (meta["promptTokenCount"], sum(counts) if counts else None)
    return facts


@pytest.mark.parametrize("path", params([_marks(p) for p in FILES if p.endswith(".chunks.txt")]))
def test_recorded_gemini_stream_decodes_to_the_answers_facts(path: str) -> None:
    chunks = events(path)
    got = ir_facts(decoded("gemini", sse(chunks), stream=True), join=True, ids=False)
    assert got == expected(chunks), path


@pytest.mark.parametrize("path", params([p for p in FILES if p.endswith(".json")]))
def test_recorded_gemini_body_decodes_to_the_answers_facts(path: str) -> None:
    got = ir_facts(decoded("gemini", body(path), stream=False), join=True, ids=False)
    assert got == expected([json.loads(body(path))]), path
