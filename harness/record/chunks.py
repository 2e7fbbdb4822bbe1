"""Chunk boundaries: kept from the recording, or re-cut adversarially to catch framing bugs a single-body replay
hides."""

from __future__ import annotations

import random
from collections.abc import Sequence
from enum import StrEnum

from harness.wire import eventstream


class Rechunk(StrEnum):
    """How to re-cut a recorded body on replay."""

    BYTES = "bytes"
    """Every byte its own chunk."""
    RANDOM = "random"
    """Random sizes from 1 to 64 bytes (seeded, so a failure reproduces)."""
    UTF8 = "utf8"
    """The recorded boundaries plus a cut inside every multi-byte UTF-8 character."""


def split_by_lengths(body: bytes, lengths: Sequence[int] | None) -> list[bytes]:
    """The body cut at the recorded chunk lengths (one piece when none were recorded or they do not add up)."""
    if not lengths or sum(lengths) != len(body):
        return [body] if body else []
    out, pos = [], 0
    for n in lengths:
        out.append(body[pos : pos + n])
        pos += n
    return out


def event_boundaries(body: bytes, media_type: str | None = None) -> list[int]:
    """Chunk lengths at event boundaries, for recordings whose network boundaries vcrpy lost: binary event-stream
    frames (by the response's media type), else SSE events or NDJSON lines (by the body's look)."""
    if media_type is not None and media_type.split(";", 1)[0].strip().lower() == eventstream.MEDIA_TYPE:
        return eventstream.frame_lengths(body)
    lengths, start = [], 0
    separators = (b"\r\n\r\n", b"\n\n") if b"data:" in body[:4096] or body.startswith(b":") else (b"\n",)
    pos = 0
    while pos < len(body):
        hits = [(body.find(sep, pos), sep) for sep in separators]
        hits = [(i, s) for i, s in hits if i >= 0]
        if not hits:
            break
        i, sep = min(hits)
        pos = i + len(sep)
        lengths.append(pos - start)
        start = pos
    if start < len(body):
        lengths.append(len(body) - start)
    return lengths


def rechunk(chunks: list[bytes], how: Rechunk | None, *, seed: int = 0) -> list[bytes]:
    """The same bytes cut another way."""
    if how is None:
        return chunks
    body = b"".join(chunks)
    if how is Rechunk.BYTES:
        return [body[i : i + 1] for i in range(len(body))]
    if how is Rechunk.RANDOM:
        rng, out, pos = random.Random(seed), [], 0
        while pos < len(body):
            n = rng.randint(1, 64)
            out.append(body[pos : pos + n])
            pos += n
        return out
    cuts = set()
    pos = 0
    for chunk in chunks:
        pos += len(chunk)
        cuts.add(pos)
    cuts |= {i + 1 for i, b in enumerate(body) if b >= 0xC0}  # right after each multi-byte lead byte
    edges = sorted(c for c in cuts if 0 < c < len(body))
    return [body[a:b] for a, b in zip([0, *edges], [*edges, len(body)], strict=True)]
