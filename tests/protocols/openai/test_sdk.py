"""The official `openai` SDK accepts what the codec encodes, and the codec decodes what the SDK sends.

The SDK talks to an in-process `httpx2.MockTransport` whose handler decodes the SDK's request with
`decode_request` and answers with `encode_response` / `encode_events` / `encode_error` of a chosen IR value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx2
import openai
import pytest

from harness import ir
from harness.protocols import encode_events
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.openai import support

CODEC = support.OPENAI
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": WEATHER}}]


@dataclass
class Backend:
    """A scripted answer for the SDK, and the IR of every request it sent."""

    response: ir.Response | None = None
    error: ir.IRError | None = None
    stream_events: list[ir.StreamEvent] | None = None
    seen: list[ir.Request] = field(default_factory=list)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Decode the SDK's request; answer with the scripted value in OpenAI's wire form."""
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        assert wire.path == "/v1/chat/completions"
        decoded = CODEC.decode_request(wire)
        self.seen.append(decoded)
        if self.error is not None:
            out = CODEC.encode_error(self.error)
            return httpx2.Response(out.status, headers=out.headers, content=out.body)
        if self.stream_events is not None:
            assert CODEC.is_stream_request(wire)
            body = encode_events(CODEC, self.stream_events, decoded)
            support.check_stream(body)
            return httpx2.Response(200, headers={"content-type": CODEC.stream_media_type}, content=body)
        assert self.response is not None
        out = CODEC.encode_response(self.response, request=decoded)
        support.check_response(out)
        return httpx2.Response(out.status, headers=out.headers, content=out.body)


@pytest.fixture
def backend() -> Backend:
    return Backend()


@pytest.fixture
def client(backend: Backend) -> Iterator[openai.OpenAI]:
    http = httpx2.Client(transport=httpx2.MockTransport(backend.handle))
    with openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=http, max_retries=0) as sdk:
        yield sdk


USAGE = ir.Usage(input_tokens=120, output_tokens=40, cache_read_tokens=100, reasoning_tokens=12)
CALL = ir.ToolCallPart(
    id="call_abc123", name="get_weather", arguments={"city": "Oslo"}, arguments_raw='{"city":"Oslo"}'
)
REPLY = ir.Response(
    id="chatcmpl-sdk1",
    model="gpt-4o-2024-08-06",
    content=[ir.ThinkingPart(text="Need the weather."), ir.TextPart(text="Let me check."), CALL],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=USAGE,
)


def test_sdk_nonstream_request_decodes_and_response_parses(client: openai.OpenAI, backend: Backend) -> None:
    backend.response = REPLY
    completion = client.chat.completions.create(
        model="gpt-4o",
        messages=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
        ],
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_completion_tokens=256,
        temperature=0.5,
        stop=["END"],
        seed=7,
        response_format={"type": "json_object"},
    )
    (request,) = backend.seen
    assert request.system == "Be brief."
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="Weather in Oslo?")])]
    assert request.tools == [ir.Tool(name="get_weather", description="Weather.", parameters=WEATHER)]
    assert request.tool_choice == ir.ToolChoiceTool(name="get_weather")
    assert (request.max_tokens, request.temperature, request.stop, request.stream) == (256, 0.5, ["END"], False)
    assert request.response_format == ir.ResponseFormatJsonObject()
    assert request.provider_fields["openai"]["seed"] == 7
    assert request.provider_fields["openai"]["_shape"]["system_roles"] == ["developer"]

    choice = completion.choices[0]
    assert completion.id == "chatcmpl-sdk1" and completion.model == "gpt-4o-2024-08-06"
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    assert getattr(choice.message, "reasoning_content", None) == "Need the weather."
    (call,) = choice.message.tool_calls or []
    assert call.type == "function"
    assert (call.id, call.function.name, call.function.arguments) == ("call_abc123", "get_weather", '{"city":"Oslo"}')
    usage = completion.usage
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (120, 40, 160)
    assert usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 100
    assert usage.completion_tokens_details is not None and usage.completion_tokens_details.reasoning_tokens == 12


