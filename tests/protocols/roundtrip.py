"""The per-protocol parameters of the generic round trips (`tests/protocols/test_contract.py`).

Each protocol's `tests/protocols/<name>/test_roundtrip.py` declares `ROUND_TRIPS`, a `RoundTrip` per registered
name it covers: what its wire checks on an encoded request, response, stream or error (schemas, paths, headers),
and what of an IR value comes back (its projection through the protocol's losses). The generic tests do the rest;
what differs between protocols (a second stream mode, what precedes a mid-stream error, the errors a protocol
cannot tell apart) is a field here, not a copied test.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import ir
from harness.protocols import Codec, encode_events
from harness.wire.http import HttpRequest, HttpResponse

Events = list[ir.StreamEvent]


def _same(value: Any) -> Any:
    return value


def _nothing(*_: Any) -> None:
    return None


def _always(_: ir.IRError) -> bool:
    return True


def _sse(codec: Codec, events: Events) -> dict[str, bytes]:
    return {"sse": encode_events(codec, events)}


def random_chunks(body: bytes, seed: int) -> Iterator[bytes]:
    """The body cut at random points (1 to 64 bytes per chunk), reproducibly."""
    rng = random.Random(seed)
    pos = 0
    while pos < len(body):
        step = rng.randint(1, 64)
        yield body[pos : pos + step]
        pos += step


@dataclass(frozen=True)
class RoundTrip:
    """One protocol's round-trip parameters (see the module docstring)."""

    expect_request: Callable[[ir.Request], Any]
    """What comes back of a request: its projection through the losses."""
    expect_response: Callable[[ir.Response], Any]
    """What comes back of a response."""
    check_request: Callable[[HttpRequest, ir.Request], None] = _nothing
    """Assertions on the encoded request (schema, path, headers)."""
    check_response: Callable[[HttpResponse], None] = _nothing
    """Assertions on the encoded response."""
    seen_request: Callable[[ir.Request], Any] = _same
    """The view of a decoded request that is compared (default: itself)."""
    seen_response: Callable[[ir.Response], Any] = _same
    """The view of a decoded response that is compared (default: itself)."""
    prepare_response: Callable[[ir.Response], ir.Response] = _same
    """The generated response made consistent with a convention the encoders rely on."""
    stream_only: bool = False
    """Every request asks for a stream (the protocol has no other answer)."""
    rules: frozenset[str] | None = None
    """The keys of the projection's rules, one per key of the codec's `losses` and `reshapes` (None: the
    projection is not keyed by them)."""
    expect_stream: Callable[[ir.Response, int], Any] | None = None
    """What comes back of the stream of a response, its text cut every `chunk` characters
    (`strategies.events_for(response, chunk=chunk)`), as `seen_stream` shows it."""
    seen_stream: Callable[[Events], Any] = _same
    """The view of a decoded stream that is compared."""
    check_stream: Callable[[bytes, Events], object] = _nothing
    """Assertions on a stream body encoded from these events (its events' schema, how it ends)."""
    stream_bodies: Callable[[Codec, Events], dict[str, bytes]] = _sse
    """The stream bodies a protocol sends for one event list, by mode (Gemini's JSON array beside SSE)."""
    expect_error: Callable[[ir.IRError], Any] | None = None
    """What comes back of an error sent as an HTTP error response, as `seen_error` shows it."""
    seen_error: Callable[[ir.IRError], Any] = _same
    """The view of a decoded error that is compared."""
    check_error: Callable[[HttpResponse, ir.IRError], None] = _nothing
    """Assertions on an encoded error response (schema, headers)."""
    error_cases: Callable[[ir.IRError], bool] = _always
    """The generated errors the error round trip is judged on (Ollama's wire has only a message, from which
    some phrases read as another kind)."""
    expect_stream_error: Callable[[Events], Any] | None = None
    """What comes back of a stream ending in an error event (as `seen_stream_error` shows it)."""
    seen_stream_error: Callable[[Events], Any] = _same
    """The view of a decoded stream ending in an error that is compared."""
    error_after_content: bool = True
    """In the stream-error round trip the error follows a response's content (else only its start)."""
    reencodes_byte_for_byte: bool = False
    """A decoded request encodes to the very body it was decoded from (pass-through fidelity)."""


def gather() -> dict[str, RoundTrip]:
    """Every protocol's `ROUND_TRIPS`, by registry name."""
    out: dict[str, RoundTrip] = {}
    for path in sorted(Path(__file__).parent.glob("*/test_roundtrip.py")):
        module = importlib.import_module(f"tests.protocols.{path.parent.name}.test_roundtrip")
        out.update(getattr(module, "ROUND_TRIPS", {}))
    return out
