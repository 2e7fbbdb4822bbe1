"""The proxy's HTTP routes: generation endpoints of each frontend protocol, model lists, health, diagnostics."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from harness import ir
from harness.protocols import DecodeError, HttpRequest, HttpResponse, registry
from harness.protocols.facts import Frontend, ModelList, RequestShapeError
from harness.protocols.facts import Route as FrontendRoute
from harness.proxy import diagnostics, local_answers, passthrough, translate, websocket
from harness.proxy.sending import send_error, send_whole
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


def first_values(request: Request) -> dict[str, str]:
    """The request's headers, the first value of each name (as `dict(request.headers)`, without looking each name
    up again in the list)."""
    headers: dict[str, str] = {}
    for key, value in request.headers.raw:
        headers.setdefault(key.decode("latin-1"), value.decode("latin-1"))
    return headers


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


def generation(protocol: str, frontend: Frontend, route: FrontendRoute) -> Endpoint:
    """The endpoint of one frontend route of `protocol` (its facts: `frontend`)."""
    count_tokens = route.kind == "count_tokens"

    async def endpoint(request: Request) -> Response:
        state = _state(request)
        rec = state.recorder(frontend.model.label(route.path, request.url.path), protocol)
        try:
            codec = state.codec(protocol)
        except registry.UnknownProtocolError as exc:
            return await _plain_error(state, rec, 500, str(exc))
        if rec.enabled:
            rec.set(frontend_headers=safe_headers(first_values(request)))
        try:
            body = await read_body(request, state.config.max_request_bytes)
        except BodyTooLarge:
            error = ir.IRError.of(
                ir.ErrorKind.INVALID_REQUEST, f"request body exceeds {state.config.max_request_bytes} bytes"
            )
            return await send_error(state, rec, codec, error, status=413)
        depth = nesting_depth(body)
        if depth > MAX_NESTING:
            message = f"request body nests {depth} levels deep; this proxy accepts at most {MAX_NESTING}"
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, message))
        wire = _wire_request(request, body)
        try:
            model = frontend.model.model_of(wire)
        except RequestShapeError as exc:
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, str(exc)))
        rec.set(model=model)
        configured = state.config.route(model)
        if configured is None:
            state.counters["unknown_model"] += 1
            message = f"model {model!r} is not configured in this proxy"
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.NOT_FOUND, message))
        stream = codec.is_stream_request(wire)
        rec.set(stream=stream, upstream_name=configured.upstream.name, upstream_protocol=configured.upstream.protocol)
        call = Call(state, rec, codec, configured, wire, stream, request.receive)
        try:
            if count_tokens and configured.mode == "translate":
                return await _count_tokens_locally(call)
            if route.answer is not None and configured.mode == "translate":
                return await _answer_locally(call, route.answer)
            if configured.mode == "passthrough":
                return await passthrough.forward(call, frontend, tap_ir=not count_tokens and route.answer is None)
            return await translate.run(call, frontend)
        except (MissingKeyError, registry.UnknownProtocolError) as exc:
            return await send_error(state, rec, codec, ir.IRError.of(ir.ErrorKind.SERVER, f"proxy: {exc}"))

    return endpoint


MAX_NESTING = 128
"""Deepest JSON nesting a request may have (real requests, JSON schemas included, stay within a few dozen): a
deeper one would exhaust the decoders' recursion, so it is refused up front with the frontend's 400."""
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")


def nesting_depth(body: bytes) -> int:
    """The deepest bracket nesting of a JSON text, strings left out, without recursion (any bytes accepted); for a
    body with at most `MAX_NESTING` brackets in all, their count (a bound: such a body is never too deep)."""
    if body.count(b"[") + body.count(b"{") <= MAX_NESTING:
        return body.count(b"[") + body.count(b"{")
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub(b"", body)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


async def _count_tokens_locally(call: Call) -> Response:
    """Translate-mode `count_tokens`: the upstream protocol may have no such call, so estimate locally."""
    call.recorder.mode = "local"
    body = json.loads(call.request.body)  # shape already checked by `model_of`
    payload = json.dumps({"input_tokens": local_answers.estimate_tokens(body)}).encode()
    return await send_whole(call.state, call.recorder, HttpResponse(200, {"content-type": "application/json"}, payload))


async def _answer_locally(call: Call, answer: Callable[[HttpRequest], HttpResponse]) -> Response:
    """Translate mode on a route the protocol answers itself (facts: `Route.answer`): no upstream call."""
    call.recorder.mode = "local"
    try:
        out = answer(call.request)
    except DecodeError as exc:
        return await send_error(
            call.state, call.recorder, call.frontend, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, str(exc))
        )
    return await send_whole(call.state, call.recorder, out)


async def _plain_error(state: ProxyState, rec: Recorder, status: int, message: str) -> Response:
    rec.error = ir.IRError.of(ir.ErrorKind.SERVER, message)
    rec.set(frontend_status=status)
    await state.complete(rec)
    return JSONResponse({"error": {"message": message}}, status_code=status, headers={TRACE_HEADER: rec.trace_id})


def list_models(candidates: list[str]) -> Endpoint:
    """The endpoint of a model-list path (`GET /v1/models`, `/v1beta/models`, `/api/tags`) that these
    protocols list at: the answer comes in the shape of the one the client speaks."""

    async def endpoint(request: Request) -> Response:
        shape = local_answers.list_shape(candidates, dict(request.headers), dict(request.query_params))
        return JSONResponse(local_answers.model_list(shape, _state(request).config))

    return endpoint


def get_model(candidates: list[str]) -> Endpoint:
    """The endpoint of a one-model path (`GET /v1/models/{id}`): one configured model, or the protocol's 404."""

    async def endpoint(request: Request) -> Response:
        shape = local_answers.list_shape(candidates, dict(request.headers), dict(request.query_params))
        state = _state(request)
        route = state.config.route(request.path_params["model_id"])
        if route is not None:
            return JSONResponse(local_answers.model_entry(shape, route))
        message = f"model {request.path_params['model_id']!r} is not configured"
        error = ir.IRError.of(ir.ErrorKind.NOT_FOUND, message)
        try:
            native = state.codec(shape).encode_error(error)
        except registry.UnknownProtocolError:
            return JSONResponse({"error": {"message": error.message}}, status_code=404)
        return Response(native.body, status_code=native.status, headers=native.headers)

    return endpoint


