"""swink-agent's proxy stream (`POST /v1/stream`, SSE of typed events), in all four directions.

Written from `ProxyStreamFn` in SuperSwinkAI/Swink-Agent (`adapters/src/proxy.rs`, its tests and
`adapters/tests/suite/proxy_http.rs`). Registered as `swink`. Modules: `request` (requests), `events` (stop
reasons, usage, error kinds), `stream_decode` / `stream_encode` (the SSE stream), `errors`, `losses`,
`schemas/` (JSON Schemas of the wire shapes, used by the tests).

There is no non-streamed form: the only answer to `/v1/stream` is the stream. `is_stream_request` is always
true, `encode_response` writes the stream that says a whole response, and `decode_response` folds such a body.
"""

from __future__ import annotations

from harness import ir
from harness.protocols import registry
from harness.protocols.base import FramedDecoder
from harness.protocols.kit import ComposedCodec, guarded
from harness.protocols.swink import errors, request
from harness.protocols.swink.events import PROTOCOL, READ, STREAM_PATH
from harness.protocols.swink.facts import CAPABILITIES, FACTS
from harness.protocols.swink.losses import LOSSES, RESHAPES
from harness.protocols.swink.stream_decode import SwinkStreamDecoder
from harness.protocols.swink.stream_encode import SwinkStreamEncoder, response_events
from harness.stream import accumulate
from harness.wire.http import HttpRequest, HttpResponse

MEDIA_TYPE = "text/event-stream"
"""Content-Type of every successful answer."""


def is_stream_request(http: HttpRequest) -> bool:
    """Always true on `/v1/stream`: the protocol has no other answer."""
    return http.path.endswith(STREAM_PATH) or not http.path


def decode_response(body: bytes) -> ir.Response:
    """A whole stream body folded into its response (there is no other successful body)."""
    decoder = FramedDecoder(PROTOCOL, SwinkStreamDecoder())
    folded = accumulate([*decoder.feed(body), *decoder.close()])
    if folded.error is not None:
        raise READ.error(f"the stream ended with an error ({folded.error.kind.value}): {folded.error.message}")
    return folded.response


def encode_response(response: ir.Response, _request: ir.Request | None) -> HttpResponse:
    """IR -> the stream that says `response`, as one body."""
    encoder = SwinkStreamEncoder()
    body = b"".join(encoder.encode(event) for event in response_events(response)) + encoder.close()
    return HttpResponse(200, {"content-type": MEDIA_TYPE}, body)


CODEC = registry.register(
    ComposedCodec(
        name=PROTOCOL,
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        stream_media_type=MEDIA_TYPE,
        decode_request=guarded(PROTOCOL, request.decode_request, what="request "),
        encode_request=request.encode_request,  # the request `ProxyStreamFn` sends
        # `with_auth`: the default bearer token, as `ProxyStreamFn` sends it
        is_stream_request=is_stream_request,
        decode_response=decode_response,
        response_encoder=encode_response,
        stream_decoder_factory=SwinkStreamDecoder,
        stream_encoder_factory=lambda _request: SwinkStreamEncoder(),
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,  # the kind's status with {"error_message", "error_kind"?}
    ),
    facts=FACTS,
)
"""The registered codec."""

__all__ = ["CAPABILITIES", "CODEC", "LOSSES", "RESHAPES", "STREAM_PATH"]
