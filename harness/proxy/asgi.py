"""An in-process transport that streams: the client sees each body chunk when the app sends it.

httpx2's own `ASGITransport` collects the whole response body before returning, which is fine for speed but
hides streaming behaviour (buffering, time to first delta) and cannot tell the app that the client left. This
transport runs the app as a task, hands chunks over through a small bounded channel (so a slow reader slows the
app, as a socket would), which a sync reader (`rig.bridge`) takes from directly, and sends `http.disconnect` when
the client closes the response early (or gives up waiting for its head).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, MutableMapping
from typing import Any

import httpx2
from starlette.types import ASGIApp

# Chunks in flight between the app and the reader; small, like a socket buffer.
QUEUE_CHUNKS = 32
# Seconds an app may take to wind down after the client closed the response before it is cancelled.
CLOSE_SECONDS = 5.0

_Message = MutableMapping[str, Any]


class End:
    """Channel marker: the body ended, or broke off with `error` (raised where the next chunk would have been)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


_END = End()


class Channel:
    """Body chunks on their way from a producer to a reader, at most `limit` ahead of it: a deque with one
    waiter on each side. A sync reader takes what is ready without entering the event loop, and enters it
    (`ready`) only when nothing is."""

    def __init__(self, limit: int) -> None:
        self.items: deque[bytes | End] = deque()
        self.limit = limit
        self._ready: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None

    def put(self, item: bytes | End) -> None:
        """Hand over a chunk or the end (never blocks; the producer then waits for `room`)."""
        self.items.append(item)
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_result(None)

    async def room(self) -> None:
        """Wait while the reader is `limit` items behind (a slow reader slows the producer)."""
        while len(self.items) >= self.limit:
            self._room = asyncio.get_running_loop().create_future()
            await self._room

    def take(self) -> bytes | End | None:
        """The next item, or None when none is ready."""
        if not self.items:
            return None
        item = self.items.popleft()
        room = self._room
        if room is not None and not room.done():
            room.set_result(None)
        return item

    def ready(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future of `loop` that is done once an item is ready."""
        self._ready = loop.create_future()
        if self.items:
            self._ready.set_result(None)
        return self._ready

    async def get(self) -> bytes | End:
        """The next item, waiting for it."""
        item = self.take()
        while item is None:
            await self.ready(asyncio.get_running_loop())
            item = self.take()
        return item

    def clear(self) -> None:
        """Drop what is unread (the reader left) and let a waiting producer go on."""
        self.items.clear()
        room = self._room
        if room is not None and not room.done():
            room.set_result(None)


class ChannelStream(httpx2.AsyncByteStream):
    """An async body read from a `Channel`; `aclose` lets the producer go (a sync reader may take from
    `channel` directly, see `rig.bridge`)."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            item = await self.channel.get()
            if isinstance(item, End):
                if item.error is not None:
                    raise item.error
                return
            yield item

    def close_now(self) -> bool:
        """Do what closing needs no waiting for; whether that was all (else `aclose` is still to be awaited)."""
        return False


class _Client:
    """The client's side of one in-process request, and the app's ASGI `receive`: the request body, then
    `http.disconnect` once the client left. `on_disconnect` lets `sending.ClientWatch` hear of that without a
    watcher task (a server's own `receive`, uvicorn's, is watched by one)."""

    def __init__(self, body: bytes) -> None:
        self._body: bytes | None = body
        self.gone = False
        self._left = asyncio.Event()
        self._callbacks: list[Callable[[], None]] = []

    async def __call__(self) -> _Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._left.wait()
        return {"type": "http.disconnect"}

    def leave(self) -> None:
        """The client left (closed the response, or gave up waiting for it)."""
        if self.gone:
            return
        self.gone = True
        self._left.set()
        for callback in self._callbacks:
            callback()

    def on_disconnect(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when the client leaves; returns what stops that."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback)


class _Body(ChannelStream):
    def __init__(self, channel: Channel, client: _Client, task: asyncio.Task[None]) -> None:
        super().__init__(channel)
        self._client = client
        self._task = task

    def close_now(self) -> bool:
        self._client.leave()
        # Unblock an app waiting to hand over a chunk nobody will read.
        self.channel.clear()
        return self._task.done()

    async def aclose(self) -> None:
        if self.close_now():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), CLOSE_SECONDS)
        except TimeoutError:
            self._task.cancel()


def _broke(error: BaseException) -> httpx2.RemoteProtocolError:
    # After the response started, a failing app is a connection broken mid-body: report it as the protocol
    # error a client would get from a real server.
    broken = httpx2.RemoteProtocolError(f"server broke off the response: {error}")
    broken.__cause__ = error
    return broken


class StreamingASGITransport(httpx2.AsyncBaseTransport):
    """`httpx2.AsyncClient(transport=StreamingASGITransport(app))`: in-process, chunk by chunk."""

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self.app = app
        self.client = client

    def _scope(self, request: httpx2.Request) -> dict[str, Any]:
        url = request.url
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "server": (url.host, url.port),
            "client": self.client,
            "root_path": "",
        }

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Run the app for one request; return as soon as the app has started its response."""
        body = await request.aread()
        scope = self._scope(request)
        loop = asyncio.get_running_loop()
        head: asyncio.Future[_Message] = loop.create_future()
        channel = Channel(QUEUE_CHUNKS)
        client = _Client(body)
        ended = False

        async def send(message: _Message) -> None:
            nonlocal ended
            if client.gone or ended:  # like a server: messages after the client left go nowhere
                return
            if not head.done():
                head.set_result(message)
                return
            if message["type"] != "http.response.body":
                return
            chunk = message.get("body", b"")
            if chunk:
                channel.put(bytes(chunk))
            if not message.get("more_body", False):
                ended = True
                channel.put(_END)
            if len(channel.items) >= channel.limit:
                await channel.room()

        async def run() -> None:
            error: BaseException | None = None
            try:
                await self.app(scope, client, send)
            except Exception as exc:  # handed to the reader, who raises it
                error = exc
            if not head.done():
                head.set_exception(error or RuntimeError("ASGI app returned without starting a response"))
            elif not (client.gone or ended):
                channel.put(_END if error is None else End(_broke(error)))

        task = loop.create_task(run())
        try:
            first = await head
        except asyncio.CancelledError:
            client.leave()  # the caller gave up waiting: the app sees the client leave
            raise
        if first["type"] != "http.response.start":
            client.leave()
            raise RuntimeError(f"ASGI app sent {first['type']!r} before http.response.start")
        headers = [(bytes(k), bytes(v)) for k, v in first.get("headers", [])]
        return httpx2.Response(int(first["status"]), headers=headers, stream=_Body(channel, client, task))
