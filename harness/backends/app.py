"""Reference backends as an ASGI app: each backend protocol mounted under `/<backend>` on one server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from harness.backends.respond import WireReply, respond
from harness.protocols import DecodeError, HttpRequest, registry
from harness.protocols.facts import ListedModel, ModelList
from harness.scenarios.model import ReplyModels, Scenario


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
PACE_MAX_MS = 200.0
"""The longest `--pace`: the 546 chunks of `long-output` then take 109 s, within a run's wall-clock limit (240 s at
the default `--timeout`)."""


def check_pace(ms: float) -> float:
    """`--pace MS` as seconds between chunks; ValueError unless 0 <= MS <= PACE_MAX_MS."""
    if not 0.0 <= ms <= PACE_MAX_MS:  # also refuses NaN
        raise ValueError(f"--pace {ms:g}: milliseconds between streamed chunks, from 0 to {PACE_MAX_MS:g}")
    return ms / 1000.0


def _model_list(backend: str) -> ModelList | None:
    """The backend's listing shape: its own, or its family's (a profile lists like its family)."""
    own = registry.facts(backend).model_list
    return own if own is not None else registry.facts(registry.get(backend).family).model_list


def model_listing(backend: str, path: str, scenarios: Sequence[Scenario]) -> WireReply | None:
    """The backend's answer to `GET <path>` when the path ends with one of its listing paths (a gateway forwards a
    client's listing upstream): the models of the scenarios' `models` replies, in the protocol's shape. None when
    the path lists nothing."""
    listing = _model_list(backend)
    if listing is None or not any(path.rstrip("/").endswith(p) for p in listing.paths):
        return None
    names = [m for s in scenarios if isinstance(s.reply, ReplyModels) for m in s.reply.models]
    body = listing.envelope([listing.entry(ListedModel(name, "passthrough")) for name in dict.fromkeys(names)])
    chunk = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return WireReply(200, {"content-type": "application/json"}, [chunk], scenario="models-list")


def _endpoint(
    backend: str, reply_fn: ReplyFn, scenarios: Sequence[Scenario], pace: float = 0.0
) -> Callable[[Request], Awaitable[Response]]:
    prefix = f"/{backend}"

    async def handle(request: Request) -> Response:
        if request.method == "GET":
            path = request.url.path.removeprefix(prefix) or "/"
            listing = model_listing(backend, path, scenarios)
            if listing is None:
                return JSONResponse({"error": {"message": f"{backend}: no GET route {path}"}}, status_code=404)
            return Response(listing.body, status_code=listing.status, headers=listing.headers)
        body = await request.body()
        try:
            reply = reply_fn(backend, _http_request(request, body, prefix))
        except (DecodeError, LookupError, ValueError) as exc:
            # A backend that cannot place a request says so plainly: the harness shows this text.
            return JSONResponse({"error": {"message": f"{backend}: {exc}"}}, status_code=400)

        async def chunks() -> AsyncIterator[bytes]:
            for n, chunk in enumerate(reply.chunks):
                if n and pace:  # `pace` seconds between chunks, none before the first
                    await asyncio.sleep(pace)
                yield chunk

        return StreamingResponse(chunks(), status_code=reply.status, headers=reply.headers)

    return handle


def wire_app(
    backends: Sequence[str], reply_fn: ReplyFn, scenarios: Sequence[Scenario] = (), *, pace: float = 0.0
) -> Starlette:
    """An app serving each backend under `/<backend>/...`, answering POSTs with `reply_fn`, chunk boundaries kept
    (and `pace` seconds apart when not 0: `--pace`), and GETs of the backend's model listing paths with the
    `scenarios`' listed models (`model_listing`)."""
    mounts = [
        Mount(
            f"/{name}",
            routes=[Route("/{path:path}", _endpoint(name, reply_fn, scenarios, pace), methods=["POST", "GET"])],
        )
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

    return wire_app(list(backends) if backends is not None else registry.names(), reply_fn, scenarios)
