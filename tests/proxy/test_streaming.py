"""Streaming behaviour: no buffering, client disconnects cancel the upstream, upstream failures end the
client's stream in its own error form, and the translate hook seam."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from harness import ir
from harness.protocols import Codec, decode_events, registry
from harness.proxy import TranslateHooks, state_of
from tests.proxy.client import declares, proxy
from tests.proxy.upstreams import ScriptedUpstream, config, text_reply

pytestmark = pytest.mark.anyio


# Bound on each exchange: generous, because CI machines run two test workers; a hang still fails.
WAIT = 30
LONG_TEXT = "The quick brown fox jumps over the lazy dog, " * 3
# (frontend, upstream, mode)
STREAM_CASES = [
    ("anthropic", "openai", "translate"),
    ("openai", "anthropic", "translate"),
    ("ollama", "anthropic", "translate"),
    ("gemini", "openai", "translate"),
    ("openai", "gemini", "translate"),
    ("anthropic", "anthropic", "passthrough"),
    ("openai", "openai", "passthrough"),
]


def need(*names: str) -> list[Codec]:
    for name in names:
        if name not in registry.names():
            pytest.skip(f"codec {name!r} not registered yet")
    return [registry.get(n) for n in names]


def stream_request(frontend: Codec) -> tuple[str, dict[str, str], dict[str, str], bytes]:
    request = ir.Request(
        model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="Tell me")])], max_tokens=64, stream=True
    )
    wire = frontend.encode_request(request)
    return wire.path, wire.query, wire.headers, wire.body


class ClientStream:
    """The client's side of a stream, decoded with the frontend codec as it arrives."""

    def __init__(self, frontend: Codec, response: httpx2.Response) -> None:
        self.decoder = frontend.stream_decoder()
        self.chunks = response.aiter_bytes()
        self.events: list[ir.StreamEvent] = []

    async def first_text_delta(self) -> str:
        """Read until the first text delta."""
        async for chunk in self.chunks:
            self.events += self.decoder.feed(chunk)
            deltas = [e.text for e in self.events if isinstance(e, ir.TextDelta)]
            if deltas:
                return deltas[0]
        raise AssertionError("stream ended without a text delta")

    async def rest(self) -> list[ir.StreamEvent]:
        """Read to the end; every event of the stream."""
        async for chunk in self.chunks:
            self.events += self.decoder.feed(chunk)
        return self.events + self.decoder.close()


@pytest.mark.parametrize(("frontend", "upstream", "mode"), STREAM_CASES)
async def test_first_delta_reaches_the_client_before_the_upstream_sends_its_last_chunk(
    frontend: str, upstream: str, mode: str
) -> None:
    front, _ = need(frontend, upstream)
    gate = asyncio.Event()  # the upstream holds its last chunk until the client has seen a delta
    up = ScriptedUpstream(upstream, text_reply(LONG_TEXT), gate=gate)
    path, query, headers, body = stream_request(front)
    async with (
        proxy(config(("m", mode, upstream, "m")), up.transport()) as p,
        p.client.stream("POST", path, params=query, headers=headers, content=body) as response,
    ):
        client = ClientStream(front, response)
        first = await asyncio.wait_for(client.first_text_delta(), WAIT)
        assert up.streams[0].sent < len(up.streams[0].chunks)  # the upstream is not finished yet
        gate.set()
        events = await asyncio.wait_for(client.rest(), WAIT)
    assert first and LONG_TEXT.startswith(first)
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == LONG_TEXT
    assert isinstance(events[-1], ir.Done)
    assert p.exchange.timings.first_byte is not None and p.exchange.timings.end is not None
    assert p.exchange.timings.first_byte < p.exchange.timings.end


@pytest.mark.parametrize(("frontend", "upstream", "mode"), STREAM_CASES)
async def test_client_disconnect_cancels_the_upstream_stream(frontend: str, upstream: str, mode: str) -> None:
    front, _ = need(frontend, upstream)
    gate = asyncio.Event()  # never set: the upstream stalls before its last chunk
    up = ScriptedUpstream(upstream, text_reply(LONG_TEXT), gate=gate)
    path, query, headers, body = stream_request(front)
    async with proxy(config(("m", mode, upstream, "m")), up.transport()) as p:
        async with p.client.stream("POST", path, params=query, headers=headers, content=body) as response:
            await asyncio.wait_for(ClientStream(front, response).first_text_delta(), WAIT)
        # Leaving the `stream` block closed the response: the proxy must close the upstream stream.
        await asyncio.wait_for(up.streams[0].closed.wait(), WAIT)
        for _ in range(100):
            if p.exchanges:
                break
            await asyncio.sleep(0.01)
        ex = p.exchange
        assert ex.error is not None and ex.error.message == "client disconnected"
        assert state_of(p.app).counters["client_disconnects"] == 1
        assert up.streams[0].sent < len(up.streams[0].chunks)


