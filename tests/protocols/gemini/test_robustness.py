"""Bad input (hypothesis): random bytes and mutated corpus bodies only ever raise `WireError` (DecodeError or
FramingError) from the request, response and stream decoders, and `decode_error` never raises at all."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import decode_events
from harness.stream import validate
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest
from tests.conftest import corpus_files
from tests.protocols.gemini.support import CODEC, corpus

PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
ITEMS = [item for path in corpus_files("gemini") for item in corpus(path.name)]
REQUESTS = [item.request.body for item in ITEMS]
STREAMS = [item.response.body for item in ITEMS if item.response.status < 400]
ERRORS = [item.response for item in ITEMS if item.response.status >= 400]


@st.composite
def mutated(draw: st.DrawFn, bodies: list[bytes]) -> bytes:
    """A corpus body with byte flips, a deleted range or a truncation."""
    body = bytearray(draw(st.sampled_from(bodies)))
    how = draw(st.sampled_from(["flip", "delete", "truncate"]))
    if not body:
        return bytes(body)
    if how == "flip":
        for _ in range(draw(st.integers(1, 8))):
            pos = draw(st.integers(0, len(body) - 1))
            body[pos] = draw(st.integers(0, 255))
    elif how == "delete":
        start = draw(st.integers(0, len(body) - 1))
        del body[start : start + draw(st.integers(1, 64))]
    else:
        del body[draw(st.integers(0, len(body) - 1)) :]
    return bytes(body)


def _decodes(decode: Callable[[], object]) -> bool:
    """Whether `decode` succeeds; a `WireError` is the only failure allowed (anything else propagates)."""
    try:
        decode()
    except WireError:
        return False
    return True


def _stream(chunks: list[bytes]) -> list[ir.StreamEvent] | None:
    try:
        return decode_events(CODEC, chunks)
    except WireError:
        return None


def _split(body: bytes, cut: int) -> list[bytes]:
    cut = min(cut, len(body))
    return [body[:cut], body[cut:]]


@pytest.mark.skipif(not ITEMS, reason="no Gemini corpus")
@given(mutated(STREAMS or [b"x"]), st.integers(0, 4096))
def test_mutated_streams(body: bytes, cut: int) -> None:
    events = _stream(_split(body, cut))
    if events is not None:
        # Whatever decodes is a valid stream, and chunking does not change it.
        assert validate(events) == []
        assert _stream([body]) == events


@pytest.mark.skipif(not ITEMS, reason="no Gemini corpus")
@given(mutated(STREAMS or [b"x"]))
def test_mutated_responses(body: bytes) -> None:
    _decodes(lambda: CODEC.decode_response(body))


@pytest.mark.skipif(not ITEMS, reason="no Gemini corpus")
@given(mutated(REQUESTS or [b"x"]))
def test_mutated_requests(body: bytes) -> None:
    _decodes(lambda: CODEC.decode_request(HttpRequest(method="POST", path=PATH, query={"alt": "sse"}, body=body)))


@given(st.text(max_size=80))
def test_random_paths(path: str) -> None:
    _decodes(lambda: CODEC.decode_request(HttpRequest(method="POST", path=path, body=b'{"contents": []}')))
    assert CODEC.is_stream_request(HttpRequest(method="POST", path=path)) in (True, False)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,
        b'{"candidates": ' + b"[" * 5000,
        b'{"usageMetadata": {"promptTokenCount": ' + b"9" * 5000 + b"}}",
        b'{"candidates": [{"content": {"parts": [{"functionCall": {"name": "\\ud800", "args": {"a": "\\udfff"}}}]}}]}',
    ],
    ids=["deep-array", "deep-candidates", "huge-integer", "lone-surrogates"],
)
def test_pathological_json(body: bytes) -> None:
    as_response = _decodes(lambda: CODEC.decode_response(body))
    as_stream = _decodes(lambda: decode_events(CODEC, [b"data: " + body + b"\n\n"]))
    # Only the well-formed (if odd) lone-surrogate body decodes; the others are refused with a DecodeError.
    assert as_response == as_stream == (b"ud800" in body)
    CODEC.decode_error(500, {}, body)
