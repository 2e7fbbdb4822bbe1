"""Helpers shared by the Responses codec tests: the codec, corpus access, chunkings, SSE payloads, schema checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import ir
from harness.capture import Interaction, load_interactions
from harness.protocols import decode_events, registry
from harness.protocols.responses import schemas
from harness.wire.http import HttpResponse
from harness.wire.sse import iter_sse
from tests.conftest import corpus_dir, corpus_files
from tests.protocols.roundtrip import random_chunks as random_chunks

CODEC = registry.get("responses")
PROTOCOL = "openai_responses"
"""The corpus folder of this protocol."""


def corpus_paths() -> list[Path]:
    """Every Responses capture file (empty when the corpus is absent)."""
    return corpus_files(PROTOCOL)


def interactions(name: str) -> list[Interaction]:
    """The interactions of one corpus file, by file name (skips when the corpus is absent)."""
    return load_interactions(corpus_dir(PROTOCOL) / name)


def events_of(body: bytes) -> list[ir.StreamEvent]:
    """A whole SSE body decoded in one chunk."""
    return decode_events(CODEC, [body])


def byte_chunks(body: bytes) -> Iterator[bytes]:
    """The body one byte at a time."""
    return (body[i : i + 1] for i in range(len(body)))


def sse_payloads(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, parsed data) of every SSE event in a body."""
    return [(e.event, json.loads(e.data)) for e in iter_sse([body])]


def assert_stream_schema(body: bytes) -> list[dict[str, Any]]:
    """Every event's data matches the stream_event schema, its name is its type, and its sequence numbers count
    from 0 without a gap; returns the payloads."""
    payloads = sse_payloads(body)
    assert payloads, "no SSE events"
    for event, data in payloads:
        schemas.validate("stream_event", data)
        assert event == data["type"]
    assert [data["sequence_number"] for _, data in payloads] == list(range(len(payloads)))
    return [data for _, data in payloads]


def response_json(response: HttpResponse) -> Any:
    """The JSON body of an encoded response."""
    return json.loads(response.body)


def sse_body(*events: dict[str, Any]) -> bytes:
    """An SSE body of the given event payloads, named by their type (sequence numbers as given)."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def texts(response: ir.Response) -> list[str]:
    """The text of each text part, in order."""
    return [p.text for p in response.content if isinstance(p, ir.TextPart)]
