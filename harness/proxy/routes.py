"""The proxy's HTTP routes: generation endpoints of each frontend protocol, model lists, health, diagnostics."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harness import ir
from harness.protocols import HttpRequest, HttpResponse, registry
from harness.proxy import catalog, diagnostics, passthrough, translate
from harness.proxy.frontends import ANTHROPIC, GEMINI, OLLAMA, OPENAI, Frontend, RequestShapeError
from harness.proxy.responses import send_error, send_whole
from harness.proxy.state import Call, ProxyState
from harness.proxy.tap import TRACE_HEADER, Recorder
from harness.proxy.upstream import MissingKeyError, safe_headers

Endpoint = Callable[[Request], Awaitable[Response]]


class BodyTooLarge(Exception):
    """The request body is over the configured limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing to read more than `limit` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)


def _state(request: Request) -> ProxyState:
    state: ProxyState = request.app.state.proxy
    return state


def _wire_request(request: Request, body: bytes) -> HttpRequest:
    return HttpRequest(
        method=request.method,
        path=request.url.path,
        query=dict(request.query_params),
        headers={k.lower(): v for k, v in request.headers.items()},
        body=body,
    )


def generation(frontend: Frontend, label: str | None = None, *, count_tokens: bool = False) -> Endpoint:
    """The endpoint of one frontend generation route."""

    async def endpoint(request: Request) -> Response:
        state = _state(request)
        route_label = label or _gemini_label(request)
        rec = state.recorder(route_label, frontend.protocol)
        try:
            codec = state.codec(frontend.protocol)
        except registry.UnknownProtocolError as exc:
            return await _plain_error(state, rec, 500, str(exc))
        if rec.enabled:
            rec.set(frontend_headers=safe_headers(dict(request.headers)))
        try:
            body = await read_body(request, state.config.max_request_bytes)
        except BodyTooLarge:
            error = ir.IRError.of(
                ir.ErrorKind.INVALID_REQUEST, f"request body exceeds {state.config.max_request_bytes} bytes"
            )
            return await send_error(state, rec, codec, error, status=413)
        wire = _wire_request(request, body)
        try:
            model = frontend.model_of(wire)
        except RequestShapeError as exc:
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, str(exc)))
        rec.set(model=model)
        route = state.config.route(model)
        if route is None:
            state.counters["unknown_model"] += 1
            message = f"model {model!r} is not configured in this proxy"
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.NOT_FOUND, message))
        stream = codec.is_stream_request(wire)
        rec.set(stream=stream, upstream_name=route.upstream.name, upstream_protocol=route.upstream.protocol)
        call = Call(state, rec, codec, route, wire, stream, request.receive)
        try:
            if count_tokens and route.mode == "translate":
                return await _count_tokens_locally(call)
            if route.mode == "passthrough":
                return await passthrough.forward(call, frontend, tap_ir=not count_tokens)
            return await translate.run(call, frontend)
        except (MissingKeyError, registry.UnknownProtocolError) as exc:
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.SERVER, f"proxy: {exc}"))

    return endpoint


def _gemini_label(request: Request) -> str:
    """Route label of a Gemini call: the model is a path segment, the action is kept."""
    version = request.url.path.split("/")[1]
    action = request.path_params.get("target", "").rpartition(":")[2]
    return f"POST /{version}/models/{{model}}:{action}"


async def _count_tokens_locally(call: Call) -> Response:
    """Translate-mode `count_tokens`: the upstream protocol may have no such call, so estimate locally."""
    call.recorder.mode = "local"
    body = json.loads(call.request.body)  # shape already checked by `model_of`
    payload = json.dumps({"input_tokens": catalog.estimate_tokens(body)}).encode()
    return await send_whole(call.state, call.recorder, HttpResponse(200, {"content-type": "application/json"}, payload))


async def _plain_error(state: ProxyState, rec: Recorder, status: int, message: str) -> Response:
    rec.error = ir.IRError.of(ir.ErrorKind.SERVER, message)
    rec.set(frontend_status=status)
    await state.complete(rec)
    return JSONResponse({"error": {"message": message}}, status_code=status, headers={TRACE_HEADER: rec.trace_id})


async def list_models(request: Request) -> Response:
    """`GET /v1/models` (OpenAI or Anthropic shape by the client's headers), `/v1beta/models`, `/api/tags`."""
    path = request.url.path
    if path.startswith("/v1beta"):
        shape = "gemini"
    elif path == "/api/tags":
        shape = "ollama"
    else:
        shape = catalog.list_shape(dict(request.headers), dict(request.query_params))
    return JSONResponse(catalog.model_list(shape, _state(request).config))


async def get_model(request: Request) -> Response:
    """`GET /v1/models/{id}` and `/v1beta/models/{id}`: one configured model, or the protocol's 404."""
    path = request.url.path
    shape = (
        "gemini"
        if path.startswith("/v1beta")
        else catalog.list_shape(dict(request.headers), dict(request.query_params))
    )
    state = _state(request)
    route = state.config.route(request.path_params["model_id"])
    if route is not None:
        return JSONResponse(catalog.model_entry(shape, route))
    error = ir.IRError.of(ir.ErrorKind.NOT_FOUND, f"model {request.path_params['model_id']!r} is not configured")
    try:
        native = state.codec(shape).encode_error(error)
    except registry.UnknownProtocolError:
        return JSONResponse({"error": {"message": error.message}}, status_code=404)
    return Response(native.body, status_code=native.status, headers=native.headers)


async def healthz(request: Request) -> Response:
    """Liveness: the app is up and has a config."""
    return JSONResponse({"status": "ok", "models": len(_state(request).config.models)})


async def diagnostics_endpoint(request: Request) -> Response:
    """Config summary, upstream reachability (skip with `?reachability=0`), versions, traces, counters."""
    check = request.query_params.get("reachability", "1") not in ("0", "false", "no")
    return JSONResponse(await diagnostics.report(_state(request), check_reachability=check))


def routes() -> list[Route]:
    """Every route of the proxy."""
    return [
        Route("/v1/chat/completions", generation(OPENAI, "POST /v1/chat/completions"), methods=["POST"]),
        Route("/v1/messages", generation(ANTHROPIC, "POST /v1/messages"), methods=["POST"]),
        Route(
            "/v1/messages/count_tokens",
            generation(ANTHROPIC, "POST /v1/messages/count_tokens", count_tokens=True),
            methods=["POST"],
        ),
        Route("/v1beta/models/{target}", generation(GEMINI), methods=["POST"]),
        Route("/v1/models/{target}", generation(GEMINI), methods=["POST"]),
        Route("/api/chat", generation(OLLAMA, "POST /api/chat"), methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1beta/models", list_models, methods=["GET"]),
        Route("/api/tags", list_models, methods=["GET"]),
        Route("/v1/models/{model_id}", get_model, methods=["GET"]),
        Route("/v1beta/models/{model_id}", get_model, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/api/diagnostics", diagnostics_endpoint, methods=["GET"]),
    ]
