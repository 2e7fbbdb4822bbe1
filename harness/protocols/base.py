"""The codec contract every wire protocol implements, in all four directions.

One codec serves every role (docs/protocols.md, "The codec contract"): a frontend decodes requests and encodes
responses, a backend encodes requests and decodes responses; reference backends and the replay server use the same
functions. Codecs raise only `DecodeError` on bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, TypeVar, runtime_checkable

from harness import ir
from harness.ir import Capability
from harness.wire.errors import WireError
from harness.wire.http import HttpRequest, HttpResponse


class DecodeError(WireError):
    """Input that a protocol cannot decode; says which protocol and where."""

    def __init__(self, protocol: str, message: str, *, offset: int | None = None) -> None:
        super().__init__(f"{protocol}: {message}", offset=offset)
        self.protocol = protocol
        self.before: list[ir.StreamEvent] = []
        """The events the same `feed` or `close` completed before the fault (`decode_each`): `FramedDecoder` hands
        them over and raises the error on the next call."""


U = TypeVar("U")


def decode_each(units: Iterable[U], decode: Callable[[U], list[ir.StreamEvent]]) -> list[ir.StreamEvent]:
    """The events of each framed unit (an SSE event, an NDJSON line, a frame) in turn. A `DecodeError` met after
    some carries them (`DecodeError.before`), so that what a consumer gets before a malformed unit does not depend
    on where the chunks were cut: the unit alone in a chunk, or after others in one."""
    out: list[ir.StreamEvent] = []
    for unit in units:
        try:
            out += decode(unit)
        except DecodeError as exc:
            exc.before = out + exc.before
            raise
    return out


class StreamDecoder(Protocol):
    """Incremental wire -> IR stream decoding: feed bytes as they arrive, get IR events out."""

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the events they complete."""
        ...

    def close(self) -> list[ir.StreamEvent]:
        """End of input: return the remaining events. A stream that ended without its protocol's terminal
        marker yields a terminal `ErrorEvent` of kind `malformed_stream` rather than raising."""
        ...


class StreamEncoder(Protocol):
    """Incremental IR -> wire stream encoding: one event in, the bytes to send out now."""

    def encode(self, event: ir.StreamEvent) -> bytes:
        """Bytes for this event (may be empty when the protocol has no wire form for it yet)."""
        ...

    def close(self) -> bytes:
        """Trailing bytes after the terminal event (e.g. OpenAI `data: [DONE]`)."""
        ...


@runtime_checkable
class Codec(Protocol):
    """A wire protocol (or a provider profile over one) in all four directions."""

    @property
    def name(self) -> str:
        """Registry name, e.g. `openai`, `anthropic`, `gemini`, `groq`."""
        ...

    @property
    def stream_media_type(self) -> str:
        """Content-Type of a streamed response, e.g. `text/event-stream`."""
        ...

    @property
    def losses(self) -> Mapping[str, str]:
        """What this protocol cannot carry -> why, keyed in the grammar of `harness.diff.losses` (`Model`,
        `Model.field`, `Model.field:value`); round-trip properties and both diffs apply it."""
        ...

    @property
    def family(self) -> str:
        """The base protocol this one is a flavour of (`openai` for Groq, Qwen, ...; itself for a base
        protocol): its official SDK drives this backend's baseline run."""
        ...

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Scenario capabilities (`harness.ir.Capability`) this protocol can carry, as a
        frontend and as a backend; cases needing others are reported unsupported, not failed."""
        ...

    # --- requests -------------------------------------------------------------------------------------
    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A client's wire request -> IR (frontend role; replay server; request-side check)."""
        ...

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the wire request a client of this protocol would send (backend role). No auth added."""
        ...

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """The same request carrying `api_key` the way this protocol expects it."""
        ...

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the client asked for a streamed response (body flag, path or query)."""
        ...

    # --- responses ------------------------------------------------------------------------------------
    def decode_response(self, body: bytes) -> ir.Response:
        """A successful non-streamed response body -> IR."""
        ...

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a successful non-streamed response."""
        ...

    def stream_decoder(self) -> StreamDecoder:
        """A fresh incremental decoder for one streamed response body."""
        ...

    def stream_encoder(self, *, request: ir.Request | None = None) -> StreamEncoder:
        """A fresh incremental encoder for one streamed response body."""
        ...

    # --- errors ---------------------------------------------------------------------------------------
    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response (status, headers, body) -> IR error with a kind."""
        ...

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> this protocol's error response, status and headers (Retry-After) included."""
        ...


def decode_events(codec: Codec, chunks: Iterable[bytes]) -> list[ir.StreamEvent]:
    """Decode a whole streamed body given as chunks (convenience for tests and tools)."""
    decoder = codec.stream_decoder()
    events: list[ir.StreamEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.close())
    return events


def encode_events(codec: Codec, events: Iterable[ir.StreamEvent], request: ir.Request | None = None) -> bytes:
    """Encode a whole stream of events to one body (convenience for tests and tools)."""
    encoder = codec.stream_encoder(request=request)
    out = bytearray()
    for event in events:
        out += encoder.encode(event)
    out += encoder.close()
    return bytes(out)


class FramedDecoder:
    """A stream decoder whose framing errors come out as the protocol's `DecodeError` (the codec contract: a
    decoder raises only `DecodeError`, so every caller that catches it, the proxy's tap included, holds), and whose
    errors stay: one met after events of the same call (`DecodeError.before`) is raised by the next call, as the
    framing decoders do theirs (`harness.wire.errors.Sticky`), so the events a consumer gets before it are the same
    however the stream was cut."""

    def __init__(self, protocol: str, inner: StreamDecoder) -> None:
        self.protocol = protocol
        self.inner = inner
        self._error: DecodeError | None = None

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """The inner decoder's `feed`, a `FramingError` turned into a `DecodeError` with the same offset; the
        events before a `DecodeError` (`DecodeError.before`) are returned, and the error is raised by the next
        call."""
        if self._error is not None:
            raise self._error
        try:
            return self.inner.feed(chunk)
        except DecodeError as exc:
            self._error = exc
            if not exc.before:
                raise
            before, exc.before = exc.before, []
            return before
        except WireError as exc:
            self._error = DecodeError(self.protocol, exc.message, offset=exc.offset)
            raise self._error from exc

    def close(self) -> list[ir.StreamEvent]:
        """The inner decoder's `close`, with the same translation; an error a `feed` held is raised here (nothing
        comes after `close` to raise it)."""
        if self._error is not None:
            raise self._error
        try:
            return self.inner.close()
        except DecodeError:
            raise
        except WireError as exc:
            raise DecodeError(self.protocol, exc.message, offset=exc.offset) from exc