async def healthz(request: Request) -> Response:
    """Liveness: the app is up and has a config."""
    return JSONResponse({"status": "ok", "models": len(_state(request).config.models)})


async def diagnostics_endpoint(request: Request) -> Response:
    """Config summary, upstream reachability (skip with `?reachability=0`), versions, traces, counters."""
    check = request.query_params.get("reachability", "1") not in ("0", "false", "no")
    server = request.scope.get("server")
    return JSONResponse(await diagnostics.report(_state(request), check_reachability=check, server=server))


def _paths(paths_of: Callable[[ModelList], Sequence[str]]) -> list[tuple[str, list[str]]]:
    return sorted(local_answers.protocols_at(paths_of).items())


def routes() -> list[BaseRoute]:
    """Every route of the proxy: each frontend protocol's routes and model lists (from its facts), health and
    diagnostics."""
    out: list[BaseRoute] = []
    for name in registry.names():
        frontend = registry.facts(name).frontend
        if frontend is not None:
            out += [Route(r.path, generation(name, frontend, r), methods=["POST"]) for r in frontend.routes]
            if frontend.websocket is not None:
                generate = [r.path for r in frontend.routes if r.kind == "generate" and r.answer is None]
                out += [WebSocketRoute(p, websocket.endpoint(p, frontend.websocket)) for p in generate]
    out += [Route(path, list_models(names), methods=["GET"]) for path, names in _paths(lambda m: m.paths)]
    out += [Route(path, get_model(names), methods=["GET"]) for path, names in _paths(lambda m: m.item_paths)]
    out += [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/api/diagnostics", diagnostics_endpoint, methods=["GET"]),
    ]
    return out