@pytest.mark.parametrize("frontend", ["anthropic", "openai", "ollama", "gemini"])
async def test_upstream_failure_mid_stream_becomes_the_frontends_mid_stream_error(frontend: str) -> None:
    front, _ = need(frontend, "anthropic")
    up = ScriptedUpstream("anthropic", text_reply(LONG_TEXT), fail_after=5)
    path, query, headers, body = stream_request(front)
    async with proxy(config(("m", "translate", "anthropic", "m")), up.transport()) as p:
        response = await asyncio.wait_for(p.client.post(path, params=query, headers=headers, content=body), WAIT)
    assert response.status_code == 200
    events = decode_events(front, [response.content])
    text = "".join(e.text for e in events if isinstance(e, ir.TextDelta))
    assert text and LONG_TEXT.startswith(text) and text != LONG_TEXT
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent), last
    if not declares(front, "IRError.kind"):
        assert last.error.kind == ir.ErrorKind.NETWORK
    ex = p.exchange
    assert ex.error is not None and ex.error.kind == ir.ErrorKind.NETWORK
    assert "ReadError" in ex.error.message
    assert isinstance(ex.upstream_events[-1], ir.ErrorEvent)  # blocks closed, then the terminal error
    assert ex.violations == ()


@pytest.mark.parametrize("frontend", ["anthropic", "openai"])
async def test_upstream_stream_without_terminal_marker_ends_in_malformed_stream(frontend: str) -> None:
    front, _ = need(frontend, "anthropic")
    up = ScriptedUpstream("anthropic", text_reply("cut short"))
    original = up.stream_chunks
    up.stream_chunks = lambda reply, request=None: original(reply, request)[:-2]  # type: ignore[method-assign]  # drop message_stop
    path, query, headers, body = stream_request(front)
    async with proxy(config(("m", "translate", "anthropic", "m")), up.transport()) as p:
        response = await asyncio.wait_for(p.client.post(path, params=query, headers=headers, content=body), WAIT)
    last = decode_events(front, [response.content])[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert p.exchange.error is not None and p.exchange.error.kind == ir.ErrorKind.MALFORMED_STREAM


async def test_hooks_selected_by_config_rewrite_request_events_and_bytes() -> None:
    (front,) = need("anthropic")

    def twice_done(event: ir.StreamEvent) -> list[ir.StreamEvent]:
        return [event, event] if isinstance(event, ir.Done) else [event]

    hooks = TranslateHooks(
        on_upstream_request=lambda r: r.model_copy(update={"temperature": 0.25}),
        on_upstream_event=twice_done,
        on_frontend_bytes=lambda b: b.replace(b"sun", b"fog"),
    )
    cfg = config(("m", "translate", "anthropic", "m"))
    route = cfg.models[0]
    cfg = type(cfg)(models=(type(route)(route.name, route.mode, route.upstream, route.upstream_model, "weather"),))
    up = ScriptedUpstream("anthropic", text_reply("sun"))
    path, query, headers, body = stream_request(front)
    async with proxy(cfg, up.transport(), weather=hooks) as p:
        response = await p.client.post(path, params=query, headers=headers, content=body)
    events = decode_events(front, [response.content])
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == "fog"
    assert sum(isinstance(e, ir.Done) for e in events) == 1  # nothing is sent after the terminal event
    ex = p.exchange
    assert ex.upstream_request is not None and ex.upstream_request.temperature == 0.25
    assert [v.rule for v in ex.violations] == ["event_after_terminal"]


async def test_event_the_frontend_cannot_encode_is_skipped_and_recorded_not_fatal() -> None:
    (front,) = need("openai")

    def stray_delta(event: ir.StreamEvent) -> list[ir.StreamEvent]:
        # A backend quirk: a tool-call fragment for a call that never started.
        return [ir.ToolCallDelta(index=7, arguments="{"), event] if isinstance(event, ir.TextEnd) else [event]

    cfg = config(("m", "translate", "anthropic", "m"))
    route = cfg.models[0]
    cfg = type(cfg)(models=(type(route)(route.name, route.mode, route.upstream, route.upstream_model, "stray"),))
    up = ScriptedUpstream("anthropic", text_reply("still fine"))
    path, query, headers, body = stream_request(front)
    async with proxy(cfg, up.transport(), stray=TranslateHooks(on_upstream_event=stray_delta)) as p:
        response = await p.client.post(path, params=query, headers=headers, content=body)
    events = decode_events(front, [response.content])
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == "still fine"
    assert isinstance(events[-1], ir.Done)
    ex = p.exchange
    assert [v.rule for v in ex.violations] == ["delta_without_start"]
    assert len(ex.problems) == 1 and "frontend encoder refused tool_call_delta" in ex.problems[0]
