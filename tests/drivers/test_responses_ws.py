"""The responses driver over the SDK's WebSocket mode (`responses.connect()`), against a scripted WebSocket server on
an ephemeral port: the same IR as the HTTP stream, the frames kept whole, and every way a turn can fail bounded
and named (a silent server, a refused upgrade, a dead port, a turn refused with a status)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from websockets.http11 import Response
from websockets.sync.client import ClientConnection
from websockets.sync.server import ServerConnection, serve

from harness import ir
from harness.drivers import responses_ws
from harness.drivers.base import SocketRefused
from harness.drivers.responses_sdk import DRIVER
from harness.scenarios import SdkException

RESP = "resp_ws"
REQUEST = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])


def _events(*, completed: bool = True) -> list[dict[str, Any]]:
    response = {"id": RESP, "object": "response", "created_at": 1_800_000_000, "model": "m", "output": []}
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "delta": "Hel",
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "delta": "lo",
        },
        {
            "type": "response.content_part.done",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "part": done_item["content"][0],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
    ]
    if completed:
        usage = {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
        final = {**response, "status": "completed", "output": [done_item], "usage": usage}
        events.append({"type": "response.completed", "response": final})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


@contextmanager
def server(handler: Callable[[ServerConnection], None], **kw: Any) -> Iterator[str]:
    """A WebSocket server on 127.0.0.1, any free port, serving `handler` per connection; its root URL."""
    with serve(handler, "127.0.0.1", 0, **kw) as srv:
        thread = threading.Thread(target=srv.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{srv.socket.getsockname()[1]}"
        finally:
            srv.shutdown()
            thread.join(5)


def scripted(frames: list[str], *, then_wait: float = 0.0, seen: list[Any] | None = None) -> Callable[..., None]:
    def handler(conn: ServerConnection) -> None:
        message = conn.recv(timeout=5)
        if seen is not None:
            seen.append((conn.request.path if conn.request else None, json.loads(message)))
        for frame in frames:
            conn.send(frame)
        time.sleep(then_wait)

    return handler


def test_a_turn_gives_the_http_streams_ir_and_keeps_every_frame_whole() -> None:
    frames = [json.dumps(e) for e in _events()]
    seen: list[Any] = []
    with server(scripted(frames, seen=seen)) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={"x-conformance-run": "k"}, timeout=5)
    path, message = seen[0]
    assert path == "/v1/responses"
    assert message["type"] == "response.create" and "stream" not in message and message["model"] == "m"
    assert json.loads(turn.sent) == message
    assert [f.decode() for f in turn.frames] == frames  # one frame per event, byte for byte
    assert len(turn.times) == len(frames) and all(t >= turn.sent_at for t in turn.times)
    result = turn.result
    assert result.error is None
    events = result.events or []
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == "Hello"
    done = events[-1]
    assert isinstance(done, ir.Done) and done.stop_reason is not None and done.stop_reason.kind == "end_turn"


def test_a_turn_without_its_terminal_event_times_out_and_never_hangs() -> None:
    frames = [json.dumps(e) for e in _events(completed=False)]
    started = time.monotonic()
    with server(scripted(frames, then_wait=3.0)) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=0.5)
    assert time.monotonic() - started < 10
    assert turn.result.exception is SdkException.TIMEOUT
    assert turn.result.error is not None and turn.result.error.kind is ir.ErrorKind.TIMEOUT
    assert isinstance((turn.result.events or [])[-1], ir.ErrorEvent)
    assert len(turn.frames) == len(frames)


def test_a_connection_closed_before_the_terminal_event_is_a_stream_cut_short() -> None:
    frames = [json.dumps(e) for e in _events(completed=False)]
    with server(scripted(frames)) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5)
    last = (turn.result.events or [])[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind is ir.ErrorKind.MALFORMED_STREAM


def test_a_turn_refused_with_a_status_is_the_http_runs_error_for_it() -> None:
    error = {
        "type": "error",
        "status": 429,
        "error": {"type": "rate_limit_error", "code": "rate_limit_exceeded", "message": "slow down"},
    }
    with server(scripted([json.dumps(error)])) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5)
    assert turn.result.exception is SdkException.RATE_LIMIT
    assert turn.result.error is not None and turn.result.error.kind is ir.ErrorKind.THROTTLED
    assert turn.result.exception_class == "openai.types.responses.ResponseWsError"


def test_an_upgrade_answered_with_a_status_is_refused_by_name() -> None:
    def refuse(conn: ServerConnection, request: Any) -> Response:
        return conn.respond(403, "no websockets here\n")

    with server(scripted([]), process_request=refuse) as url, pytest.raises(SocketRefused) as caught:
        DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5)
    assert caught.value.status == 403 and "HTTP 403" in str(caught.value)


def test_a_dead_port_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    turn = DRIVER.run_socket(REQUEST, base_url=f"http://127.0.0.1:{port}", headers={}, timeout=2)
    assert turn.result.exception is SdkException.CONNECTION and turn.frames == ()


@pytest.mark.parametrize(
    "error",
    [
        # LiteLLM 1.106.2's form mid-stream: no status, the error nested (what the SDK parses as ResponseWsError)
        {"type": "error", "error": {"type": "server_error", "message": "Overloaded"}},
        # the HTTP stream's flat form
        {"type": "error", "code": "server_error", "message": "Overloaded", "param": None},
    ],
)
def test_an_error_event_without_a_status_mid_stream_is_the_streams_error(error: dict[str, Any]) -> None:
    frames = [json.dumps(e) for e in _events(completed=False)[:4]] + [json.dumps(error)]
    with server(scripted(frames)) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5)
    result = turn.result
    assert result.exception is SdkException.STREAM_ERROR
    assert result.error is not None and result.error.kind is ir.ErrorKind.SERVER
    assert (result.error.message, result.error.code) == ("Overloaded", "server_error")
    events = result.events or []
    assert "".join(e.text for e in events if isinstance(e, ir.TextDelta)) == "Hel"
    assert isinstance(events[-1], ir.ErrorEvent)
    assert [f.decode() for f in turn.frames] == frames


def test_a_refused_turns_retry_after_comes_from_its_error_headers() -> None:
    """`ResponseWsError.error.headers` carries the headers emitted with the error: the Retry-After the SDK's caller
    gets, and the headers the run's answer is judged on (`SocketRun.error_headers`, as an HTTP answer's)."""
    error = {
        "type": "error",
        "status": 429,
        "error": {
            "type": "requests",
            "code": "rate_limit_exceeded",
            "message": "slow",
            "headers": {"Retry-After": "7"},
        },
    }
    with server(scripted([json.dumps(error)])) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5)
    assert turn.result.retry_after == 7.0
    assert turn.result.error is not None and turn.result.error.retry_after == 7.0
    assert turn.error_headers == {"retry-after": "7"}


def test_unversioned_opens_the_socket_at_the_root_without_v1() -> None:
    seen: list[Any] = []
    with server(scripted([json.dumps(e) for e in _events()], seen=seen)) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5, versioned=False)
    assert [path for path, _ in seen] == ["/responses"] and turn.result.error is None


def test_turns_share_one_watchdog_thread_and_a_short_timeout_still_fires_while_a_long_one_is_watched() -> None:
    # One thread watches every turn of the process; it sleeps until the earliest deadline it knows, so a turn with a
    # shorter timeout than one already watched must wake it, or the stalled turn would wait out the other's timeout.
    frames = [json.dumps(e) for e in _events()]
    long_turn: list[Any] = []
    with server(scripted(frames[:3], then_wait=2.5)) as stalled, server(scripted(frames)) as quick:
        watcher = threading.Thread(
            target=lambda: long_turn.append(DRIVER.run_socket(REQUEST, base_url=stalled, headers={}, timeout=30))
        )
        watcher.start()
        time.sleep(0.3)  # the long turn is being watched (deadline 30 s away)
        with server(scripted(frames[:3], then_wait=3.0)) as silent:
            started = time.monotonic()
            short = DRIVER.run_socket(REQUEST, base_url=silent, headers={}, timeout=0.5)
            took = time.monotonic() - started
        assert took < 2.0
        assert short.result.exception is SdkException.TIMEOUT
        before = {t.ident for t in threading.enumerate()}
        for _ in range(3):
            assert DRIVER.run_socket(REQUEST, base_url=quick, headers={}, timeout=5).result.error is None
        watchdogs = [t for t in threading.enumerate() if t.name.startswith("ws-watchdog") and t.ident not in before]
        assert watchdogs == []  # no thread of its own for a turn
        watcher.join(10)
    # The long turn's server closed after its wait: a stream cut short, not a timeout (its 30 s never passed).
    assert long_turn and long_turn[0].result.exception is not SdkException.TIMEOUT


def test_a_turn_starts_no_keepalive_pings() -> None:
    # A keepalive thread a connection (websockets' default, a ping every 20 s) would cost a turn more than reading
    # its frames; the turn's waits are bounded by the watchdog instead.
    frames = [json.dumps(e) for e in _events()]
    with mock.patch.object(ClientConnection, "keepalive", autospec=True) as keepalive, server(scripted(frames)) as url:
        turn = DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=5)
    assert turn.result.error is None and len(turn.frames) == len(frames)
    assert keepalive.call_count == 0


def test_the_watchdog_thread_ends_once_no_turn_is_left_and_comes_back_for_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(responses_ws, "IDLE_WAKE_S", 0.1)
    frames = [json.dumps(e) for e in _events()]

    def watchdogs() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "ws-watchdogs"]

    with server(scripted(frames)) as url:  # the thread wakes at the turn's deadline (1 s), then idles and ends
        assert DRIVER.run_socket(REQUEST, base_url=url, headers={}, timeout=1).result.error is None
        deadline = time.monotonic() + 5
        while watchdogs() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watchdogs() == []
    with server(scripted(frames[:3], then_wait=3.0)) as silent:  # the next turn is watched again: it times out
        started = time.monotonic()
        stalled = DRIVER.run_socket(REQUEST, base_url=silent, headers={}, timeout=0.5)
        took = time.monotonic() - started
    assert stalled.result.exception is SdkException.TIMEOUT and took < 2.0
