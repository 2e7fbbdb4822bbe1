"""Helpers shared by the Gemini tests: corpus loading, chunkings, schema checks of wire output."""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

from harness import ir
from harness.capture import Interaction, load_interactions
from harness.protocols import decode_events, registry
from harness.protocols.gemini import schemas
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.jsonarray import JSONArrayDecoder
from harness.wire.sse import SSEDecoder
from tests.conftest import corpus_dir

CODEC = registry.get("gemini")


@cache
def _load(name: str) -> tuple[Interaction, ...]:
    return tuple(load_interactions(corpus_dir("gemini") / name))


def corpus(name: str) -> list[Interaction]:
    """Every interaction of a Gemini corpus file (read once per test session)."""
    return list(_load(name))


def chunkings(body: bytes) -> dict[str, list[bytes]]:
    """Whole, one byte at a time, and random sizes (deterministic per body)."""
    rng = random.Random(len(body))
    pieces, pos = [], 0
    while pos < len(body):
        n = rng.randint(1, 97)
        pieces.append(body[pos : pos + n])
        pos += n
    return {"whole": [body], "1-byte": [body[i : i + 1] for i in range(len(body))], "random": pieces}


def decode_stream(body: bytes) -> list[ir.StreamEvent]:
    """The events of a whole streamed body."""
    return decode_events(CODEC, [body])


def stream_payloads(body: bytes) -> list[Any]:
    """The JSON payloads of a streamed body: SSE data, JSON-array elements, or the one plain JSON body."""
    head = body.lstrip()
    if head.startswith(b"["):
        decoder = JSONArrayDecoder()
        return [*decoder.feed(body), *decoder.close()]
    if head.startswith(b"{"):
        return [json.loads(body)]
    sse = SSEDecoder()
    return [json.loads(e.data) for e in [*sse.feed(body), *sse.close()] if e.data]


def check_request(request: HttpRequest) -> None:
    """A request body matches the request schema."""
    schemas.validate("request", json.loads(request.body))


def check_response(response: HttpResponse) -> None:
    """A non-streamed reply body matches the response schema."""
    schemas.validate("response", json.loads(response.body))


def check_error(response: HttpResponse) -> None:
    """An error body matches the error schema."""
    schemas.validate("error", json.loads(response.body))


def check_stream(body: bytes) -> None:
    """Every chunk of a streamed body matches the stream-event schema."""
    for payload in stream_payloads(body):
        schemas.validate("stream_event", payload)


def texts(response: ir.Response) -> str:
    """The joined text of a response."""
    return "".join(p.text for p in response.content if isinstance(p, ir.TextPart))


def kinds(response: ir.Response) -> list[str]:
    """The kinds of a response's parts, in order."""
    return [p.kind for p in response.content]
