"""Real Gemini generateContent answers recorded by vercel/ai, decoded by the `gemini` codec.

Provenance (read from the snapshot, never copied; see docs/corpus.md): vercel/ai
`packages/google/src/__fixtures__/*.chunks.txt` (streamGenerateContent?alt=sse chunks, Gemini 2.5/3 and Vertex,
thought signatures, Vertex's streamed function-call arguments) and `*.json` (generateContent bodies). Its
`interactions/` fixtures are Google's Interactions API, which the harness has no codec for, and are not read.

Expected facts come from the chunks themselves: non-thought text joined (the wire has no block boundary), thought
text, `functionCall` names and args (Gemini sends no call ids), the last `finishReason` and the last
`usageMetadata` (output = candidates + thoughts, the IR convention).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.captures.vercel_ai import Facts, body, decoded, events, ir_facts, listing, params, sse

DIR = "packages/google/src/__fixtures__/"
NOT_READ = {f"{DIR}google-429-retry-info.json": "an error body (test_errors)"}
STREAMED_ARGS = (
    "Vertex's streamed function-call arguments (`streamFunctionCallArguments`: a `functionCall` with `willContinue`, "
    "then parts of `partialArgs` by `jsonPath`, then an empty `functionCall` to close it) are not read: the decoder "
    "rejects a functionCall without a name"
)
GAPS = {
    f"{DIR}google-stream-no-args-tool-call.chunks.txt": STREAMED_ARGS,
    f"{DIR}google-stream-tool-call-arguments.chunks.txt": STREAMED_ARGS,
    f"{DIR}google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": STREAMED_ARGS,
    f"{DIR}google-vertex-stream-tool-call-arguments-nested.1.chunks.txt": STREAMED_ARGS,
}
FILES = [p for p in listing() if p.startswith(DIR) and p not in NOT_READ]


def _marks(path: str) -> Any:
    if path in GAPS:
        return pytest.param(path, marks=pytest.mark.xfail(reason=GAPS[path], strict=True))
    return path


def expected(chunks: list[dict[str, Any]]) -> Facts:
    """The facts of a Gemini answer: its chunks (one for a body)."""
    facts = Facts(texts=[""])
    for chunk in chunks:
        for candidate in chunk.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "text" in part and part.get("thought"):
                    facts.thinking += part["text"]
                elif "text" in part:
                    facts.texts[0] += part["text"]
                elif "functionCall" in part:
                    facts.calls.append((None, part["functionCall"]["name"], part["functionCall"].get("args", {})))
            facts.stop = candidate.get("finishReason", facts.stop)
        meta = chunk.get("usageMetadata") or {}
        if "promptTokenCount" in meta:
            out = meta.get("candidatesTokenCount", 0) + meta.get("thoughtsTokenCount", 0)
            facts.usage = (meta["promptTokenCount"], out)
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
