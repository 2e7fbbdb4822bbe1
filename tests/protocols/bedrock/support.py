"""Helpers shared by the Bedrock codec tests: the codec, frames of a body, schema checks, chunkings."""

from __future__ import annotations

import json
from typing import Any

from harness import ir
from harness.protocols import decode_events, registry
from harness.protocols.bedrock import schemas
from harness.wire.eventstream import iter_messages
from tests.protocols.roundtrip import random_chunks as random_chunks

CODEC = registry.get("bedrock")


def frames(body: bytes) -> list[dict[str, Any]]:
    """Each frame of a ConverseStream body as `{"headers": ..., "payload": <parsed JSON or None>}`."""
    return [
        {"headers": dict(m.headers), "payload": json.loads(m.payload) if m.payload else None}
        for m in iter_messages([body])
    ]


def event_types(body: bytes) -> list[str]:
    """The `:event-type` (or `:exception-type` / `:error-code`) of each frame, in order."""
    out = []
    for frame in frames(body):
        headers = frame["headers"]
        out.append(headers.get(":event-type") or headers.get(":exception-type") or headers[":error-code"])
    return out


def assert_schema(name: str, instance: Any) -> None:
    """Fail with the schema's own message when `instance` does not match schema `name`."""
    schemas.validate(name, instance)


def assert_stream_schema(body: bytes) -> None:
    """Every frame of a ConverseStream body matches the stream_event schema."""
    found = frames(body)
    assert found, "no frames"
    for frame in found:
        assert_schema("stream_event", frame)


def events_of(body: bytes) -> list[ir.StreamEvent]:
    """A whole ConverseStream body decoded in one chunk."""
    return decode_events(CODEC, [body])
