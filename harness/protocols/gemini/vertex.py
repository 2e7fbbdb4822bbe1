"""Gemini on Google Cloud Vertex AI (`vertex-gemini`): the same GenerateContent wire behind Vertex's publisher
endpoints.

`POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent` (or
`:streamGenerateContent`, with `alt=sse` for SSE), authenticated by a Google OAuth bearer token instead of an API
key. Bodies and answers are Gemini's, with what Vertex adds to an answer: `createTime`, and the traffic type in
`usageMetadata`. The decoder also reads the Developer API's `/{version}/models/{model}:...` form (the google-genai
SDK's own), so a client of the base protocol can reach a Vertex backend through a pass-through.
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType

from harness import ir
from harness.protocols import facts, gemini, registry
from harness.protocols.gemini import request_decode, request_encode
from harness.protocols.gemini.facts import FACTS as GEMINI_FACTS
from harness.protocols.gemini.reference import GeminiReference
from harness.protocols.kit import bearer_auth
from harness.protocols.reference import number
from harness.wire.http import HttpRequest

NAME = "vertex-gemini"
"""Registry name, and the `provider_fields` key of the Vertex path (project, location)."""

DEFAULT_PROJECT, DEFAULT_LOCATION = "conformance-project", "us-central1"
"""Path segments used when the IR request does not say (a request decoded from another protocol)."""

PATH = re.compile(
    r"/(?P<version>v1[a-z0-9]*)(?:/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+))?/publishers/google/"
    r"models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)
"""A Vertex AI Gemini path (with a project and location, or without: Vertex's express mode with an API key, which
google-genai uses as `/v1beta1/publishers/google/models/...`); any prefix (a proxy's mount point) may come
before it."""


def _create_time(seed: str) -> str:
    day, minute, micros = number(seed + "/d", 1, 28), number(seed + "/m", 0, 59), number(seed, 0, 999999)
    return f"2025-10-{day:02d}T12:{minute:02d}:00.{micros:06d}Z"


class VertexGeminiReference(GeminiReference):
    """Gemini's reference with what Vertex adds: `createTime` and `usageMetadata.trafficType` on every answer."""

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """Gemini's events with Vertex's fields on every chunk."""
        extras = {"gemini": {"createTime": _create_time(seed), "usageMetadata": {"trafficType": "ON_DEMAND"}}}
        out = super().events(events, request=request, seed=seed)
        return [
            e.model_copy(update={"extras": ir.merge_extras(extras, e.extras)})
            if isinstance(e, ir.MessageStart) and e != ir.MessageStart()
            else e
            for e in out
        ]

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """Gemini's response with Vertex's fields."""
        out = super().response(response, request=request, seed=seed)
        extras = {"gemini": {"createTime": _create_time(seed), "usageMetadata": {"trafficType": "ON_DEMAND"}}}
        return out.model_copy(update={"extras": ir.merge_extras(extras, out.extras)})

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """Streams come as an attachment, as from the Developer API."""
        return super().headers(stream=stream, status=status, seed=seed)


def decode_request(request: HttpRequest) -> ir.Request:
    """A Vertex (or Developer API) request -> IR; the Vertex project and location are kept."""
    match = PATH.search(request.path)
    if match is None:
        return request_decode.decode_request(request)
    plain = dataclasses.replace(request, path=f"/{match['version']}/models/{match['model']}:{match['method']}")
    decoded = request_decode.decode_request(plain)
    where = {"project": match["project"], "location": match["location"]} if match["project"] else {}
    where["version"] = match["version"]
    return decoded.model_copy(update={"provider_fields": {**decoded.provider_fields, NAME: where}})


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> the Vertex publisher path (`v1`), the body and query as Gemini's."""
    plain = request_encode.encode_request(request)
    where = request.provider_fields.get(NAME, {})
    project, location = where.get("project", DEFAULT_PROJECT), where.get("location", DEFAULT_LOCATION)
    version = where.get("version", "v1")
    method = "streamGenerateContent" if request.stream else "generateContent"
    path = f"/{version}/projects/{project}/locations/{location}/publishers/google/models/{request.model}:{method}"
    return dataclasses.replace(plain, path=path)


def is_stream_request(request: HttpRequest) -> bool:
    """Whether the method is streamGenerateContent (Vertex or Developer API path)."""
    match = PATH.search(request.path)
    if match is not None:
        return match["method"] == "streamGenerateContent"
    return gemini.is_stream_request(request)


FACTS = GEMINI_FACTS.derive(
    frontend=None,  # served to google-genai's Vertex mode only as a backend here: its baseline is Gemini's SDK
    model_list=None,
    sdk=None,
    real=facts.RealEndpoint(
        f"https://{DEFAULT_LOCATION}-aiplatform.googleapis.com", ("GOOGLE_CLOUD_ACCESS_TOKEN",), "gemini-2.5-flash"
    ),
    gateway_upstream=False,  # an OAuth access token, no key a gateway config holds
)
"""Vertex AI Gemini: a backend of the Gemini family, recorded with an OAuth access token."""

CODEC = registry.register(
    dataclasses.replace(
        gemini.CODEC,
        name=NAME,
        family="gemini",
        losses=MappingProxyType(dict(gemini.CODEC.losses)),
        reference=VertexGeminiReference(),  # Gemini's reference with Vertex's fields
        decode_request=decode_request,
        encode_request=encode_request,
        with_auth=bearer_auth,  # a Google OAuth bearer token
        is_stream_request=is_stream_request,
        stream_encoder_factory=gemini.stream_encoder,
    ),
    facts=FACTS,
)
"""Gemini on Vertex AI (see the module docstring); everything else is the Gemini codec."""
