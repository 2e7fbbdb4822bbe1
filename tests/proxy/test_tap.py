"""The trace tap: what one exchange records, its byte limit, and that no tap means nothing is kept."""

from __future__ import annotations

import httpx2
import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.proxy import Exchange, StreamingASGITransport, create_app
from tests.proxy.client import proxy
from tests.proxy.upstreams import ScriptedUpstream, config, text_reply

pytestmark = pytest.mark.anyio

LONG = "A long answer that will not fit in the tap. " * 20
BODY = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}], "stream": True}


async def test_translate_exchange_records_both_sides_with_chunk_boundaries_and_timings() -> None:
    up = ScriptedUpstream("openai", text_reply("Short answer."))
    async with proxy(config(("m", "translate", "openai", "gpt-x")), up.transport()) as p:
        response = await p.client.post("/v1/messages", json=BODY)
    ex = p.exchange
    assert (ex.route, ex.frontend_protocol, ex.upstream_protocol, ex.mode) == (
        "POST /v1/messages",
        "anthropic",
        "openai",
        "translate",
    )
    assert (ex.model, ex.stream, ex.upstream_status, ex.frontend_status) == ("m", True, 200, 200)
    assert ex.upstream_url == "http://upstream.test/v1/chat/completions"
    assert ex.frontend_request is not None and ex.frontend_request.model == "m"
    assert ex.upstream_request is not None and ex.upstream_request.model == "gpt-x"
    assert ex.upstream_chunks == tuple(up.streams[0].chunks)  # boundaries as read
    assert b"".join(ex.frontend_chunks) == response.content
    assert len(ex.frontend_chunks) > 1  # sent as produced, not as one body
    assert list(ex.upstream_events) == decode_events(registry.get("openai"), list(ex.upstream_chunks))
    t = ex.timings
    assert t.start > 0 and t.upstream_first_byte is not None and t.first_byte is not None and t.end is not None
    assert 0 <= t.upstream_first_byte <= t.first_byte <= t.end
    assert (ex.truncated, ex.error, ex.violations, ex.problems) == (False, None, (), ())


async def test_tap_keeps_at_most_the_configured_bytes_and_says_so() -> None:
    up = ScriptedUpstream("openai", text_reply(LONG))
    cfg = config(("m", "translate", "openai", "gpt-x"), tap_max_bytes=700)
    async with proxy(cfg, up.transport()) as p:
        response = await p.client.post("/v1/messages", json=BODY)
    events = decode_events(registry.get("anthropic"), [response.content])
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == LONG  # the client lost nothing
    ex = p.exchange
    assert ex.truncated
    assert sum(map(len, ex.upstream_chunks)) <= 700 and sum(map(len, ex.frontend_chunks)) <= 700
    assert 0 < len(ex.upstream_events) < len(decode_events(registry.get("openai"), up.streams[0].chunks))


async def test_without_a_callback_nothing_is_kept_but_counters_still_count() -> None:
    up = ScriptedUpstream("openai", text_reply(LONG))
    app = create_app(config(("m", "translate", "openai", "gpt-x")), transport=up.transport())
    state = app.state.proxy
    kept: list[Exchange] = []
    original = state.complete

    async def spy(recorder: object) -> Exchange:
        exchange = await original(recorder)
        kept.append(exchange)
        return exchange

    state.complete = spy
    async with httpx2.AsyncClient(transport=StreamingASGITransport(app), base_url="http://p") as client:
        await client.post("/v1/messages", json=BODY)
    (ex,) = kept
    assert ex.upstream_chunks == () and ex.frontend_chunks == () and ex.upstream_events == ()
    assert ex.frontend_request is not None  # translate decodes it anyway; pass-through would not
    assert state.counters["requests"] == 1 and state.counters["mode.translate"] == 1


async def test_tap_times_every_chunk_and_places_every_event_for_the_stream_timeline() -> None:
    up = ScriptedUpstream("openai", text_reply("Short answer."))
    async with proxy(config(("m", "translate", "openai", "gpt-x")), up.transport()) as p:
        await p.client.post("/v1/messages", json=BODY)
    ex = p.exchange
    assert len(ex.upstream_chunk_times) == len(ex.upstream_chunks)
    assert len(ex.frontend_chunk_times) == len(ex.frontend_chunks) == len(ex.frontend_chunk_events)
    assert list(ex.upstream_chunk_times) == sorted(ex.upstream_chunk_times)
    assert ex.timings.first_byte == ex.frontend_chunk_times[0]
    # Each event is placed in the upstream chunk it was decoded from: decoding chunk by chunk gives the same places.
    codec, placed = registry.get("openai"), []
    decoder = codec.stream_decoder()
    for number, chunk in enumerate(ex.upstream_chunks):
        placed += [number] * len(decoder.feed(chunk))
    placed += [len(ex.upstream_chunks) - 1] * len(decoder.close())
    assert list(ex.event_chunks) == placed and len(placed) == len(ex.upstream_events)
    # A translated chunk is sent after the event it encodes arrived: the counts never decrease and end at all.
    assert list(ex.frontend_chunk_events) == sorted(ex.frontend_chunk_events)
    assert ex.frontend_chunk_events[-1] == len(ex.upstream_events)


async def test_a_body_larger_than_the_tap_keeps_its_head_not_nothing() -> None:
    """A 50 MB non-streamed answer left its trace with no wire at all: one chunk past the limit was dropped whole."""
    up = ScriptedUpstream("openai", text_reply(LONG))
    cfg = config(("m", "translate", "openai", "gpt-x"), tap_max_bytes=300)
    async with proxy(cfg, up.transport()) as p:
        await p.client.post("/v1/messages", json={**BODY, "stream": False})
    ex = p.exchange
    assert ex.truncated
    assert len(ex.upstream_chunks) == 1 and len(ex.upstream_chunks[0]) == 300
    assert ex.upstream_chunks[0].startswith(b"{")  # the head of the JSON body
    assert sum(map(len, ex.frontend_chunks)) == 300
