"""Broken input for the decoders: a body with byte flips, a deleted range, an inserted run and/or a truncation."""

from __future__ import annotations

from hypothesis import strategies as st


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
