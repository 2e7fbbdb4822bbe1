"""Reference backends as an ASGI app: each backend protocol mounted under `/<backend>` on one server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from harness.backends.respond import WireReply, respond
from harness.protocols import DecodeError, HttpRequest, registry
from harness.scenarios.model import Scenario


def _http_request(request: Request, body: bytes, prefix: str) -> HttpRequest:
    path = request.url.path.removeprefix(prefix) or "/"
    return HttpRequest(
        method=request.method,
        path=path,
        query=dict(request.query_params),
        headers={k.lower(): v for k, v in request.headers.items()},
        body=body,
    )


ReplyFn = Callable[[str, HttpRequest], WireReply]
"""Answers one backend request: (backend name, request relative to the backend's base URL) -> wire reply."""


def _endpoint(backend: str, reply_fn: ReplyFn) -> Callable[[Request], Awaitable[Response]]:
    prefix = f"/{backend}"

    async def handle(request: Request) -> Response:
        body = await request.body()
        try:
            reply = reply_fn(backend, _http_request(request, body, prefix))
        except (DecodeError, LookupError, ValueError) as exc:
            # A backend that cannot place a request says so plainly: the harness shows this text.
            return JSONResponse({"error": {"message": f"{backend}: {exc}"}}, status_code=400)

        async def chunks() -> AsyncIterator[bytes]:
            for chunk in reply.chunks:
                yield chunk

        return StreamingResponse(chunks(), status_code=reply.status, headers=reply.headers)

    return handle


def wire_app(backends: Sequence[str], reply_fn: ReplyFn) -> Starlette:
    """An app serving each backend under `/<backend>/...`, answering with `reply_fn`, chunk boundaries kept."""
    mounts = [
        Mount(f"/{name}", routes=[Route("/{path:path}", _endpoint(name, reply_fn), methods=["POST"])])
        for name in backends
    ]
    return Starlette(routes=mounts)


def create_backend_app(
    scenarios: Sequence[Scenario],
    backends: Sequence[str] | None = None,
    *,
    on_reply: list[WireReply] | None = None,
) -> Starlette:
    """Reference backends for every registered protocol (or those named), each under `/<backend>/...`.

    `on_reply`, when given, receives each reply with its chunk boundaries (the recorder uses it, because vcrpy
    buffers a body while recording)."""

    def reply_fn(backend: str, request: HttpRequest) -> WireReply:
        reply = respond(registry.get(backend), request, scenarios)
        if on_reply is not None:
            on_reply.append(reply)
        return reply

    return wire_app(list(backends) if backends is not None else registry.names(), reply_fn)
