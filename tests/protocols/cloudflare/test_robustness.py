"""Garbage into every Workers AI decoder: only typed errors (WireError) come out; truncations end in one
terminal event."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.protocols import decode_events
from harness.stream import validate
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest
from tests.protocols.cloudflare.support import CODEC, provider_body


def _every_decoder(body: bytes) -> None:
    for decode in (
        lambda: CODEC.decode_request(
            HttpRequest(method="POST", path="/client/v4/accounts/a/ai/run/@cf/m/x", body=body)
        ),
        lambda: CODEC.decode_response(body),
        lambda: decode_events(CODEC, [body]),
        lambda: decode_events(CODEC, [body[i : i + 5] for i in range(0, len(body), 5)]),
    ):
        with contextlib.suppress(WireError):
            decode()
    CODEC.decode_error(500, {}, body)  # never raises at all


@given(st.binary(max_size=300))
def test_random_bytes_raise_only_wire_errors(body: bytes) -> None:
    _every_decoder(body)
    _every_decoder(b"data: " + body + b"\n\n")


KEYS = [
    "response", "tool_calls", "p", "usage", "prompt_tokens", "completion_tokens", "choices", "delta", "message",
    "content", "reasoning_content", "reasoning", "finish_reason", "id", "index", "function", "name", "arguments",
    "result", "success", "errors", "code", "messages", "role", "stream", "tools", "response_format", "type",
    "json_schema", "image_url", "url", "tool_call_id", "prompt", "max_tokens", "error",
]  # fmt: skip
VALUES = st.sampled_from(["[DONE]", "user", "assistant", "tool", "function", "json_schema", "stop", "tool_calls"])
shapes = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | VALUES | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=20,
)


@given(st.lists(shapes, max_size=4))
def test_well_formed_json_of_the_wrong_shape_raises_only_wire_errors(values: list[Any]) -> None:
    _every_decoder(json.dumps(values[0] if values else {}).encode())
    _every_decoder(b"".join(b"data: " + json.dumps(v).encode() + b"\n\n" for v in values))


def test_every_truncation_of_a_workers_ai_stream_ends_with_one_terminal_event() -> None:
    body = provider_body("should handle streamed tool calls (OpenAI format) with tools present")
    for cut in range(0, len(body), 11):
        events = decode_events(CODEC, [body[:cut]])
        assert validate(events) == [], cut
        assert events[-1].kind in ("error", "done"), cut
