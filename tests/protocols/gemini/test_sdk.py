"""The official google-genai SDK accepts what the Gemini encoders produce, and its requests decode to the IR.

The SDK talks to an in-process handler (httpx2.MockTransport): the handler decodes the SDK's request with
`decode_request` and answers with `encode_response` / the stream encoder / `encode_error` of a chosen IR value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from harness import ir
from harness.protocols import encode_events
from harness.wire.http import HttpRequest, HttpResponse
from tests.protocols.gemini.support import CODEC, check_request
from tests.strategies import events_for

SIGNATURE = "c2lnbmF0dXJlLWJ5dGVz"  # base64 of b"signature-bytes"

ANSWER = ir.Response(
    id="resp-1",
    model="gemini-2.5-flash",
    content=[
        ir.ThinkingPart(text="Let me look that up.", signature=SIGNATURE),
        ir.TextPart(text="Checking the weather in Paris, "),
        ir.ToolCallPart(
            id="call_1",
            name="get_weather",
            arguments={"city": "Paris", "days": 2},
            arguments_raw='{"city":"Paris","days":2}',
        ),
    ],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=21, output_tokens=40, cache_read_tokens=5, reasoning_tokens=12),
)


@dataclass
class Backend:
    """What the mock server answers, and the IR of every request it received."""

    response: ir.Response = ANSWER
    events: list[ir.StreamEvent] | None = None
    error: ir.IRError | None = None
    seen: list[ir.Request] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.content)
        check_request(wire)
        assert wire.headers["x-goog-api-key"] == "test-key"
        decoded = CODEC.decode_request(wire)
        self.seen.append(decoded)
        if self.error is not None:
            return _httpx(CODEC.encode_error(self.error))
        if decoded.stream:
            events = self.events if self.events is not None else events_for(self.response)
            body = encode_events(CODEC, events, decoded)
            return httpx2.Response(200, headers={"content-type": CODEC.stream_media_type}, content=body)
        return _httpx(CODEC.encode_response(self.response, request=decoded))


def _httpx(response: HttpResponse) -> httpx2.Response:
    return httpx2.Response(response.status, headers=response.headers, content=response.body)


def client(backend: Backend) -> genai.Client:
    """A google-genai client whose HTTP goes to `backend`."""
    http = httpx2.Client(transport=httpx2.MockTransport(backend))
    return genai.Client(
        api_key="test-key", http_options=types.HttpOptions(base_url="http://gemini.test", httpx_client=http)
    )


CONFIG = types.GenerateContentConfig(
    system_instruction="Be brief.",
    temperature=0.3,
    max_output_tokens=256,
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="get_weather",
                    description="Weather by city.",
                    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
                )
            ]
        )
    ],
    thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024),
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def test_sdk_parses_our_response() -> None:
    backend = Backend()
    result = client(backend).models.generate_content(model="gemini-2.5-flash", contents="Weather?", config=CONFIG)
    assert result.response_id == "resp-1"
    assert result.model_version == "gemini-2.5-flash"
    parts = result.candidates[0].content.parts  # type: ignore[index, union-attr]
    assert parts is not None
    assert [(p.thought, p.text) for p in parts[:2]] == [
        (True, "Let me look that up."),
        (None, "Checking the weather in Paris, "),
    ]
    assert parts[1].thought_signature == b"signature-bytes"  # on the first part after the thoughts, as Google does
    (call,) = result.function_calls  # type: ignore[misc]
    assert (call.name, call.args, call.id) == ("get_weather", {"city": "Paris", "days": 2}, "call_1")
    assert result.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    usage = result.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count, usage.thoughts_token_count) == (21, 28, 12)
    assert usage.cached_content_token_count == 5
    assert usage.total_token_count == 61


def test_sdk_streams_our_sse() -> None:
    backend = Backend()
    chunks = list(
        client(backend).models.generate_content_stream(model="gemini-2.5-flash", contents="Weather?", config=CONFIG)
    )
    parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]  # type: ignore[index, union-attr]
    assert "".join(p.text or "" for p in parts if p.thought) == "Let me look that up."
    assert "".join(p.text or "" for p in parts if not p.thought) == "Checking the weather in Paris, "
    calls = [p.function_call for p in parts if p.function_call]
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris", "days": 2})]
    assert [p.thought_signature for p in parts if p.thought_signature] == [b"signature-bytes"]
    last = chunks[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert last.usage_metadata is not None
    assert last.usage_metadata.thoughts_token_count == 12
    assert backend.seen[0].stream is True


def test_sdk_request_decodes_to_ir() -> None:
    backend = Backend()
    history = [
        types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                    thought_signature=b"\x01\x02\xfb\xff",
                )
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(function_response=types.FunctionResponse(name="get_weather", response={"output": "Sun"}))
            ],
        ),
    ]
    config = CONFIG.model_copy(
        update={
            "response_mime_type": "application/json",
            "response_json_schema": {"type": "object"},
            "tool_config": types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(mode="ANY", allowed_function_names=["get_weather"])
            ),
            "stop_sequences": ["END"],
        }
    )
    client(backend).models.generate_content(model="gemini-2.5-flash", contents=history, config=config)
    (request,) = backend.seen
    assert request.model == "gemini-2.5-flash"
    assert request.system == "Be brief."
    assert (request.temperature, request.max_tokens, request.stop) == (0.3, 256, ["END"])
    assert request.thinking == ir.ThinkingConfig(enabled=True, budget_tokens=1024)
    assert request.tool_choice == ir.ToolChoiceTool(name="get_weather")
    assert request.response_format == ir.ResponseFormatJsonSchema(schema_={"type": "object"})
    assert [t.name for t in request.tools] == ["get_weather"]
    assert request.tools[0].parameters == {"type": "object", "properties": {"city": {"type": "string"}}}
    user, model, tool = request.messages
    assert user == ir.Message(role="user", content=[ir.TextPart(text="Weather in Paris?")])
    thinking, call = model.content
    # The SDK re-encodes thought_signature bytes as base64url ("-_"), the server sends standard base64.
    assert thinking == ir.ThinkingPart(text="", signature="AQL7_w==")
    assert isinstance(call, ir.ToolCallPart)
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    (result,) = tool.content
    assert result == ir.ToolResultPart(
        tool_call_id=call.id, name="get_weather", content=[ir.TextPart(text="Sun")], is_error=False
    )
    # The SDK's own version default, kept so a pass-through goes to the same path.
    assert request.provider_fields == {"gemini": {"api_version": "v1"}}


@pytest.mark.parametrize(
    ("kind", "status", "exc", "status_text"),
    [
        (ir.ErrorKind.THROTTLED, 429, errors.ClientError, "RESOURCE_EXHAUSTED"),
        (ir.ErrorKind.AUTH, 401, errors.ClientError, "UNAUTHENTICATED"),
        (ir.ErrorKind.INVALID_REQUEST, 400, errors.ClientError, "INVALID_ARGUMENT"),
        (ir.ErrorKind.SERVER, 500, errors.ServerError, "INTERNAL"),
        (ir.ErrorKind.OVERLOADED, 503, errors.ServerError, "UNAVAILABLE"),
    ],
)
def test_sdk_raises_its_errors(kind: ir.ErrorKind, status: int, exc: type[errors.APIError], status_text: str) -> None:
    error = ir.IRError.of(kind, f"{kind} happened", retry_after=7.0 if kind is ir.ErrorKind.THROTTLED else None)
    backend = Backend(error=error)
    with pytest.raises(exc) as info:
        client(backend).models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert (info.value.code, info.value.status, info.value.message) == (status, status_text, f"{kind} happened")
    if kind is ir.ErrorKind.THROTTLED:
        assert info.value.response.headers["retry-after"] == "7"
        assert info.value.details["error"]["details"][0]["retryDelay"] == "7s"


def _stream(backend: Backend) -> Iterator[types.GenerateContentResponse]:
    return client(backend).models.generate_content_stream(model="gemini-2.5-flash", contents="hi")


def test_sdk_raises_on_our_midstream_error() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="r", model="gemini-2.5-flash"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Partial"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "The model is overloaded.")),
    ]
    seen: list[str] = []
    with pytest.raises(errors.ServerError) as info:
        for chunk in _stream(Backend(events=events)):
            seen.append(chunk.text or "")
    assert seen == ["Partial"]
    assert (info.value.code, info.value.status) == (503, "UNAVAILABLE")
