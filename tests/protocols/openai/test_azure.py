"""Azure OpenAI: deployment URLs with `api-version`, the `api-key` header, and content-filter annotations, checked
on Azure's documented wire forms and against the official SDK's `AzureOpenAI` client."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.protocols.openai import quirks
from harness.stream import accumulate, validate
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.openai import support
from tests.protocols.openai.support import choice, chunk_bytes, sse_payloads

AZURE = registry.get("azure")
DEPLOYMENT_PATH = "/openai/deployments/gpt-4o-prod/chat/completions"
SAFE = {name: {"filtered": False, "severity": "safe"} for name in ("hate", "self_harm", "sexual", "violence")}
# Azure's first stream chunk: prompt annotations only, with empty id, model and object.
PROMPT_FILTER = {
    "choices": [],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": SAFE}],
}


def _request(body: dict[str, Any], path: str = DEPLOYMENT_PATH, version: str = "2024-10-21") -> HttpRequest:
    return HttpRequest(method="POST", path=path, query={"api-version": version}, body=json.dumps(body).encode())


def test_azure_deployment_path_api_version_and_api_key_header() -> None:
    wire = AZURE.encode_request(ir.Request(model="gpt-4o-prod", messages=[]))
    assert (wire.path, wire.query) == (DEPLOYMENT_PATH, {"api-version": "2024-10-21"})
    assert json.loads(wire.body)["model"] == "gpt-4o-prod"  # as the AzureOpenAI SDK also sends it
    authed = AZURE.with_auth(wire, "azure-key")
    assert authed.headers["api-key"] == "azure-key" and "authorization" not in authed.headers


def test_azure_decode_reads_the_model_from_the_deployment_path() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    no_body_model = _request({"messages": messages}, version="2025-01-01-preview")
    decoded = AZURE.decode_request(no_body_model)
    assert decoded.model == "gpt-4o-prod"
    # Re-encoding reproduces the client's request: no body model, its own api-version.
    again = AZURE.encode_request(decoded)
    assert "model" not in json.loads(again.body) and again.query == {"api-version": "2025-01-01-preview"}
    other = AZURE.decode_request(_request({"model": "gpt-4o", "messages": messages}))
    assert other.model == "gpt-4o-prod"  # the deployment is what Azure routes by
    assert json.loads(AZURE.encode_request(other).body)["model"] == "gpt-4o"
    # Through an OpenAI SDK passed through unchanged, the path has no deployment: the body names the model.
    passthrough = AZURE.decode_request(_request({"model": "text-basic", "messages": messages}, "/v1/chat/completions"))
    assert passthrough.model == "text-basic"


def test_azure_request_without_deployment_or_model_is_a_decode_error() -> None:
    try:
        AZURE.decode_request(_request({"messages": []}, "/v1/chat/completions"))
    except DecodeError as exc:
        assert "model" in str(exc)
    else:
        raise AssertionError("a request naming no model decoded")


def test_azure_prompt_filter_results_chunk_is_dropped() -> None:
    body = chunk_bytes(
        PROMPT_FILTER,
        {"model": "gpt-4o-2024-05-13", **choice({"role": "assistant", "content": "", "refusal": None})},
        {"model": "gpt-4o-2024-05-13", **choice({"content": "Hello"})},
        {"model": "gpt-4o-2024-05-13", **choice({}, "stop")},
    )
    events = decode_events(AZURE, [body])
    assert validate(events) == []
    assert events[0] == ir.MessageStart(id="chatcmpl-t", model="gpt-4o-2024-05-13")  # not the empty id/model
    assert accumulate(events).response.content == [ir.TextPart(text="Hello")]
    assert quirks.prompt_filter_results_chunk({**PROMPT_FILTER, "id": "x"})["id"] == "x"  # only the filter chunk


def test_azure_content_filter_finish_reason() -> None:
    filtered = {"index": 0, "delta": {}, "finish_reason": "content_filter", "content_filter_results": SAFE}
    body = chunk_bytes(PROMPT_FILTER, choice({"role": "assistant", "content": "Part"}), {"choices": [filtered]})
    done = decode_events(AZURE, [body])[-1]
    assert done == ir.Done(stop_reason=ir.StopReason(kind="content_filter", raw="content_filter"))
    message = {"role": "assistant", "content": None}
    whole = {
        "id": "c",
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "content_filter", "content_filter_results": SAFE}
        ],
        "prompt_filter_results": PROMPT_FILTER["prompt_filter_results"],
    }
    response = AZURE.decode_response(json.dumps(whole).encode())
    assert response.stop_reason == ir.StopReason(kind="content_filter", raw="content_filter") and not response.content


def test_azure_content_filter_400_is_invalid_request() -> None:
    error = {
        "code": "content_filter",
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        "param": "prompt",
        "type": None,
        "status": 400,
        "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": SAFE},
    }
    decoded = AZURE.decode_error(400, {}, json.dumps({"error": error}).encode())
    assert (decoded.kind, decoded.status, decoded.code) == (ir.ErrorKind.INVALID_REQUEST, 400, "content_filter")
    assert not decoded.retryable and decoded.message.startswith("The response was filtered")
    # Mid-stream (no status) the code alone decides.
    body = f"data: {json.dumps({'error': error})}\n\n".encode()
    last = decode_events(AZURE, [body])[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind == ir.ErrorKind.INVALID_REQUEST


def test_azure_encoder_annotates_like_azure() -> None:
    reply = ir.Response(
        id="chatcmpl-az",
        model="gpt-4o",
        content=[ir.TextPart(text="Hi")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=3, output_tokens=1),
    )
    payloads = sse_payloads(encode_events(AZURE, strategies.events_for(reply)))
    assert payloads[0] == PROMPT_FILTER
    assert payloads[1]["choices"][0]["content_filter_results"] == {}  # the role chunk
    assert payloads[2]["choices"][0]["content_filter_results"] == SAFE
    body = json.loads(AZURE.encode_response(reply).body)
    assert body["prompt_filter_results"] == PROMPT_FILTER["prompt_filter_results"]
    assert body["choices"][0]["content_filter_results"] == SAFE


def test_azure_sdk_sends_what_the_codec_decodes_and_reads_what_it_encodes() -> None:
    seen: list[HttpRequest] = []
    reply = ir.Response(
        id="chatcmpl-az",
        model="gpt-4o",
        content=[ir.TextPart(text="Hello from Azure")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=9, output_tokens=4),
    )

    def handle(request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        seen.append(wire)
        decoded = AZURE.decode_request(wire)
        body = encode_events(AZURE, strategies.events_for(reply), decoded)
        support.check_stream(body, AZURE)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = httpx2.Client(transport=httpx2.MockTransport(handle))
    client = openai.AzureOpenAI(
        api_key="azure-key", azure_endpoint="http://azure.test", api_version="2024-10-21", http_client=http
    )
    with client:
        stream = client.chat.completions.create(
            model="gpt-4o-prod",
            messages=[{"role": "user", "content": "Hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    (wire,) = seen
    assert (wire.path, wire.query, wire.headers["api-key"]) == (
        DEPLOYMENT_PATH,
        {"api-version": "2024-10-21"},
        "azure-key",
    )
    assert AZURE.decode_request(wire).model == "gpt-4o-prod"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from Azure"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 9
