"""Sending answers to the client: whole responses, native errors, and tapped streams that clean up."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from harness import ir
from harness.protocols import Codec, HttpResponse, registry
from harness.proxy.state import ProxyState
from harness.proxy.tap import TRACE_HEADER, Recorder
from harness.proxy.upstream import safe_headers

T = TypeVar("T")


def own_headers(recorder: Recorder) -> dict[str, str]:
    """The headers the proxy adds to each answer of its own: the trace id, and the same id under the frontend
    provider's request-id header (`facts.Frontend.request_id_header`), which its clients read and show."""
    headers = {TRACE_HEADER: recorder.trace_id}
    frontend = registry.facts(recorder.fields["frontend_protocol"]).frontend
    if frontend is not None and frontend.request_id_header is not None:
        headers[frontend.request_id_header] = f"req_{recorder.trace_id}"
    return headers


async def send_whole(state: ProxyState, recorder: Recorder, response: HttpResponse) -> Response:
    """A complete response for the client; the exchange is finished and tapped before it is returned."""
    headers = {**own_headers(recorder), **response.headers, TRACE_HEADER: recorder.trace_id}
    headers.pop("content-length", None)  # Starlette sets it from the body
    recorder.set(frontend_status=response.status, frontend_response_headers=safe_headers(headers))
    recorder.frontend_chunk(response.body)
    await state.complete(recorder)
    return Response(content=response.body, status_code=response.status, headers=headers)


async def send_error(
    state: ProxyState, recorder: Recorder, codec: Codec, error: ir.IRError, *, status: int | None = None
) -> Response:
    """The frontend protocol's own error body and status for `error` (status overridable, e.g. 413)."""
    recorder.error = error
    response = codec.encode_error(error)
    if status is not None:
        response = dataclasses.replace(response, status=status)
    return await send_whole(state, recorder, response)


class ClientWatch:
    """Watches the ASGI `receive` channel for the client leaving while the current task waits or streams, and
    then cancels that task: one plain asyncio watcher task, no task group or cancel scope per wait.

    The task tells that cancellation from an outside one with `left()` in its `except CancelledError`: only the
    watcher's own request, taken back with `Task.uncancel()`, counts as the client leaving. Call `stop()` before
    the task awaits anything else (a finished response makes uvicorn's `receive` answer `http.disconnect`).
    """

    def __init__(self, receive: Receive) -> None:
        task = asyncio.current_task()
        assert task is not None, "ClientWatch runs inside a task"
        self.task = task
        self.gone = False
        """Whether the client left (and the task was cancelled for it)."""
        self._requested = False
        """Whether the watcher's cancellation request is still counted on the task (not yet taken back)."""
        self._watcher: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        subscribe = getattr(receive, "on_disconnect", None)
        if subscribe is not None:  # the in-process transport tells of the client leaving: no task needed
            self._unsubscribe = subscribe(self._left)
        else:
            self._watcher = asyncio.get_running_loop().create_task(self._watch(receive))

    async def _watch(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self._left()

    def _left(self) -> None:
        self.gone = self._requested = True
        self.task.cancel()

    def _take_back(self) -> int:
        """Withdraw the watcher's cancellation request; the number of (outside) requests left on the task."""
        self._requested = False
        return self.task.uncancel()

    def left(self) -> bool:
        """In the task's `except asyncio.CancelledError`: whether the cancellation was the client leaving alone
        (then it is taken back, and the task goes on); False for any outside cancellation, which must propagate."""
        return self._requested and self._take_back() == 0

    def stop(self) -> None:
        """Stop watching. If the client left but the task finished its work anyway (the cancellation swallowed
        on the way), the cancellation request is taken back so that it cannot hit a later wait. A failure of
        `receive` itself is raised here."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            if self._requested:
                self._take_back()
            return
        assert self._watcher is not None
        if not self._watcher.done():
            self._watcher.cancel()
            return
        if self._requested:
            self._take_back()
        error = None if self._watcher.cancelled() else self._watcher.exception()
        if error is not None:
            raise error


class TappedStream(Response):
    """A streamed answer that always runs `on_close` once, whether it ended, failed or the client left.

    It watches for the client leaving (`ClientWatch`, under any ASGI spec version) instead of Starlette's
    `StreamingResponse` task group. When the client leaves, the stream is cancelled where it waits (the app
    handing over a chunk, or the body iterator waiting for the upstream); the body iterator is then closed
    explicitly (it may be suspended at a `yield`) and `on_close` closes the upstream response and finishes the
    exchange.
    """

    def __init__(
        self,
        body: AsyncIterator[bytes],
        *,
        status_code: int,
        headers: dict[str, str],
        on_close: Callable[[], Awaitable[None]],
    ) -> None:
        self.status_code = status_code
        self.background = None
        self.init_headers(headers)
        self._body = body
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        watch = ClientWatch(receive)
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            async for chunk in self._body:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not watch.left():
                raise
        finally:
            try:
                watch.stop()
            finally:
                aclose = getattr(self._body, "aclose", None)
                if aclose is not None:
                    await aclose()
                await self._on_close()


async def unless_disconnected(receive: Receive, work: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
    """Run `work` while watching for the client leaving; returns (True, None) if it left first (work cancelled),
    (True, result) if it left as the work finished anyway.

    Used while waiting for upstream headers or a whole non-streamed upstream body, so that a client that
    gives up also cancels the upstream request.
    """
    watch = ClientWatch(receive)
    try:
        result = await work()
    except asyncio.CancelledError:
        if watch.left():
            return True, None
        raise
    finally:
        watch.stop()
    return watch.gone, result
