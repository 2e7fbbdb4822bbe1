"""Reference backends as the real provider answers: a codec's encoders plus what only a provider says.

The encoders write what the IR holds; a real provider also sends what no translation can know: its own ids in
its own format, fields such as `system_fingerprint` or `service_tier`, durations, and response headers
(`request-id`, `openai-processing-ms`, ...). A protocol package declares these in a `Reference` (the codec's
optional `reference` attribute), and the functions here produce the whole answer: the reference backends and
the recorder (scripted replies), the shape test and `conformance shapes` (real recordings, decoded and
re-encoded). Everything a reference adds is derived from a seed, so one scenario always records the same bytes.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from harness import ir
from harness.protocols.base import Codec
from harness.wire.http import HttpRequest, HttpResponse

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
"""Alphabet of the random parts of provider ids (Anthropic's and OpenAI's ids use these characters)."""


def token(seed: str, length: int, alphabet: str = BASE62) -> str:
    """A deterministic random-looking string: `length` characters of `alphabet` derived from `seed` (each digest
    byte `b` becomes `alphabet[b % len(alphabet)]`)."""
    digest = b""
    counter = 0
    while len(digest) < length:
        digest += hashlib.sha256(f"{seed}\x1f{counter}".encode()).digest()
        counter += 1
    table = _byte_table(alphabet)
    if table is not None:
        return digest[:length].translate(table).decode("ascii")
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


@functools.lru_cache(maxsize=32)
def _byte_table(alphabet: str) -> bytes | None:
    """`bytes.translate`'s table sending each byte `b` to `alphabet[b % len(alphabet)]`, for an ASCII alphabet
    (None otherwise): the OpenAI and Responses encoders pad every streamed chunk with a token, and one C call
    makes it at half the cost of joining its characters one by one."""
    return bytes(ord(alphabet[b % len(alphabet)]) for b in range(256)) if alphabet.isascii() else None


def number(seed: str, low: int, high: int) -> int:
    """A deterministic integer in [low, high] derived from `seed` (timings, durations)."""
    value = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
    return low + value % (high - low + 1)


@runtime_checkable
class Reference(Protocol):
    """What a protocol's real provider adds to what its encoders write (see the module docstring)."""

    @property
    def differences(self) -> Mapping[str, str]:
        """Shape differences from the real wire that remain, each with its reason: fnmatch patterns over
        `harness.protocols.shape.Difference.key` (`path real message usage.server_tool_use*`) -> why."""
        ...

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """A stream's IR events as the provider would send them (its ids, its extras, its interim usage)."""
        ...

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """A non-streamed response as the provider would send it."""
        ...

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """An encoded error response as the provider sends it (e.g. a `request_id` in the body)."""
        ...

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """Response headers the provider adds (lower-case names; never anything secret-looking)."""
        ...


@dataclass(frozen=True)
class PlainReference:
    """The reference of a protocol that declares none: its encoders' output, unchanged."""

    differences: Mapping[str, str] = field(default_factory=dict)
    """No declared differences."""

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """The events unchanged."""
        return events

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The response unchanged."""
        return response

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """The error unchanged."""
        return response

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """No headers of its own."""
        return {}


def reference_of(codec: Codec) -> Reference:
    """The codec's reference, or the plain one when it declares none."""
    found = getattr(codec, "reference", None)
    if isinstance(found, Reference):
        return found
    return PlainReference()


def as_requested(codec: Codec, recorded: HttpRequest, request: HttpRequest, chunks: list[bytes]) -> list[bytes]:
    """A recorded streamed answer as the real provider would send it for `request`, which may ask for less than
    the `recorded` request did (OpenAI sends the usage chunk only to a request that asks for it); the chunks
    unchanged where the codec's reference has no `as_requested` (the provider answers every request alike)."""
    hook = getattr(reference_of(codec), "as_requested", None)
    if hook is None:
        return chunks
    out: list[bytes] = hook(recorded, request, chunks)
    return out


def strip_extras(events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    """The events without provider extras and provider events: what a scripted reply can say, so that a
    reference must add the provider's own fields itself."""
    out: list[ir.StreamEvent] = []
    for event in events:
        if isinstance(event, ir.ProviderEvent):
            continue
        if isinstance(event, ir.MessageStart | ir.Done) and event.extras is not None:
            event = event.model_copy(update={"extras": None})
        out.append(event)
    return out


@dataclass(frozen=True)
class StreamReply:
    """A streamed answer: headers and the body's chunks, one per event that has bytes."""

    headers: dict[str, str]
    """Response headers (lower-case names)."""
    chunks: list[bytes]
    """Body pieces in order (the protocol's trailer, e.g. `[DONE]`, is its own last piece)."""


def stream_reply(codec: Codec, request: ir.Request, events: list[ir.StreamEvent], *, seed: str) -> StreamReply:
    """The provider's streamed answer for these IR events. A stream without a terminal event is cut: it gets
    no trailer (a truncated body just stops)."""
    reference = reference_of(codec)
    encoder = codec.stream_encoder(request=request)
    chunks = [b for b in (encoder.encode(e) for e in reference.events(events, request=request, seed=seed)) if b]
    if events and events[-1].kind in ir.TERMINAL_KINDS:
        tail = encoder.close()
        if tail:
            chunks.append(tail)
    headers = {"content-type": codec.stream_media_type}
    headers.update(reference.headers(stream=True, status=200, seed=seed))
    return StreamReply(headers, chunks)


def body_reply(codec: Codec, request: ir.Request, response: ir.Response, *, seed: str) -> HttpResponse:
    """The provider's non-streamed answer for this IR response."""
    reference = reference_of(codec)
    out = codec.encode_response(reference.response(response, request=request, seed=seed), request=request)
    headers = {**out.headers, **reference.headers(stream=False, status=out.status, seed=seed)}
    return HttpResponse(out.status, headers, out.body)


def error_reply(codec: Codec, error: ir.IRError, *, seed: str, status: int | None = None) -> HttpResponse:
    """The provider's error answer for this IR error (`status` overrides the protocol's own for the kind)."""
    reference = reference_of(codec)
    out = reference.error(codec.encode_error(error), error=error, seed=seed)
    status = status or out.status
    headers = {**out.headers, **reference.headers(stream=False, status=status, seed=seed)}
    return HttpResponse(status, headers, out.body)
