"""What the proxy hands to the harness: one `Exchange` per request, and the translate-path hook seam."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness import ir
from harness.stream import Violation
from harness.wire.http import HttpRequest


@dataclass(frozen=True)
class Timings:
    """When things happened, for one exchange. Offsets are seconds after `start` (monotonic clock)."""

    start: float
    """Wall-clock time (Unix seconds) the proxy received the request."""
    upstream_first_byte: float | None = None
    """Offset of the first upstream response byte (None when nothing came back)."""
    first_byte: float | None = None
    """Offset of the first response byte sent to the client."""
    end: float | None = None
    """Offset of the end of the exchange."""
    first_token: float | None = None
    """Offset of the first answer content at the client, where it is measured there (an external proxy's run:
    `harness.rig.sut_timing`); None otherwise (the report takes it from the chunk times)."""


@dataclass(frozen=True)
class Exchange:
    """Everything the trace needs about one request through the proxy. Secrets are never included."""

    trace_id: str
    """Id of this exchange, also sent as the `x-conformance-trace-id` response header and logged."""
    route: str
    """Method and route template, e.g. `POST /v1/chat/completions`."""
    frontend_protocol: str
    """Registry name of the protocol the client spoke."""
    mode: str
    """`passthrough`, `translate`, or `local` (answered by the proxy itself)."""
    model: str | None = None
    """Frontend model name the client asked for."""
    stream: bool = False
    """Whether the client asked for a stream."""
    upstream_name: str | None = None
    """Configured upstream the request went to."""
    upstream_protocol: str | None = None
    """Registry name of the codec the upstream speaks."""
    upstream_url: str | None = None
    """URL the proxy called, without its query string (which may carry a key)."""
    frontend_headers: Mapping[str, str] = field(default_factory=dict)
    """Client request headers, credentials removed."""
    upstream_headers: Mapping[str, str] = field(default_factory=dict)
    """Headers the proxy sent upstream, credentials removed."""
    upstream_body: bytes = b""
    """The body the proxy sent upstream, as sent (for the raw-field checks; never written to a trace)."""
    frontend_response_headers: Mapping[str, str] = field(default_factory=dict)
    """Headers of the answer the proxy sent the client, credentials removed."""
    frontend_request: ir.Request | None = None
    """The client's request decoded with the frontend codec."""
    upstream_request: ir.Request | None = None
    """The bytes actually sent upstream, decoded back with the upstream codec."""
    upstream_status: int | None = None
    """HTTP status the upstream answered with."""
    upstream_events: tuple[ir.StreamEvent, ...] = ()
    """The upstream stream decoded to IR (streamed exchanges)."""
    upstream_response: ir.Response | None = None
    """The upstream body decoded to IR (non-streamed exchanges)."""
    upstream_chunks: tuple[bytes, ...] = ()
    """Upstream response bytes with their chunk boundaries as read."""
    frontend_status: int | None = None
    """HTTP status sent to the client."""
    frontend_chunks: tuple[bytes, ...] = ()
    """Response bytes sent to the client, with their chunk boundaries."""
    violations: tuple[Violation, ...] = ()
    """Event-grammar violations found in the upstream events."""
    timings: Timings = field(default_factory=lambda: Timings(start=0.0))
    """When things happened."""
    error: ir.IRError | None = None
    """The error of the exchange, if any (upstream error, network failure, client gone, ...)."""
    problems: tuple[str, ...] = ()
    """Things the tap could not do (e.g. decode a pass-through body); they do not change what was sent."""
    truncated: bool = False
    """Whether raw chunks or events were cut at the configured tap limit."""
    upstream_text_chunks: tuple[int, ...] = ()
    """Translated streams: ordinals (1-based) of the upstream chunks whose decoding yielded text, so a judge can
    tell whether text reached the client as it arrived (chunk ordinals, not clock times: deterministic)."""
    frontend_text_chunks: tuple[int, ...] = ()
    """Translated streams: for each chunk of text sent to the client, how many upstream chunks had been read
    when it was sent."""
    upstream_chunk_times: tuple[float, ...] = ()
    """When each kept upstream chunk was read, in seconds after the request arrived (parallel to
    `upstream_chunks`)."""
    frontend_chunk_times: tuple[float, ...] = ()
    """When each kept client chunk was sent, in seconds after the request arrived (parallel to
    `frontend_chunks`)."""
    event_chunks: tuple[int, ...] = ()
    """For each upstream event kept, the (0-based) upstream chunk it was decoded from."""
    frontend_chunk_events: tuple[int, ...] = ()
    """For each kept client chunk, how many upstream events had been decoded when it was sent: event i reached
    the client with the first chunk whose count exceeds i (parallel to `frontend_chunks`)."""


