"""A run over a frontend's WebSocket mode (`Run.transport == "ws"`): the driver's one turn, and the frames it read
made the run's frontend wire, so the frontend wire checks judge them as they judge an HTTP stream.

The frames are the wire: each server message is kept whole, one chunk per frame, written as one SSE `data:` block
(a message holding a line break as several `data:` lines, which SSE joins back with the line break), so the
stream decoder, the event grammar, the wire rules (`sequence_number`, item order) and the published event schemas
read the same events the client did, with the frame boundaries as chunk boundaries. Nothing is added to a frame:
no `event:` line (the Responses decoder reads the type from the data), and `content-type: text/event-stream`
stands beside the handshake's own headers only to say how the chunks are framed.

Against the built-in proxy the tap's exchange (the turn served in process as a streamed POST) keeps its upstream
side and its decoded request; against a system under test, which the harness cannot tap, the exchange is built from
the client's side alone, as an HTTP run's is from its capture.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from harness import ir
from harness.drivers.base import SocketRun
from harness.protocols import DecodeError, HttpRequest, registry
from harness.protocols.wire_schema import SOCKET_FRAMES
from harness.proxy import Exchange, Timings
from harness.trace import Run

FRAMED_AS = f"text/event-stream; {SOCKET_FRAMES}"
"""How the frames are framed in the run's frontend wire (one `data:` block each), and that they are frames."""
UPGRADE_STATUS = 101


def as_sse(frame: bytes) -> bytes:
    """One WebSocket message as one SSE event: its lines as `data:` lines, then the blank line."""
    return b"".join(b"data: " + line + b"\n" for line in frame.split(b"\n")) + b"\n"


def _headers(socket: SocketRun) -> dict[str, str]:
    """The handshake's headers, the headers a refused turn's error message carried (as an HTTP answer carries
    them: `Retry-After`), and the framing."""
    kept = {k: v for k, v in {**socket.headers, **socket.error_headers}.items() if k != "content-type"}
    return {**kept, "content-type": FRAMED_AS}


def _path(protocol: str) -> str:
    frontend = registry.facts(protocol).frontend
    paths = [r.path for r in frontend.routes if r.kind == "generate"] if frontend is not None else []
    return paths[0] if paths else "/"


def fill(capture: Any, socket: SocketRun, protocol: str) -> None:
    """A client-side capture (`rig.sut.CapturingTransport`) filled from a WebSocket turn: the message as the
    streamed POST it stands for, and the frames as its answer."""
    body = json.loads(socket.sent) if socket.sent else {}
    body = {**{k: v for k, v in body.items() if k != "type"}, "stream": True}
    capture.request = HttpRequest(
        method="POST",
        path=_path(protocol),
        headers={"content-type": "application/json"},
        body=json.dumps(body).encode(),
    )
    capture.status = 200 if socket.headers or socket.frames else None
    capture.headers = _headers(socket)
    capture.chunks = [as_sse(f) for f in socket.frames]
    capture.sent, capture.times = socket.sent_at, list(socket.times)


def with_frames(exchange: Exchange | None, socket: SocketRun, run: Run) -> Exchange | None:
    """The run's exchange with the frames as its frontend wire; built from the client's side when the proxy's
    tap saw nothing (a system under test), and None when not even the handshake succeeded."""
    if not socket.headers and not socket.frames:
        return exchange
    frontend = {
        "frontend_status": 200,
        "frontend_chunks": tuple(as_sse(f) for f in socket.frames),
        "frontend_response_headers": _headers(socket),
        "frontend_chunk_times": (),
        "frontend_chunk_events": (),
    }
    if exchange is not None:
        return dataclasses.replace(exchange, **frontend)  # type: ignore[arg-type]
    return Exchange(
        trace_id=f"ws-{run.key}",
        route=f"GET {_path(run.client)} (WebSocket)",
        frontend_protocol=run.client,
        mode=run.mode,
        stream=True,
        upstream_name=run.backend,
        upstream_protocol=run.backend,
        frontend_request=_request(run.client, socket.sent),
        timings=Timings(start=0.0),
        **frontend,  # type: ignore[arg-type]
    )


def _request(protocol: str, sent: bytes) -> ir.Request | None:
    """The client's message decoded as the streamed POST it stands for (its `type` left out, `stream` set)."""
    try:
        event = json.loads(sent)
        body = json.dumps({**{k: v for k, v in event.items() if k != "type"}, "stream": True}).encode()
        http = HttpRequest(method="POST", path=_path(protocol), headers={"content-type": "application/json"}, body=body)
        return registry.get(protocol).decode_request(http)
    except (json.JSONDecodeError, AttributeError, DecodeError):
        return None
