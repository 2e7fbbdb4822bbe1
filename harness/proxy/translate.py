"""Translate mode: frontend decode -> IR -> upstream encode -> upstream decode -> grammar check -> frontend
encode. Streams are translated event by event and each frontend chunk is sent as soon as it exists."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import httpx2
from starlette.responses import Response

from harness import ir
from harness.protocols import Codec, DecodeError, HttpResponse
from harness.protocols.facts import Frontend
from harness.proxy.calls import body_chunks, client_gone, open_upstream, read_whole, record_outgoing
from harness.proxy.models import HookContext, TranslateHooks
from harness.proxy.sending import TappedStream, own_headers, send_error, send_whole
from harness.proxy.state import Call
from harness.proxy.translate_stream import EventPipe, stop_for_client
from harness.proxy.upstream import api_key, authorized, error_for_exception, safe_headers

# Seconds the proxy keeps reading an upstream stream after its terminal event, to record trailing bytes.
DRAIN_SECONDS = 2.0


async def run(call: Call, frontend: Frontend) -> Response:
    """Translate one request and its answer."""
    state, rec, route = call.state, call.recorder, call.route
    rec.mode = "translate"
    try:
        frontend_ir = call.frontend.decode_request(call.request)
    except DecodeError as exc:
        state.counters["frontend_decode_errors"] += 1
        return await send_error(state, rec, call.frontend, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, str(exc)))
    rec.set(frontend_request=frontend_ir)
    context = HookContext(call.frontend.name, route.upstream.protocol, call.stream, api_key(route.upstream))
    hooks = state.hooks_for(route).bind(context)
    codec = state.codec(route.upstream.protocol)
    stateful = list(frontend.server_state(frontend_ir)) if codec.family != call.frontend.family else []
    if stateful:
        # Sent without them, the upstream would answer a conversation the client never had.
        state.counters["untranslatable_requests"] += 1
        message = (
            f"cannot translate the request to {route.upstream.protocol}: it relies on state a "
            f"{call.frontend.family} server keeps ({', '.join(stateful)}), which a {codec.family} upstream never sees"
        )
        return await send_error(state, rec, call.frontend, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, message))
    upstream_ir = frontend_ir.model_copy(update={"model": route.upstream_model, "stream": call.stream})
    try:
        encoded = codec.encode_request(hooks.on_upstream_request(upstream_ir))
    except ValueError as exc:  # the upstream protocol cannot express this request (an encoder's EncodeError)
        state.counters["untranslatable_requests"] += 1
        message = f"cannot translate the request to {route.upstream.protocol}: {exc}"
        return await send_error(state, rec, call.frontend, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, message))
    outgoing = authorized(codec, hooks.on_upstream_http(encoded), route.upstream)
    record_outgoing(call, outgoing, route.upstream.protocol)
    opened = await open_upstream(call, outgoing)
    if isinstance(opened, Response):
        return opened
    if opened.status_code >= 400:
        return await _upstream_error(call, codec, opened, hooks, frontend, frontend_ir)
    if not call.stream:
        return await _whole(call, codec, opened, frontend_ir, hooks)
    media_type = frontend.stream_media_type(call.request) or call.frontend.stream_media_type
    return _stream(call, codec, opened, frontend_ir, hooks, media_type)


async def _upstream_error(
    call: Call,
    codec: Codec,
    upstream: httpx2.Response,
    hooks: TranslateHooks,
    frontend: Frontend,
    frontend_ir: ir.Request,
) -> Response:
    """An upstream HTTP error becomes the frontend's own error body and status."""
    body = await read_whole(call, upstream)
    if isinstance(body, Response):
        return body
    call.state.counters["upstream_http_errors"] += 1
    error = hooks.on_error(codec.decode_error(upstream.status_code, dict(upstream.headers), body))
    if call.stream and hooks.on_stream_error is not None:  # a fault seam: the error inside a 200 stream
        call.recorder.error = error
        encoder = call.frontend.stream_encoder(request=frontend_ir)
        events = b"".join(encoder.encode(e) for e in hooks.on_stream_error(error)) + encoder.close()
        media_type = frontend.stream_media_type(call.request) or call.frontend.stream_media_type
        return await send_whole(call.state, call.recorder, HttpResponse(200, {"content-type": media_type}, events))
    call.recorder.error = error
    response = call.frontend.encode_error(error)
    response = dataclasses.replace(response, body=hooks.on_error_body(response.body))
    return await send_whole(call.state, call.recorder, response)


async def _whole(
    call: Call, codec: Codec, upstream: httpx2.Response, frontend_ir: ir.Request, hooks: TranslateHooks
) -> Response:
    """A non-streamed answer: decode the upstream body, encode it for the frontend."""
    body = await read_whole(call, upstream)
    if isinstance(body, Response):
        return body
    try:
        response = codec.decode_response(body)
    except DecodeError as exc:
        call.state.counters["upstream_decode_errors"] += 1
        error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"upstream body: {exc}")
        return await send_error(call.state, call.recorder, call.frontend, error)
    call.recorder.set(upstream_response=response)
    called = any(isinstance(p, ir.ToolCallPart) for p in response.content)
    told = response.model_copy(update={"stop_reason": stop_for_client(response.stop_reason, tool_called=called)})
    try:
        encoded = call.frontend.encode_response(hooks.on_upstream_response(told), request=frontend_ir)
    except ValueError as exc:  # the frontend protocol cannot express this answer
        error = ir.IRError.of(ir.ErrorKind.SERVER, f"cannot translate the response: {exc}")
        return await send_error(call.state, call.recorder, call.frontend, error)
    return await send_whole(call.state, call.recorder, encoded)


def _stream(
    call: Call,
    codec: Codec,
    upstream: httpx2.Response,
    frontend_ir: ir.Request,
    hooks: TranslateHooks,
    media_type: str,
) -> TappedStream:
    state, rec = call.state, call.recorder
    pipe = EventPipe(codec.stream_decoder(), call.frontend.stream_encoder(request=frontend_ir), hooks, rec)
    finished = False

    async def body() -> AsyncIterator[bytes]:
        nonlocal finished
        chunks = body_chunks(upstream)
        try:
            async for chunk in chunks:
                rec.upstream_chunk(chunk)
                for out in pipe.feed(chunk):
                    yield out
                if pipe.terminated:
                    break
            if pipe.terminated:
                # The client has its terminal event; read what the upstream still sends, for the trace only,
                # and only briefly so that an upstream that keeps the connection open cannot stall the client.
                drain = asyncio.timeout(DRAIN_SECONDS)
                try:
                    async with drain:
                        async for chunk in chunks:
                            rec.upstream_chunk(chunk)
                            pipe.feed(chunk)
                except TimeoutError:
                    if not drain.expired():
                        raise
            tail = pipe.close()
        except httpx2.HTTPError as exc:
            state.counters["upstream_failures_mid_stream"] += 1
            tail = pipe.fail(error_for_exception(call.route.upstream, exc))
        finally:
            await upstream.aclose()
        for out in tail:
            yield out
        finished = True

    async def on_close() -> None:
        if not finished:
            state.counters["client_disconnects"] += 1
            rec.error = rec.error or client_gone()
        pipe.finish()
        await state.complete(rec)

    headers = {"content-type": media_type, "cache-control": "no-cache", **own_headers(rec)}
    rec.set(frontend_status=200, frontend_response_headers=safe_headers(headers))
    return TappedStream(body(), status_code=200, headers=headers, on_close=on_close)
