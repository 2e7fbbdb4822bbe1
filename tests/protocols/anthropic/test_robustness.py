"""Garbage in: random bytes and mutated corpus bodies never make a decoder raise anything but `WireError`
(`DecodeError` / `FramingError`), and `decode_error` never raises at all."""

from __future__ import annotations

import contextlib
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocols import decode_events
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest
from tests.protocols.anthropic.support import CODEC, corpus_paths, interactions, random_chunks
from tests.protocols.mutate import mutated_bytes


@cache
def _bodies() -> dict[str, list[bytes]]:
    """Corpus bodies by what decodes them: request, response, stream, error."""
    out: dict[str, list[bytes]] = {"request": [], "response": [], "stream": [], "error": []}
    for path in corpus_paths():
        for item in interactions(path.name):
            out["request"].append(item.request.body)
            if item.response.status >= 400:
                out["error"].append(item.response.body)
            elif CODEC.is_stream_request(item.request):
                out["stream"].append(item.response.body)
            else:
                out["response"].append(item.response.body)
    return out


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> bytes:
    """A corpus body of `kind` with byte flips, a deleted range, an inserted run and/or a truncation."""
    bodies = _bodies()[kind]
    if not bodies:
        pytest.skip("corpus not available")
    return draw(mutated_bytes(draw(st.sampled_from(bodies))))


# The typed error is an expected outcome for broken input; anything else escapes and fails the test.


def _decode_stream(body: bytes, seed: int) -> None:
    with contextlib.suppress(WireError):
        decode_events(CODEC, random_chunks(body, seed))


def _decode_request(body: bytes) -> None:
    with contextlib.suppress(WireError):
        CODEC.decode_request(HttpRequest(method="POST", path="/v1/messages", body=body))


def _decode_response(body: bytes) -> None:
    with contextlib.suppress(WireError):
        CODEC.decode_response(body)


@given(mutated("stream"), st.integers(0, 100))
def test_mutated_corpus_streams(body: bytes, seed: int) -> None:
    _decode_stream(body, seed)


@given(mutated("request"))
def test_mutated_corpus_requests(body: bytes) -> None:
    _decode_request(body)


@given(mutated("response"))
def test_mutated_corpus_responses(body: bytes) -> None:
    _decode_response(body)
