"""Helpers that cut one byte string into chunks and run a framing decoder over them."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from hypothesis import strategies as st


class Decoder(Protocol):
    """What every framing decoder offers: feed chunks, then close."""

    def feed(self, chunk: bytes) -> list[Any]: ...
    def close(self) -> list[Any]: ...


def split_at(body: bytes, cuts: Sequence[int]) -> list[bytes]:
    """`body` cut at the given offsets (sorted, deduplicated, clamped to the body)."""
    points = sorted({min(max(c, 0), len(body)) for c in cuts} | {0, len(body)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


def random_sizes(body: bytes, seed: int, low: int = 1, high: int = 64) -> list[bytes]:
    """`body` in chunks of random sizes between `low` and `high` (deterministic per seed)."""
    rng = random.Random(seed)
    out, pos = [], 0
    while pos < len(body):
        n = rng.randint(low, high)
        out.append(body[pos : pos + n])
        pos += n
    return out


def chunkings(body: bytes) -> dict[str, list[bytes]]:
    """The named chunkings every corpus body is fed in: whole, one byte at a time, random sizes."""
    return {
        "whole": [body],
        "1-byte": [body[i : i + 1] for i in range(len(body))],
        "random-1-64": random_sizes(body, seed=len(body)),
        "random-1-4096": random_sizes(body, seed=7, high=4096),
    }


def run(make: Callable[[], Decoder], chunks: Sequence[bytes]) -> list[Any]:
    """Everything a fresh decoder yields for `chunks`, including what `close()` returns."""
    decoder = make()
    out: list[Any] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    out.extend(decoder.close())
    return out


def outcome(make: Callable[[], Decoder], chunks: Sequence[bytes]) -> tuple[str, Any, list[Any]]:
    """('ok', None, output) or ('error', offset, what was delivered before the error): comparable across
    chunkings, errors included."""
    from harness.wire.errors import FramingError

    decoder = make()
    out: list[Any] = []
    try:
        for chunk in chunks:
            out.extend(decoder.feed(chunk))
        out.extend(decoder.close())
    except FramingError as exc:
        return ("error", exc.offset, out)
    return ("ok", None, out)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
"""Any JSON value (no NaN/Infinity), for encoder/decoder round trips."""
