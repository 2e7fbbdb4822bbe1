"""A sync httpx2 transport over an async one: the SDK drivers are sync clients, the in-process proxy is an ASGI
app. The calling thread runs a private event loop itself, only while it waits for something (the response head,
the next body chunk): no second thread, so no thread wake-up per request or chunk. Every wait has a timeout, and
each body chunk is handed over as the proxy sent it (boundaries kept)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import httpx2

from harness.proxy.asgi import Channel, ChannelStream, End

T = TypeVar("T")

# Seconds one request may wait for its response head, and for each further body chunk.
STEP_TIMEOUT = 60.0
# Seconds `InlineLoop.close` gives tasks still pending (an app winding down) before the loop is closed.
CLOSE_TIMEOUT = 10.0


def _stop_loop(future: asyncio.Future[Any]) -> None:
    future.get_loop().stop()


class InlineLoop:
    """An asyncio loop that the thread waiting on it runs, until what it waits for is done or times out.

    Between waits the loop stands still, and so does everything on it: an app produces a chunk only when a
    reader asks for one, as a socket with a small buffer would. One thread at a time may wait (a lock keeps
    others out), so an environment shared by threads stays correct, though serial.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._lock = threading.Lock()

    def run(self, awaitable: Awaitable[T], timeout: float = STEP_TIMEOUT) -> T:
        """Run the loop until `awaitable` is done and return its result (httpx2.ReadTimeout after `timeout` s)."""
        with self._lock:
            future = asyncio.ensure_future(awaitable, loop=self.loop)
            expired = False

            def expire() -> None:
                nonlocal expired
                expired = not future.done()
                future.cancel()

            timer = self.loop.call_later(timeout, expire)
            try:
                return self._until_done(future)
            except asyncio.CancelledError:
                if expired:
                    raise httpx2.ReadTimeout(f"no answer from the in-process app within {timeout} s") from None
                raise
            finally:
                timer.cancel()

    def _until_done(self, future: asyncio.Future[T]) -> T:
        """Run the loop until `future` is done; its result. Unlike `run_until_complete`, a stop meant for an
        earlier wait (its callback was already queued when Ctrl-C cut that wait short) only costs one more turn of
        the loop, instead of ending this wait with "Event loop stopped before Future completed"."""
        future.add_done_callback(_stop_loop)
        try:
            while not future.done():
                self.loop.run_forever()
        finally:
            future.remove_done_callback(_stop_loop)
        return future.result()

    @property
    def closed(self) -> bool:
        """Whether the loop is closed (what was pending on it was cancelled then)."""
        return self.loop.is_closed()

    def on_loop(self) -> bool:
        """Whether the caller runs inside a step of this loop (where running the loop again would deadlock)."""
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:  # no loop running in this thread
            return False

    def close(self) -> None:
        """Cancel what is still pending (bounded) and close the loop."""
        with self._lock:
            pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                gathered = asyncio.gather(*pending, return_exceptions=True)
                timer = self.loop.call_later(CLOSE_TIMEOUT, gathered.cancel)
                with contextlib.suppress(asyncio.CancelledError):  # the timer's cancellation: give up waiting
                    self._until_done(gathered)
                timer.cancel()
            self.loop.close()


# Chunks a body pump may read ahead of the sync reader (a socket buffer's worth).
WINDOW_CHUNKS = 32


_TASKS: set[asyncio.Task[None]] = set()
"""Pumps and their stops while they run. The loop keeps only weak references to tasks: a pump whose reader was
dropped (an SDK stream abandoned mid-body) would otherwise be collected while pending, and its stop then fail."""


def _keep(task: asyncio.Task[None]) -> asyncio.Task[None]:
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
    return task


