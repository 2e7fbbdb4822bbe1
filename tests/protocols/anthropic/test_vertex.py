"""Claude on Vertex AI (`vertex-anthropic`): the publisher path, `anthropic_version` in the body, no model in the
body; and the official SDK's Vertex client reading the reference backend's answers."""

from __future__ import annotations

import json

import httpx2
from anthropic import AnthropicVertex

from harness.backends import respond
from harness.protocols import registry
from harness.scenarios.loader import load_scenarios
from harness.wire.http import HttpRequest
from tests.conftest import REPO

CODEC = registry.get("vertex-anthropic")
SCENARIOS = load_scenarios(REPO / "scenarios")
PATH = "/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict"


def test_vertex_path_gives_the_model_and_the_body_names_the_version() -> None:
    body = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    request = HttpRequest(method="POST", path=PATH, body=json.dumps(body).encode())
    decoded = CODEC.decode_request(request)
    assert decoded.model == "claude-sonnet-4@20250514" and decoded.stream is True and decoded.max_tokens == 9
    assert decoded.provider_fields["vertex-anthropic"] == {"project": "p1", "location": "us-east5"}
    again = CODEC.encode_request(decoded)
    assert again.path == PATH
    sent = json.loads(again.body)
    assert "model" not in sent and sent["anthropic_version"] == "vertex-2023-10-16" and sent["stream"] is True
    assert "anthropic-version" not in again.headers
    assert CODEC.with_auth(again, "tok").headers["authorization"] == "Bearer tok"


def test_vertex_keeps_the_clients_own_anthropic_version() -> None:
    # The Anthropic SDK's Vertex client sends its own API version as anthropic_version.
    body = {"anthropic_version": "2026-10-21", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    request = HttpRequest(
        method="POST", path=PATH.replace("streamRawPredict", "rawPredict"), body=json.dumps(body).encode()
    )
    decoded = CODEC.decode_request(request)
    assert decoded.stream is False and not CODEC.is_stream_request(request)
    assert json.loads(CODEC.encode_request(decoded).body)["anthropic_version"] == "2026-10-21"


def test_a_plain_messages_request_is_read_too() -> None:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    request = HttpRequest(method="POST", path="/v1/messages", body=json.dumps(body).encode())
    assert CODEC.decode_request(request).model == "m" and CODEC.is_stream_request(request)


def _client() -> AnthropicVertex:
    def answer(request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.content)
        reply = respond(CODEC, wire, SCENARIOS)
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)

    transport = httpx2.MockTransport(answer)
    return AnthropicVertex(
        project_id="p1", region="us-east5", access_token="tok", http_client=httpx2.Client(transport=transport)
    )


def test_the_official_vertex_client_reads_the_reference_answers() -> None:
    client = _client()
    messages = [{"role": "user", "content": "Say hello in one sentence."}]
    message = client.messages.create(model="text-basic", max_tokens=64, messages=messages)  # type: ignore[arg-type]
    assert message.id.startswith("msg_vrtx_01") and message.content[0].text == "Hello! How can I help you today?"  # type: ignore[union-attr]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (14, 9)
    with client.messages.stream(model="text-basic", max_tokens=64, messages=messages) as stream:  # type: ignore[arg-type]
        final = stream.get_final_message()
    assert final.content[0].text == "Hello! How can I help you today?"  # type: ignore[union-attr]
    assert final.usage.input_tokens == 14 and final.stop_reason == "end_turn"
