"""`OpenAICodec`: OpenAI Chat Completions in all four directions, composed for a provider `Profile`.

The parts are this module's functions with the profile as their first argument; `OpenAICodec(profile)` applies
them to one profile (the kit's `ComposedCodec`, which also keeps the `profile`).
"""

from __future__ import annotations

import dataclasses
from functools import partial

from harness import ir
from harness.protocols import common
from harness.protocols.kit import ComposedCodec, guarded
from harness.protocols.openai import endpoint, errors, request_decode, request_encode
from harness.protocols.openai import response as response_body
from harness.protocols.openai.losses import RESHAPES, profile_losses
from harness.protocols.openai.profile import Profile
from harness.protocols.openai.reference import OpenAIReference, wire_events
from harness.protocols.openai.stream_decode import ChatStreamDecoder
from harness.protocols.openai.stream_encode import ChatStreamEncoder
from harness.wire.http import HttpRequest, HttpResponse


def decode_request(profile: Profile, request: HttpRequest) -> ir.Request:
    """A client's Chat Completions request -> IR (the model from the path for deployment-style endpoints)."""
    path_model = endpoint.model_from_path(profile, request.path)
    return request_decode.decode_request(profile, request.body, path_model=path_model, query=dict(request.query))


def encode_request(profile: Profile, request: ir.Request) -> HttpRequest:
    """IR -> the request an OpenAI SDK client would send (no auth)."""
    body = request_encode.encode_request_body(profile, request)
    path, query = request_encode.target(profile, request)
    headers = {"content-type": "application/json", "accept": "application/json"}
    return HttpRequest(method="POST", path=path, query=query, headers=headers, body=common.dump_json(body))


def with_auth(profile: Profile, request: HttpRequest, api_key: str) -> HttpRequest:
    """The request with `Authorization: Bearer KEY` (or Azure's `api-key: KEY`)."""
    header = ("api-key", api_key) if profile.auth == "api-key" else ("authorization", f"Bearer {api_key}")
    return dataclasses.replace(request, headers={**request.headers, header[0]: header[1]})


def is_stream_request(profile: Profile, request: HttpRequest) -> bool:
    """Whether the body asks `"stream": true`."""
    return common.load_object(profile.name, request.body, what="request body").get("stream") is True


def encode_response(profile: Profile, response: ir.Response, _request: ir.Request | None) -> HttpResponse:
    """IR -> a `chat.completion` response."""
    body = common.dump_json(response_body.encode_response_body(profile, response))
    return HttpResponse(status=200, headers={"content-type": "application/json"}, body=body)


def stream_encoder(profile: Profile, request: ir.Request | None) -> ChatStreamEncoder:
    """A fresh encoder; the usage-only chunk is sent unless `request` declined `include_usage`."""
    return ChatStreamEncoder(profile, include_usage=request_encode.include_usage(profile, request))


def encode_error(profile: Profile, error: ir.IRError) -> HttpResponse:
    """IR error -> OpenAI's error response (the error object as the profile's provider writes it)."""
    return errors.encode_error(error, profile.wire.error_object)


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False, repr=False, init=False)
class OpenAICodec(ComposedCodec):
    """OpenAI Chat Completions (`POST /v1/chat/completions`), or an OpenAI-compatible provider via its profile."""

    profile: Profile
    """The provider's settings and hooks (`harness.protocols.openai.profile`)."""

    def __init__(self, profile: Profile) -> None:
        object.__setattr__(self, "profile", profile)
        super().__init__(
            name=profile.name,
            family=profile.family,
            capabilities=profile.capabilities,
            losses=profile_losses(profile),  # Chat Completions' own losses adjusted for the profile
            reshapes={**RESHAPES, **profile.reshapes},
            reference=OpenAIReference(profile),  # the provider's ids, fields and headers (`Profile.reference`)
            decode_request=guarded(profile.name, partial(decode_request, profile)),
            encode_request=partial(encode_request, profile),
            with_auth=partial(with_auth, profile),
            is_stream_request=partial(is_stream_request, profile),
            decode_response=guarded(profile.name, partial(response_body.decode_response, profile)),
            response_encoder=partial(encode_response, profile),
            stream_decoder_factory=partial(ChatStreamDecoder, profile),
            stream_encoder_factory=partial(stream_encoder, profile),
            decode_error=partial(errors.decode_error, profile),
            encode_error=partial(encode_error, profile),
            wire_events=partial(wire_events, profile),
        )

    def __repr__(self) -> str:
        return f"OpenAICodec({self.name!r})"
