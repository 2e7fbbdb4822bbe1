"""Translate mode across every pair of registered frontend and upstream protocols: the client's own codec
reads back the text, tool calls, thinking, usage, stop reason and errors the upstream's codec produced."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import Codec, decode_events, registry
from harness.stream import accumulate
from tests.proxy.client import declares, proxy
from tests.proxy.upstreams import ScriptedUpstream, config, text_reply, thinking_reply, tool_reply

pytestmark = pytest.mark.anyio

PROTOCOLS = ("openai", "anthropic", "gemini", "ollama", "responses")
PAIRS = [(f, u) for f in PROTOCOLS for u in PROTOCOLS]
FRONT_MODEL = "front-model"
UP_MODEL = "up-model"

WEATHER = ir.Tool(
    name="get_weather",
    description="Weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ir.Tool(name="get_time", parameters={"type": "object", "properties": {"tz": {"type": "string"}}})


def codecs(frontend: str, upstream: str) -> tuple[Codec, Codec]:
    for name in (frontend, upstream):
        if name not in registry.names():
            pytest.skip(f"codec {name!r} not registered yet")
    return registry.get(frontend), registry.get(upstream)


def user_request(*, stream: bool, tools: bool = False) -> ir.Request:
    return ir.Request(
        model=FRONT_MODEL,
        system="Be brief.",
        messages=[ir.Message(role="user", content=[ir.TextPart(text="What is the weather in Paris?")])],
        tools=[WEATHER, TIME] if tools else [],
        max_tokens=256,
        stream=stream,
    )


async def ask(
    frontend: Codec, upstream: ScriptedUpstream, request: ir.Request
) -> tuple[ir.Response | ir.IRError, object]:
    """Send an IR request as the frontend's wire; read the answer back with the frontend codec."""
    wire = frontend.encode_request(request)
    async with proxy(config((FRONT_MODEL, "translate", upstream.protocol, UP_MODEL)), upstream.transport()) as p:
        response = await p.client.post(wire.path, params=wire.query, headers=wire.headers, content=wire.body)
    if response.status_code >= 400:
        return frontend.decode_error(response.status_code, dict(response.headers), response.content), p.exchange
    if request.stream:
        result = accumulate(decode_events(frontend, [response.content]))
        assert result.error is None, result.error
        return result.response, p.exchange
    return frontend.decode_response(response.content), p.exchange


def texts(response: ir.Response) -> str:
    return "".join(p.text for p in response.content if isinstance(p, ir.TextPart))


def calls(response: ir.Response) -> list[tuple[str, object]]:
    return [(p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("frontend", "upstream"), PAIRS)
async def test_text_usage_and_stop_reason(frontend: str, upstream: str, stream: bool) -> None:
    front, _ = codecs(frontend, upstream)
    up = ScriptedUpstream(upstream, text_reply("Sunny, 21 °C in Paris.", input=12, output=8))
    response, ex = await ask(front, up, user_request(stream=stream))
    assert isinstance(response, ir.Response)
    assert texts(response) == "Sunny, 21 °C in Paris."
    assert response.stop_reason is not None and response.stop_reason.kind == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 8)
    # What was really sent upstream: the upstream model, the same conversation.
    assert ex.upstream_request is not None and ex.upstream_request.model == UP_MODEL
    assert ex.upstream_request.system == "Be brief."
    assert ex.upstream_request.messages[-1].content == [ir.TextPart(text="What is the weather in Paris?")]
    assert ex.violations == () and ex.error is None and ex.problems == ()


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("frontend", "upstream"), PAIRS)
async def test_parallel_tool_calls(frontend: str, upstream: str, stream: bool) -> None:
    front, _ = codecs(frontend, upstream)
    reply = tool_reply(("call_1", "get_weather", {"city": "Paris"}), ("call_2", "get_time", {"tz": "Europe/Paris"}))
    response, ex = await ask(front, ScriptedUpstream(upstream, reply), user_request(stream=stream, tools=True))
    assert isinstance(response, ir.Response)
    assert calls(response) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
    assert response.stop_reason is not None and response.stop_reason.kind == "tool_use"
    assert ex.upstream_request is not None
    assert [t.name for t in ex.upstream_request.tools] == ["get_weather", "get_time"]
    assert ex.upstream_request.tools[0].parameters["required"] == ["city"]


