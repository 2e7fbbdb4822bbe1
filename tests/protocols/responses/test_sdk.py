"""The official `openai` SDK's Responses client talks to our encoders (through `httpx2.MockTransport`) and
accepts them: `responses.create` (plain and streamed) and the `responses.stream` helper parse our output with
strict response validation, and raise their own exception classes for our error bodies. The mock server decodes
what the SDK sent with our decoder, proving it on real SDK output."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common, encode_events
from harness.wire.http import HttpRequest, HttpResponse
from tests import strategies
from tests.protocols.responses.support import CODEC, assert_stream_schema, random_chunks

Answer = Callable[[ir.Request], HttpResponse]

CALL = ir.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}')
RESPONSE = ir.Response(
    id="resp_test",
    model="gpt-5",
    content=[
        ir.ThinkingPart(text="Two lookups.", signature="gAAAA-enc"),
        ir.TextPart(text="Checking."),
        CALL,
    ],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=120, output_tokens=45, cache_read_tokens=100, reasoning_tokens=20),
)


class Server:
    """A mock Responses endpoint: records each decoded request and answers with `answer`."""

    def __init__(self, answer: Answer, *, chunked: bool = False) -> None:
        self.answer = answer
        self.chunked = chunked
        self.requests: list[ir.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        assert wire.path == "/v1/responses"
        decoded = CODEC.decode_request(wire)
        self.requests.append(decoded)
        reply = self.answer(decoded)
        if self.chunked:
            return httpx2.Response(reply.status, headers=reply.headers, content=_pieces(reply.body))
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)


def _pieces(body: bytes) -> Iterator[bytes]:
    yield from random_chunks(body, seed=3)


def client_for(server: Server) -> openai.OpenAI:
    """An SDK client whose transport is the mock server, validating responses strictly."""
    return openai.OpenAI(
        api_key="sk-test",
        base_url="http://openai.test/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        max_retries=0,
        _strict_response_validation=True,
    )


def reply(response: ir.Response) -> Answer:
    """Answer with `response`, streamed when the request asks for it."""

    def answer(request: ir.Request) -> HttpResponse:
        if request.stream:
            body = encode_events(CODEC, strategies.events_for(response), request)
            assert_stream_schema(body)
            return HttpResponse(200, {"content-type": CODEC.stream_media_type}, body)
        return CODEC.encode_response(response, request=request)

    return answer


def fail(error: ir.IRError) -> Answer:
    """Answer with an HTTP error."""
    return lambda _: CODEC.encode_error(error)


KWARGS: dict[str, Any] = {
    "model": "gpt-5",
    "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
    ],
    "tools": [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Current weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "strict": False,
        }
    ],
    "reasoning": {"effort": "low", "summary": "auto"},
    "max_output_tokens": 256,
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "metadata": {"run": "1"},
}


def test_create_parses_the_encoded_response() -> None:
    server = Server(reply(RESPONSE))
    result = client_for(server).responses.create(**KWARGS)
    reasoning, message, call = result.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content == "gAAAA-enc"
    assert [s.text for s in reasoning.summary] == ["Two lookups."]
    assert message.type == "message" and result.output_text == "Checking."
    assert call.type == "function_call" and (call.call_id, call.name, call.arguments) == (
        "call_1",
        "get_weather",
        '{"city":"Paris"}',
    )
    assert result.id == "resp_test" and result.status == "completed" and result.instructions == "Be brief."
    assert result.usage is not None and result.usage.input_tokens_details.cached_tokens == 100
    assert result.usage.output_tokens_details.reasoning_tokens == 20
    decoded = server.requests[0]
    assert decoded.system == "Be brief." and decoded.max_tokens == 256 and decoded.tools[0].name == "get_weather"
    assert decoded.provider_fields["responses"]["metadata"] == {"run": "1"}


@pytest.mark.parametrize("chunked", [False, True])
def test_create_streamed_yields_every_event_in_order(chunked: bool) -> None:
    server = Server(reply(RESPONSE), chunked=chunked)
    events = list(client_for(server).responses.create(**KWARGS, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "Checking."
    summary = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert summary == "Two lookups."
    assert events[-1].response.output[2].arguments == '{"city":"Paris"}'


def test_the_stream_helper_accumulates_the_final_response() -> None:
    server = Server(reply(RESPONSE), chunked=True)
    with client_for(server).responses.stream(**KWARGS) as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert text == "Checking." and final.output_text == "Checking."
    assert [item.type for item in final.output] == ["reasoning", "message", "function_call"]
    assert final.usage is not None and final.usage.total_tokens == 165


def test_an_incomplete_stream_ends_with_its_reason() -> None:
    cut = ir.Response(id="resp_cut", model="gpt-4o", content=[ir.TextPart(text="1. Alabama")],
                      stop_reason=ir.StopReason(kind="max_tokens"), usage=ir.Usage(output_tokens=50))  # fmt: skip
    events = list(client_for(Server(reply(cut))).responses.create(model="gpt-4o", input="List", stream=True))
    last = events[-1]
    assert last.type == "response.incomplete"
    assert (
        last.response.incomplete_details is not None and last.response.incomplete_details.reason == "max_output_tokens"
    )


def test_the_stream_helper_has_no_final_response_for_an_incomplete_stream() -> None:
    # An SDK quirk a driver must know: only response.completed sets the helper's final response.
    cut = ir.Response(
        id="resp_cut", model="m", content=[ir.TextPart(text="1.")], stop_reason=ir.StopReason(kind="max_tokens")
    )
    with client_for(Server(reply(cut))).responses.stream(model="m", input="List") as stream:
        last = list(stream)[-1]
        with pytest.raises(RuntimeError, match=r"response\.completed"):
            stream.get_final_response()
    assert last.type == "response.incomplete" and last.response.output_text == "1."


@given(strategies.responses(), st.booleans())
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_response_parses_streamed_or_not(response: ir.Response, stream: bool) -> None:
    call_ids = [p.id for p in response.content if isinstance(p, ir.ToolCallPart)]
    assume(len(set(call_ids)) == len(call_ids))  # the SDK identifies a call by its call_id, as the API does
    client = client_for(Server(reply(response)))
    if stream:
        with client.responses.stream(model="m", input="hi") as events:
            ends = [e.response for e in events if e.type in ("response.completed", "response.incomplete")]
        final = ends[-1]
    else:
        final = client.responses.create(model="m", input="hi")
    texts = [p.text for p in response.content if isinstance(p, ir.TextPart)]
    assert final.output_text == "".join(texts)
    assert len([o for o in final.output if o.type == "function_call"]) == len(
        [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    )


SDK_CLASSES = [
    (ir.ErrorKind.INVALID_REQUEST, openai.BadRequestError),
    (ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, openai.BadRequestError),
    (ir.ErrorKind.AUTH, openai.AuthenticationError),
    (ir.ErrorKind.PERMISSION, openai.PermissionDeniedError),
    (ir.ErrorKind.NOT_FOUND, openai.NotFoundError),
    (ir.ErrorKind.THROTTLED, openai.RateLimitError),
    (ir.ErrorKind.SERVER, openai.InternalServerError),
    (ir.ErrorKind.OVERLOADED, openai.InternalServerError),
]


@pytest.mark.parametrize(("kind", "cls"), SDK_CLASSES)
@pytest.mark.parametrize("stream", [False, True])
def test_error_bodies_raise_the_sdk_class_of_their_kind(kind: ir.ErrorKind, cls: type, stream: bool) -> None:
    error = ir.IRError.of(kind, f"upstream says {kind.value}", retry_after=4)
    client = client_for(Server(fail(error)))
    with pytest.raises(cls) as info:
        client.responses.create(model="m", input="hi", stream=stream)
    exc = info.value
    assert isinstance(exc, openai.APIStatusError) and exc.status_code == common.KIND_STATUS[kind]
    assert exc.message.endswith(f"upstream says {kind.value}") and exc.response.headers["retry-after"] == "4"
    assert (
        isinstance(exc.body, dict) and exc.body["code"] == json.loads(CODEC.encode_error(error).body)["error"]["code"]
    )


def test_an_error_mid_stream_raises_api_error_after_the_partial_text() -> None:
    def answer(request: ir.Request) -> HttpResponse:
        events = [
            *strategies.events_for(RESPONSE)[:6],
            ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded")),
        ]
        return HttpResponse(200, {"content-type": CODEC.stream_media_type}, encode_events(CODEC, events, request))

    seen: list[str] = []
    with pytest.raises(openai.APIError) as info:
        for event in client_for(Server(answer)).responses.create(model="m", input="hi", stream=True):
            seen.append(event.type)
    assert not isinstance(info.value, openai.APIStatusError)
    assert info.value.message == "Overloaded" and info.value.code == "overloaded"
    assert seen[0] == "response.created" and "response.completed" not in seen
