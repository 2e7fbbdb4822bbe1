"""A sync httpx2 transport over an async one: the SDK drivers are sync clients, the in-process proxy is an ASGI
app. A private event loop runs in one background thread; each request crosses over with a timeout, and each body
chunk is handed over as the proxy sends it (boundaries kept) with a timeout per chunk, so nothing can hang."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import httpx2

T = TypeVar("T")

# Seconds one request may wait for its response head, and for each further body chunk.
STEP_TIMEOUT = 60.0


class LoopThread:
    """An asyncio loop in a daemon thread, for running coroutines from sync code with a timeout."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="harness-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = STEP_TIMEOUT) -> T:
        """Run `coro` on the loop and wait for its result (TimeoutError after `timeout` seconds)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise httpx2.ReadTimeout(f"no answer from the in-process app within {timeout} s") from None

    def on_loop(self) -> bool:
        """Whether the caller runs on the loop's own thread (where waiting for the loop would wait forever)."""
        return threading.get_ident() == self._thread.ident

    def close(self) -> None:
        """Stop the loop and join the thread (bounded)."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


# Chunks a body pump may read ahead of the sync reader (a socket buffer's worth); the reader hands room back in
# batches of half of it, so neither thread wakes the other per chunk.
WINDOW_CHUNKS = 32


_TASKS: set[asyncio.Task[None]] = set()
"""Pumps and their stops while they run. The loop keeps only weak references to tasks: a pump whose reader was
dropped (an SDK stream abandoned mid-body) would otherwise be collected while pending, and its stop then fail."""


def _keep(task: asyncio.Task[None]) -> asyncio.Task[None]:
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
    return task


class _End:
    """Queue marker: the body ended, or failed with `error`."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class _Pump:
    """Reads an async body on the loop into a thread-safe queue, at most WINDOW_CHUNKS ahead of the reader.

    Pulling each chunk with its own `LoopThread.run` cost two thread wake-ups per chunk (the loop's self-pipe, then
    the result): on a loaded machine, most of a run's wall time. Here the loop reads on while the reader is busy.
    """

    def __init__(self, stream: httpx2.AsyncByteStream) -> None:
        self.stream = stream
        self.chunks: queue.SimpleQueue[bytes | _End] = queue.SimpleQueue()
        self.room = asyncio.Semaphore(WINDOW_CHUNKS)
        self.task: asyncio.Task[None] | None = None

    def start(self) -> _Pump:
        """Start reading (on the loop)."""
        self.task = _keep(asyncio.ensure_future(self._run()))
        return self

    async def _run(self) -> None:
        try:
            async for chunk in self.stream:
                await self.room.acquire()
                self.chunks.put(chunk)
        except asyncio.CancelledError:
            self.chunks.put(_End())
            raise
        except Exception as exc:  # handed to the reader, which raises it where the chunk would have been
            self.chunks.put(_End(exc))
        else:
            self.chunks.put(_End())

    def give_room(self, count: int) -> None:
        """Let the pump read `count` more chunks (on the loop)."""
        for _ in range(count):
            self.room.release()

    async def stop(self) -> None:
        """Stop reading (the reader closed the body) and close the stream."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):  # the cancellation asked for just above
                await self.task
        await self.stream.aclose()


class _SyncBody(httpx2.SyncByteStream):
    def __init__(self, loop: LoopThread, pump: _Pump, timeout: float) -> None:
        self._loop = loop
        self._pump = pump
        self._timeout = timeout
        self._taken = 0

    def __iter__(self) -> Iterator[bytes]:
        while True:
            try:
                item = self._pump.chunks.get(timeout=self._timeout)
            except queue.Empty:
                raise httpx2.ReadTimeout(f"no body chunk from the in-process app within {self._timeout} s") from None
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            self._taken += 1
            if self._taken == WINDOW_CHUNKS // 2:
                self._loop.loop.call_soon_threadsafe(self._pump.give_room, self._taken)
                self._taken = 0
            yield item

    def close(self) -> None:
        if self._loop.on_loop():
            # An SDK stream abandoned mid-body is closed by its finalizer wherever the garbage collector runs,
            # also on the loop's thread: waiting there for the loop would stall every run for the timeout.
            _keep(self._loop.loop.create_task(self._pump.stop()))
            return
        self._loop.run(self._pump.stop(), self._timeout)


class SyncBridge(httpx2.BaseTransport):
    """Sync transport that forwards to an async transport on a LoopThread, streaming the body through."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, loop: LoopThread, *, timeout: float = STEP_TIMEOUT) -> None:
        self.inner = inner
        self.loop = loop
        self.timeout = timeout

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request through the async transport; the body is pulled chunk by chunk."""
        body = request.read()
        async_request = httpx2.Request(
            request.method, request.url, headers=request.headers, content=body, extensions=request.extensions
        )
        response, pump = self.loop.run(self._open(async_request), self.timeout)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_SyncBody(self.loop, pump, self.timeout),
            extensions=response.extensions,
        )

    async def _open(self, request: httpx2.Request) -> tuple[httpx2.Response, _Pump]:
        # The response head, and the body pump started in the same crossing.
        response = await self.inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream), "in-process apps answer with async streams"
        return response, _Pump(stream).start()


class HttpxAdapter:
    """An `httpx` (not httpx2) sync transport over an httpx2 one (a SyncBridge in-process, a capturing transport
    for an external proxy), for the `ollama` client, which uses httpx."""

    def __new__(cls, bridge: httpx2.BaseTransport) -> Any:
        import httpx

        class _Stream(httpx.SyncByteStream):
            def __init__(self, response: httpx2.Response) -> None:
                self._response = response

            def __iter__(self) -> Iterator[bytes]:
                yield from self._response.iter_raw()

            def close(self) -> None:
                self._response.close()

        class _Transport(httpx.BaseTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                forwarded = httpx2.Request(
                    request.method, str(request.url), headers=request.headers.raw, content=request.read()
                )
                response = bridge.handle_request(forwarded)
                return httpx.Response(response.status_code, headers=response.headers.raw, stream=_Stream(response))

        return _Transport()
