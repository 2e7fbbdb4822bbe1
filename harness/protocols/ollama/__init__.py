"""Ollama's native chat API (`POST /api/chat`, NDJSON streams; `GET /api/tags`), in all four directions.

Registered as `ollama`. Modules: `request` (requests), `response` (non-streamed replies, stop reasons, usage),
`stream_decode` / `stream_encode` (NDJSON streams), `errors`, `images` (media-type sniffing), `tags`
(model listing), `losses` (what the wire cannot carry), `schemas/` (JSON Schemas of the wire shapes, used by
the tests).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import ClassVar

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import FramedDecoder, StreamDecoder, StreamEncoder
from harness.protocols.ollama import errors as _errors
from harness.protocols.ollama import request as _request
from harness.protocols.ollama import response as _response
from harness.protocols.ollama._fields import PROTOCOL, READ
from harness.protocols.ollama.facts import FACTS
from harness.protocols.ollama.losses import LOSSES, RESHAPES
from harness.protocols.ollama.reference import REFERENCE, OllamaReference, wire_events
from harness.protocols.ollama.stream_decode import OllamaStreamDecoder
from harness.protocols.ollama.stream_encode import OllamaStreamEncoder
from harness.protocols.ollama.tags import TAGS_PATH, decode_tags, encode_tags
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse


class OllamaCodec:
    """Ollama native `/api/chat`: NDJSON streams, flat error strings, whole tool calls with object arguments."""

    name = PROTOCOL
    family = PROTOCOL
    stream_media_type = "application/x-ndjson"
    losses: ClassVar[Mapping[str, str]] = LOSSES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.TOOLS,
            Capability.PARALLEL_TOOLS,
            Capability.NESTED_TOOL_SCHEMA,
            Capability.VISION,
            Capability.THINKING,
            Capability.JSON_OBJECT,
            Capability.JSON_SCHEMA,
            Capability.STOP_SEQUENCES,
            Capability.MODELS_LIST,
            Capability.TOP_P,
            Capability.STOP_MAX_TOKENS,
            Capability.NOT_FOUND_ERROR,
            Capability.OVERLOADED_ERROR,
        }
    )
    """No tool_choice, cache figures, signatures or Retry-After on Ollama's wire. No stream that begins with an
    error: Ollama answers an error that comes before any content with its HTTP status and a JSON body
    (`streamResponse` in ollama's server/routes.go writes the `{"error"}` line only once content was written)."""
    reference: ClassVar[OllamaReference] = REFERENCE
    """What an Ollama server adds to what the encoders write (durations, `created_at`, request id)."""

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A client's `/api/chat` request -> IR."""
        return _request.decode_request(request)

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the `/api/chat` request an Ollama client sends."""
        return _request.encode_request(request)

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """Ollama Cloud takes a bearer token; a local server ignores it."""
        return dataclasses.replace(request, headers={**request.headers, "authorization": f"Bearer {api_key}"})

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the reply will be streamed: the body's `stream`, which defaults to TRUE in Ollama."""
        if not request.path.endswith(_request.CHAT_PATH):
            return False
        try:
            body = json.loads(request.body)
        except (ValueError, RecursionError) as exc:
            raise READ.error(f"request body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise READ.error(f"request body is {type(body).__name__}, expected a JSON object")
        return body.get("stream", True) is not False

    def decode_response(self, body: bytes) -> ir.Response:
        """A non-streamed reply -> IR."""
        return _response.decode_response(body)

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a non-streamed reply."""
        return _response.encode_response(response, request=request)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh NDJSON stream decoder."""
        return FramedDecoder(self.name, OllamaStreamDecoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> StreamEncoder:
        """A fresh NDJSON stream encoder (the model name comes from MessageStart, else from `request`)."""
        return OllamaStreamEncoder(request=request)

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response -> IR error (never raises)."""
        return _errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> `{"error": message}` with the kind's status."""
        return _errors.encode_error(error)

    def wire_events(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
        """The typed wire events of a body, for the shape comparison."""
        return wire_events(body, stream=stream, status=status)


CODEC = OllamaCodec()
registry.register(CODEC, facts=FACTS)

__all__ = ["CODEC", "LOSSES", "RESHAPES", "TAGS_PATH", "OllamaCodec", "decode_tags", "encode_tags"]
