"""Sending answers to the client: whole responses, native errors, and tapped streams that clean up."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
from starlette.responses import Response, StreamingResponse
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


class TappedStream(StreamingResponse):
    """A streamed answer that always runs `on_close` once, whether it ended, failed or the client left.

    Starlette cancels the body iterator when the client disconnects (ASGI spec < 2.4, which uvicorn speaks);
    the iterator may then be suspended at a `yield`, so it is closed here explicitly, shielded from the
    cancellation, and `on_close` closes the upstream response and finishes the exchange.
    """

    def __init__(
        self,
        body: AsyncIterator[bytes],
        *,
        status_code: int,
        headers: dict[str, str],
        on_close: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(body, status_code=status_code, headers=headers)
        self._body = body
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                aclose = getattr(self._body, "aclose", None)
                if aclose is not None:
                    await aclose()
                await self._on_close()


async def unless_disconnected(receive: Receive, work: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
    """Run `work` while watching for the client leaving; returns (True, None) if it left first (work cancelled).

    Used while waiting for upstream headers or a whole non-streamed upstream body, so that a client that
    gives up also cancels the upstream request.
    """
    gone = False
    result: T | None = None
    failure: Exception | None = None

    async def watch(scope: anyio.CancelScope) -> None:
        nonlocal gone
        while True:
            message: dict[str, Any] = dict(await receive())
            if message["type"] == "http.disconnect":
                gone = True
                scope.cancel()
                return

    async with anyio.create_task_group() as group:
        group.start_soon(watch, group.cancel_scope)
        try:
            result = await work()
        except Exception as exc:  # re-raised below as itself, not wrapped in the task group's ExceptionGroup
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return gone, result
