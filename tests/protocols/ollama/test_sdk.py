"""The official `ollama` Python client accepts what our encoders write, and its requests decode as expected.

The client uses `httpx` (not httpx2); `ollama.Client(host=..., transport=httpx.MockTransport(handler))` hands
the transport to its `httpx.Client`, so every request lands in a handler built on our codec.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import httpx
import ollama
import pytest

from harness import ir
from harness.protocols import encode_events
from harness.protocols.ollama import encode_tags
from harness.wire.http import HttpRequest, HttpResponse
from tests import strategies
from tests.protocols.ollama import support
from tests.protocols.ollama.support import CODEC

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16

REPLY = ir.Response(
    model="qwen3:8b",
    content=[
        ir.ThinkingPart(text="The user wants weather; call the tool."),
        ir.TextPart(text="Let me check."),
        ir.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'),
    ],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=31, output_tokens=17),
)


class Backend:
    """A mock Ollama server: decodes each request with our codec, answers with a chosen encoder output."""

    def __init__(self, answer: Callable[[ir.Request | None], HttpResponse]) -> None:
        self.answer = answer
        self.requests: list[ir.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        decoded = None
        if wire.path == "/api/chat":
            support.check_request(wire)
            decoded = CODEC.decode_request(wire)
            self.requests.append(decoded)
        reply = self.answer(decoded)
        return httpx.Response(reply.status, headers=reply.headers, content=reply.body)

    def client(self) -> ollama.Client:
        """An official client whose transport is this backend."""
        return ollama.Client(host="http://ollama.test:11434", transport=httpx.MockTransport(self))


def _stream(events: list[ir.StreamEvent]) -> Callable[[ir.Request | None], HttpResponse]:
    def answer(request: ir.Request | None) -> HttpResponse:
        body = encode_events(CODEC, events, request)
        support.check_stream(body)
        return HttpResponse(200, {"content-type": CODEC.stream_media_type}, body)

    return answer


def test_sdk_request_decodes_to_the_expected_ir() -> None:
    backend = Backend(lambda req: CODEC.encode_response(REPLY, request=req))
    backend.client().chat(
        model="qwen3:8b",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?", "images": [PNG]},
        ],
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                },
            }
        ],
        think=True,
        format="json",
        options={"temperature": 0.25, "num_predict": 64, "stop": ["END"], "seed": 7},
        keep_alive="5m",
    )
    (request,) = backend.requests
    assert request.model == "qwen3:8b"
    assert request.system == "Be brief."
    assert request.stream is False
    assert request.messages == [
        ir.Message(
            role="user",
            content=[
                ir.TextPart(text="Weather in Paris?"),
                ir.ImagePart(source=ir.Base64Image(media_type="image/png", data=base64.b64encode(PNG).decode())),
            ],
        )
    ]
    assert [t.name for t in request.tools] == ["get_weather"]
    assert request.tools[0].parameters["required"] == ["city"]
    assert request.thinking == ir.ThinkingConfig(enabled=True)
    assert request.response_format == ir.ResponseFormatJsonObject()
    assert (request.temperature, request.max_tokens, request.stop) == (0.25, 64, ["END"])
    assert request.provider_fields == {"ollama": {"options": {"seed": 7}, "keep_alive": "5m"}}


def test_sdk_parses_our_nonstream_reply() -> None:
    backend = Backend(lambda req: CODEC.encode_response(REPLY, request=req))
    reply = backend.client().chat(model="qwen3:8b", messages=[{"role": "user", "content": "Weather in Paris?"}])
    assert reply.model == "qwen3:8b"
    assert reply.done is True
    assert reply.done_reason == "stop"
    assert reply.message.role == "assistant"
    assert reply.message.content == "Let me check."
    assert reply.message.thinking == "The user wants weather; call the tool."
    assert reply.message.tool_calls is not None
    assert [(c.function.name, dict(c.function.arguments)) for c in reply.message.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert (reply.prompt_eval_count, reply.eval_count) == (31, 17)


def test_sdk_parses_our_stream() -> None:
    backend = Backend(_stream(strategies.events_for(REPLY, chunk=4)))
    chunks = list(backend.client().chat(model="qwen3:8b", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert backend.requests[0].stream is True
    assert "".join(c.message.content or "" for c in chunks) == "Let me check."
    assert "".join(c.message.thinking or "" for c in chunks) == "The user wants weather; call the tool."
    calls = [call for c in chunks for call in c.message.tool_calls or []]
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert [c.done for c in chunks].count(True) == 1
    final = chunks[-1]
    assert (final.done, final.done_reason, final.prompt_eval_count, final.eval_count) == (True, "stop", 31, 17)
    assert final.model == "qwen3:8b"


def test_sdk_raises_on_our_midstream_error_line() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(model="m"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="par"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER, "model runner has unexpectedly stopped")),
    ]
    backend = Backend(_stream(events))
    seen: list[str] = []
    with pytest.raises(ollama.ResponseError) as info:
        for chunk in backend.client().chat(model="m", messages=[{"role": "user", "content": "hi"}], stream=True):
            seen.append(chunk.message.content or "")
    assert seen == ["par"]
    assert info.value.error == "model runner has unexpectedly stopped"


@pytest.mark.parametrize(
    ("kind", "status", "retry_after"),
    [
        (ir.ErrorKind.THROTTLED, 429, 12.0),
        (ir.ErrorKind.AUTH, 401, None),
        (ir.ErrorKind.INVALID_REQUEST, 400, None),
        (ir.ErrorKind.SERVER, 500, None),
    ],
)
def test_sdk_raises_response_error_for_our_error_bodies(
    kind: ir.ErrorKind, status: int, retry_after: float | None
) -> None:
    error = ir.IRError.of(kind, f"{kind.value} happened", retry_after=retry_after)
    wire = CODEC.encode_error(error)
    support.check_error(wire)
    assert wire.status == status
    assert wire.headers.get("retry-after") == (None if retry_after is None else "12")
    backend = Backend(lambda req: wire)
    for stream in (False, True):
        with pytest.raises(ollama.ResponseError) as info:
            result: Any = backend.client().chat(model="m", messages=[{"role": "user", "content": "hi"}], stream=stream)
            list(result) if stream else None
        # The client reads Ollama's flat {"error": ...} body into `.error`.
        assert info.value.status_code == status
        assert info.value.error == f"{kind.value} happened"


def test_sdk_tool_result_without_ids_is_matched_by_tool_name() -> None:
    """The official client drops tool-call ids (its models have no such field): results pair up by name."""
    backend = Backend(lambda req: CODEC.encode_response(REPLY, request=req))
    backend.client().chat(
        model="qwen3:8b",
        messages=[
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                    {"function": {"name": "get_time", "arguments": {}}},
                ],
            },
            {"role": "tool", "content": "12:00", "tool_name": "get_time"},
            {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
        ],
    )
    (request,) = backend.requests
    calls = request.messages[1].content
    assert [(c.name, c.arguments) for c in calls if isinstance(c, ir.ToolCallPart)] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]
    results = [m.content[0] for m in request.messages[2:]]
    assert all(isinstance(r, ir.ToolResultPart) for r in results)
    ids = {c.name: c.id for c in calls if isinstance(c, ir.ToolCallPart)}
    assert [(r.name, r.tool_call_id, r.content) for r in results if isinstance(r, ir.ToolResultPart)] == [
        ("get_time", ids["get_time"], [ir.TextPart(text="12:00")]),
        ("get_weather", ids["get_weather"], [ir.TextPart(text="sunny")]),
    ]


def test_sdk_lists_models_from_our_tags_reply() -> None:
    wire = encode_tags(["llama3.2:latest", "qwen3:8b"])
    from harness.protocols.ollama import schemas

    schemas.validate("tags", __import__("json").loads(wire.body))
    backend = Backend(lambda req: wire)
    listing = backend.client().list()
    assert [m.model for m in listing.models] == ["llama3.2:latest", "qwen3:8b"]
