"""Ollama's native chat API (`POST /api/chat`, NDJSON streams; `GET /api/tags`), in all four directions.

Registered as `ollama`. Modules: `request` (requests), `response` (non-streamed replies, stop reasons, usage),
`stream_decode` / `stream_encode` (NDJSON streams), `errors`, `images` (media-type sniffing), `tags`
(model listing), `losses` (what the wire cannot carry), `schemas/` (JSON Schemas of the wire shapes, used by
the tests).
"""

from __future__ import annotations

import json

from harness.protocols import registry
from harness.protocols.kit import ComposedCodec
from harness.protocols.ollama import errors, request, response
from harness.protocols.ollama._fields import PROTOCOL, READ
from harness.protocols.ollama.facts import CAPABILITIES, FACTS
from harness.protocols.ollama.losses import LOSSES, RESHAPES
from harness.protocols.ollama.reference import REFERENCE, wire_events
from harness.protocols.ollama.stream_decode import OllamaStreamDecoder
from harness.protocols.ollama.stream_encode import OllamaStreamEncoder
from harness.protocols.ollama.tags import TAGS_PATH, decode_tags, encode_tags
from harness.wire.http import HttpRequest


def is_stream_request(http: HttpRequest) -> bool:
    """Whether the reply will be streamed: the body's `stream`, which defaults to TRUE in Ollama."""
    if not http.path.endswith(request.CHAT_PATH):
        return False
    try:
        body = json.loads(http.body)
    except (ValueError, RecursionError) as exc:
        raise READ.error(f"request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise READ.error(f"request body is {type(body).__name__}, expected a JSON object")
    return body.get("stream", True) is not False


CODEC = registry.register(
    ComposedCodec(
        name=PROTOCOL,
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        stream_media_type="application/x-ndjson",
        reference=REFERENCE,  # what an Ollama server adds to what the encoders write (durations, created_at, ...)
        decode_request=request.decode_request,
        encode_request=request.encode_request,
        # `with_auth`: the default bearer token (Ollama Cloud takes one; a local server ignores it)
        is_stream_request=is_stream_request,
        decode_response=response.decode_response,
        response_encoder=lambda reply, request: response.encode_response(reply, request=request),
        stream_decoder_factory=OllamaStreamDecoder,
        stream_encoder_factory=lambda request: OllamaStreamEncoder(request=request),  # model from MessageStart
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,  # {"error": message} with the kind's status
        wire_events=wire_events,
    ),
    facts=FACTS,
)
"""The registered codec."""

__all__ = ["CAPABILITIES", "CODEC", "LOSSES", "RESHAPES", "TAGS_PATH", "decode_tags", "encode_tags"]
