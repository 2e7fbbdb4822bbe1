"""Watching for the client leaving without task groups: a disconnect during a wait cancels the work (and the
upstream request), an outside cancellation is never taken for a disconnect, and a tapped stream runs `on_close`
exactly once however it ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, MutableMapping
from typing import Any

import httpx2
import pytest

from harness.proxy import StreamingASGITransport, create_app, state_of
from harness.proxy.calls import CLIENT_GONE_STATUS
from harness.proxy.sending import TappedStream, unless_disconnected
from tests.proxy.upstreams import config

pytestmark = pytest.mark.anyio

WAIT = 10


class Client:
    """An ASGI `receive` channel: the request body, then `http.disconnect` once `leave()` is called."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()
        self.body_sent = False

    def leave(self) -> None:
        self.gone.set()

    async def __call__(self) -> MutableMapping[str, Any]:
        return await self.receive()

    async def receive(self) -> MutableMapping[str, Any]:
        if not self.body_sent:
            self.body_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}


class TellingClient(Client):
    """A `receive` channel that also tells of the client leaving by callback (as the in-process transport's
    does): no watcher task is needed then."""

    def __init__(self) -> None:
        super().__init__()
        self.callbacks: list[Callable[[], None]] = []

    def leave(self) -> None:
        super().leave()
        for callback in list(self.callbacks):
            callback()

    def on_disconnect(self, callback: Callable[[], None]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)


CLIENTS = pytest.mark.parametrize("kind", [Client, TellingClient], ids=["watched", "telling"])


class Work:
    """Work that waits until released, noting whether it was cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False

    async def __call__(self) -> str:
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "done"


@CLIENTS
async def test_a_disconnect_during_the_wait_cancels_the_work(kind: type[Client]) -> None:
    client, work = kind(), Work()
    await client.receive()  # the body is read before the wait
    waiting = asyncio.create_task(unless_disconnected(client, work))
    await asyncio.wait_for(work.started.wait(), WAIT)
    client.leave()
    assert await asyncio.wait_for(waiting, WAIT) == (True, None)
    assert work.cancelled
    # The cancellation was taken back: the task that waited goes on undisturbed.
    assert not waiting.cancelled()


@CLIENTS
async def test_the_task_goes_on_after_the_client_left_during_its_wait(kind: type[Client]) -> None:
    client, work = kind(), Work()
    await client.receive()

    async def wait_then_sleep() -> tuple[bool, str | None, int]:
        gone, result = await unless_disconnected(client, work)
        await asyncio.sleep(0.01)  # would raise CancelledError if the watcher's request were still counted
        task = asyncio.current_task()
        assert task is not None
        return gone, result, task.cancelling()

    waiting = asyncio.create_task(wait_then_sleep())
    await asyncio.wait_for(work.started.wait(), WAIT)
    client.leave()
    assert await asyncio.wait_for(waiting, WAIT) == (True, None, 0)


@CLIENTS
async def test_an_outside_cancellation_is_not_mistaken_for_a_disconnect(kind: type[Client]) -> None:
    client, work = kind(), Work()
    await client.receive()
    waiting = asyncio.create_task(unless_disconnected(client, work))
    await asyncio.wait_for(work.started.wait(), WAIT)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiting, WAIT)
    assert work.cancelled and waiting.cancelled()


@CLIENTS
async def test_an_outside_cancellation_together_with_a_disconnect_still_propagates(kind: type[Client]) -> None:
    client, work = kind(), Work()
    await client.receive()
    waiting = asyncio.create_task(unless_disconnected(client, work))
    await asyncio.wait_for(work.started.wait(), WAIT)
    client.leave()
    if kind is Client:
        await asyncio.sleep(0)  # the watcher task runs and cancels the task for the client
    waiting.cancel()  # ... and so does someone else
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiting, WAIT)
    assert waiting.cancelled()


@CLIENTS
async def test_work_that_finishes_first_returns_its_result_and_stops_the_watcher(kind: type[Client]) -> None:
    client, work = kind(), Work()
    await client.receive()
    work.release.set()
    before = len(asyncio.all_tasks())
    assert await asyncio.wait_for(unless_disconnected(client, work), WAIT) == (False, "done")
    await asyncio.sleep(0)  # the stopped watcher's cancellation is delivered
    assert len(asyncio.all_tasks()) == before


@CLIENTS
async def test_work_that_swallows_the_cancellation_is_reported_as_gone_with_its_result(kind: type[Client]) -> None:
    client = kind()
    await client.receive()
    started = asyncio.Event()

    async def stubborn() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "finished anyway"
        return "never"

    async def wait_then_sleep() -> tuple[bool, str | None, int]:
        gone, result = await unless_disconnected(client, stubborn)
        await asyncio.sleep(0.01)
        task = asyncio.current_task()
        assert task is not None
        # The watcher's request was taken back: asyncio.timeout and task groups up the stack count on it.
        return gone, result, task.cancelling()

    waiting = asyncio.create_task(wait_then_sleep())
    await asyncio.wait_for(started.wait(), WAIT)
    client.leave()
    assert await asyncio.wait_for(waiting, WAIT) == (True, "finished anyway", 0)


class Sent:
    """An ASGI `send` channel that keeps what it got, optionally blocking on the `n`-th body message."""

    def __init__(self, block_at: int | None = None) -> None:
        self.messages: list[MutableMapping[str, Any]] = []
        self.block_at = block_at
        self.blocked = asyncio.Event()

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.messages.append(message)
        if self.block_at is not None and len(self.messages) == self.block_at:
            self.blocked.set()
            await asyncio.Event().wait()  # a reader that never reads on


def tapped(chunks: list[bytes], closes: list[str]) -> tuple[TappedStream, list[str]]:
    events: list[str] = []

    async def body() -> AsyncIterator[bytes]:
        try:
            for chunk in chunks:
                yield chunk
        finally:
            events.append("body closed")

    async def on_close() -> None:
        closes.append("closed")

    return TappedStream(body(), status_code=200, headers={"content-type": "text/plain"}, on_close=on_close), events


async def test_a_tapped_stream_sends_every_chunk_as_its_own_message_and_closes_once() -> None:
    closes: list[str] = []
    response, events = tapped([b"a", b"bc", b"d"], closes)
    sent = Sent()
    await asyncio.wait_for(response({"type": "http"}, Client().receive, sent.send), WAIT)
    assert sent.messages[0]["type"] == "http.response.start" and sent.messages[0]["status"] == 200
    assert (b"content-type", b"text/plain") in sent.messages[0]["headers"]
    assert not any(k == b"content-length" for k, _ in sent.messages[0]["headers"])
    assert [(m["body"], m["more_body"]) for m in sent.messages[1:]] == [
        (b"a", True),
        (b"bc", True),
        (b"d", True),
        (b"", False),
    ]
    assert closes == ["closed"] and events == ["body closed"]


async def streaming_until_blocked(
    kind: type[Client], block_at: int
) -> tuple[asyncio.Task[None], Client, list[str], list[str]]:
    """A tapped stream of three chunks being sent to a `kind` client, once its send blocks at `block_at`: the
    streaming task, the client, and the stream's closes and body events."""
    closes: list[str] = []
    response, events = tapped([b"a", b"b", b"c"], closes)
    client, sent = kind(), Sent(block_at=block_at)
    await client.receive()
    streaming = asyncio.create_task(response({"type": "http"}, client, sent.send))
    await asyncio.wait_for(sent.blocked.wait(), WAIT)
    return streaming, client, closes, events


