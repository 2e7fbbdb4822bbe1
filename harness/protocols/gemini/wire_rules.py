"""What real Gemini API streams always do beyond what `google-genai` needs to read them: the wire rules a proxy
serving this frontend is held to (`facts.WireRule`; a break is a wire deviation, a warning).

Evidence: every stream recorded from the real API in the shared corpus (`gemini/sse-stream-*.yaml`,
`json-array-stream-thought-function-call.yaml`) carries `finishReason` in its last chunk and in no other;
`tests/protocols/gemini/test_wire_rules.py` checks the rule against each of them.
"""

from __future__ import annotations

import json
from typing import Any

from harness.protocols.facts import WireRule
from harness.protocols.wire_schema import event_json, sse_data
from harness.wire import FramingError, JSONArrayDecoder

CORPUS = (
    "corpus gemini/sse-stream-text.yaml, sse-stream-thoughts-crlf.yaml, sse-stream-parallel-function-calls.yaml, "
    "json-array-stream-thought-function-call.yaml (finishReason only in the last chunk)"
)
REFERENCE = "https://ai.google.dev/api/generate-content#v1beta.FinishReason (a candidate's finishReason ends it)"


def _chunks(body: bytes) -> list[Any]:
    """The JSON chunks of a stream, SSE (`alt=sse`) or a JSON array; none when the framing is broken (the codec
    and the `frontend_wire` check judge that)."""
    try:
        if body.lstrip()[:1] == b"[":
            decoder = JSONArrayDecoder()
            return [*decoder.feed(body), *decoder.close()]
        return [event_json(data) for data in sse_data(body) if data.strip()]
    except (FramingError, json.JSONDecodeError):
        return []


def _finished(chunk: Any) -> bool:
    candidates = chunk.get("candidates") if isinstance(chunk, dict) else None
    return any(isinstance(c, dict) and c.get("finishReason") for c in candidates or [])


def nothing_after_finish(body: bytes, stream: bool) -> list[str]:
    """No chunk follows the one whose candidate carries `finishReason`."""
    if not stream:
        return []
    chunks = _chunks(body)
    final = next((i for i, chunk in enumerate(chunks) if _finished(chunk)), None)
    if final is None or final == len(chunks) - 1:
        return []
    after = [json.dumps(c, ensure_ascii=False)[:120] for c in chunks[final + 1 :]]
    return [f"{len(after)} chunk(s) after the finishReason chunk {final}: {'; '.join(after)}"]


RULES = (WireRule("gemini.nothing_after_finish", f"{REFERENCE}; {CORPUS}", nothing_after_finish),)
"""The wire rules of the Gemini API as a frontend."""
