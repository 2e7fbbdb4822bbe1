"""When an SDK stops reading a `--sut` answer early (it raised on an event it could not read), the capture still
reads the rest, bounded, so the wire checks judge the whole stream: a first bug must not hide the next one. Real
sockets on 127.0.0.1 (ephemeral ports); every wait is bounded."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest

from harness.rig import sut

PARTS = [b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n", b"data: [DONE]\n\n"]


@contextmanager
def _server(stall_after: int | None) -> Iterator[str]:
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i, part in enumerate(PARTS):
                if stall_after is not None and i == stall_after:
                    release.wait(10)  # a gateway that stalls: the drain must not wait for it
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.flush()
                time.sleep(0.02)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def _read_first_then_stop(url: str) -> sut.CapturingTransport:
    capture = sut.CapturingTransport(httpx2.HTTPTransport(), budget=30)
    with httpx2.Client(transport=capture, timeout=10) as client, client.stream("GET", url) as response:
        for _chunk in response.iter_raw():
            break  # the SDK raised on the first event
    return capture


def test_what_the_client_left_unread_is_still_captured() -> None:
    with _server(stall_after=None) as url:
        capture = _read_first_then_stop(url)
    assert b"".join(capture.chunks) == b"".join(PARTS)
    assert len(capture.times) == len(capture.chunks)


def test_the_drain_of_a_stalled_answer_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sut, "DRAIN_S", 0.5)
    with _server(stall_after=2) as url:
        started = time.monotonic()
        capture = _read_first_then_stop(url)
        waited = time.monotonic() - started
    assert b"".join(capture.chunks) == b"".join(PARTS[:2])
    assert waited < 5, waited  # bounded by DRAIN_S, not by the server's 10 s stall nor the client's timeout


def test_a_fully_read_answer_is_not_read_again() -> None:
    with _server(stall_after=None) as url:
        capture = sut.CapturingTransport(httpx2.HTTPTransport(), budget=30)
        with httpx2.Client(transport=capture, timeout=10) as client:
            assert client.get(url).content == b"".join(PARTS)
    assert b"".join(capture.chunks) == b"".join(PARTS)
