"""What the proxy hands to the harness: one `Exchange` per request, and the translate-path hook seam."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness import ir
from harness.stream import Violation


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


ExchangeCallback = Callable[[Exchange], object]
"""Receives each finished exchange; may be a coroutine function (its result is awaited)."""


def _same_request(request: ir.Request) -> ir.Request:
    return request


def _same_event(event: ir.StreamEvent) -> Sequence[ir.StreamEvent]:
    return (event,)


def _same_bytes(data: bytes) -> bytes:
    return data


@dataclass(frozen=True)
class TranslateHooks:
    """Seam for fault injection on the translate path; the defaults change nothing.

    Config selects a hook set by name (`hooks = "..."` on a model); `create_app(hooks=...)` supplies them.
    """

    on_upstream_request: Callable[[ir.Request], ir.Request] = _same_request
    """Rewrites the IR request before it is encoded for the upstream."""
    on_upstream_event: Callable[[ir.StreamEvent], Sequence[ir.StreamEvent]] = _same_event
    """Maps one decoded upstream event to the events passed on (drop: `()`, duplicate: `(e, e)`)."""
    on_frontend_bytes: Callable[[bytes], bytes] = _same_bytes
    """Rewrites each chunk of bytes before it is sent to the client."""


IDENTITY_HOOKS = TranslateHooks()
"""The hook set every config may name as `identity`."""
