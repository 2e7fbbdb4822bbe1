"""The Anthropic Messages API codec (`POST /v1/messages`, `?beta=true`, `/v1/messages/count_tokens`).

Registered as `anthropic` on import. Quirks of the wire are kept in this package's modules:
request.py (requests, provider_fields), response.py (non-streamed), stream_decode.py / stream_encode.py (SSE),
errors.py (error bodies and mid-stream errors), losses.py (what the wire cannot carry).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.anthropic import errors as _errors
from harness.protocols.anthropic import request as _request
from harness.protocols.anthropic import response as _response
from harness.protocols.anthropic.facts import FACTS
from harness.protocols.anthropic.losses import LOSSES
from harness.protocols.anthropic.mapping import NAME, dumps
from harness.protocols.anthropic.reference import REFERENCE, AnthropicReference, wire_events
from harness.protocols.anthropic.stream_decode import AnthropicStreamDecoder
from harness.protocols.anthropic.stream_encode import AnthropicStreamEncoder
from harness.protocols.base import FramedDecoder, StreamDecoder
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse

__all__ = ["AnthropicCodec", "AnthropicStreamDecoder", "AnthropicStreamEncoder", "encode_count_tokens_response"]


class AnthropicCodec:
    """Anthropic Messages in all four directions."""

    name = NAME
    family = NAME
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
    """No response_format: Anthropic Messages has no JSON mode (see `losses`)."""
    reference: ClassVar[AnthropicReference] = REFERENCE
    """What api.anthropic.com adds to what the encoders write (ids, service tier, request ids)."""

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A Messages or count_tokens request -> IR."""
        return _request.decode_request(request)

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> `POST /v1/messages` with `anthropic-version`."""
        return _request.encode_request(request)

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """The request with `x-api-key`."""
        return _request.with_auth(request, api_key)

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the body says `"stream": true`."""
        return _request.is_stream_request(request)

    def decode_response(self, body: bytes) -> ir.Response:
        """A Messages response body -> IR."""
        return _response.decode_response(body)

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a Messages response (the request is not needed)."""
        return _response.encode_response(response)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh SSE stream decoder."""
        return FramedDecoder(self.name, AnthropicStreamDecoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> AnthropicStreamEncoder:
        """A fresh SSE stream encoder (the request estimates input tokens an upstream has not reported yet)."""
        return AnthropicStreamEncoder(request)

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response -> IR error; never raises."""
        return _errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> Anthropic error response (529 for overloaded) with retry-after."""
        return _errors.encode_error(error)

    def wire_events(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
        """The typed wire events of a body, for the shape comparison."""
        return wire_events(body, stream=stream, status=status)


def encode_count_tokens_response(input_tokens: int) -> HttpResponse:
    """The body of `POST /v1/messages/count_tokens` (`{"input_tokens": n}`), for a proxy that answers it."""
    body = dumps({"input_tokens": input_tokens}).encode("utf-8")
    return HttpResponse(status=200, headers={"content-type": "application/json"}, body=body)


CODEC = registry.register(AnthropicCodec(), facts=FACTS)
"""The registered codec instance."""
