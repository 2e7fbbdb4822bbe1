"""Helpers shared by the Anthropic codec tests: the codec, corpus access, SSE payloads, schema checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import ir
from harness.capture import Interaction, load_interactions
from harness.protocols import decode_events, registry
from harness.protocols.anthropic import schemas
from harness.wire.http import HttpResponse
from harness.wire.sse import iter_sse
from tests.conftest import corpus_dir, corpus_files
from tests.protocols.roundtrip import random_chunks as random_chunks

CODEC = registry.get("anthropic")
PROTOCOL = "anthropic"


def corpus_paths() -> list[Path]:
    """Every Anthropic capture file (empty when the corpus is absent)."""
    return corpus_files(PROTOCOL)


def interactions(name: str) -> list[Interaction]:
    """The interactions of one corpus file, by file name (skips when the corpus is absent)."""
    return load_interactions(corpus_dir(PROTOCOL) / name)


def is_stream(item: Interaction) -> bool:
    """Whether the recorded request asked for a stream."""
    return CODEC.is_stream_request(item.request)


def events_of(body: bytes) -> list[ir.StreamEvent]:
    """A whole SSE body decoded in one chunk."""
    return decode_events(CODEC, [body])


def byte_chunks(body: bytes) -> Iterator[bytes]:
    """The body one byte at a time."""
    return (body[i : i + 1] for i in range(len(body)))


def sse_payloads(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, parsed data) of every SSE event in a body."""
    return [(e.event, json.loads(e.data)) for e in iter_sse([body])]


def assert_schema(name: str, instance: Any) -> None:
    """Fail with the schema's own message when `instance` does not match schema `name`."""
    schemas.validate(name, instance)


def assert_stream_schema(body: bytes) -> None:
    """Every SSE event's data matches the stream_event schema and its event name equals its type."""
    payloads = sse_payloads(body)
    assert payloads, "no SSE events"
    for event, data in payloads:
        assert_schema("stream_event", data)
        assert event == data["type"]


def response_json(response: HttpResponse) -> Any:
    """The JSON body of an encoded response."""
    return json.loads(response.body)


def texts(response: ir.Response) -> list[str]:
    """The text of each text part, in order."""
    return [p.text for p in response.content if isinstance(p, ir.TextPart)]


def tool_calls(response: ir.Response) -> list[tuple[str, str, Any]]:
    """(id, name, arguments) of each tool call, in order."""
    return [(p.id, p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)]
