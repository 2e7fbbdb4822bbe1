"""Gemini on Vertex AI (`vertex-gemini`): the publisher paths (with a project and location, and express mode),
bearer auth; and the official google-genai client in Vertex mode reading the reference backend's answers."""

from __future__ import annotations

import json

import httpx2
from google import genai
from google.genai import types

from harness.backends import respond
from harness.protocols import registry
from harness.scenarios.loader import load_scenarios
from harness.wire.http import HttpRequest
from tests.conftest import REPO

CODEC = registry.get("vertex-gemini")
SCENARIOS = load_scenarios(REPO / "scenarios")
BODY = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()


def test_vertex_paths_give_the_model_and_keep_the_project() -> None:
    path = "/v1/projects/p1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    request = HttpRequest(method="POST", path=path, query={"alt": "sse"}, body=BODY)
    decoded = CODEC.decode_request(request)
    assert decoded.model == "gemini-2.5-flash" and decoded.stream is True and CODEC.is_stream_request(request)
    assert decoded.provider_fields["vertex-gemini"] == {"project": "p1", "location": "europe-west4", "version": "v1"}
    again = CODEC.encode_request(decoded)
    assert (again.path, again.query) == (path, {"alt": "sse"})
    assert CODEC.with_auth(again, "tok").headers["authorization"] == "Bearer tok"


def test_express_mode_and_developer_api_paths_are_read_too() -> None:
    express = HttpRequest(method="POST", path="/v1beta1/publishers/google/models/g:generateContent", body=BODY)
    assert CODEC.decode_request(express).model == "g" and not CODEC.is_stream_request(express)
    plain = HttpRequest(method="POST", path="/v1beta/models/g:streamGenerateContent", query={"alt": "sse"}, body=BODY)
    assert CODEC.decode_request(plain).model == "g" and CODEC.is_stream_request(plain)


def test_the_official_client_in_vertex_mode_reads_the_reference_answers() -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.content)
        reply = respond(CODEC, wire, SCENARIOS)
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)

    options = types.HttpOptions(httpx_client=httpx2.Client(transport=httpx2.MockTransport(answer)))
    client = genai.Client(vertexai=True, api_key="express-key", http_options=options)
    config = types.GenerateContentConfig(max_output_tokens=64)
    response = client.models.generate_content(model="text-basic", contents="Say hello in one sentence.", config=config)
    assert response.text == "Hello! How can I help you today?"
    assert response.usage_metadata is not None and response.usage_metadata.prompt_token_count == 14
    chunks = list(
        client.models.generate_content_stream(model="text-basic", contents="Say hello in one sentence.", config=config)
    )
    assert "".join(c.text or "" for c in chunks) == "Hello! How can I help you today?"
    assert all(c.usage_metadata is not None and c.usage_metadata.prompt_token_count == 14 for c in chunks)


def test_a_vertex_stream_asked_without_alt_sse_is_answered_as_a_json_array() -> None:
    """Quirk: Vertex, like the Gemini API, streams a JSON array when `alt=sse` is left out. The request decoder keeps
    that under `provider_fields["gemini"]` for both flavours; the Vertex encoder read its own name's entry, so it
    answered SSE to a client waiting for an array."""
    from harness import ir
    from harness.protocols import decode_events, encode_events

    path = "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    decoded = CODEC.decode_request(HttpRequest(method="POST", path=path, query={}, body=BODY))
    assert CODEC.encode_request(decoded).query == {}  # asked again without alt=sse
    events = [
        ir.MessageStart(id="r1", model="gemini-2.5-flash"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hi"),
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=1, output_tokens=1)),
    ]
    body = encode_events(CODEC, events, request=decoded)
    assert body.lstrip().startswith(b"[") and body.rstrip().endswith(b"]") and b"data: " not in body
    assert isinstance(json.loads(body), list)
    assert "".join(e.text for e in decode_events(CODEC, [body]) if isinstance(e, ir.TextDelta)) == "Hi"
    sse = encode_events(
        CODEC, events, request=CODEC.decode_request(HttpRequest("POST", path, {"alt": "sse"}, {}, BODY))
    )
    assert sse.startswith(b"data: ")
