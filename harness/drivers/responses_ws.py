"""The `openai` SDK's WebSocket mode of the Responses API (`client.responses.connect()`), one turn per run.

The scenario's request is the same `responses.create` keywords as over HTTP (`responses_sdk.params`), sent as one
`response.create` event on a fresh connection; the server's messages are read one frame at a time
(`recv_bytes`, kept with their boundaries: they are the frontend's wire) and parsed with the SDK's own
`parse_event`, then turned into IR by the HTTP stream's own state (`_StreamState`), so both transports give the
same IR for the same events. The turn ends at its terminal event (`response.completed`, `response.incomplete`,
`response.failed`) or at an `error` event; a connection closed before either is a stream cut short.

Every wait is bounded: the handshake by `open_timeout`, each message by a watchdog (one thread for the process's
turns) that closes the connection when none arrives within the timeout of the last (the SDK's `recv` has no timeout
of its own); no keepalive pings are sent (`KEEPALIVE`).
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import httpx2
import openai
from openai.types.responses import ResponseErrorEvent
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.version import version as websockets_version

from harness import ir
from harness.drivers.base import (
    DECODE_ERRORS,
    DUMMY_API_KEY,
    SdkResult,
    SocketRefused,
    SocketRun,
    error_from_status,
    neutral_for_status,
    shared_tls_context,
)
from harness.scenarios.model import SdkException

TERMINAL = ("response.completed", "response.incomplete", "response.failed", "error")
"""Events after which the server sends nothing more for the turn."""
ERROR_CLASS = "openai.types.responses.ResponseWsError"
"""What the SDK parses a WebSocket-mode `error` event as."""
CLOSE_S = 5.0
"""Longest wait for the closing handshake."""
KEEPALIVE = {"ping_interval": None}
"""No keepalive pings: a turn lasts far less than websockets' 20 s ping interval, its waits are bounded by the
watchdog, and the keepalive thread each connection would start costs a run more than reading its frames."""
_DIRECT = {"legacy": True} if tuple(int(p) for p in websockets_version.split(".")[:2]) >= (17, 1) else {}
"""The SDK opens its connection without `with` (it closes it itself), which websockets 17.1+ asks to be said."""


IDLE_WAKE_S = 1.0
"""How long the watchdogs' thread waits with no turn to watch before it ends (a turn starting meanwhile needs no
wake-up call; one starting later starts the thread again)."""


class _Watchdog:
    """One turn's watch: its connection is closed when no message arrives within `seconds` of the turn's start or of
    the last message (`kick`). Every turn of the process is watched by one thread (`_Watchdogs`), not one a turn."""

    def __init__(self, connection: Any, seconds: float) -> None:
        self.connection, self.seconds, self.fired = connection, seconds, False
        self.deadline = time.monotonic() + seconds

    def __enter__(self) -> _Watchdog:
        WATCHDOGS.watch(self)
        return self

    def __exit__(self, *_: object) -> None:
        WATCHDOGS.forget(self)

    def kick(self) -> None:
        """A message arrived: the next may take `seconds` from now."""
        self.deadline = time.monotonic() + self.seconds


class _Watchdogs:
    """The thread that closes each watched turn's connection at its deadline. It sleeps until the earliest deadline
    it knows (`IDLE_WAKE_S` with none); a turn that starts is woken for only when its deadline comes sooner, so a
    turn costs no thread and, mostly, no wake-up."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # a forked child has no thread, and needs a fresh lock

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._turns: set[_Watchdog] = set()
        self._wake = 0.0
        """When the thread wakes next (monotonic)."""
        self._thread: threading.Thread | None = None

    def watch(self, turn: _Watchdog) -> None:
        """Watch `turn` until `forget`."""
        with self._cond:
            self._turns.add(turn)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="ws-watchdogs", daemon=True)
                self._wake = float("inf")
                self._thread.start()
            elif turn.deadline < self._wake:
                self._cond.notify()

    def forget(self, turn: _Watchdog) -> None:
        """Stop watching `turn` (its turn is over)."""
        with self._cond:
            self._turns.discard(turn)

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for turn in [t for t in self._turns if t.deadline <= now]:
                    self._turns.discard(turn)
                    turn.fired = True
                    # Closing waits for the closing handshake (up to CLOSE_S): on a thread of its own, so that the
                    # other turns' deadlines are kept meanwhile (a turn that times out is rare; one that ends, not).
                    threading.Thread(target=turn.connection.close, name="ws-watchdog-close", daemon=True).start()
                if not self._turns:  # idle: end after IDLE_WAKE_S without a turn (`watch` starts another)
                    self._wake = now + IDLE_WAKE_S
                    if self._cond.wait(IDLE_WAKE_S) or self._turns:
                        continue
                    self._thread = None
                    return
                self._wake = min(t.deadline for t in self._turns)
                self._cond.wait(self._wake - now)


