"""Garbage and damaged real traffic into every Ollama decoder: only typed errors (WireError) come out."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocols import decode_events
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest
from tests.conftest import corpus_dir, corpus_files
from tests.protocols.ollama.support import CODEC, corpus

NATIVE = [p.name for p in corpus_files("ollama") if p.suffix == ".httprr"]


def _bodies() -> list[tuple[bytes, bytes]]:
    """(request body, response body) of every native corpus file."""
    out = []
    for name in NATIVE:
        item = corpus(name)
        out.append((item.request.body, item.response.body))
    return out


@st.composite
def mutations(draw: st.DrawFn, body: bytes) -> bytes:
    """`body` with byte flips, a truncation or a deleted range."""
    data = bytearray(body)
    how = draw(st.sampled_from(["flip", "truncate", "delete", "insert"]))
    if how == "flip":
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= draw(st.integers(1, 255))
    elif how == "truncate":
        del data[draw(st.integers(0, len(data))) :]
    elif how == "delete":
        a = draw(st.integers(0, len(data)))
        del data[a : a + draw(st.integers(1, 64))]
    else:
        data[draw(st.integers(0, len(data))) : 0] = draw(st.binary(min_size=1, max_size=8))
    return bytes(data)


def _every_decoder(body: bytes) -> None:
    for decode in (
        lambda: CODEC.decode_request(HttpRequest(method="POST", path="/api/chat", body=body)),
        lambda: CODEC.is_stream_request(HttpRequest(method="POST", path="/api/chat", body=body)),
        lambda: CODEC.decode_response(body),
        lambda: decode_events(CODEC, [body]),
        lambda: decode_events(CODEC, [body[i : i + 7] for i in range(0, len(body), 7)]),
    ):
        with contextlib.suppress(WireError):
            decode()
    CODEC.decode_error(500, {}, body)  # never raises at all


@given(st.data())
def test_mutated_corpus_raises_only_wire_errors(data: st.DataObject) -> None:
    corpus_dir("ollama")  # skips, with the reason, when the corpus is absent
    request, response = data.draw(st.sampled_from(_bodies()))
    _every_decoder(data.draw(mutations(request)))
    _every_decoder(data.draw(mutations(response)))


@pytest.mark.parametrize("name", ["api-chat-stream-local.httprr", "api-chat-stream-thinking-cloud.httprr"])
def test_every_truncation_of_a_real_stream_ends_with_one_terminal_event(name: str) -> None:
    from harness.stream import validate

    body = corpus(name).response.body
    for cut in range(0, len(body), 37):
        events = decode_events(CODEC, [body[:cut]])
        assert validate(events) == [], cut
        assert events[-1].kind == "error"
