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
from collections.abc import Mapping
from typing import ClassVar

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import FramedDecoder, StreamDecoder
from harness.protocols.gemini import errors, request_decode, request_encode, response
from harness.protocols.gemini.facts import FACTS
from harness.protocols.gemini.fields import EncodeError
from harness.protocols.gemini.losses import LOSSES, RESHAPES
from harness.protocols.gemini.reference import REFERENCE, GeminiReference, wire_events
from harness.protocols.gemini.stream_decode import GeminiStreamDecoder
from harness.protocols.gemini.stream_encode import GeminiStreamEncoder
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse

__all__ = ["LOSSES", "RESHAPES", "EncodeError", "GeminiCodec", "GeminiStreamDecoder", "GeminiStreamEncoder"]


class GeminiCodec:
    """Gemini in all four directions (see the package docstring)."""

    name = "gemini"
    family = "gemini"
    stream_media_type = "text/event-stream"
    losses: ClassVar[Mapping[str, str]] = LOSSES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.TOOLS,
            Capability.PARALLEL_TOOLS,
            Capability.NESTED_TOOL_SCHEMA,
            Capability.TOOL_CHOICE,
            Capability.VISION,
            Capability.FILES,
            Capability.THINKING,
            Capability.THINKING_SIGNATURE,
            Capability.JSON_OBJECT,
            Capability.JSON_SCHEMA,
            Capability.STOP_SEQUENCES,
            Capability.PROMPT_CACHE,
            Capability.MODELS_LIST,
            Capability.RETRY_AFTER,
            Capability.TOP_P,
            Capability.STOP_MAX_TOKENS,
            Capability.STREAM_ERROR_FIRST,
            Capability.NOT_FOUND_ERROR,
            Capability.OVERLOADED_ERROR,
        }
    )
    """What Gemini's wire carries (scenario capability names)."""
    reference: ClassVar[GeminiReference] = REFERENCE
    """What the Gemini API adds to what the encoders write (response ids, running usage)."""

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A client's wire request -> IR (model from the path, stream from the method)."""
        return request_decode.decode_request(request)

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the wire request (`alt=sse` for streams unless provider_fields ask for the JSON array)."""
        return request_encode.encode_request(request)

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """The request carrying the key in `x-goog-api-key`."""
        return dataclasses.replace(request, headers={**request.headers, "x-goog-api-key": api_key})

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the path's method is streamGenerateContent."""
        match = request_decode.PATH.search(request.path)
        return match is not None and match["method"] == "streamGenerateContent"

    def decode_response(self, body: bytes) -> ir.Response:
        """A generateContent body -> IR."""
        return response.decode_response(body)

    def encode_response(self, response_: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a generateContent body."""
        return response.encode_response(response_, request=request)

    def stream_decoder(self) -> StreamDecoder:
        """A decoder that detects SSE, JSON-array or plain-JSON framing from the body itself."""
        return FramedDecoder(self.name, GeminiStreamDecoder())

    def stream_encoder(
        self, *, request: ir.Request | None = None, json_array: bool | None = None
    ) -> GeminiStreamEncoder:
        """An SSE encoder, or a JSON-array one when `json_array` (default: what the request asked for)."""
        if json_array is None:
            json_array = bool(request and request.provider_fields.get(self.name, {}).get("json_array_stream"))
        return GeminiStreamEncoder(json_array=json_array)

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response -> IR error; never raises."""
        return errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> Gemini's error body and status."""
        return errors.encode_error(error)

    def wire_events(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
        """The typed wire events of a body, for the shape comparison."""
        return wire_events(body, stream=stream, status=status)


CODEC = registry.register(GeminiCodec(), facts=FACTS)
