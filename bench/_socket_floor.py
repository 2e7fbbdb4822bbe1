"""The SDK floor of the WebSocket-mode runs (`bench_matrix`, `BENCH_MATRIX_TRANSPORTS=http,ws`).

The SDK's WebSocket mode opens a real socket (there is no in-process transport to hand it), so its floor is the
same driver call (`run_socket`) against a canned WebSocket server on a loopback port: uvicorn, the server the
built-in proxy's WebSocket runs go through, with a bare ASGI app that answers each turn with the client protocol's
own recorded stream, one text frame per event as the proxy frames them (the frontend's `WebSocketSession`), and
closes as the proxy does a stream cut short. No routing, translation, tap, replayer or checks: the floor is the
SDK's calls and the socket they need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from starlette.types import Receive, Scope, Send

from harness import drivers, ir
from harness.drivers.base import SdkResult, SocketDriver
from harness.protocols import registry
from harness.proxy import ServerThread
from harness.proxy.websocket import CUT_CODE
from harness.wire.sse import SSEDecoder

TURN_TIMEOUT_S = 60.0
"""Every wait of a floor turn is bounded (the runner's default `--timeout`)."""


@dataclass(frozen=True)
class Frames:
    """One turn's canned answer: the text frames, and whether the stream ended before its terminal event."""

    texts: tuple[str, ...]
    cut: bool = False


def frames_of(protocol: str, status: int, headers: Mapping[str, str], chunks: tuple[bytes, ...]) -> Frames:
    """A recorded HTTP answer of `protocol` as its WebSocket mode sends it (`harness.proxy.websocket._turn`): a
    refused POST as one `error` event, a stream as one frame per SSE event."""
    facts = registry.facts(protocol).frontend
    if facts is None or facts.websocket is None:
        raise SystemExit(f"floor: {protocol} has no WebSocket mode")
    session = facts.websocket()
    if status != 200:
        return Frames((session.failed(status, b"".join(chunks), dict(headers)),))
    decoder, texts = SSEDecoder(), []
    for chunk in chunks:
        for event in decoder.feed(chunk):
            if event.data and event.data != "[DONE]":
                texts.append(session.relay(event.data))
    return Frames(tuple(texts), cut=not session.finished)


class CannedSockets:
    """The canned WebSocket server: every turn gets `frames` (set before each call; calls are made one by one)."""

    def __init__(self) -> None:
        self.frames = Frames(())

        async def app(scope: Scope, receive: Receive, send: Send) -> None:  # a function: uvicorn takes it for ASGI 3
            await self._serve(scope, receive, send)

        self._server = ServerThread(app).start()

    @property
    def url(self) -> str:
        """The server's root URL (the SDK adds `/v1/responses`)."""
        return self._server.url

    def close(self) -> None:
        """Stop the server (bounded)."""
        self._server.stop()

    def turn(self, client: str, request: ir.Request | None, frames: Frames) -> SdkResult:
        """The WebSocket-mode turn the runner's driver call makes, answered with `frames`."""
        driver = drivers.get(client)
        if not isinstance(driver, SocketDriver) or request is None:
            raise SystemExit(f"floor: {client} makes no WebSocket-mode call")
        self.frames = frames
        return driver.run_socket(request, base_url=self.url, headers={}, timeout=TURN_TIMEOUT_S).result

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.accept"})
            frames = self.frames
            if (await receive())["type"] != "websocket.receive":
                return
            for text in frames.texts:
                await send({"type": "websocket.send", "text": text})
            if frames.cut:
                await send({"type": "websocket.close", "code": CUT_CODE})
                return
            await receive()  # the client's close
        else:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
