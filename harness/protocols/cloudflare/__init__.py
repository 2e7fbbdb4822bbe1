"""Cloudflare Workers AI's native route (`POST /client/v4/accounts/{account_id}/ai/run/{model}`), in all four
directions.

Registered as `cloudflare`. Written from Cloudflare's Workers AI docs (REST API, text-generation schemas, JSON
mode, function calling, error codes) and checked on the wire forms Cloudflare's own `workers-ai-provider`
(cloudflare/ai) parses. Modules: `paths` (the route, account id), `request`, `response` (non-streamed replies and
the reading of reply objects), `stream_decode` / `stream_encode` (SSE), `errors` (the error envelope), `losses`,
`schemas/` (JSON Schemas of the wire shapes, used by the tests). The OpenAI-compatible route
(`.../ai/v1/chat/completions`) is the `cloudflare-openai` profile of the openai codec.
"""

from __future__ import annotations

from harness.protocols import common, registry
from harness.protocols.cloudflare import errors, paths, request, response
from harness.protocols.cloudflare.facts import CAPABILITIES, FACTS
from harness.protocols.cloudflare.losses import LOSSES, RESHAPES
from harness.protocols.cloudflare.paths import PROTOCOL
from harness.protocols.cloudflare.reference import REFERENCE
from harness.protocols.cloudflare.stream_decode import CloudflareStreamDecoder
from harness.protocols.cloudflare.stream_encode import CloudflareStreamEncoder
from harness.protocols.kit import ComposedCodec, guarded

CODEC = registry.register(
    ComposedCodec(
        name=PROTOCOL,
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        reference=REFERENCE,  # what Cloudflare's edge adds to what the encoders write (the cf-ray header)
        decode_request=guarded(PROTOCOL, request.decode_request),  # the model from the path
        encode_request=request.encode_request,
        # `with_auth`: the default bearer token (a Cloudflare API token with Workers AI permission)
        is_stream_request=lambda http: (
            common.load_object(PROTOCOL, http.body, what="request body").get("stream") is True
        ),
        decode_response=guarded(PROTOCOL, response.decode_response),  # native or OpenAI form, enveloped or bare
        response_encoder=lambda reply, _request: response.encode_response(reply),  # in the REST envelope
        stream_decoder_factory=CloudflareStreamDecoder,
        stream_encoder_factory=lambda _request: CloudflareStreamEncoder(),
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,  # the error envelope with the kind's status and code
    ),
    facts=FACTS,
)
"""The registered codec."""

__all__ = ["CAPABILITIES", "CODEC", "LOSSES", "RESHAPES", "paths"]
