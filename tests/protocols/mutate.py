"""Broken input for the decoders: a body with byte flips, a deleted range, an inserted run and/or a truncation, and
every decoder of a codec run on it."""

from __future__ import annotations

import contextlib

from hypothesis import strategies as st

from harness.protocols import Codec, HttpRequest, decode_events
from harness.wire.errors import WireError


def every_decoder(codec: Codec, body: bytes, request: HttpRequest) -> None:
    """Run every decoder of `codec` on `body` (as `request`'s body where a request is decoded): each may raise only a
    `WireError`, and `decode_error` nothing at all."""
    for decode in (
        lambda: codec.decode_request(request),
        lambda: codec.is_stream_request(request),
        lambda: codec.decode_response(body),
        lambda: decode_events(codec, [body]),
        lambda: decode_events(codec, [body[i : i + 7] for i in range(0, len(body), 7)]),
    ):
        with contextlib.suppress(WireError):
            decode()
    codec.decode_error(500, {"retry-after": "soon"}, body)  # never raises at all


@st.composite
def mutated_bytes(draw: st.DrawFn, body: bytes) -> bytes:
    """`body` with byte flips, a deleted range, an inserted run and/or a truncation."""
    data = bytearray(body)
    for _ in range(draw(st.integers(0, 4))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        start = draw(st.integers(0, len(data)))
        del data[start : draw(st.integers(start, min(len(data), start + 200)))]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(st.sampled_from([b"\n\n", b"{", b"}", b'"', b"\r", b"null", b"[]", b"\xff", b"-1"]))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)
