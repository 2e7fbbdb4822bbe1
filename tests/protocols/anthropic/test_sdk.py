"""The official `anthropic` SDK talks to our encoders (through `httpx2.MockTransport`) and accepts them.

The handler decodes what the SDK sent with `decode_request` (proving it on real SDK output) and answers with
our encoders. The client validates responses strictly against its own models, and never retries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from harness import ir
from harness.protocols import encode_events
from harness.protocols.anthropic import encode_count_tokens_response
from harness.wire.http import HttpRequest, HttpResponse
from tests import strategies
from tests.protocols.anthropic.support import CODEC, assert_schema, assert_stream_schema, random_chunks

SDK_VERSION = {"anthropic-version": anthropic._constants.ANTHROPIC_API_VERSION}
"""The API version the SDK sends, kept in the IR when it is not the one our encoder pins."""

Answer = Callable[[ir.Request], HttpResponse]

USAGE = ir.Usage(input_tokens=120, output_tokens=45, cache_read_tokens=100, cache_write_tokens=0)
RESPONSE = ir.Response(
    id="msg_test",
    model="claude-haiku-4-5",
    content=[
        ir.ThinkingPart(text="Two lookups are needed.", signature="c2lnbmF0dXJl"),
        ir.TextPart(text="Checking both cities."),
        ir.ToolCallPart(
            id="toolu_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'
        ),
        ir.ToolCallPart(
            id="toolu_2",
            name="get_weather",
            arguments={"city": "Oslo", "days": [1, 2]},
            arguments_raw='{"city": "Oslo", "days": [1, 2]}',
        ),
    ],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=USAGE,
)


class Server:
    """A mock Anthropic endpoint: records each decoded request and answers with `answer`."""

    def __init__(self, answer: Answer, *, chunked: bool = False) -> None:
        self.answer = answer
        self.chunked = chunked
        self.requests: list[ir.Request] = []
        self.wire: list[HttpRequest] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        decoded = CODEC.decode_request(wire)
        self.wire.append(wire)
        self.requests.append(decoded)
        reply = self.answer(decoded)
        _check_schema(reply)
        if self.chunked:  # the body arrives in small random pieces, as from a real socket
            return httpx2.Response(reply.status, headers=reply.headers, content=_iterate(reply.body))
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)


def _check_schema(reply: HttpResponse) -> None:
    """Everything the mock server sends matches our wire schemas too."""
    if reply.status >= 400:
        assert_schema("error", json.loads(reply.body))
    elif reply.headers["content-type"] == CODEC.stream_media_type:
        assert_stream_schema(reply.body)
    elif "input_tokens" not in json.loads(reply.body):  # count_tokens answers have their own tiny shape
        assert_schema("response", json.loads(reply.body))


def _iterate(body: bytes) -> Iterator[bytes]:
    yield from random_chunks(body, seed=7)


def client_for(server: Server) -> anthropic.Anthropic:
    """An SDK client whose transport is the mock server."""
    return anthropic.Anthropic(
        api_key="sk-ant-test",
        base_url="http://anthropic.test",
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        max_retries=0,
        _strict_response_validation=True,
    )


def _stream_reply(response: ir.Response) -> Answer:
    def answer(_: ir.Request) -> HttpResponse:
        body = encode_events(CODEC, strategies.events_for(response))
        return HttpResponse(200, {"content-type": CODEC.stream_media_type}, body)

    return answer


def _create_kwargs() -> dict[str, Any]:
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 2048,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather in Paris and Oslo?"}],
        "tools": [
            {
                "name": "get_weather",
                "description": "Current weather",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": False},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-1"},
        "stop_sequences": ["END"],
        "service_tier": "auto",
        # this SDK release has no temperature / top_k parameters: send them as the API still takes them
        "extra_body": {"temperature": 1.0, "top_k": 5},
    }


def _expected_request(*, stream: bool) -> ir.Request:
    return ir.Request(
        model="claude-haiku-4-5",
        system="Be brief.",
        messages=[ir.Message(role="user", content=[ir.TextPart(text="Weather in Paris and Oslo?")])],
        tools=[
            ir.Tool(
                name="get_weather",
                description="Current weather",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            )
        ],
        tool_choice=ir.ToolChoiceAuto(),
        parallel_tool_calls=True,
        temperature=1.0,
        max_tokens=2048,
        stop=["END"],
        stream=stream,
        thinking=ir.ThinkingConfig(enabled=True, budget_tokens=1024),
        provider_fields={
            "anthropic": {"metadata": {"user_id": "u-1"}, "service_tier": "auto", "top_k": 5, **SDK_VERSION}
        },
    )


def _check_message(message: Any) -> None:
    thinking, text, first, second = message.content
    assert (thinking.type, thinking.thinking, thinking.signature) == (
        "thinking",
        "Two lookups are needed.",
        "c2lnbmF0dXJl",
    )
    assert (text.type, text.text) == ("text", "Checking both cities.")
    assert (first.type, first.id, first.name, first.input) == ("tool_use", "toolu_1", "get_weather", {"city": "Paris"})
    assert (second.id, second.input) == ("toolu_2", {"city": "Oslo", "days": [1, 2]})
    assert message.stop_reason == "tool_use" and message.stop_sequence is None
    # IR input_tokens includes cached tokens; the wire counts fresh input apart from cache reads.
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (20, 100)
    assert (message.usage.output_tokens, message.usage.cache_creation_input_tokens) == (45, 0)


def test_sdk_parses_our_non_streamed_response() -> None:
    server = Server(lambda _: CODEC.encode_response(RESPONSE))
    message = client_for(server).messages.create(**_create_kwargs())
    assert (message.id, message.model, message.role) == ("msg_test", "claude-haiku-4-5", "assistant")
    _check_message(message)
    assert server.requests == [_expected_request(stream=False)]
    assert server.wire[0].path == "/v1/messages" and "anthropic-version" in server.wire[0].headers


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_sdk_accumulates_our_stream(chunked: bool) -> None:
    server = Server(_stream_reply(RESPONSE), chunked=chunked)
    with client_for(server).messages.stream(**_create_kwargs()) as stream:
        pieces = list(stream.text_stream)
        message = stream.get_final_message()
    assert "".join(pieces) == "Checking both cities."
    _check_message(message)
    assert server.requests == [_expected_request(stream=True)]


def test_sdk_raw_stream_events_in_real_api_order() -> None:
    response = RESPONSE.model_copy(update={"content": [ir.TextPart(text="Hello there")]})
    server = Server(_stream_reply(response))
    kwargs = {**_create_kwargs(), "stream": True}
    events = list(client_for(server).messages.create(**kwargs))
    assert [e.type for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta") == "Hello there"
    assert events[-2].delta.stop_reason == "tool_use" and events[-2].usage.output_tokens == 45


def test_sdk_raises_on_a_mid_stream_error_event() -> None:
    overloaded = ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded")
    events = [*strategies.events_for(RESPONSE)[:4], ir.ErrorEvent(error=overloaded)]

    def answer(_: ir.Request) -> HttpResponse:
        return HttpResponse(200, {"content-type": "text/event-stream"}, encode_events(CODEC, events))

    server = Server(answer)
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client_for(server).messages.stream(**_create_kwargs()) as stream,
    ):
        stream.get_final_message()
    assert caught.value.type == "overloaded_error" and caught.value.api_message == "Overloaded"


@pytest.mark.parametrize(
    ("kind", "exception", "status"),
    [
        (ir.ErrorKind.THROTTLED, anthropic.RateLimitError, 429),
        (ir.ErrorKind.AUTH, anthropic.AuthenticationError, 401),
        (ir.ErrorKind.INVALID_REQUEST, anthropic.BadRequestError, 400),
        (ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, anthropic.BadRequestError, 400),
        (ir.ErrorKind.SERVER, anthropic.InternalServerError, 500),
        (ir.ErrorKind.OVERLOADED, anthropic.OverloadedError, 529),
        (ir.ErrorKind.NOT_FOUND, anthropic.NotFoundError, 404),
        (ir.ErrorKind.PERMISSION, anthropic.PermissionDeniedError, 403),
    ],
)
def test_sdk_raises_its_own_exceptions_for_our_error_bodies(
    kind: ir.ErrorKind, exception: type[anthropic.APIStatusError], status: int
) -> None:
    error = ir.IRError.of(kind, "something went wrong", retry_after=7)
    server = Server(lambda _: CODEC.encode_error(error))
    with pytest.raises(exception) as caught:
        client_for(server).messages.create(**_create_kwargs())
    assert caught.value.status_code == status
    assert caught.value.response.headers["retry-after"] == "7"
    expected_message = "something went wrong"
    if kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED:
        expected_message = "prompt is too long: something went wrong"
    assert caught.value.api_message == expected_message
    assert len(server.requests) == 1  # max_retries=0: no retry despite retry-after


def test_sdk_error_on_a_stream_request_is_a_plain_json_body() -> None:
    error = ir.IRError.of(
        ir.ErrorKind.THROTTLED, "Number of request tokens has exceeded your rate limit", retry_after=30
    )
    server = Server(lambda _: CODEC.encode_error(error))
    with pytest.raises(anthropic.RateLimitError) as caught, client_for(server).messages.stream(**_create_kwargs()):
        pass
    assert caught.value.type == "rate_limit_error"
    assert CODEC.decode_error(429, dict(caught.value.response.headers), caught.value.response.content) == (
        error.model_copy(update={"status": 429, "code": "rate_limit_error"})
    )


def test_sdk_tool_result_turn_decodes_with_names_recovered() -> None:
    server = Server(lambda _: CODEC.encode_response(RESPONSE.model_copy(update={"content": [ir.TextPart(text="ok")]})))
    client_for(server).messages.create(
        model="claude-haiku-4-5",
        max_tokens=512,
        messages=[
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "is_error": True,
                        "content": [
                            {"type": "text", "text": "timeout"},
                            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
                        ],
                    },
                    {"type": "text", "text": "Try again?"},
                ],
            },
        ],
    )
    (request,) = server.requests
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "user"]
    assert request.messages[2].content == [
        ir.ToolResultPart(
            tool_call_id="toolu_1",
            name="get_weather",
            is_error=True,
            content=[ir.TextPart(text="timeout"), ir.ImagePart(source=ir.UrlImage(url="https://example.com/a.png"))],
        )
    ]
    assert request.messages[3].content == [ir.TextPart(text="Try again?")]
    assert request.provider_fields == {"anthropic": SDK_VERSION}


def test_sdk_count_tokens_decodes_without_max_tokens() -> None:
    server = Server(lambda _: encode_count_tokens_response(321))
    result = client_for(server).messages.count_tokens(
        model="claude-haiku-4-5", messages=[{"role": "user", "content": "Hi"}], system="Be brief."
    )
    assert result.input_tokens == 321
    (request,) = server.requests
    assert server.wire[0].path == "/v1/messages/count_tokens"
    assert (request.max_tokens, request.system, request.stream) == (None, "Be brief.", False)


def test_sdk_beta_messages_keep_the_beta_header() -> None:
    server = Server(lambda _: CODEC.encode_response(RESPONSE))
    message = client_for(server).beta.messages.create(
        model="claude-haiku-4-5",
        max_tokens=256,
        messages=[{"role": "user", "content": "Hi"}],
        betas=["context-management-2025-06-27"],
    )
    text = message.content[1]
    assert text.type == "text" and text.text == "Checking both cities."
    (request,) = server.requests
    assert request.provider_fields == {"anthropic": {"anthropic-beta": "context-management-2025-06-27", **SDK_VERSION}}
    assert CODEC.encode_request(request).headers["anthropic-beta"] == "context-management-2025-06-27"
