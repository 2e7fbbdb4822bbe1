"""Helpers shared by the Ollama tests: corpus loading, chunkings, schema checks of encoded output."""

from __future__ import annotations

import json
import random

from harness import ir
from harness.capture import Interaction, load_interactions
from harness.protocols import decode_events, registry
from harness.protocols.ollama import schemas
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.ndjson import NDJSONDecoder
from tests.conftest import corpus_dir

CODEC = registry.get("ollama")


def corpus(name: str) -> Interaction:
    """The single interaction of an Ollama corpus file."""
    (item,) = load_interactions(corpus_dir("ollama") / name)
    return item


def chunkings(body: bytes) -> dict[str, list[bytes]]:
    """Whole, one byte at a time, and random sizes (deterministic)."""
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


def check_request(request: HttpRequest) -> None:
    """An encoded (or recorded) request body matches the request schema."""
    schemas.validate("request", _json(request.body))


def check_response(response: HttpResponse) -> None:
    """A non-streamed reply body matches the response schema."""
    schemas.validate("response", _json(response.body))


def check_error(response: HttpResponse) -> None:
    """An error body matches the error schema."""
    schemas.validate("error", _json(response.body))


def check_stream(body: bytes) -> None:
    """Every NDJSON line of a streamed body matches the stream-chunk schema."""
    decoder = NDJSONDecoder()
    for line in [*decoder.feed(body), *decoder.close()]:
        schemas.validate("stream_chunk", line)


def _json(body: bytes) -> object:
    return json.loads(body)
