"""Helpers shared by the swink tests: the codec, schema checks of encoded output, swink's own wire bodies."""

from __future__ import annotations

import json

from harness import ir
from harness.protocols import decode_events, registry
from harness.protocols.swink import schemas
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.sse import SSEDecoder
from tests.protocols.mirror import SWINK, rust_array_body

CODEC = registry.get("swink")
PROXY_HTTP = "adapters/tests/suite/proxy_http.rs"
PROXY_RS = "adapters/src/proxy.rs"


def swink_body(function: str) -> bytes:
    """The SSE body a `proxy_http.rs` test serves (read from the swink-agent snapshot)."""
    return rust_array_body(SWINK.read(PROXY_HTTP), function).encode("utf-8")


def decode(body: bytes) -> list[ir.StreamEvent]:
    """The events of a whole body."""
    return decode_events(CODEC, [body])


def payloads(body: bytes) -> list[dict[str, object]]:
    """The JSON `data` payloads of an SSE body, in order."""
    decoder = SSEDecoder()
    return [json.loads(e.data) for e in [*decoder.feed(body), *decoder.close()] if e.data not in ("", "[DONE]")]


def check_request(request: HttpRequest) -> None:
    """An encoded request body matches the request schema."""
    schemas.validate("request", json.loads(request.body))


def check_stream(body: bytes) -> None:
    """Every event of an SSE body matches the stream-event schema."""
    for payload in payloads(body):
        schemas.validate("stream_event", payload)


def check_error(response: HttpResponse) -> None:
    """An error body matches the error schema."""
    schemas.validate("error", json.loads(response.body))
