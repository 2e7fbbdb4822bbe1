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

import dataclasses
from collections.abc import Callable, Mapping
from typing import ClassVar, TypeVar

from pydantic import ValidationError

from harness import ir
from harness.ir import Capability
from harness.protocols import common, registry
from harness.protocols.base import FramedDecoder, StreamDecoder, StreamEncoder
from harness.protocols.cloudflare import errors as _errors
from harness.protocols.cloudflare import paths
from harness.protocols.cloudflare import request as _request
from harness.protocols.cloudflare import response as _response
from harness.protocols.cloudflare.facts import FACTS
from harness.protocols.cloudflare.losses import LOSSES, RESHAPES
from harness.protocols.cloudflare.paths import PROTOCOL, READ
from harness.protocols.cloudflare.reference import REFERENCE, CloudflareReference
from harness.protocols.cloudflare.stream_decode import CloudflareStreamDecoder
from harness.protocols.cloudflare.stream_encode import CloudflareStreamEncoder
from harness.wire.http import HttpRequest, HttpResponse

T = TypeVar("T")


def _guard(decode: Callable[[], T]) -> T:
    # IR models validate on construction; a value that slips past the field checks is still bad input.
    try:
        return decode()
    except ValidationError as exc:
        raise READ.error(f"does not map to IR: {exc.errors()[0]['msg']}") from exc


class CloudflareCodec:
    """Workers AI native text generation: the model in the path, `response` text, SSE with `[DONE]`."""

    name = PROTOCOL
    family = PROTOCOL
    stream_media_type = "text/event-stream"
    losses: ClassVar[Mapping[str, str]] = LOSSES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.TOOLS,
            Capability.PARALLEL_TOOLS,
            Capability.NESTED_TOOL_SCHEMA,
            Capability.VISION,
            Capability.JSON_OBJECT,
            Capability.JSON_SCHEMA,
            Capability.MODELS_LIST,
            Capability.TOP_P,
            Capability.STREAM_ERROR_FIRST,
            Capability.NOT_FOUND_ERROR,
            Capability.OVERLOADED_ERROR,
        }
    )
    """Function calling, images (llama vision models), JSON mode and the model search; no tool_choice, stop
    sequences, thinking switch or cache figures on the native wire, and no finish reason: the native output
    (`AiTextGenerationOutput`: response, tool_calls, usage) cannot say that the token limit cut the answer."""
    reference: ClassVar[CloudflareReference] = REFERENCE
    """What Cloudflare's edge adds to what the encoders write (the `cf-ray` header)."""

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A client's native request -> IR (the model from the path)."""
        return _guard(lambda: _request.decode_request(request))

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the native request (no auth)."""
        return _request.encode_request(request)

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """`Authorization: Bearer TOKEN` (a Cloudflare API token with Workers AI permission)."""
        return dataclasses.replace(request, headers={**request.headers, "authorization": f"Bearer {api_key}"})

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the body asks `"stream": true` (the default is a whole reply)."""
        return common.load_object(PROTOCOL, request.body, what="request body").get("stream") is True

    def decode_response(self, body: bytes) -> ir.Response:
        """A non-streamed reply (native or OpenAI form, in the envelope or bare) -> IR."""
        return _guard(lambda: _response.decode_response(body))

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a native reply in the REST envelope."""
        return _response.encode_response(response)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh SSE decoder."""
        return FramedDecoder(self.name, CloudflareStreamDecoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> StreamEncoder:
        """A fresh SSE encoder writing the native form."""
        return CloudflareStreamEncoder()

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response -> IR error (never raises)."""
        return _errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> Cloudflare's error envelope with the kind's status and code."""
        return _errors.encode_error(error)


CODEC = CloudflareCodec()
registry.register(CODEC, facts=FACTS)

__all__ = ["CODEC", "LOSSES", "RESHAPES", "CloudflareCodec", "paths"]