def test_sdk_stream_parses_text_thinking_tool_call_and_usage(client: openai.OpenAI, backend: Backend) -> None:
    backend.stream_events = strategies.events_for(REPLY, chunk=4)
    stream = client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    (request,) = backend.seen
    assert request.stream is True and request.provider_fields == {}  # include_usage is the encoder default
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    thinking = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices)
    fragments = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert (text, thinking) == ("Let me check.", "Need the weather.")
    assert fragments[0].id == "call_abc123" and fragments[0].function is not None
    assert fragments[0].function.name == "get_weather"
    assert "".join(f.function.arguments or "" for f in fragments if f.function) == '{"city":"Oslo"}'
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (120, 40)


def test_sdk_stream_helper_accumulates_our_stream(client: openai.OpenAI, backend: Backend) -> None:
    backend.stream_events = strategies.events_for(REPLY, chunk=2)
    with client.chat.completions.stream(
        model="gpt-4o",
        messages=[{"role": "user", "content": "Weather?"}],
        tools=TOOLS,
    ) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Let me check."
    assert message.tool_calls is not None
    assert [(t.id, t.function.name, t.function.arguments) for t in message.tool_calls] == [
        ("call_abc123", "get_weather", '{"city":"Oslo"}')
    ]
    assert final.choices[0].finish_reason == "tool_calls"
    # The helper did not ask `stream_options.include_usage`, so, as from OpenAI, no usage chunk came.
    assert final.usage is None
    assert backend.seen[0].provider_fields == {"openai": {"_shape": {"stream_options": None}}}


def test_sdk_tool_turn_request_decodes_with_recovered_names(client: openai.OpenAI, backend: Backend) -> None:
    backend.response = ir.Response(
        id="chatcmpl-2",
        model="gpt-4o",
        content=[ir.TextPart(text="Sunny.")],
        stop_reason=ir.StopReason(kind="end_turn"),
    )
    completion = client.chat.completions.create(
        model="gpt-4o",
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_abc123", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_abc123", "content": "sunny"},
        ],
    )
    assert completion.choices[0].message.content == "Sunny."
    assert completion.choices[0].finish_reason == "stop"
    request = backend.seen[0]
    assert request.messages[1].content == [
        ir.ToolCallPart(id="call_abc123", name="get_weather", arguments={}, arguments_raw="{}")
    ]
    assert request.messages[2].content == [
        ir.ToolResultPart(tool_call_id="call_abc123", name="get_weather", content=[ir.TextPart(text="sunny")])
    ]


@pytest.mark.parametrize(
    ("kind", "exception", "status"),
    [
        (ir.ErrorKind.THROTTLED, openai.RateLimitError, 429),
        (ir.ErrorKind.AUTH, openai.AuthenticationError, 401),
        (ir.ErrorKind.INVALID_REQUEST, openai.BadRequestError, 400),
        (ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, openai.BadRequestError, 400),
        (ir.ErrorKind.NOT_FOUND, openai.NotFoundError, 404),
        (ir.ErrorKind.PERMISSION, openai.PermissionDeniedError, 403),
        (ir.ErrorKind.SERVER, openai.InternalServerError, 500),
        (ir.ErrorKind.OVERLOADED, openai.InternalServerError, 503),
    ],
)
def test_sdk_raises_its_own_exception_for_our_error_bodies(
    client: openai.OpenAI, backend: Backend, kind: ir.ErrorKind, exception: type[openai.APIStatusError], status: int
) -> None:
    backend.error = ir.IRError.of(kind, "scripted failure", retry_after=7.0)
    with pytest.raises(exception) as caught:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == status
    assert caught.value.message.endswith("scripted failure")
    body = caught.value.body
    assert isinstance(body, dict) and body["message"] == "scripted failure"
    assert caught.value.response.headers["retry-after"] == "7"
    back = CODEC.decode_error(status, dict(caught.value.response.headers), caught.value.response.content)
    assert back.kind == kind and back.retry_after == 7.0


def test_sdk_raises_api_error_on_mid_stream_error(client: openai.OpenAI, backend: Backend) -> None:
    backend.stream_events = [
        ir.MessageStart(id="chatcmpl-3", model="gpt-4o"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="partial"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "upstream overloaded")),
    ]
    stream = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True)
    seen: list[str] = []
    with pytest.raises(openai.APIError, match="upstream overloaded") as caught:
        for chunk in stream:
            seen += [chunk.choices[0].delta.content or ""] if chunk.choices else []
    assert "".join(seen) == "partial"
    assert caught.value.code == "overloaded"
