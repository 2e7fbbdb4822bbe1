"""The official `boto3` bedrock-runtime client talks to our encoders and accepts them; what it sends decodes.

botocore's `before-send` event hands each prepared (signed) request to `Server`, which decodes it with our codec
and answers with our encoders: an `AWSResponse` whose raw body yields random small pieces, as a socket would.
boto3 parses bodies and event streams with its own parsers (strict about its service model's shapes and event
stream CRCs), raises its own `ClientError` / `EventStreamError`, and never retries here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from harness import ir
from harness.protocols import encode_events
from harness.protocols.bedrock.auth import signature_problems
from harness.protocols.bedrock.errors import TYPES
from harness.protocols.reference import body_reply, error_reply, stream_reply
from harness.wire.http import HttpRequest, HttpResponse
from tests import strategies
from tests.protocols.bedrock.support import CODEC, assert_schema, assert_stream_schema, random_chunks

Answer = Callable[[ir.Request], HttpResponse]
MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
SIGNATURE = "RXF0QkNrZ0lCeEFCR0FJcVFQ"
RESPONSE = ir.Response(
    content=[
        ir.ThinkingPart(text="Two lookups are needed.", signature=SIGNATURE),
        ir.TextPart(text="Checking both cities: Zürich → 世界."),
        ir.ToolCallPart(
            id="tooluse_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'
        ),
        ir.ToolCallPart(
            id="tooluse_2",
            name="get_weather",
            arguments={"city": "Oslo", "days": [1, 2]},
            arguments_raw='{"city": "Oslo", "days": [1, 2]}',
        ),
    ],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=1324, output_tokens=45, cache_read_tokens=1322, cache_write_tokens=0),
)


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield from random_chunks(self.body, seed=11)

    def close(self) -> None:
        pass


class Server:
    """A mock bedrock-runtime endpoint: records each decoded request and answers with `answer`."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.wire: list[HttpRequest] = []
        self.requests: list[ir.Request] = []

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
        headers = {k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        headers.setdefault("host", urlsplit(request.url).netloc)  # what the HTTP client adds on the wire
        body = request.body if isinstance(request.body, bytes) else request.body.read()
        wire = HttpRequest.from_url(request.method, request.url, headers, body)
        self.wire.append(wire)
        self.requests.append(CODEC.decode_request(wire))
        reply = self.answer(self.requests[-1])
        if reply.status >= 400:
            assert_schema("error", json.loads(reply.body))
        elif reply.headers["content-type"] == CODEC.stream_media_type:
            assert_stream_schema(reply.body)
        else:
            assert_schema("response", json.loads(reply.body))
        return AWSResponse(request.url, reply.status, reply.headers, _Raw(reply.body))


def client(server: Server) -> Any:
    session = boto3.session.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="x", region_name="us-west-2")
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"})
    out = session.client(
        "bedrock-runtime", endpoint_url="https://bedrock-runtime.us-west-2.amazonaws.com", config=config
    )
    out.meta.events.register("before-send.bedrock-runtime", server)
    return out


def answer_with(response: ir.Response) -> Answer:
    """Answer as the reference backend does: the encoders plus Bedrock's request id header."""

    def answer(request: ir.Request) -> HttpResponse:
        if not request.stream:
            return body_reply(CODEC, request, response, seed="s")
        reply = stream_reply(CODEC, request, strategies.events_for(response), seed="s")
        return HttpResponse(200, reply.headers, b"".join(reply.chunks))

    return answer


def fail_with(error: ir.IRError) -> Answer:
    return lambda request: error_reply(CODEC, error, seed="s")


PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC")
CALL = {
    "modelId": MODEL,
    "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
    "messages": [
        {"role": "user", "content": [{"text": "Weather?"}, {"image": {"format": "png", "source": {"bytes": PNG}}}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "18°C"}], "status": "error"}}],
        },
    ],
    "inferenceConfig": {"maxTokens": 300, "temperature": 0.5, "topP": 0.9, "stopSequences": ["END"]},
    "toolConfig": {
        "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}],
        "toolChoice": {"tool": {"name": "get_weather"}},
    },
    "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}, "top_k": 5},
}


def test_what_boto3_sends_decodes_and_is_signed_with_sigv4() -> None:
    server = Server(answer_with(RESPONSE))
    client(server).converse(**CALL)
    wire = server.wire[0]
    assert wire.path == "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse"
    assert signature_problems(wire.headers) == []
    assert (
        "Credential=AKIDEXAMPLE/" in wire.headers["authorization"]
        and "/us-west-2/bedrock/" in wire.headers["authorization"]
    )
    request = server.requests[0]
    assert (request.model, request.system, request.max_tokens, request.stop) == (MODEL, "Be brief.", 300, ["END"])
    assert (request.temperature, request.top_p) == (0.5, 0.9)
    assert request.tool_choice == ir.ToolChoiceTool(name="get_weather")
    assert request.thinking == ir.ThinkingConfig(enabled=True, budget_tokens=2048)
    image = request.messages[0].content[1]
    assert isinstance(image, ir.ImagePart) and image.source == ir.Base64Image(
        media_type="image/png", data=base64.b64encode(PNG).decode()
    )
    assert request.messages[2] == ir.Message(
        role="tool",
        content=[
            ir.ToolResultPart(tool_call_id="t1", name="get_weather", content=[ir.TextPart(text="18°C")], is_error=True)
        ],
    )
    extra = request.provider_fields["bedrock"]
    assert extra["additionalModelRequestFields"] == {"top_k": 5}
    assert extra["system"] == CALL["system"]  # the cache point has no IR form: kept verbatim
    assert json.loads(CODEC.encode_request(request).body)["system"] == CALL["system"]


