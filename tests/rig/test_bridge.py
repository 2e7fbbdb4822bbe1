"""The sync bridge hands an async body over chunk by chunk as sent, reads ahead only a window, passes errors on
where they happened, stops the body when the reader closes, and times out instead of hanging."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from harness.rig.bridge import WINDOW_CHUNKS, InlineLoop, SyncBridge


class Body(httpx2.AsyncByteStream):
    """`count` chunks `b"<i>;"`, then an optional error or a hang; counts what was produced and closes."""

    def __init__(self, count: int, *, error: Exception | None = None, hang: bool = False) -> None:
        self.count, self.error, self.hang = count, error, hang
        self.produced = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i in range(self.count):
            self.produced += 1
            yield f"{i};".encode()
        if self.error is not None:
            raise self.error
        if self.hang:
            await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed = True


class App(httpx2.AsyncBaseTransport):
    def __init__(self, body: Body) -> None:
        self.body = body

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, stream=self.body)


@pytest.fixture
def loop() -> Iterator[InlineLoop]:
    thread = InlineLoop()
    yield thread
    thread.close()


def client(loop: InlineLoop, body: Body, timeout: float = 10.0) -> httpx2.Client:
    return httpx2.Client(transport=SyncBridge(App(body), loop, timeout=timeout), base_url="http://app")


def test_every_chunk_arrives_with_its_own_boundaries(loop: InlineLoop) -> None:
    body = Body(WINDOW_CHUNKS * 3 + 5)
    with client(loop, body) as http, http.stream("GET", "/") as response:
        chunks = list(response.iter_raw())
    assert chunks == [f"{i};".encode() for i in range(WINDOW_CHUNKS * 3 + 5)]
    assert body.closed


def test_the_pump_reads_at_most_a_window_ahead_of_a_reader_that_stops(loop: InlineLoop) -> None:
    body = Body(10 * WINDOW_CHUNKS)
    with client(loop, body) as http, http.stream("GET", "/") as response:
        raw = response.iter_raw()
        assert next(raw) == b"0;"
        time.sleep(0.2)  # ample time for the loop to read on, were it not held back
        assert body.produced <= WINDOW_CHUNKS + 2
        rest = list(raw)
    assert len(rest) == 10 * WINDOW_CHUNKS - 1 and body.produced == 10 * WINDOW_CHUNKS


def test_an_error_in_the_body_is_raised_after_the_chunks_before_it(loop: InlineLoop) -> None:
    body = Body(3, error=httpx2.RemoteProtocolError("server broke off the response"))
    got: list[bytes] = []
    broke_off = pytest.raises(httpx2.RemoteProtocolError, match="broke off")
    with client(loop, body) as http, http.stream("GET", "/") as response, broke_off:
        for chunk in response.iter_raw():
            got.append(chunk)
    assert got == [b"0;", b"1;", b"2;"]


def test_closing_early_stops_the_pump_and_closes_the_body(loop: InlineLoop) -> None:
    body = Body(100 * WINDOW_CHUNKS)
    with client(loop, body) as http, http.stream("GET", "/") as response:
        raw = response.iter_raw()
        assert [next(raw), next(raw)] == [b"0;", b"1;"]
    assert body.closed
    produced = body.produced
    time.sleep(0.1)
    assert body.produced == produced <= WINDOW_CHUNKS + 2


def test_a_body_that_hangs_times_out_instead(loop: InlineLoop) -> None:
    body = Body(1, hang=True)
    with client(loop, body, timeout=0.3) as http, http.stream("GET", "/") as response:
        raw = response.iter_raw()
        assert next(raw) == b"0;"
        with pytest.raises(httpx2.ReadTimeout, match="no body chunk"):
            next(raw)


def test_the_caller_runs_the_loop_itself_no_thread_is_started(loop: InlineLoop) -> None:
    """No second thread, so no thread wake-up per request or chunk: the reader's own thread runs the app."""
    import threading

    before = threading.active_count()
    body = Body(WINDOW_CHUNKS * 2)
    with client(loop, body) as http, http.stream("GET", "/") as response:
        assert threading.active_count() == before
        assert len(list(response.iter_raw())) == WINDOW_CHUNKS * 2
    assert threading.active_count() == before


def test_a_body_closed_after_its_loop_closed_is_left_alone() -> None:
    """An SDK stream dropped unread may be garbage-collected after the environment (and its loop) closed."""
    loop = InlineLoop()
    http = client(loop, Body(5))
    response = http.send(http.build_request("GET", "/"), stream=True)
    loop.close()
    response.close()  # no "event loop is closed" from a finalizer
    assert loop.closed


def test_a_body_closed_on_the_loop_thread_does_not_wait_for_the_loop(loop: InlineLoop) -> None:
    # An SDK stream abandoned mid-body is closed by its finalizer wherever the garbage collector runs, also on the
    # loop's own thread; waiting there for the loop would stall it (and every run on it) for the whole timeout.
    body = Body(3, hang=True)
    http = client(loop, body, timeout=30.0)
    response = http.send(http.build_request("GET", "/"), stream=True)
    raw = response.iter_raw()  # kept: a dropped iterator would close the response here, on this thread
    assert next(raw) == b"0;"

    async def close_here() -> None:
        response.close()

    loop.run(close_here(), timeout=5.0)  # raises ReadTimeout if close waits for the loop it runs on

    async def settled() -> bool:
        await asyncio.sleep(0.05)
        return body.closed

    assert loop.run(settled(), timeout=5.0)
    http.close()


def test_the_in_process_app_is_read_from_its_own_channel_a_buffer_ahead_at_most(loop: InlineLoop) -> None:
    from harness.proxy.asgi import QUEUE_CHUNKS, StreamingASGITransport

    seen: list[object] = []
    sent = 0

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal sent
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for i in range(10 * QUEUE_CHUNKS):
            await send({"type": "http.response.body", "body": f"{i};".encode(), "more_body": True})
            sent += 1
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    class Seeing(StreamingASGITransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            seen.append(request)
            return await super().handle_async_request(request)

    with (
        httpx2.Client(transport=SyncBridge(Seeing(app), loop), base_url="http://app") as http,
        http.stream("POST", "/", content=b"question") as response,
    ):
        raw = response.iter_raw()
        assert next(raw) == b"0;"
        assert sent <= QUEUE_CHUNKS + 1
        rest = list(raw)
    assert [b"0;", *rest] == [f"{i};".encode() for i in range(10 * QUEUE_CHUNKS)]
    # The request went over as the client built it (read, not rebuilt).
    assert seen == [response.request] and response.request.content == b"question"
