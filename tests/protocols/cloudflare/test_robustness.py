"""Garbage into every Workers AI decoder: only typed errors (WireError) come out; truncations end in one
terminal event."""

from __future__ import annotations

from harness.protocols import decode_events
from harness.stream import validate
from tests.protocols.cloudflare.support import CODEC, provider_body


def test_every_truncation_of_a_workers_ai_stream_ends_with_one_terminal_event() -> None:
    body = provider_body("should handle streamed tool calls (OpenAI format) with tools present")
    for cut in range(0, len(body), 11):
        events = decode_events(CODEC, [body[:cut]])
        assert validate(events) == [], cut
        assert events[-1].kind in ("error", "done"), cut
