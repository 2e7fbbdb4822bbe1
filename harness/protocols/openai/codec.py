"""`OpenAICodec`: OpenAI Chat Completions in all four directions, parameterized by a provider `Profile`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TypeVar

from pydantic import ValidationError

from harness import ir
from harness.ir import Capability
from harness.protocols import common
from harness.protocols.base import DecodeError, FramedDecoder, StreamDecoder
from harness.protocols.openai import endpoint, errors, request_decode, request_encode
from harness.protocols.openai import response as response_body
from harness.protocols.openai.losses import RESHAPES, profile_losses
from harness.protocols.openai.profile import Profile
from harness.protocols.openai.reference import OpenAIReference, wire_events
from harness.protocols.openai.stream_decode import ChatStreamDecoder
from harness.protocols.openai.stream_encode import ChatStreamEncoder
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse

T = TypeVar("T")


class OpenAICodec:
    """OpenAI Chat Completions (`POST /v1/chat/completions`), or an OpenAI-compatible provider via its profile."""

    stream_media_type = "text/event-stream"

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.name = profile.name
        self.capabilities: frozenset[Capability] = profile.capabilities
        self.family = profile.family
        self.losses: Mapping[str, str] = profile_losses(profile)
        """Chat Completions' own losses adjusted for the profile (see `losses.profile_losses`)."""
        self.reshapes: Mapping[str, str] = {**RESHAPES, **profile.reshapes}
        """How the wire reshapes IR it carries (rules the loss-key grammar cannot express); see `losses.py`."""
        self.reference = OpenAIReference(profile)
        """The provider as a reference backend (its ids, fields and headers; `Profile.reference`)."""

    def __repr__(self) -> str:
        return f"OpenAICodec({self.name!r})"

    def _guard(self, decode: Callable[[], T]) -> T:
        # IR models validate on construction; a value that slips past the field checks is still bad input.
        try:
            return decode()
        except ValidationError as exc:
            raise DecodeError(self.name, f"does not map to IR: {exc.errors()[0]['msg']}") from exc

    # --- requests -------------------------------------------------------------------------------------
    def decode_request(self, request: HttpRequest) -> ir.Request:
        """A client's Chat Completions request -> IR (the model from the path for deployment-style endpoints)."""
        path_model = endpoint.model_from_path(self.profile, request.path)
        return self._guard(
            lambda: request_decode.decode_request(
                self.profile, request.body, path_model=path_model, query=dict(request.query)
            )
        )

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """IR -> the request an OpenAI SDK client would send (no auth)."""
        body = request_encode.encode_request_body(self.profile, request)
        path, query = request_encode.target(self.profile, request)
        headers = {"content-type": "application/json", "accept": "application/json"}
        return HttpRequest(method="POST", path=path, query=query, headers=headers, body=common.dump_json(body))

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """The request with `Authorization: Bearer KEY` (or Azure's `api-key: KEY`)."""
        header = ("api-key", api_key) if self.profile.auth == "api-key" else ("authorization", f"Bearer {api_key}")
        return dataclasses.replace(request, headers={**request.headers, header[0]: header[1]})

    def is_stream_request(self, request: HttpRequest) -> bool:
        """Whether the body asks `"stream": true`."""
        body = common.load_object(self.name, request.body, what="request body")
        return body.get("stream") is True

    # --- responses ------------------------------------------------------------------------------------
    def decode_response(self, body: bytes) -> ir.Response:
        """A `chat.completion` body -> IR."""
        return self._guard(lambda: response_body.decode_response(self.profile, body))

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a `chat.completion` response."""
        body = common.dump_json(response_body.encode_response_body(self.profile, response))
        return HttpResponse(status=200, headers={"content-type": "application/json"}, body=body)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh decoder for one SSE body."""
        return FramedDecoder(self.name, ChatStreamDecoder(self.profile))

    def stream_encoder(self, *, request: ir.Request | None = None) -> ChatStreamEncoder:
        """A fresh encoder; the usage-only chunk is sent unless `request` declined `include_usage`."""
        return ChatStreamEncoder(self.profile, include_usage=request_encode.include_usage(self.profile, request))

    # --- errors ---------------------------------------------------------------------------------------
    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An error response -> IR error (never raises)."""
        return errors.decode_error(self.profile, status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> OpenAI's error response (the error object as the profile's provider writes it)."""
        return errors.encode_error(error, self.profile.wire.error_object)

    def wire_events(self, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
        """The typed wire events of a body, for the shape comparison."""
        return wire_events(self.profile, body, stream=stream, status=status)
