"""The protocol kit: a codec composed from its parts, so a protocol writes functions and no codec class.

A protocol package writes its parts as module functions (decode and encode requests, responses, errors; a stream
decoder and encoder class) and declares `CODEC = registry.register(ComposedCodec(...), facts=FACTS)`. The parts
whose contract signature is the codec's own are taken as they are; three are taken in a plain form and adapted
here once: `response_encoder(response, request)`, `stream_decoder_factory()` (framing errors become the
protocol's `DecodeError`) and `stream_encoder_factory(request)`. A flavour of a protocol (Vertex's Anthropic,
Vertex's Gemini) is `dataclasses.replace(BASE, name=..., ...)` with the parts that differ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import ParamSpec, Protocol, TypeVar

from pydantic import ValidationError

from harness import ir
from harness.ir import Capability
from harness.protocols.base import DecodeError, FramedDecoder, StreamDecoder, StreamEncoder
from harness.protocols.reference import Reference
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse

EMPTY: Mapping[str, str] = MappingProxyType({})

P = ParamSpec("P")
T = TypeVar("T")


class WireEvents(Protocol):
    """The optional shape part: a body's typed wire events (see `harness.protocols.shape`)."""

    def __call__(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]: ...


def bearer_auth(request: HttpRequest, api_key: str) -> HttpRequest:
    """The request with `Authorization: Bearer KEY`.

    The default `with_auth` part."""
    return dataclasses.replace(request, headers={**request.headers, "authorization": f"Bearer {api_key}"})


def guarded(protocol: str, decode: Callable[P, T], *, what: str = "") -> Callable[P, T]:
    """`decode` with a pydantic `ValidationError` (an IR model refusing a value that slipped past the field
    checks) raised as the protocol's `DecodeError`: `"{what}does not map to IR: ..."`."""

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return decode(*args, **kwargs)
        except ValidationError as exc:
            raise DecodeError(protocol, f"{what}does not map to IR: {exc.errors()[0]['msg']}") from exc

    return run


def refuse_client_calls(protocol: str, capabilities: frozenset[Capability], call_type: str | None) -> None:
    """Raise for a tool call with a `call_type` (a custom or built-in client call) when the protocol lacks
    `Capability.CLIENT_TOOL_CALLS`: sending it as a function call would hand the client a call it cannot run."""
    if call_type is not None and Capability.CLIENT_TOOL_CALLS not in capabilities:
        raise ValueError(f"{protocol} has no form for a {call_type!r} tool call (no client_tool_calls capability)")


@dataclasses.dataclass(frozen=True)
class CheckedStreamEncoder:
    """A stream encoder that refuses a client call its protocol cannot carry (`refuse_client_calls`)."""

    protocol: str
    capabilities: frozenset[Capability]
    inner: StreamEncoder

    def encode(self, event: ir.StreamEvent) -> bytes:
        """The inner encoder's bytes, after the check."""
        if isinstance(event, ir.ToolCallStart):
            refuse_client_calls(self.protocol, self.capabilities, event.call_type)
        return self.inner.encode(event)

    def close(self) -> bytes:
        """The inner encoder's trailing bytes."""
        return self.inner.close()


def checked_response(protocol: str, capabilities: frozenset[Capability], response: ir.Response) -> ir.Response:
    """`response`, after `refuse_client_calls` on each of its tool calls."""
    for part in response.content:
        if isinstance(part, ir.ToolCallPart):
            refuse_client_calls(protocol, capabilities, part.call_type)
    return response


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ComposedCodec:
    """A codec (`harness.protocols.base.Codec`) made of its parts; see the module docstring."""

    name: str
    """Registry name."""
    capabilities: frozenset[Capability]
    """Scenario capabilities the wire carries, as a frontend and as a backend: declared here only."""
    losses: Mapping[str, str]
    """What the wire cannot carry (`harness.diff.losses` keys)."""
    decode_request: Callable[[HttpRequest], ir.Request]
    encode_request: Callable[[ir.Request], HttpRequest]
    is_stream_request: Callable[[HttpRequest], bool]
    decode_response: Callable[[bytes], ir.Response]
    response_encoder: Callable[[ir.Response, ir.Request | None], HttpResponse]
    """`encode_response`, the request passed positionally (None when not known)."""
    stream_decoder_factory: Callable[[], StreamDecoder]
    """A fresh stream decoder; `stream_decoder()` frames it (`FramedDecoder`)."""
    stream_encoder_factory: Callable[[ir.Request | None], StreamEncoder]
    """A fresh stream encoder for the request (None when not known)."""
    decode_error: Callable[[int, Mapping[str, str], bytes], ir.IRError]
    encode_error: Callable[[ir.IRError], HttpResponse]
    with_auth: Callable[[HttpRequest, str], HttpRequest] = bearer_auth
    family: str = ""
    """The base protocol this one is a flavour of; empty: itself."""
    stream_media_type: str = "text/event-stream"
    reference: Reference | None = None
    """What the real provider adds to what the encoders write (`harness.protocols.reference.Reference`)."""
    reshapes: Mapping[str, str] = dataclasses.field(default_factory=lambda: EMPTY)
    """How the wire reshapes IR values in ways no loss key can say (free text; not applied by the diffs)."""
    wire_events: WireEvents | None = None
    """The shape part, or None: a codec without it is not measured by the shape comparison."""

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name)

    def __repr__(self) -> str:
        return f"ComposedCodec({self.name!r})"

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a successful non-streamed response (see `Codec.encode_response`); a client call the protocol
        cannot carry is refused (`refuse_client_calls`)."""
        return self.response_encoder(checked_response(self.name, self.capabilities, response), request)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh decoder for one streamed body, raising only this protocol's `DecodeError`."""
        return FramedDecoder(self.name, self.stream_decoder_factory())

    def stream_encoder(self, *, request: ir.Request | None = None) -> StreamEncoder:
        """A fresh encoder for one streamed body (refusing a client call the protocol cannot carry)."""
        inner = self.stream_encoder_factory(request)
        if Capability.CLIENT_TOOL_CALLS in self.capabilities:
            return inner
        return CheckedStreamEncoder(self.name, self.capabilities, inner)
