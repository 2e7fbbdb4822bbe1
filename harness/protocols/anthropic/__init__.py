"""The Anthropic Messages API codec (`POST /v1/messages`, `?beta=true`, `/v1/messages/count_tokens`).

Registered as `anthropic` on import. Quirks of the wire are kept in this package's modules:
request.py (requests, provider_fields), response.py (non-streamed), stream_decode.py / stream_encode.py (SSE),
errors.py (error bodies and mid-stream errors), losses.py (what the wire cannot carry).
"""

from __future__ import annotations

from harness.protocols import registry
from harness.protocols.anthropic import errors, request, response
from harness.protocols.anthropic.facts import CAPABILITIES, FACTS
from harness.protocols.anthropic.losses import LOSSES, RESHAPES
from harness.protocols.anthropic.mapping import NAME, dumps
from harness.protocols.anthropic.reference import REFERENCE, wire_events
from harness.protocols.anthropic.stream_decode import AnthropicStreamDecoder
from harness.protocols.anthropic.stream_encode import AnthropicStreamEncoder
from harness.protocols.kit import ComposedCodec
from harness.wire.http import HttpResponse

__all__ = ["CAPABILITIES", "CODEC", "AnthropicStreamDecoder", "AnthropicStreamEncoder", "encode_count_tokens_response"]


def encode_count_tokens_response(input_tokens: int) -> HttpResponse:
    """The body of `POST /v1/messages/count_tokens` (`{"input_tokens": n}`), for a proxy that answers it."""
    body = dumps({"input_tokens": input_tokens}).encode("utf-8")
    return HttpResponse(status=200, headers={"content-type": "application/json"}, body=body)


CODEC = registry.register(
    ComposedCodec(
        name=NAME,
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        reference=REFERENCE,  # what api.anthropic.com adds to what the encoders write (ids, service tier, request ids)
        decode_request=request.decode_request,  # Messages or count_tokens
        encode_request=request.encode_request,  # POST /v1/messages with anthropic-version
        with_auth=request.with_auth,  # x-api-key
        is_stream_request=request.is_stream_request,
        decode_response=response.decode_response,
        response_encoder=lambda reply, _request: response.encode_response(reply),
        stream_decoder_factory=AnthropicStreamDecoder,
        stream_encoder_factory=AnthropicStreamEncoder,  # the request estimates input tokens not reported yet
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,  # 529 for overloaded, with retry-after
        wire_events=wire_events,
    ),
    facts=FACTS,
)
"""The registered codec."""
