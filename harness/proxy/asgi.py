"""An in-process transport that streams: the client sees each body chunk when the app sends it.

httpx2's own `ASGITransport` collects the whole response body before returning, which is fine for speed but
hides streaming behaviour (buffering, time to first delta) and cannot tell the app that the client left. This
transport runs the app as a task, hands chunks over through a small bounded queue (so a slow reader slows the
app, as a socket would), and sends `http.disconnect` when the client closes the response early.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx2
from starlette.types import ASGIApp

# Chunks in flight between the app and the reader; small, like a socket buffer.
QUEUE_CHUNKS = 16
# Seconds an app may take to wind down after the client closed the response before it is cancelled.
CLOSE_SECONDS = 5.0

_Message = MutableMapping[str, Any]


class _AppFinished:
    """Queue marker: the app returned (or raised `error`)."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class _Body(httpx2.AsyncByteStream):
    def __init__(
        self, queue: asyncio.Queue[_Message | _AppFinished], disconnected: asyncio.Event, task: asyncio.Task[None]
    ) -> None:
        self._queue = queue
        self._disconnected = disconnected
        self._task = task

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            item = await self._queue.get()
            if isinstance(item, _AppFinished):
                if item.error is not None:
                    # After the response started, a failing app is a connection broken mid-body: report it as
                    # the protocol error a client would get from a real server.
                    raise httpx2.RemoteProtocolError(f"server broke off the response: {item.error}") from item.error
                return
            if item["type"] != "http.response.body":
                continue
            body = bytes(item.get("body", b""))
            if body:
                yield body
            if not item.get("more_body", False):
                return

    async def aclose(self) -> None:
        self._disconnected.set()
        # Unblock an app waiting to hand over a chunk nobody will read.
        while not self._queue.empty():
            self._queue.get_nowait()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), CLOSE_SECONDS)
        except TimeoutError:
            self._task.cancel()


class StreamingASGITransport(httpx2.AsyncBaseTransport):
    """`httpx2.AsyncClient(transport=StreamingASGITransport(app))`: in-process, chunk by chunk."""

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Run the app for one request; return as soon as the app has started its response."""
        body = await request.aread()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port),
            "client": self.client,
            "root_path": "",
        }
        queue: asyncio.Queue[_Message | _AppFinished] = asyncio.Queue(maxsize=QUEUE_CHUNKS)
        disconnected = asyncio.Event()
        body_sent = False

        async def receive() -> _Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: _Message) -> None:
            if not disconnected.is_set():  # like a server: messages after the client left go nowhere
                await queue.put(message)

        async def run() -> None:
            error: BaseException | None = None
            try:
                await self.app(scope, receive, send)
            except Exception as exc:  # handed to the reader, who raises it
                error = exc
            if not disconnected.is_set():
                await queue.put(_AppFinished(error))

        task = asyncio.create_task(run())
        first = await queue.get()
        if isinstance(first, _AppFinished):
            raise first.error or RuntimeError("ASGI app returned without starting a response")
        if first["type"] != "http.response.start":
            raise RuntimeError(f"ASGI app sent {first['type']!r} before http.response.start")
        headers = [(bytes(k), bytes(v)) for k, v in first.get("headers", [])]
        return httpx2.Response(int(first["status"]), headers=headers, stream=_Body(queue, disconnected, task))