@pytest.mark.parametrize(("frontend", "upstream"), PAIRS)
async def test_text_then_tool_call_stream(frontend: str, upstream: str) -> None:
    front, _ = codecs(frontend, upstream)
    reply = tool_reply(("call_9", "get_weather", {"city": "Zürich"}), text="Let me look.")
    response, _ = await ask(front, ScriptedUpstream(upstream, reply), user_request(stream=True, tools=True))
    assert isinstance(response, ir.Response)
    assert texts(response) == "Let me look."
    assert calls(response) == [("get_weather", {"city": "Zürich"})]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("frontend", "upstream"), PAIRS)
async def test_thinking(frontend: str, upstream: str, stream: bool) -> None:
    front, up_codec = codecs(frontend, upstream)
    reply = thinking_reply("The user wants weather. ", "It is sunny.")
    response, _ = await ask(front, ScriptedUpstream(upstream, reply), user_request(stream=stream))
    assert isinstance(response, ir.Response)
    assert texts(response) == "It is sunny."
    thoughts = "".join(p.text for p in response.content if isinstance(p, ir.ThinkingPart))
    if "ThinkingPart" in front.losses or "ThinkingPart" in up_codec.losses:  # the whole part is dropped
        pytest.skip(f"thinking is a declared loss of {frontend} or {upstream}")
    assert thoughts == "The user wants weather. "


ERROR_KINDS = [
    ir.ErrorKind.THROTTLED,
    ir.ErrorKind.OVERLOADED,
    ir.ErrorKind.AUTH,
    ir.ErrorKind.PERMISSION,
    ir.ErrorKind.NOT_FOUND,
    ir.ErrorKind.INVALID_REQUEST,
    ir.ErrorKind.SERVER,
]


@pytest.mark.parametrize("kind", ERROR_KINDS, ids=str)
@pytest.mark.parametrize(("frontend", "upstream"), PAIRS)
async def test_upstream_http_error_becomes_the_frontends_native_error(
    frontend: str, upstream: str, kind: ir.ErrorKind
) -> None:
    front, up_codec = codecs(frontend, upstream)
    error = ir.IRError.of(kind, f"upstream says {kind}", retry_after=3 if kind.retryable else None)
    up = ScriptedUpstream(upstream, error)
    result, ex = await ask(front, up, user_request(stream=True))
    # Expected: the kind as the upstream's codec reads its own error, then as the frontend's codec reads its own.
    wire = up_codec.encode_error(error)
    seen = up_codec.decode_error(wire.status, wire.headers, wire.body)
    native = front.encode_error(seen)
    assert isinstance(result, ir.IRError)
    assert result.kind == front.decode_error(native.status, native.headers, native.body).kind
    assert ex.frontend_status == native.status
    assert ex.error is not None and ex.error.kind == seen.kind
    if not declares(front, "IRError.kind") and not declares(up_codec, "IRError.kind"):
        assert result.kind == kind


async def test_gemini_stream_without_alt_sse_is_answered_as_a_json_array() -> None:
    # Quirk from real traffic (gemini/json-array-stream-thought-function-call.yaml): streamGenerateContent
    # without alt=sse streams one pretty JSON array, served as application/json.
    front, _ = codecs("gemini", "anthropic")
    wire = front.encode_request(user_request(stream=True))
    query = {k: v for k, v in wire.query.items() if k != "alt"}
    up = ScriptedUpstream("anthropic", text_reply("Array answer."))
    async with proxy(config((FRONT_MODEL, "translate", "anthropic", UP_MODEL)), up.transport()) as p:
        response = await p.client.post(wire.path, params=query, headers=wire.headers, content=wire.body)
    assert response.headers["content-type"] == "application/json"
    assert response.content.startswith(b"[") and response.content.rstrip().endswith(b"]")
    result = accumulate(decode_events(front, [response.content]))
    assert result.error is None and texts(result.response) == "Array answer."


