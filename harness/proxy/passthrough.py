"""Pass-through mode: the request goes upstream unchanged (the proxy's own key applied), the response bytes
come back unchanged, and both directions are tapped into IR for the trace on the side."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

import httpx2
from starlette.responses import Response

from harness import ir
from harness.protocols import Codec, DecodeError
from harness.protocols.facts import Frontend
from harness.proxy.calls import client_gone, open_upstream, record_outgoing
from harness.proxy.sending import TappedStream, send_error
from harness.proxy.state import Call
from harness.proxy.tap import TRACE_HEADER, StreamTap, decode_request_for_tap
from harness.proxy.upstream import (
    authorized,
    error_for_exception,
    response_headers,
    safe_headers,
    without_client_credentials,
)


class UpstreamBrokeError(ConnectionError):
    """The upstream connection failed mid-body; raised to the server so that it breaks the client's connection
    too, and the client sees the same failure it would see talking to the upstream directly."""


# Error bodies are kept for decoding even without a tap (counters need the error kind); this bounds them.
MAX_ERROR_BODY = 1024 * 1024


async def forward(call: Call, frontend: Frontend, *, tap_ir: bool = True) -> Response:
    """Forward one request and relay the answer byte for byte. `tap_ir=False` (count_tokens) skips decoding
    bodies that are not generation requests or responses."""
    rec, route = call.recorder, call.route
    rec.mode = "passthrough"
    codec = call.state.codec(route.upstream.protocol)
    if codec.family != call.frontend.name:
        # The bytes would reach an upstream that speaks another protocol: a config mistake, said plainly.
        message = (
            f"proxy: model {route.name!r} passes through to {route.upstream.name} ({codec.name}, a "
            f"{codec.family} protocol), but this client speaks {call.frontend.name}; use translate mode"
        )
        return await send_error(call.state, rec, call.frontend, ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, message))
    outgoing = without_client_credentials(call.request)
    if route.upstream_model != route.name:
        outgoing = frontend.model.with_model(outgoing, route.upstream_model)
    outgoing = authorized(codec, outgoing, route.upstream)
    if rec.enabled and tap_ir:
        rec.set(frontend_request=decode_request_for_tap(call.frontend, call.request, rec, "frontend request"))
    record_outgoing(call, outgoing, route.upstream.protocol, decode=tap_ir)
    opened = await open_upstream(call, outgoing)
    if isinstance(opened, Response):
        return opened
    return _relay(call, codec, opened, tap_ir=tap_ir)


def _relay(call: Call, codec: Codec, upstream: httpx2.Response, *, tap_ir: bool) -> TappedStream:
    state, rec = call.state, call.recorder
    status = upstream.status_code
    headers = {**response_headers(upstream.headers), TRACE_HEADER: rec.trace_id}
    if upstream.is_stream_consumed:
        # An in-process transport handed over an already-read body: only its decoded form is left, so it is
        # sent without its Content-Encoding.
        headers.pop("content-encoding", None)
    encoding = headers.get("content-encoding", "").strip().lower()
    rec.set(frontend_response_headers=safe_headers(headers))
    tapping = rec.enabled and tap_ir
    tap = StreamTap(codec, encoding, rec) if tapping and call.stream and status < 400 else None
    # Whole bodies to decode at the end: every error body, and non-streamed successes when tapping.
    whole: bytearray | None = bytearray() if status >= 400 or (tapping and not call.stream) else None
    whole_limit = max(MAX_ERROR_BODY, state.config.tap_max_bytes if rec.enabled else 0)
    finished = False

    async def body() -> AsyncIterator[bytes]:
        nonlocal finished
        try:
            async for chunk in _raw(upstream):
                rec.upstream_chunk(chunk)
                if tap is not None:
                    tap.feed(chunk)
                if whole is not None and len(whole) <= whole_limit:
                    whole.extend(chunk)
                rec.frontend_chunk(chunk)
                yield chunk
            finished = True
        except httpx2.HTTPError as exc:
            # Bytes already sent cannot be taken back, and ending the body cleanly would hand the client a
            # truncated stream that looks complete to most SDKs. So the break is passed on as a break.
            state.counters["upstream_failures_mid_stream"] += 1
            rec.error = error_for_exception(call.route.upstream, exc)
            finished = True
            raise UpstreamBrokeError(rec.error.message) from exc
        finally:
            await upstream.aclose()

    async def on_close() -> None:
        if not finished:
            state.counters["client_disconnects"] += 1
            rec.error = rec.error or client_gone()
        if tap is not None:
            tap.close()
        if whole is not None and len(whole) > whole_limit:
            rec.problem(f"upstream body longer than {whole_limit} bytes: not decoded")
        elif whole is not None:
            _decode_whole(codec, call, status, dict(upstream.headers), bytes(whole), encoding)
        await state.complete(rec)

    rec.set(frontend_status=status)
    return TappedStream(body(), status_code=status, headers=headers, on_close=on_close)


async def _raw(upstream: httpx2.Response) -> AsyncIterator[bytes]:
    """The body as it came off the wire (still compressed, if it was), chunk by chunk."""
    if upstream.is_stream_consumed:
        yield upstream.content
        return
    async for chunk in upstream.aiter_raw():
        yield chunk


def _decode_whole(codec: Codec, call: Call, status: int, headers: dict[str, str], body: bytes, encoding: str) -> None:
    rec = call.recorder
    try:
        if encoding in ("gzip", "deflate"):
            body = zlib.decompress(body, wbits=47)
        if status >= 400:
            rec.error = rec.error or codec.decode_error(status, headers, body)
        else:
            rec.set(upstream_response=codec.decode_response(body))
    except (DecodeError, zlib.error) as exc:
        rec.problem(f"upstream body: {exc}")
