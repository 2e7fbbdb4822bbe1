"""The proxy on a real loopback socket: load (concurrent streams complete with every event, in bounded time),
upstream connect/read timeouts against a real stalling upstream, and client disconnects cancelling the upstream."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from harness import ir
from harness.protocols import decode_events, registry
from harness.proxy import ServerThread, StreamingASGITransport, create_app
from harness.proxy.config import ModelRoute, ProxyConfig, UpstreamConfig
from harness.stream import accumulate
from tests.proxy.sdks import TLS
from tests.proxy.upstreams import KEY_ENV, ScriptedUpstream, config, text_reply

pytestmark = pytest.mark.anyio

LOAD_TEXT = "Every event of this stream must arrive at every client, in order. " * 2


async def one_stream(client: httpx2.AsyncClient, url: str, i: int) -> list[ir.StreamEvent]:
    body = {"model": "load", "max_tokens": 64, "messages": [{"role": "user", "content": f"req {i}"}], "stream": True}
    async with client.stream("POST", f"{url}/v1/messages", json=body) as response:
        assert response.status_code == 200
        chunks = [chunk async for chunk in response.aiter_bytes()]
    return decode_events(registry.get("anthropic"), chunks)


async def load(n: int, bound: float) -> float:
    """`n` concurrent streamed requests (Anthropic frontend, translated to an OpenAI upstream whose chunks
    arrive 2 ms apart); every client must get every event. Returns the wall time."""
    up = ScriptedUpstream("openai", text_reply(LOAD_TEXT), delay=0.002)
    expected = len(up.stream_chunks(text_reply(LOAD_TEXT)))
    app = create_app(config(("load", "translate", "openai", "gpt")), transport=up.transport())
    limits = httpx2.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    with ServerThread(app) as server:
        async with httpx2.AsyncClient(timeout=bound, limits=limits, verify=TLS) as client:
            start = time.perf_counter()
            results = await asyncio.wait_for(
                asyncio.gather(*(one_stream(client, server.url, i) for i in range(n))), bound
            )
            elapsed = time.perf_counter() - start
    assert len(results) == n
    for events in results:
        result = accumulate(events)
        assert result.error is None
        assert result.response.content == [ir.TextPart(text=LOAD_TEXT)]
        assert isinstance(events[-1], ir.Done) and events[-1].stop_reason is not None
        assert sum(isinstance(e, ir.TextDelta) for e in events) == len(LOAD_TEXT) // 4 + (len(LOAD_TEXT) % 4 > 0)
    assert len(up.streams) == n and all(s.sent == expected for s in up.streams)
    return elapsed


async def test_load_50_concurrent_streams_complete_with_every_event() -> None:
    elapsed = await load(50, bound=30)
    assert elapsed < 30


@pytest.mark.slow
async def test_load_200_concurrent_streams_complete_with_every_event() -> None:
    elapsed = await load(200, bound=60)
    assert elapsed < 60


# --- a real upstream socket that stalls -------------------------------------------------------------------


async def stalling_upstream(request: Request) -> Response:
    """`/slow-head`: no answer for 5 s. `/v1/chat/completions`: one chunk, then silence for 5 s."""
    if request.url.path == "/slow-head/v1/chat/completions":
        for _ in range(100):  # 5 s, unless the proxy gives up first (so the server can stop at once)
            if await request.is_disconnected():
                break
            await asyncio.sleep(0.05)
        return Response(b"{}")

    async def body() -> AsyncIterator[bytes]:
        delta = {"role": "assistant", "content": "Hel"}
        chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
        yield f"data: {json.dumps(chunk)}\n\n".encode()
        await asyncio.sleep(5)
        yield b"data: [DONE]\n\n"

    return StreamingResponse(body(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def stalling() -> Iterator[ServerThread]:
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", stalling_upstream, methods=["POST"]),
            Route("/slow-head/v1/chat/completions", stalling_upstream, methods=["POST"]),
        ]
    )
    with ServerThread(app) as server:
        yield server


def network_config(base_url: str, mode: str, *, connect: float = 1.0, read: float = 0.3) -> ProxyConfig:
    upstream = UpstreamConfig("net", "openai", base_url, KEY_ENV, connect_timeout=connect, read_timeout=read)
    return ProxyConfig(models=(ModelRoute("m", mode, upstream, "gpt"),))  # type: ignore[arg-type]


async def post_stream(cfg: ProxyConfig, path: str = "/v1/messages") -> tuple[httpx2.Response, float]:
    """A streamed request to the proxy (Anthropic frontend, or OpenAI's for `/v1/chat/completions`)."""
    app = create_app(cfg)  # no injected transport: the network, with the configured timeouts
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    start = time.perf_counter()
    async with httpx2.AsyncClient(transport=StreamingASGITransport(app), base_url="http://proxy", timeout=10) as c:
        response = await c.post(path, json=body)
    await app.state.proxy.aclose()
    return response, time.perf_counter() - start


@pytest.mark.parametrize("mode", ["passthrough", "translate"])
async def test_upstream_that_never_answers_times_out_as_a_native_504(stalling: ServerThread, mode: str) -> None:
    # Translate: Anthropic frontend, OpenAI upstream. Pass-through: OpenAI on both sides.
    path = "/v1/messages" if mode == "translate" else "/v1/chat/completions"
    response, elapsed = await post_stream(network_config(f"{stalling.url}/slow-head", mode), path)
    assert response.status_code == 504
    assert "ReadTimeout" in response.json()["error"]["message"]
    assert 0.3 <= elapsed < 3


async def test_upstream_stalling_mid_stream_ends_in_the_frontends_error_event(stalling: ServerThread) -> None:
    response, elapsed = await post_stream(network_config(stalling.url, "translate"))
    assert response.status_code == 200
    events = decode_events(registry.get("anthropic"), [response.content])
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == "Hel"
    assert isinstance(events[-1], ir.ErrorEvent)
    assert "ReadTimeout" in events[-1].error.message
    assert elapsed < 3


async def test_refused_connection_is_a_native_502() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    response, elapsed = await post_stream(network_config(f"http://127.0.0.1:{port}", "translate"))
    assert response.status_code == 502
    assert response.json()["type"] == "error"
    assert elapsed < 3


async def test_client_leaving_the_socket_cancels_the_upstream_stream() -> None:
    gate = asyncio.Event()  # never set: the upstream holds its last chunk
    up = ScriptedUpstream("anthropic", text_reply(LOAD_TEXT), gate=gate)
    exchanges: list[object] = []
    app = create_app(
        config(("m", "translate", "anthropic", "m")), transport=up.transport(), on_exchange=exchanges.append
    )
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with ServerThread(app) as server:
        async with (
            httpx2.AsyncClient(timeout=10, verify=TLS) as client,
            client.stream("POST", f"{server.url}/v1/messages", json=body) as response,
        ):
            async for chunk in response.aiter_bytes():
                if b"text_delta" in chunk:
                    break
        # The response is closed with bytes unread: httpx2 drops the connection; the proxy must notice.
        deadline = time.monotonic() + 5
        while not (up.streams and up.streams[0].closed.is_set()) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert up.streams[0].closed.is_set()
        while not exchanges and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    assert app.state.proxy.counters["client_disconnects"] == 1
    assert up.streams[0].sent < len(up.streams[0].chunks)
