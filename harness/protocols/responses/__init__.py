"""The OpenAI Responses API codec (`POST /v1/responses`), registered as `responses`.

Its facts live in this package: request_decode.py / request_encode.py (requests and their `provider_fields`
shape hints), items.py (output items <-> IR parts), response.py (the response object), stream_decode.py /
stream_state.py / stream_encode.py (the SSE event stream), errors.py (error bodies, `error` events,
`response.failed`), mapping.py (stop reasons, usage, reasoning effort), ids.py (id formats), losses.py (what the
wire cannot carry), schemas/ (JSON Schemas of every shape the encoders write).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationError

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import DecodeError, FramedDecoder, StreamDecoder
from harness.protocols.responses import errors, request_decode, request_encode
from harness.protocols.responses import response as response_body
from harness.protocols.responses.facts import FACTS
from harness.protocols.responses.losses import LOSSES, RESHAPES, STATEFUL, stateful_fields
from harness.protocols.responses.reader import NAME, dumps, load_object
from harness.protocols.responses.reference import REFERENCE, ResponsesReference, wire_events
from harness.protocols.responses.stream_decode import ResponsesStreamDecoder
from harness.protocols.responses.stream_encode import ResponsesStreamEncoder
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse

__all__ = [
    "LOSSES",
    "RESHAPES",
    "STATEFUL",
    "ResponsesCodec",
    "ResponsesStreamDecoder",
    "ResponsesStreamEncoder",
    "stateful_fields",
]


def _guard(decode: Any) -> Any:
    # IR models validate on construction; a value that slips past the field checks is still bad input.
    try:
        return decode()
    except ValidationError as exc:
        raise DecodeError(NAME, f"does not map to IR: {exc.errors()[0]['msg']}") from exc


class ResponsesCodec:
    """The OpenAI Responses API in all four directions; its own SDK client drives its baseline."""

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
            Capability.JSON_OBJECT,
            Capability.JSON_SCHEMA,
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
    """No stop_sequences: the Responses API has no `stop` parameter (see `losses`)."""
    reference: ClassVar[ResponsesReference] = REFERENCE
    """What api.openai.com adds to what the encoders write (ids, echoed fields, usage details, headers)."""

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A `POST /v1/responses` body -> IR."""
        decoded: ir.Request = _guard(lambda: request_decode.decode_request(request.body))
        return decoded

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the request the `openai` SDK's `responses.create` would send (no auth)."""
        body = dumps(request_encode.encode_request_body(request))
        headers = {"content-type": "application/json", "accept": "application/json"}
        return HttpRequest(method="POST", path=request_encode.PATH, headers=headers, body=body)

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """The request with `Authorization: Bearer KEY`."""
        return dataclasses.replace(request, headers={**request.headers, "authorization": f"Bearer {api_key}"})

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the body asks `"stream": true`."""
        return load_object(request.body, what="request body").get("stream") is True

    def decode_response(self, body: bytes) -> ir.Response:
        """A response object -> IR."""
        decoded: ir.Response = _guard(lambda: response_body.decode_response(body))
        return decoded

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a response object, echoing the request's settings when it is given."""
        body = dumps(response_body.encode_response_body(response, request))
        return HttpResponse(status=200, headers={"content-type": "application/json"}, body=body)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh decoder for one SSE body."""
        return FramedDecoder(self.name, ResponsesStreamDecoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> ResponsesStreamEncoder:
        """A fresh encoder; its response objects echo the request's settings when it is given."""
        return ResponsesStreamEncoder(request)

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response -> IR error (never raises)."""
        return errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> OpenAI's error response with retry-after."""
        return errors.encode_error(error)

    def wire_events(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
        """The typed wire events of a body, for the shape comparison."""
        return wire_events(body, stream=stream, status=status)


CODEC = registry.register(ResponsesCodec(), facts=FACTS)
"""The registered codec instance."""
