"""A sync httpx2 transport over an async one: the SDK drivers are sync clients, the in-process proxy is an ASGI
app. A private event loop runs in one background thread; each request and each body chunk crosses over with a
timeout, so streaming behaviour (chunks as the proxy sends them) is kept and nothing can hang."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
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

    def close(self) -> None:
        """Stop the loop and join the thread (bounded)."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


async def _next(iterator: AsyncIterator[bytes]) -> bytes:
    return await iterator.__anext__()


class _SyncBody(httpx2.SyncByteStream):
    def __init__(self, loop: LoopThread, stream: httpx2.AsyncByteStream, timeout: float) -> None:
        self._loop = loop
        self._iter = stream.__aiter__()
        self._stream = stream
        self._timeout = timeout

    def __iter__(self) -> Iterator[bytes]:
        while True:
            try:
                chunk: bytes = self._loop.run(_next(self._iter), self._timeout)
            except StopAsyncIteration:
                return
            yield chunk

    def close(self) -> None:
        self._loop.run(self._stream.aclose(), self._timeout)


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
        response = self.loop.run(self.inner.handle_async_request(async_request), self.timeout)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream), "in-process apps answer with async streams"
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_SyncBody(self.loop, stream, self.timeout),
            extensions=response.extensions,
        )


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