def test_boto3_parses_a_converse_response() -> None:
    result = client(Server(answer_with(RESPONSE))).converse(**CALL)
    assert result["stopReason"] == "tool_use"
    usage = {"inputTokens": 2, "outputTokens": 45, "totalTokens": 1369}
    assert result["usage"] == {**usage, "cacheReadInputTokens": 1322, "cacheWriteInputTokens": 0}
    content = result["output"]["message"]["content"]
    assert content[0] == {
        "reasoningContent": {"reasoningText": {"text": "Two lookups are needed.", "signature": SIGNATURE}}
    }
    assert content[1] == {"text": "Checking both cities: Zürich → 世界."}
    assert content[3]["toolUse"] == {
        "toolUseId": "tooluse_2",
        "name": "get_weather",
        "input": {"city": "Oslo", "days": [1, 2]},
    }
    assert result["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"].count("-") == 4


def test_boto3_parses_a_converse_stream_event_by_event() -> None:
    result = client(Server(answer_with(RESPONSE))).converse_stream(**CALL)
    assert result["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"].count("-") == 4  # streams carry it too
    events = list(result["stream"])
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert events[1] == {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Two"}}}}
    signature = [e for e in events if "signature" in str(e)]
    assert signature == [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": SIGNATURE}}}}
    ]
    starts = [e["contentBlockStart"] for e in events if "contentBlockStart" in e]
    assert starts == [
        {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}}},
        {"contentBlockIndex": 3, "start": {"toolUse": {"toolUseId": "tooluse_2", "name": "get_weather"}}},
    ]
    fragments = "".join(
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "contentBlockDelta" in e and e["contentBlockDelta"]["contentBlockIndex"] == 3
    )
    assert json.loads(fragments) == {"city": "Oslo", "days": [1, 2]}
    assert events[-1]["metadata"]["usage"]["cacheReadInputTokens"] == 1322
    assert events[-1]["metadata"]["metrics"] == {"latencyMs": 0}


def test_a_redacted_block_reaches_boto3_as_the_bytes_of_the_data_text() -> None:
    data = "EtkECkgIBxABGAIqQJTfqS/PYuAFZeOls6R8uGN014YNT7YDIFuhNyywoX1Cjf9oIYThX1ucUFJ1cfckdN55jozmXi1PEgMf"
    response = ir.Response(content=[ir.RedactedThinkingPart(data=data), ir.TextPart(text="ok")])
    whole = client(Server(answer_with(response))).converse(**CALL)
    assert whole["output"]["message"]["content"][0] == {"reasoningContent": {"redactedContent": data.encode()}}
    events = list(client(Server(answer_with(response))).converse_stream(**CALL)["stream"])
    assert events[1]["contentBlockDelta"]["delta"] == {"reasoningContent": {"redactedContent": data.encode()}}


@pytest.mark.parametrize("error_type", sorted(TYPES))
def test_boto3_raises_its_modeled_exception_for_each_error_type(error_type: str) -> None:
    kind, status = TYPES[error_type]
    error = ir.IRError.of(kind, f"upstream says {error_type}", code=error_type)
    bedrock = client(Server(fail_with(error)))
    with pytest.raises(ClientError) as info:
        bedrock.converse(**CALL)
    assert info.value.response["Error"] == {"Code": error_type, "Message": f"upstream says {error_type}"}
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    modeled = getattr(bedrock.exceptions, error_type, None)
    if modeled is not None:  # the service model's own exceptions get their own class
        assert isinstance(info.value, modeled)


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (ir.ErrorKind.THROTTLED, "throttlingException"),
        (ir.ErrorKind.OVERLOADED, "serviceUnavailableException"),
        (ir.ErrorKind.INVALID_REQUEST, "validationException"),
        (ir.ErrorKind.SERVER, "internalServerException"),
        (ir.ErrorKind.MALFORMED_STREAM, "modelStreamErrorException"),
        (ir.ErrorKind.PERMISSION, "AccessDeniedException"),  # no stream exception: an `error` frame
        (ir.ErrorKind.AUTH, "UnrecognizedClientException"),
    ],
)
def test_boto3_raises_event_stream_error_mid_stream(kind: ir.ErrorKind, code: str) -> None:
    events = [*strategies.events_for(RESPONSE)[:5], ir.ErrorEvent(error=ir.IRError.of(kind, "broke off"))]
    body = encode_events(CODEC, events)
    server = Server(lambda r: HttpResponse(200, {"content-type": CODEC.stream_media_type}, body))
    seen: list[dict[str, Any]] = []
    with pytest.raises(EventStreamError) as info:
        for event in client(server).converse_stream(**CALL)["stream"]:
            seen.append(event)
    assert info.value.response["Error"] == {"Code": code, "Message": "broke off"}
    assert [next(iter(e)) for e in seen] == ["messageStart"] + ["contentBlockDelta"] * 3
