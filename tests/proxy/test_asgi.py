"""The streaming in-process transport: each chunk as the app sent it, a slow reader slows the app, a failing app
is a broken connection, and a client that closes early is a client that left."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from harness.proxy.asgi import QUEUE_CHUNKS, StreamingASGITransport

pytestmark = pytest.mark.anyio

WAIT = 10


class App:
    """An ASGI app that sends `count` chunks `b"<i>;"` (then optionally fails), noting what it did."""

    def __init__(self, count: int, *, fail: bool = False, fail_first: bool = False) -> None:
        self.count, self.fail, self.fail_first = count, fail, fail_first
        self.sent = 0
        self.saw_disconnect = asyncio.Event()
        self.finished = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.fail_first:
            raise ValueError("app failed before answering")
        await send({"type": "http.response.start", "status": 201, "headers": [(b"x-app", b"yes")]})
        for i in range(self.count):
            await send({"type": "http.response.body", "body": f"{i};".encode(), "more_body": True})
            self.sent += 1
        if self.fail:
            raise ValueError("app failed mid-body")
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self.finished = True
        if (await receive())["type"] == "http.request" and (await receive())["type"] == "http.disconnect":
            self.saw_disconnect.set()


def client(app: App) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=StreamingASGITransport(app), base_url="http://app")


async def test_every_chunk_arrives_as_sent_with_the_status_and_headers() -> None:
    app = App(3 * QUEUE_CHUNKS + 1)
    async with client(app) as http, http.stream("GET", "/") as response:
        assert response.status_code == 201 and response.headers["x-app"] == "yes"
        chunks = [chunk async for chunk in response.aiter_raw()]
    assert chunks == [f"{i};".encode() for i in range(3 * QUEUE_CHUNKS + 1)]


async def test_a_reader_that_stops_holds_the_app_back_to_a_buffer_ahead() -> None:
    app = App(10 * QUEUE_CHUNKS)
    async with client(app) as http, http.stream("GET", "/") as response:
        raw = response.aiter_raw()
        assert await raw.__anext__() == b"0;"
        await asyncio.sleep(0.1)  # ample time for the app to send on, were it not held back
        assert app.sent <= QUEUE_CHUNKS + 2
        rest = [chunk async for chunk in raw]
    assert len(rest) == 10 * QUEUE_CHUNKS - 1 and app.finished


async def test_an_app_failing_mid_body_is_a_connection_broken_after_the_chunks_before() -> None:
    app = App(3, fail=True)
    got: list[bytes] = []
    async with client(app) as http, http.stream("GET", "/") as response:
        with pytest.raises(httpx2.RemoteProtocolError, match="broke off the response: app failed mid-body"):
            async for chunk in response.aiter_raw():
                got.append(chunk)
    assert got == [b"0;", b"1;", b"2;"]


async def test_an_app_failing_before_its_answer_raises_its_own_error() -> None:
    async with client(App(1, fail_first=True)) as http:
        with pytest.raises(ValueError, match="before answering"):
            await http.get("/")


async def test_closing_the_response_early_lets_the_app_see_the_client_leave() -> None:
    app = App(10 * QUEUE_CHUNKS)
    async with client(app) as http:
        async with http.stream("GET", "/") as response:
            assert await response.aiter_raw().__anext__() == b"0;"
        # The close dropped what was unread, so the app could send on; its messages go nowhere now.
        await asyncio.wait_for(app.saw_disconnect.wait(), WAIT)
    assert app.finished
