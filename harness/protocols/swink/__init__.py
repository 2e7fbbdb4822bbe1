"""swink-agent's proxy stream (`POST /v1/stream`, SSE of typed events), in all four directions.

Written from `ProxyStreamFn` in SuperSwinkAI/Swink-Agent (`adapters/src/proxy.rs`, its tests and
`adapters/tests/suite/proxy_http.rs`). Registered as `swink`. Modules: `request` (requests), `events` (stop
reasons, usage, error kinds), `stream_decode` / `stream_encode` (the SSE stream), `errors`, `losses`,
`schemas/` (JSON Schemas of the wire shapes, used by the tests).

There is no non-streamed form: the only answer to `/v1/stream` is the stream. `is_stream_request` is always
true, `encode_response` writes the stream that says a whole response, and `decode_response` folds such a body.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import ClassVar

from pydantic import ValidationError

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import FramedDecoder, StreamDecoder, StreamEncoder, decode_events, encode_events
from harness.protocols.swink import errors as _errors
from harness.protocols.swink import request as _request
from harness.protocols.swink.events import PROTOCOL, READ, STREAM_PATH
from harness.protocols.swink.facts import FACTS
from harness.protocols.swink.losses import LOSSES, RESHAPES
from harness.protocols.swink.stream_decode import SwinkStreamDecoder
from harness.protocols.swink.stream_encode import SwinkStreamEncoder, response_events
from harness.stream import accumulate
from harness.wire.http import HttpRequest, HttpResponse

MEDIA_TYPE = "text/event-stream"
"""Content-Type of every successful answer."""


class SwinkCodec:
    """swink's `/v1/stream`: a fixed request shape, an SSE stream of typed events, Bearer auth."""

    name = PROTOCOL
    family = PROTOCOL
    stream_media_type = MEDIA_TYPE
    losses: ClassVar[Mapping[str, str]] = LOSSES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.VISION,
            Capability.THINKING,
            Capability.THINKING_SIGNATURE,
            Capability.STOP_MAX_TOKENS,
            Capability.STREAM_ERROR_FIRST,
            Capability.NOT_FOUND_ERROR,
        }
    )
    """Images and thinking (with signatures, on thinking_end) travel; tools, formats, stop sequences and top_p are
    the server's (`ProxyRequestOptions` is temperature / max_tokens / session_id). A 404 (and `model_retired` in a
    stream) says not found. No overloaded error: `StreamErrorKind` has no name for it, and `ProxyStreamFn` reads
    a 503 as a network error (`classify.rs`)."""

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A client's `/v1/stream` request -> IR."""
        try:
            return _request.decode_request(request)
        except ValidationError as exc:
            raise READ.error(f"request does not map to IR: {exc.errors()[0]['msg']}") from exc

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the request `ProxyStreamFn` sends."""
        return _request.encode_request(request)

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """`Authorization: Bearer KEY`, as `ProxyStreamFn` sends its bearer token."""
        return dataclasses.replace(request, headers={**request.headers, "authorization": f"Bearer {api_key}"})

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Always true on `/v1/stream`: the protocol has no other answer."""
        return request.path.endswith(STREAM_PATH) or not request.path

    def decode_response(self, body: bytes) -> ir.Response:
        """A whole stream body folded into its response (there is no other successful body)."""
        folded = accumulate(decode_events(self, [body]))
        if folded.error is not None:
            raise READ.error(f"the stream ended with an error ({folded.error.kind.value}): {folded.error.message}")
        return folded.response

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> the stream that says `response`, as one body."""
        body = encode_events(self, response_events(response))
        return HttpResponse(200, {"content-type": MEDIA_TYPE}, body)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh SSE decoder."""
        return FramedDecoder(self.name, SwinkStreamDecoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> StreamEncoder:
        """A fresh SSE encoder."""
        return SwinkStreamEncoder()

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """A failed response -> IR error (never raises)."""
        return _errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> the kind's status with `{"error_message", "error_kind"?}`."""
        return _errors.encode_error(error)


CODEC = SwinkCodec()
registry.register(CODEC, facts=FACTS)

__all__ = ["CODEC", "LOSSES", "RESHAPES", "STREAM_PATH", "SwinkCodec"]
