"""The official SDKs (openai, anthropic, google-genai) through the proxy, in both modes, in-process (httpx2's
ASGITransport) and over a real loopback socket (uvicorn), against upstream wire made by the codecs' encoders:
text, parallel tools, thinking, usage and every error class, streamed and not."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from harness import ir
from harness.protocols import registry
from harness.proxy import Exchange, ServerThread, create_app
from tests.proxy.sdks import DRIVERS, TLS, Seen, error_class, error_status
from tests.proxy.universe import ERROR_KINDS, MODES, SDKS, Universe, model_name, upstream_of

pytestmark = pytest.mark.anyio

STOP = {
    "text": {"openai": "stop", "anthropic": "end_turn", "gemini": "STOP"},
    "tools": {"openai": "tool_calls", "anthropic": "tool_use", "gemini": "STOP"},
}
WHERE = ("inprocess", "socket")


class Served:
    """The loopback server of the module and the exchanges it tapped (from the server's thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        universe = Universe()
        self.app = create_app(universe.config(), transport=universe.transport(), on_exchange=self.record)
        self.server = ServerThread(self.app)

    def record(self, exchange: Exchange) -> None:
        with self.lock:
            self.exchanges.append(exchange)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    s = Served()
    with s.server:
        yield s


@asynccontextmanager
async def connection(where: str, served: Served) -> AsyncIterator[tuple[str, httpx2.AsyncClient]]:
    """(base URL, client) for the proxy in-process or on the socket."""
    if where == "socket":
        async with httpx2.AsyncClient(timeout=10, verify=TLS) as http:
            yield served.server.url, http
        return
    universe = Universe()
    app = create_app(universe.config(), transport=universe.transport())
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), timeout=10) as http:
        yield "http://proxy.test", http
    await app.state.proxy.aclose()


def need(sdk: str, mode: str) -> None:
    for name in (sdk, upstream_of(sdk, mode)):
        if name not in registry.names():
            pytest.skip(f"codec {name!r} not registered yet")


async def call(served: Served, where: str, sdk: str, mode: str, scenario: str, *, stream: bool) -> Seen:
    need(sdk, mode)
    async with connection(where, served) as (base_url, http):
        return await DRIVERS[sdk](
            base_url, http, model_name(sdk, mode, scenario), stream=stream, tools=scenario == "tools"
        )


CASES = [(sdk, mode, where) for sdk in SDKS for mode in MODES for where in WHERE]
STREAM = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
CASE = pytest.mark.parametrize(("sdk", "mode", "where"), CASES)


@STREAM
@CASE
async def test_text_with_usage_and_stop_reason(served: Served, sdk: str, mode: str, where: str, stream: bool) -> None:
    seen = await call(served, where, sdk, mode, "text", stream=stream)
    assert seen.text == "Sunny, 21 °C in Paris."
    assert (seen.input_tokens, seen.output_tokens) == (12, 8)
    assert seen.stop == STOP["text"][sdk]
    assert seen.calls == [] and seen.thinking == ""


@STREAM
@CASE
async def test_parallel_tool_calls(served: Served, sdk: str, mode: str, where: str, stream: bool) -> None:
    seen = await call(served, where, sdk, mode, "tools", stream=stream)
    assert seen.calls == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
    assert seen.stop == STOP["tools"][sdk]
    assert (seen.input_tokens, seen.output_tokens) == (20, 9)


@STREAM
@CASE
async def test_thinking(served: Served, sdk: str, mode: str, where: str, stream: bool) -> None:
    seen = await call(served, where, sdk, mode, "thinking", stream=stream)
    assert seen.thinking == "The user wants weather. "
    assert seen.text == "It is sunny."
    assert (seen.input_tokens, seen.output_tokens) == (30, 40)


