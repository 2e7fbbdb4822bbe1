"""Pass-through mode: real recorded exchanges go through byte for byte, with the proxy's key, and the tap
decodes both directions to IR on the side."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx2
import pytest

from harness import ir
from harness.capture import Interaction, load_interactions
from harness.protocols import HttpRequest, decode_events, registry
from harness.proxy import TRACE_HEADER
from harness.proxy import upstream as proxy_upstream
from tests.conftest import corpus_dir, corpus_files
from tests.proxy.client import proxy
from tests.proxy.upstreams import (
    KEY_VALUE,
    ChunkStream,
    ReplayUpstream,
    ScriptedUpstream,
    config,
    replay_headers,
    split,
    text_reply,
)

pytestmark = pytest.mark.anyio

# Frontend protocol of a recorded request, by its path.
ROUTABLE = (("/v1/messages", "anthropic"), ("/v1/chat/completions", "openai"), ("/api/chat", "ollama"))


def frontend_of(path: str) -> str | None:
    for route, protocol in ROUTABLE:
        if path == route:
            return protocol
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return None


def corpus_cases() -> list[tuple[Path, int]]:
    cases = []
    for folder in ("anthropic", "openai_chat", "gemini", "ollama", "openai_compat"):
        for path in corpus_files(folder):
            for i, item in enumerate(load_interactions(path)):
                if frontend_of(item.request.path) is not None:
                    cases.append((path, i))
    return cases


def model_of(item: Interaction, protocol: str) -> str:
    if protocol == "gemini":
        return item.request.path.rsplit("/", 1)[1].split(":")[0]
    return str(json.loads(item.request.body)["model"])


@pytest.mark.corpus
@pytest.mark.parametrize(("path", "index"), corpus_cases(), ids=lambda v: v.name if isinstance(v, Path) else str(v))
async def test_recorded_exchange_passes_through_byte_for_byte(path: Path, index: int) -> None:
    item = load_interactions(path)[index]
    protocol = frontend_of(item.request.path)
    assert protocol is not None
    # OpenAI-compatible providers are profiles named by the file's prefix (groq-..., deepseek-...).
    upstream_protocol = path.name.split("-")[0] if path.parent.name == "openai_compat" else protocol
    for name in (protocol, upstream_protocol):
        if name not in registry.names():
            pytest.skip(f"codec {name!r} not registered yet")
    codec = registry.get(upstream_protocol)
    chunks = split(item.response.body)
    upstream = ReplayUpstream(item.response.status, replay_headers(dict(item.response.headers)), chunks)
    model = model_of(item, protocol)
    headers = {"content-type": "application/json", "authorization": "Bearer client-key", "x-api-key": "client-key"}
    async with proxy(config((model, "passthrough", upstream_protocol, model)), upstream.transport()) as p:
        response = await p.client.post(
            item.request.path, params=item.request.query, content=item.request.body, headers=headers
        )
    # The client gets exactly the recorded status and bytes; the upstream gets exactly the recorded body.
    assert response.status_code == item.response.status
    assert response.content == item.response.body
    sent = upstream.requests[0]
    assert sent.content == item.request.body
    assert sent.url.path == item.request.path
    assert "client-key" not in str(sent.headers) and "key" not in sent.url.params
    assert KEY_VALUE in {sent.headers.get("x-api-key"), sent.headers.get("x-goog-api-key")} | {
        sent.headers.get("authorization", "").removeprefix("Bearer ")
    }
    # The tap saw the same chunks on both sides and decoded them as the codec does.
    ex = p.exchange
    assert (ex.mode, ex.upstream_status, ex.frontend_status) == (
        "passthrough",
        item.response.status,
        item.response.status,
    )
    assert ex.upstream_chunks == tuple(chunks) == ex.frontend_chunks
    assert response.headers[TRACE_HEADER] == ex.trace_id
    if item.response.status >= 400:
        expected = codec.decode_error(item.response.status, dict(item.response.headers), item.response.body)
        assert ex.error is not None and ex.error.kind == expected.kind
    elif codec.is_stream_request(item.request):
        assert list(ex.upstream_events) == decode_events(codec, [item.response.body])
    else:
        assert ex.upstream_response == codec.decode_response(item.response.body)
    assert ex.frontend_request is not None and ex.upstream_request is not None
    assert ex.upstream_request.model == ex.frontend_request.model == model.removeprefix("models/")


@pytest.mark.corpus
async def test_gzip_stream_passes_through_compressed_and_the_tap_inflates_its_copy() -> None:
    # Quirk from real traffic (anthropic/stream-thinking-gzip.yaml): an SSE stream with Content-Encoding: gzip.
    item = load_interactions(corpus_dir("anthropic") / "stream-text.yaml")[0]
    compressed = gzip.compress(item.response.body)
    upstream = ReplayUpstream(200, {"content-type": "text/event-stream", "content-encoding": "gzip"}, split(compressed))
    async with proxy(
        config(("claude-sonnet-4-0", "passthrough", "anthropic", "claude-sonnet-4-0")), upstream.transport()
    ) as p:
        response = await p.client.post("/v1/messages", content=item.request.body, headers={"accept-encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert response.content == item.response.body  # the client inflated what passed through
    assert b"".join(p.exchange.frontend_chunks) == compressed
    text = "".join(e.text for e in p.exchange.upstream_events if isinstance(e, ir.TextDelta))
    assert text == "4200 + 42 = 4242"
    assert p.exchange.violations == () and p.exchange.problems == ()


async def test_configured_upstream_model_is_the_only_change_to_the_request() -> None:
    upstream = ScriptedUpstream("anthropic", text_reply("hi"))
    body = {"model": "front", "max_tokens": 5, "messages": [{"role": "user", "content": "Grüße"}]}
    async with proxy(config(("front", "passthrough", "anthropic", "claude-real")), upstream.transport()) as p:
        response = await p.client.post("/v1/messages", json=body)
    assert response.status_code == 200
    assert json.loads(upstream.requests[0].content) == {**body, "model": "claude-real"}
    assert p.exchange.frontend_request is not None and p.exchange.frontend_request.model == "front"
    assert p.exchange.upstream_request is not None and p.exchange.upstream_request.model == "claude-real"


async def test_upstream_error_passes_through_with_its_status_and_is_classified() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", retry_after=7)
    upstream = ScriptedUpstream("anthropic", error)
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with proxy(config(("m", "passthrough", "anthropic", "m")), upstream.transport()) as p:
        response = await p.client.post("/v1/messages", json=body)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.json()["error"]["type"] == "rate_limit_error"
    ex = p.exchange
    assert ex.error is not None and (ex.error.kind, ex.error.retry_after) == (ir.ErrorKind.THROTTLED, 7.0)
    assert ex.upstream_events == ()


async def test_passthrough_upstream_failure_mid_stream_breaks_the_client_connection_too() -> None:
    upstream = ScriptedUpstream("anthropic", text_reply("one two three four five"), fail_after=4)
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    received = b""
    async with (
        proxy(config(("m", "passthrough", "anthropic", "m")), upstream.transport()) as p,
        p.client.stream("POST", "/v1/messages", json=body) as response,
    ):
        assert response.status_code == 200
        with pytest.raises(httpx2.RemoteProtocolError, match="upstream connection reset"):
            async for chunk in response.aiter_bytes():
                received += chunk
    # The bytes before the break arrived unchanged; no terminal event was invented.
    assert received == b"".join(upstream.streams[0].chunks[:4])
    ex = p.exchange
    assert ex.error is not None and ex.error.kind == ir.ErrorKind.NETWORK
    assert isinstance(ex.upstream_events[-1], ir.ErrorEvent)
    assert ex.upstream_events[-1].error.kind == ir.ErrorKind.MALFORMED_STREAM
    assert upstream.streams[0].closed.is_set()


async def test_chunk_stream_helper_keeps_boundaries() -> None:
    stream = ChunkStream([b"a", b"bc"])
    assert [c async for c in stream] == [b"a", b"bc"]


async def test_invalid_utf8_in_a_passthrough_stream_reaches_the_client_byte_for_byte() -> None:
    # Issue 22: the tap's framing error used to break a pass-through stream; the tap's view is its own business.
    body = (
        b'event: ping\ndata: {"type":"ping"}\n\n'
        b'event: ping\ndata: {"type":"ping \xff\xfe"}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    upstream = ReplayUpstream(200, {"content-type": "text/event-stream"}, split(body))
    request = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with proxy(config(("m", "passthrough", "anthropic", "m")), upstream.transport()) as p:
        response = await p.client.post("/v1/messages", json=request)
    assert response.status_code == 200
    assert response.content == body
    assert any("invalid UTF-8" in problem for problem in p.exchange.problems), p.exchange.problems


async def test_gzip_bomb_in_a_passthrough_stream_passes_through_and_the_tap_gives_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The tap inflates its own copy with a bound (scaled down here): past it, a problem, and the bytes untouched.
    from harness.proxy import tap

    monkeypatch.setattr(tap, "MAX_INFLATED", 1024)
    compressed = gzip.compress(b"data: " + b"x" * 100_000 + b"\n\n")
    upstream = ReplayUpstream(200, {"content-type": "text/event-stream", "content-encoding": "gzip"}, [compressed])
    request = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with proxy(config(("m", "passthrough", "anthropic", "m")), upstream.transport()) as p:
        response = await p.client.post("/v1/messages", json=request, headers={"accept-encoding": "gzip"})
    assert b"".join(p.exchange.frontend_chunks) == compressed
    assert response.status_code == 200
    assert any("inflates beyond 1024 bytes" in problem for problem in p.exchange.problems), p.exchange.problems


def test_the_client_credentials_never_forwarded_are_the_protocols_facts() -> None:
    """The proxy drops what any protocol's clients authenticate with, as their facts say (`Secrets.credentials`),
    plus `authorization`; each is among the headers the recorder scrubs too."""
    assert proxy_upstream.client_credentials() == (
        frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"}),
        frozenset({"key"}),
    )
    for name in registry.names():
        secrets = registry.facts(name).secrets
        assert secrets.credentials <= secrets.headers, name
    request = HttpRequest(
        method="POST",
        path="/v1beta/models/m:generateContent",
        query={"key": "AIza-client", "alt": "sse"},
        headers={"x-goog-api-key": "c", "api-key": "c", "x-api-key": "c", "authorization": "c", "x-keep": "1"},
        body=b"{}",
    )
    kept = proxy_upstream.without_client_credentials(request)
    assert kept.headers == {"x-keep": "1"} and kept.query == {"alt": "sse"}