class _Pump(ChannelStream):
    """Reads an async body into a channel whenever the reader runs the loop, at most WINDOW_CHUNKS ahead of it.

    One run of the loop moves every chunk the app has ready, so a reader crosses into the loop once per batch,
    not once per chunk. (A body that is a channel already, the in-process app's, needs no pump.)
    """

    def __init__(self, stream: httpx2.AsyncByteStream) -> None:
        super().__init__(Channel(WINDOW_CHUNKS))
        self.stream = stream
        self.task: asyncio.Task[None] | None = None

    def start(self) -> _Pump:
        """Start reading (on the loop)."""
        self.task = _keep(asyncio.ensure_future(self._run()))
        return self

    async def _run(self) -> None:
        try:
            async for chunk in self.stream:
                self.channel.put(chunk)
                await self.channel.room()
        except asyncio.CancelledError:
            self.channel.put(End())
            raise
        except Exception as exc:  # handed to the reader, which raises it where the chunk would have been
            self.channel.put(End(exc))
        else:
            self.channel.put(End())

    async def aclose(self) -> None:
        """Stop reading (the reader closed the body) and close the stream."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):  # the cancellation asked for just above
                await self.task
        await self.stream.aclose()


class _SyncBody(httpx2.SyncByteStream):
    """A body the sync reader takes from its channel, running the loop only when no chunk is ready."""

    def __init__(self, loop: InlineLoop, body: ChannelStream, timeout: float) -> None:
        self._loop = loop
        self._body = body
        self._timeout = timeout

    def __iter__(self) -> Iterator[bytes]:
        channel = self._body.channel
        while True:
            item = channel.take()
            if item is None:
                try:
                    self._loop.run(channel.ready(self._loop.loop), self._timeout)
                except httpx2.ReadTimeout:
                    message = f"no body chunk from the in-process app within {self._timeout} s"
                    raise httpx2.ReadTimeout(message) from None
                continue
            if isinstance(item, End):
                if item.error is not None:
                    raise item.error
                return
            yield item

    def close(self) -> None:
        if self._loop.closed:
            # An SDK stream dropped unread may be collected after its environment closed: its body was cancelled
            # with the loop, nothing is left to stop.
            return
        if self._body.close_now():  # the app had finished: nothing to run the loop for
            return
        if self._loop.on_loop():
            # An SDK stream abandoned mid-body is closed by its finalizer wherever the garbage collector runs, also
            # inside a step of the loop: running the loop again there would deadlock on it.
            _keep(self._loop.loop.create_task(self._body.aclose()))
            return
        self._loop.run(self._body.aclose(), self._timeout)


class SyncBridge(httpx2.BaseTransport):
    """Sync transport that forwards to an async transport on an InlineLoop, streaming the body through."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, loop: InlineLoop, *, timeout: float = STEP_TIMEOUT) -> None:
        self.inner = inner
        self.loop = loop
        self.timeout = timeout

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request through the async transport; the body is pulled chunk by chunk.

        The request goes over as it is once read: its body is then a `ByteStream`, which reads sync and async."""
        request.read()
        response, body = self.loop.run(self._open(request), self.timeout)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_SyncBody(self.loop, body, self.timeout),
            extensions=response.extensions,
        )

    async def _open(self, request: httpx2.Request) -> tuple[httpx2.Response, ChannelStream]:
        # The response head, and its body as a channel (a pump started in the same run of the loop if needed).
        response = await self.inner.handle_async_request(request)
        stream = response.stream
        if isinstance(stream, ChannelStream):
            return response, stream
        assert isinstance(stream, httpx2.AsyncByteStream), "in-process apps answer with async streams"
        return response, _Pump(stream).start()


class HttpxAdapter:
    """An `httpx` (not httpx2) sync transport over an httpx2 one (a SyncBridge in-process, a capturing transport
    for an external proxy), for the `ollama` client, which uses httpx."""

    def __new__(cls, bridge: httpx2.BaseTransport) -> Any:
        return _httpx_transport()(bridge)


@functools.cache
def _httpx_transport() -> type:
    """The adapter's httpx transport class, made once (httpx is imported only when a client needs it)."""
    import httpx

    class _Stream(httpx.SyncByteStream):
        def __init__(self, response: httpx2.Response) -> None:
            self._response = response

        def __iter__(self) -> Iterator[bytes]:
            yield from self._response.iter_raw()

        def close(self) -> None:
            self._response.close()

    class _Transport(httpx.BaseTransport):
        def __init__(self, bridge: httpx2.BaseTransport) -> None:
            self.bridge = bridge

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            forwarded = httpx2.Request(
                request.method, str(request.url), headers=request.headers.raw, content=request.read()
            )
            response = self.bridge.handle_request(forwarded)
            return httpx.Response(response.status_code, headers=response.headers.raw, stream=_Stream(response))

    return _Transport
