"""Garbage in: random bytes and mutated real bodies never make a decoder raise anything but `WireError`, and
`decode_error` never raises at all."""

from __future__ import annotations

import contextlib
import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocols import decode_events
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest
from tests.protocols.bedrock import recordings
from tests.protocols.bedrock.support import CODEC, random_chunks


@functools.cache
def _bodies() -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {"request": [], "response": [], "stream": []}
    for rec in recordings.all_recordings():
        out["request"].append(rec.request_body)
        if rec.status == 200:
            out["stream" if rec.stream else "response"].append(rec.body)
    return out


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> bytes:
    """A recorded body of `kind` with byte flips, a deleted range, an inserted run and/or a truncation."""
    try:
        bodies = _bodies()[kind]
    except pytest.skip.Exception:
        bodies = []
    if not bodies:
        pytest.skip("recordings not available (see tests/protocols/bedrock/recordings.py)")
    data = bytearray(draw(st.sampled_from(bodies)))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        start = draw(st.integers(0, len(data)))
        del data[start : draw(st.integers(start, min(len(data), start + 200)))]
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


def _decode_stream(body: bytes, seed: int) -> None:
    with contextlib.suppress(WireError):
        decode_events(CODEC, random_chunks(body, seed))


def _decode_request(body: bytes) -> None:
    with contextlib.suppress(WireError):
        CODEC.decode_request(HttpRequest(method="POST", path="/model/m/converse", body=body))


def _decode_response(body: bytes) -> None:
    with contextlib.suppress(WireError):
        CODEC.decode_response(body)


@given(mutated("stream"), st.integers(0, 100))
def test_mutated_recorded_streams(body: bytes, seed: int) -> None:
    _decode_stream(body, seed)


@given(mutated("request"))
def test_mutated_recorded_requests(body: bytes) -> None:
    _decode_request(body)


@given(mutated("response"))
def test_mutated_recorded_responses(body: bytes) -> None:
    _decode_response(body)
