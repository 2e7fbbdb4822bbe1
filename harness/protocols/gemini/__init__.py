"""The Gemini (Generative Language API) codec: `models/{model}:generateContent` and `:streamGenerateContent`.

Covers `v1` and `v1beta`, SSE (`alt=sse`, CRLF) and streamed-JSON-array responses, API keys by
`x-goog-api-key` header (or `key=` query, which decoding ignores as it carries no IR). Module map:
`request_decode` / `request_encode` (requests), `parts` (parts <-> IR content and the thoughtSignature rule),
`chunks` (one response object -> events), `response`, `stream_decode`, `stream_encode`, `errors`, `ids`
(how tool-call ids are synthesized), `mapping` (usage, finishReason), `losses` (what the wire cannot carry),
`schemas` (JSON Schemas of the wire).
"""

from __future__ import annotations

import dataclasses

from harness import ir
from harness.protocols import registry
from harness.protocols.gemini import errors, request_decode, request_encode, response
from harness.protocols.gemini.facts import CAPABILITIES, FACTS
from harness.protocols.gemini.fields import PROTOCOL, EncodeError
from harness.protocols.gemini.losses import LOSSES, RESHAPES
from harness.protocols.gemini.reference import REFERENCE, wire_events
from harness.protocols.gemini.stream_decode import GeminiStreamDecoder
from harness.protocols.gemini.stream_encode import GeminiStreamEncoder
from harness.protocols.kit import ComposedCodec
from harness.wire.http import HttpRequest

__all__ = [
    "CAPABILITIES",
    "CODEC",
    "LOSSES",
    "RESHAPES",
    "EncodeError",
    "GeminiStreamDecoder",
    "GeminiStreamEncoder",
    "stream_encoder",
]


def with_auth(request: HttpRequest, api_key: str) -> HttpRequest:
    """The request carrying the key in `x-goog-api-key`."""
    return dataclasses.replace(request, headers={**request.headers, "x-goog-api-key": api_key})


def is_stream_request(request: HttpRequest) -> bool:
    """Whether the path's method is streamGenerateContent."""
    match = request_decode.PATH.search(request.path)
    return match is not None and match["method"] == "streamGenerateContent"


def stream_encoder(request: ir.Request | None) -> GeminiStreamEncoder:
    """A stream encoder: SSE, or a JSON array when the request asked for one (`json_array_stream`, which the request
    decoder keeps under `provider_fields["gemini"]` for every flavour, Vertex's too)."""
    return GeminiStreamEncoder(
        json_array=bool(request and request.provider_fields.get(PROTOCOL, {}).get("json_array_stream"))
    )


CODEC = registry.register(
    ComposedCodec(
        name="gemini",
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        reference=REFERENCE,  # what the Gemini API adds to what the encoders write (response ids, running usage)
        decode_request=request_decode.decode_request,  # model from the path, stream from the method
        encode_request=request_encode.encode_request,  # alt=sse unless provider_fields ask for the JSON array
        with_auth=with_auth,
        is_stream_request=is_stream_request,
        decode_response=response.decode_response,
        response_encoder=lambda reply, request: response.encode_response(reply, request=request),
        stream_decoder_factory=GeminiStreamDecoder,  # detects SSE, JSON-array or plain-JSON framing
        stream_encoder_factory=stream_encoder,
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,
        wire_events=wire_events,
    ),
    facts=FACTS,
)
"""The registered codec."""
