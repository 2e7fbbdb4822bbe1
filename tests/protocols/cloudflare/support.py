"""Helpers shared by the Cloudflare tests: the codec, schema checks, and Workers AI bodies from cloudflare/ai."""

from __future__ import annotations

import json

from harness import ir
from harness.protocols import decode_events, registry
from harness.protocols.cloudflare import schemas
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.sse import SSEDecoder
from tests.protocols.mirror import CLOUDFLARE_AI, js_joined_body

CODEC = registry.get("cloudflare")
STREAM_TEST = "packages/workers-ai-provider/test/stream-text.test.ts"
MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
"""The model of those tests (their `TEST_MODEL`)."""


def provider_body(title: str) -> bytes:
    """The SSE body the workers-ai-provider test `title` serves (read from the cloudflare/ai snapshot)."""
    return js_joined_body(CLOUDFLARE_AI.read(STREAM_TEST), title, {"TEST_MODEL": MODEL}).encode("utf-8")


def decode(body: bytes) -> list[ir.StreamEvent]:
    """The events of a whole body."""
    return decode_events(CODEC, [body])


def payloads(body: bytes) -> list[dict[str, object]]:
    """The JSON `data` payloads of an SSE body (without `[DONE]`)."""
    decoder = SSEDecoder()
    return [json.loads(e.data) for e in [*decoder.feed(body), *decoder.close()] if e.data not in ("", "[DONE]")]


def check_request(request: HttpRequest) -> None:
    """An encoded request body matches the request schema."""
    schemas.validate("request", json.loads(request.body))


def check_response(response: HttpResponse) -> None:
    """A non-streamed reply matches the response schema."""
    schemas.validate("response", json.loads(response.body))


def check_stream(body: bytes) -> None:
    """Every data payload matches the stream-event schema and the body ends with `data: [DONE]`."""
    for payload in payloads(body):
        schemas.validate("stream_event", payload)


def check_error(response: HttpResponse) -> None:
    """An error body matches the envelope schema."""
    schemas.validate("error", json.loads(response.body))
