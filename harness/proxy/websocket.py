"""A frontend's WebSocket mode (facts: `Frontend.websocket`): each client message is served as the streamed POST it
stands for, by this same app in process (so translation, hooks and the trace tap are those of HTTP), and each event
of that stream goes back as one text message. What a message means and what the connection remembers is the
protocol's (`WebSocketSession`); this module only carries them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import httpx2
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from harness.protocols.facts import WebSocketSession
from harness.proxy.asgi import StreamingASGITransport
from harness.wire import FramingError
from harness.wire.sse import SSEDecoder

IDLE_SECONDS = 600.0
"""A connection with no client message for this long is closed."""
TURN_SECONDS = 300.0
"""Longest wait for the next piece of a turn's stream."""
CUT_CODE = 1011
"""Close code for a turn whose stream ended before its terminal event (1011: the server met an unexpected
condition)."""
_NOT_FORWARDED = frozenset({"host", "connection", "upgrade", "content-length", "content-type"})
"""Handshake headers that do not belong on the turns' POSTs (nor do `sec-websocket-*`)."""


def endpoint(path: str, session_of: Callable[[], WebSocketSession]) -> Callable[[WebSocket], Awaitable[None]]:
    """The WebSocket endpoint of the generation route `path`."""

    async def serve(ws: WebSocket) -> None:
        await ws.accept()
        session = session_of()
        headers = {k: v for k, v in ws.headers.items() if k not in _NOT_FORWARDED and not k.startswith("sec-websocket")}
        headers["content-type"] = "application/json"
        transport = StreamingASGITransport(ws.scope["app"])
        async with httpx2.AsyncClient(transport=transport, base_url="http://proxy", timeout=TURN_SECONDS) as client:
            while True:
                try:
                    received = await asyncio.wait_for(ws.receive(), IDLE_SECONDS)
                except TimeoutError:
                    break
                if received["type"] == "websocket.disconnect":
                    break
                # A binary frame is read as UTF-8 text, so that a client sending JSON that way gets an answer.
                message = received.get("text") or (received.get("bytes") or b"").decode("utf-8", "replace")
                try:
                    if not await _turn(ws, client, path, headers, session, message):
                        break
                except WebSocketDisconnect:
                    break
        await _close(ws)

    return serve


async def _turn(
    ws: WebSocket,
    client: httpx2.AsyncClient,
    path: str,
    headers: dict[str, str],
    session: WebSocketSession,
    message: str,
) -> bool:
    """Serve one client message; False when the connection was closed because the turn's stream was cut."""
    body, error = session.begin(message)
    if body is None:
        await ws.send_text(error or "")
        return True
    async with client.stream("POST", path, content=body, headers=headers) as response:
        if response.status_code != 200:
            body = await response.aread()
            await ws.send_text(session.failed(response.status_code, body, dict(response.headers)))
            return True
        decoder = SSEDecoder()
        try:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.data and event.data != "[DONE]":
                        await ws.send_text(session.relay(event.data))
        except (httpx2.HTTPError, FramingError) as exc:
            broke = json.dumps({"error": {"message": f"the stream broke off: {exc}"}}).encode()
            await ws.send_text(session.failed(502, broke))
            return True
    if not session.finished:
        # The stream ended without its terminal event (the upstream cut it): what ends a cut body over HTTP is the
        # end of the connection here; left open, the client would wait for an event that never comes.
        await ws.close(code=CUT_CODE, reason="the stream ended before its terminal event")
        return False
    return True


async def _close(ws: WebSocket) -> None:
    if ws.client_state != WebSocketState.CONNECTED or ws.application_state != WebSocketState.CONNECTED:
        return
    try:
        await ws.close()
    except (RuntimeError, WebSocketDisconnect):  # the client left meanwhile
        return