WATCHDOGS = _Watchdogs()


def _socket_error(data: dict[str, Any]) -> tuple[ir.IRError, SdkException] | None:
    """A WebSocket-mode `error` event with the turn's HTTP status (`status`, nested `error`: the SDK's
    `ResponseWsError`), as the HTTP run's error for that status, its wait from the headers it carries
    (`error.headers`, e.g. `retry-after`); None for an `error` event without a status (the stream state reads
    those)."""
    status, error = data.get("status"), data.get("error")
    if not isinstance(status, int) or not isinstance(error, dict):
        return None
    code = error.get("code") or error.get("type")
    message = str(error.get("message") or "")
    sent = error.get("headers")
    headers = {str(k).lower(): str(v) for k, v in sent.items()} if isinstance(sent, dict) else None
    found = error_from_status(status, message, code=str(code) if code else None, headers=headers)
    return found, neutral_for_status(status)


def _error_headers(frames: list[bytes]) -> dict[str, str]:
    """The headers the turn's last frame carries when it is an `error` event with a status (`error.headers`)."""
    try:
        data = json.loads(frames[-1]) if frames else None
    except json.JSONDecodeError:
        return {}
    error = data.get("error") if isinstance(data, dict) and isinstance(data.get("status"), int) else None
    sent = error.get("headers") if isinstance(error, dict) else None
    return {str(k).lower(): str(v) for k, v in sent.items()} if isinstance(sent, dict) else {}


def _stream_error_event(data: dict[str, Any]) -> Any:
    """An `error` event with no HTTP status, as the HTTP stream's flat `error` event the stream state reads. The SDK
    parses every WebSocket-mode `error` as `ResponseWsError` (a nested `error`), which has no `message` or `code` of
    its own; a server may send either form mid-stream (LiteLLM sends the nested one)."""
    nested = data.get("error")
    fields = nested if isinstance(nested, dict) else data
    code, message = fields.get("code") or fields.get("type"), fields.get("message")
    return ResponseErrorEvent.model_construct(
        type="error",
        code=str(code) if code is not None else None,
        message=str(message) if message is not None else "",
        param=fields.get("param"),
        sequence_number=cast(int, data.get("sequence_number")),  # as sent: None when absent (`answer.spec` judges it)
    )


def _turn(connection: Any, timeout: float, state: Any, frames: list[bytes], times: list[float]) -> SdkResult:
    """Read one turn's messages into IR; raises what the SDK or the stream state raises."""
    with _Watchdog(connection, timeout) as watchdog:
        return _read(connection, watchdog, state, frames, times)