ExchangeCallback = Callable[[Exchange], object]
"""Receives each finished exchange; may be a coroutine function (its result is awaited)."""


def _same_request(request: ir.Request) -> ir.Request:
    return request


def _same_http(request: HttpRequest) -> HttpRequest:
    return request


def _same_event(event: ir.StreamEvent) -> Sequence[ir.StreamEvent]:
    return (event,)


def _same_bytes(data: bytes) -> bytes:
    return data


def _same_response(response: ir.Response) -> ir.Response:
    return response


def _same_error(error: ir.IRError) -> ir.IRError:
    return error


def _no_bytes() -> bytes:
    return b""


@dataclass(frozen=True)
class HookContext:
    """What a per-request hook factory knows about the request its hooks will serve."""

    frontend_protocol: str
    """Registry name of the protocol the client speaks."""
    upstream_protocol: str
    """Registry name of the protocol the upstream speaks."""
    stream: bool
    """Whether the client asked for a stream."""
    upstream_key: str | None = field(default=None, repr=False)
    """The key the proxy holds for the upstream (None when keyless); only a key-leak fault has any use for it."""


@dataclass(frozen=True)
class TranslateHooks:
    """Seam for fault injection on the translate path; the defaults change nothing.

    Config selects a hook set by name (`hooks = "..."` on a model); `create_app(hooks=...)` supplies them. A hook
    set that needs per-stream state gives a `per_request` factory: the proxy calls it once per request (`bind`),
    so concurrent requests never share state.
    """

    on_upstream_request: Callable[[ir.Request], ir.Request] = _same_request
    """Rewrites the IR request before it is encoded for the upstream."""
    on_upstream_http: Callable[[HttpRequest], HttpRequest] = _same_http
    """Rewrites the encoded upstream HTTP request (headers, raw body) before it is authorized and sent."""
    on_upstream_event: Callable[[ir.StreamEvent], Sequence[ir.StreamEvent]] = _same_event
    """Maps one decoded upstream event to the events passed on (drop: `()`, duplicate: `(e, e)`)."""
    on_frontend_bytes: Callable[[bytes], bytes] = _same_bytes
    """Rewrites each chunk of bytes before it is sent to the client."""
    on_upstream_bytes: Callable[[bytes], bytes] = _same_bytes
    """Rewrites each upstream stream chunk before it is decoded (the tap still records what was received)."""
    on_upstream_response: Callable[[ir.Response], ir.Response] = _same_response
    """Rewrites a decoded non-streamed upstream response before it is encoded for the client."""
    on_error: Callable[[ir.IRError], ir.IRError] = _same_error
    """Rewrites the error decoded from an upstream HTTP error before the client's error is encoded."""
    on_error_body: Callable[[bytes], bytes] = _same_bytes
    """Rewrites the encoded error body the client gets for an upstream HTTP error (its envelope)."""
    on_frontend_end: Callable[[], bytes] = _no_bytes
    """Bytes sent after the stream's terminal event (and the encoder's own closing bytes)."""
    on_stream_error: Callable[[ir.IRError], Sequence[ir.StreamEvent]] | None = None
    """When set, an upstream HTTP error on a streamed request goes to the client as these events inside an HTTP
    200 stream, instead of the frontend's own error status (None: the error status)."""
    per_request: Callable[[HookContext], TranslateHooks] | None = None
    """Factory of the hooks for one request; None: these hooks serve every request as they are."""

    def bind(self, context: HookContext) -> TranslateHooks:
        """The hooks for one request: a fresh set from `per_request` (for per-stream state), else these."""
        return self.per_request(context) if self.per_request is not None else self


IDENTITY_HOOKS = TranslateHooks()
"""The hook set every config may name as `identity`."""
