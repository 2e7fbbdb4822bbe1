"""Real error bodies recorded by vercel/ai, decoded by each protocol's error decoder.

Provenance (read from the snapshot, never copied; see docs/protocols.md), vercel/ai:
- `packages/google/src/__fixtures__/google-429-retry-info.json`: Gemini's 429 RESOURCE_EXHAUSTED with a
  `google.rpc.RetryInfo` (its status is in the body: `error.code`);
- `packages/openai/src/responses/__fixtures__/openai-error.1.json`: OpenAI's `insufficient_quota`, which OpenAI
  sends with status 429 (the fixture keeps only the body);
- `packages/openai/src/responses/__fixtures__/reasoning-model-temperature-error.json` and
  `packages/openai/src/chat/__fixtures__/reasoning-model-legacy-parameter-error.json`: OpenAI's 400
  `invalid_request_error`s for a parameter a reasoning model refuses.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import registry
from tests.captures.vercel_ai import body, listing, params

GEMINI_429 = "packages/google/src/__fixtures__/google-429-retry-info.json"
OPENAI = {
    "packages/openai/src/responses/__fixtures__/openai-error.1.json": ("responses", 429),
    "packages/openai/src/responses/__fixtures__/reasoning-model-temperature-error.json": ("responses", 400),
    "packages/openai/src/chat/__fixtures__/reasoning-model-legacy-parameter-error.json": ("openai", 400),
}
"""Each OpenAI error body: the codec that reads it and the status OpenAI sends it with."""
PRESENT = listing()


def _retry_delay(error: dict[str, Any]) -> float:
    info = [d for d in error["details"] if d["@type"].endswith("google.rpc.RetryInfo")]
    return float(info[0]["retryDelay"].removesuffix("s"))


@pytest.mark.parametrize("path", params([p for p in PRESENT if p == GEMINI_429]))
def test_gemini_429_resource_exhausted_with_retry_info(path: str) -> None:
    wire = json.loads(body(path))["error"]
    error = registry.get("gemini").decode_error(wire["code"], {"content-type": "application/json"}, body(path))
    assert error.kind == ir.ErrorKind.THROTTLED
    assert (error.status, error.message, error.code) == (wire["code"], wire["message"], wire["status"])
    assert error.retryable
    assert error.retry_after == _retry_delay(wire)


@pytest.mark.parametrize("path", params([p for p in PRESENT if p in OPENAI]))
def test_openai_error_body_keeps_status_message_and_code(path: str) -> None:
    codec, status = OPENAI[path]
    wire = json.loads(body(path))["error"]
    error = registry.get(codec).decode_error(status, {"content-type": "application/json"}, body(path))
    kind = ir.ErrorKind.THROTTLED if status == 429 else ir.ErrorKind.INVALID_REQUEST
    assert (error.kind, error.status, error.message) == (kind, status, wire["message"])
    assert error.code == (wire["code"] or wire["type"])