@CLIENTS
async def test_a_tapped_stream_whose_client_leaves_mid_body_ends_quietly_and_closes_once(kind: type[Client]) -> None:
    streaming, client, closes, events = await streaming_until_blocked(kind, 3)
    client.leave()
    await asyncio.wait_for(streaming, WAIT)  # no CancelledError: the client leaving is not a failure
    assert not streaming.cancelled()
    assert closes == ["closed"] and events == ["body closed"]


@CLIENTS
async def test_a_tapped_stream_cancelled_from_outside_propagates_and_still_closes_once(kind: type[Client]) -> None:
    streaming, _client, closes, events = await streaming_until_blocked(kind, 2)
    streaming.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(streaming, WAIT)
    assert closes == ["closed"] and events == ["body closed"]


async def test_a_client_leaving_before_the_upstream_head_cancels_the_upstream_request() -> None:
    asked, cancelled = asyncio.Event(), asyncio.Event()

    async def never_answers(request: httpx2.Request) -> httpx2.Response:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    exchanges: list[Any] = []
    app = create_app(
        config(("m", "translate", "openai", "gpt")),
        transport=httpx2.MockTransport(never_answers),
        on_exchange=exchanges.append,
    )
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with httpx2.AsyncClient(transport=StreamingASGITransport(app), base_url="http://proxy") as client:
        request = asyncio.create_task(client.post("/v1/messages", json=body))
        await asyncio.wait_for(asked.wait(), WAIT)
        request.cancel()  # the client gives up waiting for the head
        with pytest.raises(asyncio.CancelledError):
            await request
        await asyncio.wait_for(cancelled.wait(), WAIT)
        for _ in range(100):
            if exchanges:
                break
            await asyncio.sleep(0.01)
    await state_of(app).aclose()
    assert len(exchanges) == 1
    assert exchanges[0].frontend_status == CLIENT_GONE_STATUS
    assert exchanges[0].error is not None and exchanges[0].error.message == "client disconnected"
    assert state_of(app).counters["client_disconnects"] == 1
