"""Claude on Google Cloud Vertex AI (`vertex-anthropic`): the Messages API behind Vertex's publisher endpoints.

`POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict` (or
`:streamRawPredict` for a stream): the model is in the path, never in the body, the body names the API version as
`"anthropic_version": "vertex-2023-10-16"` instead of the `anthropic-version` header, and the caller authenticates
with a Google OAuth bearer token. Answers are the Messages API's own (JSON or SSE), with Vertex's `msg_vrtx_`
message ids. The decoder also reads a plain `/v1/messages` request (the Anthropic SDK's own form), so a client of
the base protocol can reach a Vertex backend through a pass-through.
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType

from harness import ir
from harness.ir import Capability
from harness.protocols import facts, registry
from harness.protocols.anthropic import CODEC as ANTHROPIC
from harness.protocols.anthropic import request as messages
from harness.protocols.anthropic.facts import FACTS as ANTHROPIC_FACTS
from harness.protocols.anthropic.mapping import READ, dumps, load_object
from harness.protocols.anthropic.reference import AnthropicReference, message_id
from harness.protocols.kit import bearer_auth
from harness.protocols.reference import token
from harness.wire.http import HttpRequest

NAME = "vertex-anthropic"
"""Registry name, and the `provider_fields` key of the Vertex path (project, location)."""

VERTEX_VERSION = "vertex-2023-10-16"
"""The `anthropic_version` Vertex AI documents for the body; a client's own (the Anthropic SDK sends its API
version) is kept and sent on."""

DEFAULT_PROJECT, DEFAULT_LOCATION = "conformance-project", "us-east5"
"""Path segments used when the IR request does not say (a request decoded from another protocol)."""

PATH = re.compile(
    r"/v1[a-z0-9]*/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/:]+):(?P<method>rawPredict|streamRawPredict)$"
)
"""A Vertex AI Claude path; any prefix (a proxy's mount point) may come before it."""


def _as_messages_request(request: HttpRequest) -> HttpRequest:
    """The Messages request a Vertex request stands for: the model from the path into the body, without
    Vertex's `anthropic_version` (the path's project and location go to provider fields, see `decode_request`)."""
    match = PATH.search(request.path)
    if match is None:
        return request
    body = load_object(request.body, what="request body")
    READ.get_str(body, "anthropic_version", "body")  # a string if there is one; Vertex's, not sent on
    body.pop("anthropic_version", None)
    body = {"model": match["model"], **body}
    if match["method"] == "streamRawPredict":
        body.setdefault("stream", True)
    return dataclasses.replace(request, path="/v1/messages", body=dumps(body).encode("utf-8"))


class VertexReference(AnthropicReference):
    """Anthropic's reference with Vertex's message ids (`msg_vrtx_01...`) and request ids."""

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """Anthropic's events with Vertex's message id."""
        out = super().events(events, request=request, seed=seed)
        return [_vertex_id(e, seed) if isinstance(e, ir.MessageStart) and e.id else e for e in out]

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """Anthropic's response with Vertex's message id."""
        out = super().response(response, request=request, seed=seed)
        return out.model_copy(update={"id": f"msg_vrtx_{message_id(seed).removeprefix('msg_')}"})

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """Vertex fronts the API with Google's frontend: no Anthropic `request-id`, an `x-vertex-ai` trace id."""
        out = {"cache-control": "no-cache"} if stream else {}
        return out | {"x-vertex-ai-llm-request-id": token(seed + "/request", 20)}


def _vertex_id(event: ir.MessageStart, seed: str) -> ir.MessageStart:
    return event.model_copy(update={"id": f"msg_vrtx_{message_id(seed).removeprefix('msg_')}"})


def decode_request(request: HttpRequest) -> ir.Request:
    """A Vertex (or plain Messages) request -> IR; the Vertex project and location are kept."""
    decoded = messages.decode_request(_as_messages_request(request))
    match = PATH.search(request.path)
    if match is None:
        return decoded
    where = {"project": match["project"], "location": match["location"]}
    version = load_object(request.body, what="request body").get("anthropic_version")
    if isinstance(version, str) and version != VERTEX_VERSION:
        where["anthropic_version"] = version
    return decoded.model_copy(update={"provider_fields": {**decoded.provider_fields, NAME: where}})


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> `:rawPredict` / `:streamRawPredict` with `anthropic_version` in the body and no model."""
    plain = messages.encode_request(request)
    body = load_object(plain.body, what="request body")
    model = body.pop("model")
    where = request.provider_fields.get(NAME, {})
    body = {"anthropic_version": where.get("anthropic_version", VERTEX_VERSION), **body}
    project, location = where.get("project", DEFAULT_PROJECT), where.get("location", DEFAULT_LOCATION)
    method = "streamRawPredict" if request.stream else "rawPredict"
    path = f"/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:{method}"
    headers = {k: v for k, v in plain.headers.items() if k != "anthropic-version"}
    return HttpRequest(method="POST", path=path, headers=headers, body=dumps(body).encode("utf-8"))


def is_stream_request(request: HttpRequest) -> bool:
    """`:streamRawPredict`, or a plain Messages request asking `"stream": true`."""
    match = PATH.search(request.path)
    if match is not None:
        return match["method"] == "streamRawPredict"
    return messages.is_stream_request(request)


FACTS = ANTHROPIC_FACTS.derive(
    frontend=None,  # a backend of the Anthropic family: its baseline is the anthropic SDK's
    model_list=None,
    sdk=None,
    real=facts.RealEndpoint(
        f"https://{DEFAULT_LOCATION}-aiplatform.googleapis.com", ("GOOGLE_CLOUD_ACCESS_TOKEN",), "claude-sonnet-4-5"
    ),
    gateway_upstream=False,  # an OAuth access token, no key a gateway config holds
    upstream_request=None,  # `anthropic_version` in the body, no version header, no model field
    wire_specs=(facts.WireSpec("harness.protocols.anthropic.spec", "vertex"),),
)
"""Vertex AI Anthropic: a backend of the Anthropic family, recorded with an OAuth access token."""

CODEC = registry.register(
    dataclasses.replace(
        ANTHROPIC,
        name=NAME,
        family="anthropic",
        losses=MappingProxyType(dict(ANTHROPIC.losses)),
        reference=VertexReference(),  # Vertex's ids on Anthropic's wire
        decode_request=decode_request,
        encode_request=encode_request,
        with_auth=bearer_auth,  # a Google OAuth bearer token
        capabilities=ANTHROPIC.capabilities - {Capability.FILE_URL},  # Vertex takes base64 documents only
        is_stream_request=is_stream_request,
    ),
    facts=FACTS,
)
"""Anthropic Messages on Vertex AI (see the module docstring); everything else is the Anthropic codec."""
