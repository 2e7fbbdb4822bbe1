"""Opening the upstream request for a routed call, with transport errors and a departing client handled."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
from starlette.responses import Response

from harness import ir
from harness.protocols import HttpRequest
from harness.proxy.sending import send_error, unless_disconnected
from harness.proxy.state import Call
from harness.proxy.tap import decode_request_for_tap
from harness.proxy.upstream import build, error_for_exception, public_url, safe_headers

# Status recorded (never sent: nobody is listening) when the client left before the answer (nginx's 499).
CLIENT_GONE_STATUS = 499


def client_gone() -> ir.IRError:
    """The error recorded when the client went away."""
    return ir.IRError.of(ir.ErrorKind.NETWORK, "client disconnected")


def record_outgoing(call: Call, outgoing: HttpRequest, protocol: str, *, decode: bool = True) -> None:
    """Note what is about to be sent upstream: URL without query, headers without credentials, and (when a
    tap is installed) the bytes decoded back to IR with the upstream codec, to check what was really sent."""
    upstream = call.route.upstream
    rec = call.recorder
    rec.set(upstream_url=public_url(upstream, outgoing.path))
    if rec.enabled:
        rec.set(upstream_headers=safe_headers(outgoing.headers), upstream_body=outgoing.body)
    if rec.enabled and decode:
        codec = call.state.codec(protocol)
        rec.set(upstream_request=decode_request_for_tap(codec, outgoing, rec, "upstream request", call.state.decoded))


async def open_upstream(call: Call, outgoing: HttpRequest) -> httpx2.Response | Response:
    """Send the request and wait for the upstream's status and headers.

    Returns the streaming upstream response, or the client's answer when the upstream could not be reached
    (the frontend's native network/timeout error) or the client left meanwhile (upstream request cancelled).
    """
    state, rec, upstream = call.state, call.recorder, call.route.upstream
    request = build(state.client, upstream, outgoing)
    try:
        gone, response = await unless_disconnected(call.receive, lambda: state.client.send(request, stream=True))
    except httpx2.HTTPError as exc:
        state.counters["upstream_unreachable"] += 1
        return await send_error(state, rec, call.frontend, error_for_exception(upstream, exc))
    if gone or response is None:
        if response is not None:
            await response.aclose()
        return await client_left(call)
    rec.set(upstream_status=response.status_code)
    return response


def body_chunks(response: httpx2.Response) -> AsyncIterator[bytes]:
    """The upstream body decoded from its transport encoding, chunk by chunk as it arrives (`aiter_bytes`). A body
    sent with no Content-Encoding, still unread, is read raw (`aiter_raw`): the same chunks, without the identity
    decoder and chunker that `aiter_bytes` passes each of them through (a long stream has hundreds)."""
    if "content-encoding" in response.headers or response.is_stream_consumed:
        return response.aiter_bytes()
    return response.aiter_raw()


async def read_whole(call: Call, response: httpx2.Response) -> bytes | Response:
    """The whole upstream body (decoded from its transport encoding), or the answer when reading failed."""
    state, rec, upstream = call.state, call.recorder, call.route.upstream
    try:
        gone, body = await unless_disconnected(call.receive, response.aread)
    except httpx2.HTTPError as exc:
        state.counters["upstream_failures"] += 1
        return await send_error(state, rec, call.frontend, error_for_exception(upstream, exc))
    finally:
        await response.aclose()
    if gone or body is None:
        return await client_left(call)
    rec.upstream_chunk(body)
    return body


async def client_left(call: Call) -> Response:
    """Finish an exchange whose client went away before the answer; the response is never read."""
    call.state.counters["client_disconnects"] += 1
    call.recorder.error = client_gone()
    call.recorder.set(frontend_status=CLIENT_GONE_STATUS)
    await call.state.complete(call.recorder)
    return Response(status_code=CLIENT_GONE_STATUS)