async def test_request_the_upstream_protocol_cannot_express_is_a_native_400() -> None:
    # A tool result with no earlier call to name its tool: Gemini's functionResponse needs the name.
    front, _ = codecs("openai", "gemini")
    body = {
        "model": FRONT_MODEL,
        "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_x", "content": "42"}],
    }
    up = ScriptedUpstream("gemini", text_reply("unused"))
    async with proxy(config((FRONT_MODEL, "translate", "gemini", UP_MODEL)), up.transport()) as p:
        response = await p.client.post("/v1/chat/completions", json=body)
    assert response.status_code == 400
    assert "cannot translate the request to gemini" in response.json()["error"]["message"]
    assert up.requests == []  # nothing was sent upstream
    assert front.decode_error(400, dict(response.headers), response.content).kind == ir.ErrorKind.INVALID_REQUEST


STATEFUL = {
    "previous_response_id": {"previous_response_id": "resp_earlier"},
    "conversation": {"conversation": "conv_123"},
    "prompt": {"prompt": {"id": "pmpt_123"}},
    "item_reference": {"input": [{"type": "item_reference", "id": "msg_earlier"}, {"role": "user", "content": "hi"}]},
}


@pytest.mark.parametrize("upstream", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("feature", sorted(STATEFUL))
async def test_a_responses_request_that_names_server_state_is_a_400_to_another_protocol(
    feature: str, upstream: str
) -> None:
    # Sent on without the stored history, the upstream would answer a conversation the client never had.
    front, _ = codecs("responses", upstream)
    body = {"model": FRONT_MODEL, "input": "and then?", "store": True, **STATEFUL[feature]}
    up = ScriptedUpstream(upstream, text_reply("unused"))
    async with proxy(config((FRONT_MODEL, "translate", upstream, UP_MODEL)), up.transport()) as p:
        response = await p.client.post("/v1/responses", json=body)
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert message == (
        f"cannot translate the request to {upstream}: it relies on state a responses server keeps ({feature}), "
        f"which a {registry.get(upstream).family} upstream never sees"
    )
    assert up.requests == []
    assert front.decode_error(400, dict(response.headers), response.content).kind == ir.ErrorKind.INVALID_REQUEST
    assert p.exchange.error is not None and p.exchange.error.kind == ir.ErrorKind.INVALID_REQUEST


async def test_a_responses_request_that_names_server_state_goes_to_a_responses_upstream() -> None:
    body = {"model": FRONT_MODEL, "input": "and then?", "previous_response_id": "resp_earlier", "store": True}
    up = ScriptedUpstream("responses", text_reply("Then it rained."))
    async with proxy(config((FRONT_MODEL, "translate", "responses", UP_MODEL)), up.transport()) as p:
        response = await p.client.post("/v1/responses", json=body)
    assert response.status_code == 200
    assert response.json()["output"][0]["content"][0]["text"] == "Then it rained."
    (sent,) = up.requests
    body = json.loads(sent.content)
    assert body["previous_response_id"] == "resp_earlier" and body["model"] == UP_MODEL


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("frontend", ["anthropic", "gemini", "ollama", "responses"])
async def test_upstream_answer_without_stop_reason_tells_the_client_the_one_it_means(
    frontend: str, stream: bool
) -> None:
    # OpenRouter (Novita) streams a tool call and [DONE] without any finish_reason (corpus: openai_compat/
    # openrouter-kimi-stream-tool-args-single-chunk.yaml). An agent runs its tools only on `tool_use`: a client of
    # another protocol must be told the stop reason the answer means, never a null one its provider never sends.
    front, _ = codecs(frontend, "openai")
    call = ir.ToolCallPart(
        id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'
    )
    for content, meant in (([call], "tool_use"), ([ir.TextPart(text="Sunny.")], "end_turn")):
        up = ScriptedUpstream("openai", ir.Response(content=content, stop_reason=None))
        response, ex = await ask(front, up, user_request(stream=stream, tools=True))
        assert isinstance(response, ir.Response)
        assert response.stop_reason is not None and response.stop_reason.kind == meant
        upstream_stop = (
            next(e for e in ex.upstream_events if isinstance(e, ir.Done)).stop_reason
            if stream
            else ex.upstream_response.stop_reason
        )
        assert upstream_stop is None  # the trace keeps what the upstream said