def _read(connection: Any, watchdog: _Watchdog, state: Any, frames: list[bytes], times: list[float]) -> SdkResult:
    while True:
        try:
            raw = connection.recv_bytes()
        except ConnectionClosed:
            if watchdog.fired:
                error = ir.IRError.of(ir.ErrorKind.TIMEOUT, f"no WebSocket message within {watchdog.seconds:g} s")
                events = state.builder.fail(error) if state.builder.started else None
                return SdkResult(events=events, error=error, exception=SdkException.TIMEOUT)
            return cast(SdkResult, state.result())  # closed before its terminal event: a stream cut short
        watchdog.kick()
        frames.append(raw)
        times.append(time.monotonic())
        data = json.loads(raw)
        found = _socket_error(data) if isinstance(data, dict) and data.get("type") == "error" else None
        if found is not None:
            error, neutral = found
            events = state.builder.fail(error) if state.builder.started else None
            return SdkResult(
                events=events,
                error=error,
                exception=neutral,
                exception_class=ERROR_CLASS,
                retry_after=error.retry_after,  # the event's `error.headers`: what the SDK hands its caller
            )
        is_error = isinstance(data, dict) and data.get("type") == "error"
        event = _stream_error_event(data) if is_error else connection.parse_event(raw)
        state.add(event)
        if event.type in TERMINAL:
            return cast(SdkResult, state.result())


@functools.cache
def _idle_http() -> httpx2.Client:
    """The HTTP client every WebSocket-mode SDK client is given and never uses for its turn (it opens no
    connection): one per process, so that no TLS context is built per run (~17 ms each)."""
    return httpx2.Client(verify=shared_tls_context())


def run_socket(
    kwargs: dict[str, Any],
    *,
    base_url: str,
    headers: Mapping[str, str],
    timeout: float,
    state: Any,
    classify: Callable[[Any], tuple[ir.IRError, SdkException]],
    unreadable: tuple[type[Exception], ...],
    versioned: bool = True,
) -> SocketRun:
    """One WebSocket-mode turn of the `responses.create` keywords `kwargs` against `<base_url>/v1/responses` (see the
    module docstring; `<base_url>/responses` when not `versioned`, `--sut-unversioned`): `state` is the HTTP
    stream's state (`responses_sdk`), `classify` names what it raises (`unreadable`, besides the SDK's decode
    errors)."""
    root = base_url.rstrip("/") + ("/v1" if versioned else "")
    client = openai.OpenAI(api_key=DUMMY_API_KEY, base_url=root, max_retries=0, http_client=_idle_http())
    options = cast(Any, {"open_timeout": timeout, "close_timeout": CLOSE_S, **KEEPALIVE, **_DIRECT})
    frames: list[bytes] = []
    times: list[float] = []
    sent = json.dumps({"type": "response.create", **kwargs}).encode()  # what `response.create` sends
    try:
        with client.responses.connect(extra_headers=dict(headers), websocket_connection_options=options) as ws:
            answer = getattr(ws._connection, "response", None)  # the handshake's answer (websockets' Response)
            handshake = {k.lower(): v for k, v in answer.headers.raw_items()} if answer is not None else {}
            started = time.monotonic()
            ws.response.create(**kwargs)
            caught: tuple[type[Exception], ...] = (*unreadable, *DECODE_ERRORS)
            try:
                result = _turn(ws, timeout, state, frames, times)
            except caught as exc:
                error, neutral = classify(exc)
                result = SdkResult(error=error, exception=neutral, exception_class=type(exc).__name__)
    except InvalidStatus as exc:
        raise SocketRefused(exc.response.status_code, bytes(exc.response.body or b"")) from exc
    except (OSError, TimeoutError, ConnectionClosed) as exc:  # nothing listens, or the handshake never finished
        message = f"Connection error.: {type(exc).__name__}: {exc}"
        kind, neutral = (
            (ir.ErrorKind.TIMEOUT, SdkException.TIMEOUT)
            if isinstance(exc, TimeoutError)
            else (ir.ErrorKind.NETWORK, SdkException.CONNECTION)
        )
        result = SdkResult(error=ir.IRError.of(kind, message), exception=neutral, exception_class=type(exc).__name__)
        return SocketRun(result=result, sent=sent)
    return SocketRun(
        result=result,
        sent=sent,
        sent_at=started,
        frames=tuple(frames),
        times=tuple(times),
        headers=handshake,
        error_headers=_error_headers(frames),
    )