@pytest.mark.parametrize("kind", ERROR_KINDS, ids=str)
@STREAM
@CASE
async def test_each_error_class_raises_the_sdks_own_exception(
    served: Served, sdk: str, mode: str, where: str, stream: bool, kind: ir.ErrorKind
) -> None:
    need(sdk, mode)
    front, up = registry.get(sdk), registry.get(upstream_of(sdk, mode))
    # The status the client must get: the upstream's own error, read back by the upstream codec, re-encoded
    # natively by the frontend codec (in pass-through both are the same codec).
    wire = up.encode_error(ir.IRError.of(kind, f"upstream says {kind.value}"))
    status = front.encode_error(up.decode_error(wire.status, wire.headers, wire.body)).status
    with pytest.raises(Exception) as info:
        await call(served, where, sdk, mode, f"err-{kind.value}", stream=stream)
    assert isinstance(info.value, error_class(sdk, status)), repr(info.value)
    assert error_status(info.value) == status
    expected = {ir.ErrorKind.THROTTLED: 429, ir.ErrorKind.AUTH: 401, ir.ErrorKind.NOT_FOUND: 404}
    if kind in expected:
        assert status == expected[kind]


@STREAM
@CASE
async def test_unreachable_upstream_is_a_server_error_in_the_sdk(
    served: Served, sdk: str, mode: str, where: str, stream: bool
) -> None:
    with pytest.raises(Exception) as info:
        await call(served, where, sdk, mode, "down", stream=stream)
    assert isinstance(info.value, error_class(sdk, 502)), repr(info.value)
    assert error_status(info.value) == 502


# What each SDK raises when the upstream breaks off mid-stream. Translate mode sends the frontend's own
# mid-stream error form (Anthropic `event: error`, an OpenAI error chunk, Gemini's error object), which each
# SDK raises as its own API error; pass-through breaks the client's connection as the upstream broke it.
MID_STREAM_API_ERROR = {
    "openai": openai.APIError,
    "anthropic": anthropic.APIStatusError,
    "gemini": genai_errors.APIError,
}
CONNECTION_BROKEN = (
    ConnectionError,
    httpx2.TransportError,
    openai.APIConnectionError,
    anthropic.APIConnectionError,
)


@CASE
async def test_upstream_failure_mid_stream_reaches_the_sdk_as_an_error(
    served: Served, sdk: str, mode: str, where: str
) -> None:
    expected = MID_STREAM_API_ERROR[sdk] if mode == "translate" else CONNECTION_BROKEN
    with pytest.raises(expected) as info:
        await call(served, where, sdk, mode, "broken", stream=True)
    assert "upstream connection reset" in str(info.value) or mode == "passthrough"


@pytest.mark.parametrize("where", WHERE)
async def test_each_sdk_lists_the_configured_models(served: Served, where: str) -> None:
    need("gemini", "passthrough")
    async with connection(where, served) as (base_url, http):
        oa = openai.AsyncOpenAI(api_key="k", base_url=f"{base_url}/v1", http_client=http, max_retries=0)
        openai_ids = [m.id async for m in oa.models.list()]
        an = anthropic.AsyncAnthropic(api_key="k", base_url=base_url, http_client=http, max_retries=0)
        anthropic_ids = [m.id async for m in an.models.list()]
        options = types.HttpOptions(base_url=base_url, httpx_async_client=http, client_args={"verify": TLS})
        gemini_names = [m.name async for m in await genai.Client(api_key="k", http_options=options).aio.models.list()]
    configured = [route.name for route in served.app.state.proxy.config.models]
    assert openai_ids == anthropic_ids == configured
    assert gemini_names == [f"models/{name}" for name in configured]


@pytest.mark.parametrize("mode", MODES)
async def test_anthropic_beta_messages_and_count_tokens(served: Served, mode: str) -> None:
    need("anthropic", mode)
    async with connection("socket", served) as (base_url, http):
        client = anthropic.AsyncAnthropic(api_key="k", base_url=base_url, http_client=http, max_retries=0)
        model = model_name("anthropic", mode, "text")
        beta = await client.beta.messages.create(  # POST /v1/messages?beta=true
            model=model, max_tokens=32, messages=[{"role": "user", "content": "hi"}]
        )
        if mode == "translate":  # estimated locally: the upstream protocol may have no such call
            counted = await client.messages.count_tokens(model=model, messages=[{"role": "user", "content": "x" * 36}])
            assert counted.input_tokens == 10  # ceil(("user" + 36 chars) / 4)
    assert beta.content[0].type == "text" and beta.content[0].text == "Sunny, 21 °C in Paris."
