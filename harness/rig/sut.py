"""A system under test in another process: translated runs go to its URL, its upstreams point at a replay server
the runner starts on a loopback port, and what it did is rebuilt from both ends.

The external proxy has no trace tap, so the `Exchange` of a translated run is assembled from what the SDK's
HTTP client sent and received (captured in its transport) and from what the replay server received (decoded
with the backend's codec, for the request-side diff) and answered. Runs of one recording are serialized, so
whatever the replay server received during a run belongs to that run.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2

from harness import ir
from harness.backends import WireReply, wire_app
from harness.protocols import DecodeError, HttpRequest, registry
from harness.proxy import TRACE_HEADER, Exchange, ServerThread, Timings, safe_headers
from harness.record import Rechunk, Replayer
from harness.record.scrub import without_userinfo
from harness.rig.clients import CLIENT_TIMEOUT_S, sdk_client
from harness.rig.routes import upstream_models
from harness.rig.sut_client import (
    ClientKeyTransport,
    RunAddress,
    SutClient,
    UnversionedTransport,
    check_backends,
    sut_root,
    sut_url,
)
from harness.rig.sut_timing import SendTimes, clock, decode_by_chunk, first_content, sends
from harness.scenarios.model import Scenario
from harness.scenarios.resolve import ROUTE_SEPARATOR, split_scenario
from harness.trace import Run

DEADLINE_FACTOR = 4.0
"""A translated run through an external proxy ends after this many `--timeout`s of wall-clock time, however its
bytes trickle (`--timeout` bounds each gap between bytes only)."""
DRAIN_S = 2.0
"""When the SDK stops reading a streamed answer early (it raised on an event it could not read), the rest of the
body is still read for at most this many seconds (and `DRAIN_BYTES`), so the wire checks judge all of it."""
DRAIN_BYTES = 4 << 20
PREFLIGHT_S = 5.0
"""Longest wait for the system under test to answer the preflight request (it fails in seconds, not per case)."""


class SetupError(RuntimeError):
    """The run cannot start: the replay port cannot be bound, or nothing answers at the system under test's URL.
    The message is one line saying what to do."""


@dataclass
class Session:
    """One run's way to the proxy: base URL and HTTP client; `exchange` is filled in when the run is over."""

    base_url: str
    http: Any
    exchange: Exchange | None = None
    replay_url: str | None = None
    """The replay server the proxy's upstreams must reach (external proxies only)."""
    answered_before: bool = False
    """The external proxy answered an earlier run of this process (then no answer now is its fault: it died)."""
    earlier_calls_reached: bool = False
    """An earlier call of this run's chain (`Scenario.steps`) reached the replay server, though its last did not:
    the upstream is wired right, and what the proxy answered instead is judged."""
    headers: dict[str, str] = field(default_factory=dict)
    """What a WebSocket upgrade of this run carries (the run key; an external proxy's client key and headers)."""
    capture: CapturingTransport | None = None
    """The client-side capture of an external proxy's run: a WebSocket run fills it with the frames it read."""
    versioned: bool = True
    """Whether the SDK's paths keep their leading `/v1` (False: `--sut-unversioned`, over HTTP and WebSocket)."""


def preflight(url: str, timeout: float = PREFLIGHT_S) -> None:
    """Raise SetupError unless something answers HTTP at `url` (any status will do: a gateway's root may be 404)."""
    try:
        with httpx2.Client(timeout=httpx2.Timeout(min(timeout, PREFLIGHT_S))) as client:
            client.get(sut_root(url))
    except httpx2.TransportError as exc:
        detail = str(exc) or type(exc).__name__
        raise SetupError(
            f"cannot reach the system under test at {without_userinfo(url)}: {detail} "
            "(is it running, and is --sut its root URL?)"
        ) from None


def check_port(host: str, port: int) -> None:
    """Raise SetupError when `host:port` cannot be listened on (another run or a gateway holds it); port 0 is any."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT does not count
        try:
            probe.bind((host, port))
            probe.listen(1)
        except OSError as exc:
            raise SetupError(
                f"cannot listen on {host}:{port} for the replay server: {exc.strerror or exc}; another run or a "
                f"gateway holds it: pick another --replay-port and point the gateway's upstreams at it"
            ) from None


@dataclass(frozen=True)
class Received:
    """One request the replay server received (decoded with the backend codec) and the reply it gave."""

    request: ir.Request | None
    reply: WireReply
    raw: HttpRequest | None = None
    """The request as it arrived (its body and headers, for the raw-field and header checks)."""
    sent: list[float] = field(default_factory=list)
    """When the replay server sent each chunk of the reply (monotonic; filled as it is sent)."""


class _Tee(httpx2.SyncByteStream):
    """The answer's bytes as the SDK reads them, kept in `sink`; what the SDK leaves unread is read on close."""

    def __init__(
        self, inner: httpx2.SyncByteStream, sink: list[bytes], deadline: float | None, times: list[float]
    ) -> None:
        self._inner = inner
        self._it: Iterator[bytes] | None = None
        """Held here, not in `__iter__`'s frame: when the SDK stops early, the connection must stay open."""
        self._sink = sink
        self._deadline = deadline
        self._times = times
        self._open = False
        """The SDK began reading and has neither reached the end nor met a transport error."""

    def __iter__(self) -> Iterator[bytes]:
        self._it = iter(self._inner)
        self._open = True
        while True:
            try:
                chunk = next(self._it)
            except StopIteration:
                self._open = False
                return
            except BaseException:
                self._open = False
                raise
            self._sink.append(chunk)
            self._times.append(time.monotonic())
            if self._deadline is not None and time.monotonic() > self._deadline:
                self._open = False
                raise httpx2.ReadTimeout("the answer did not end within the run's wall-clock deadline")
            yield chunk

    def close(self) -> None:
        if self._open and self._it is not None:
            self._drain(self._it)
        self._inner.close()

    def _drain(self, it: Iterator[bytes]) -> None:
        """Read what the SDK left unread (it raised on an event it could not read), for at most `DRAIN_S` and
        `DRAIN_BYTES`, so that the wire checks judge the whole answer: a bug further on is not hidden by the first
        one. A read still blocked then is ended by closing the stream."""
        self._open = False
        got: list[tuple[bytes, float]] = []
        lock = threading.Lock()

        def read() -> None:
            size = 0
            try:
                for chunk in it:
                    with lock:
                        got.append((chunk, time.monotonic()))
                    size += len(chunk)
                    if size > DRAIN_BYTES:
                        return
            except Exception:
                # The stream broke or was closed under the read: what arrived before is kept, and the wire checks
                # see the answer end there.
                return

        reader = threading.Thread(target=read, name="drain-answer", daemon=True)
        reader.start()
        reader.join(DRAIN_S)
        with lock:
            kept = list(got)
            got.clear()
        for chunk, at in kept:
            self._sink.append(chunk)
            self._times.append(at)


@dataclass
class CapturingTransport(httpx2.BaseTransport):
    """A sync transport that keeps the last request sent and the raw response bytes as they arrived."""

    inner: httpx2.BaseTransport
    budget: float | None = None
    """Seconds of wall-clock time from sending the request to the answer's last byte (None: unbounded)."""
    request: HttpRequest | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    sent: float = 0.0
    """When the request was sent (monotonic)."""
    times: list[float] = field(default_factory=list)
    """When each of `chunks` arrived (monotonic)."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send through the inner transport, recording both directions."""
        body = request.read()
        self.sent = time.monotonic()
        deadline = self.sent + self.budget if self.budget is not None else None
        self.request = HttpRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.url.params.multi_items()),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
        )
        response = self.inner.handle_request(request)
        self.status = response.status_code
        self.headers = {k.lower(): v for k, v in response.headers.items()}
        self.chunks, self.times = [], []
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream), "a sync transport answers with a sync stream"
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_Tee(stream, self.chunks, deadline, self.times),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the inner transport (its connections)."""
        self.inner.close()


class SutTarget:
    """The replay server for an external proxy's upstreams, and sessions that send translated runs to the proxy."""

    def __init__(
        self,
        url: str,
        scenarios: Sequence[Scenario],
        backends: Sequence[str],
        cassettes: Path,
        *,
        replay_host: str = "127.0.0.1",
        replay_port: int = 0,
        rechunk: Rechunk | None = None,
        pace: float = 0.0,
        client: SutClient | None = None,
        models: Mapping[str, str] | None = None,
        timeout: float = CLIENT_TIMEOUT_S,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.client = client or SutClient()
        check_backends(self.client, backends)
        self.models = upstream_models(backends, models)
        check_port(replay_host, replay_port)  # first: it is instant, the preflight may wait PREFLIGHT_S
        preflight(self.url, timeout)
        self.replayer = Replayer(cassettes, scenarios, rechunk_mode=rechunk)
        self._received: dict[tuple[str, str], list[Received]] = {}
        self._lock = threading.Lock()
        self._run_locks: dict[tuple[str, str], threading.Lock] = {}
        self._answered = False
        try:
            app = wire_app(list(backends), self._reply, scenarios, pace=pace)
            self.server = ServerThread(SendTimes(app), replay_host, replay_port).start()
        except (RuntimeError, TimeoutError) as exc:
            raise SetupError(f"the replay server did not start on {replay_host}:{replay_port}: {exc}") from None

    @property
    def replay_url(self) -> str:
        """Root URL of the replay server (each backend under `/<backend>`)."""
        return self.server.url

    def _reply(self, backend: str, request: HttpRequest) -> WireReply:
        try:
            reply = self.replayer.reply(backend, request)
        except (DecodeError, LookupError, ValueError) as exc:
            # The replay server answers 400 (`wire_app`). A request that names its scenario is still this run's
            # arrival, kept undecoded: the proxy sent something its backend cannot read (a request-side bug).
            named = named_scenario(request)
            if named is not None:
                body = json.dumps({"error": {"message": f"{backend}: {exc}"}}).encode("utf-8")
                rejected = WireReply(400, {"content-type": "application/json"}, [body], named)
                with self._lock:
                    self._received.setdefault((backend, named), []).append(Received(None, rejected, request))
            raise
        _, path = split_scenario(request.path)
        try:
            decoded: ir.Request | None = registry.get(backend).decode_request(dataclasses.replace(request, path=path))
        except DecodeError:
            decoded = None  # the replay matched it, so this cannot happen for a request it could place
        with self._lock:
            self._received.setdefault((backend, reply.scenario), []).append(Received(decoded, reply, request, sends()))
        return reply

    def _run_lock(self, key: tuple[str, str]) -> threading.Lock:
        with self._lock:
            return self._run_locks.setdefault(key, threading.Lock())

    @contextmanager
    def session(self, run: Run, headers: dict[str, str]) -> Iterator[Session]:
        """One translated run through the external proxy, its requests carrying `headers`; afterwards
        `session.exchange` says what it did."""
        key = (run.backend, run.scenario)
        # The external proxy may stream upstream for a non-streamed client call: serialize per recording, not per
        # (recording, mode), so whatever reached the replay server during this run is this run's.
        with self._run_lock(key):
            with self._lock:
                self._received.pop(key, None)
            address = RunAddress(run.backend, run.scenario, self.replay_url, self.models[run.backend])
            # The capture keeps the request as the SDK made it (placeholder key); the client key and the extra
            # headers are set after it, on the way out.
            keyed = ClientKeyTransport(httpx2.HTTPTransport(), self.client, self.client.headers_for(address))
            capture = CapturingTransport(keyed, budget=DEADLINE_FACTOR * self.timeout)
            url = sut_url(self.url, run.client, run.backend, run.scenario)
            # Outside the capture, so that the trace holds the path the gateway was sent.
            sent: httpx2.BaseTransport = capture
            if run.client in self.client.unversioned:
                sent = UnversionedTransport(capture, urlsplit(url).path)
            http = sdk_client(run.client, sent, headers, timeout=self.timeout)
            session = Session(url, http, replay_url=self.replay_url, answered_before=self._answered, capture=capture)
            session.versioned = run.client not in self.client.unversioned
            key_header = {"authorization": f"Bearer {self.client.key}"} if self.client.key else {}
            session.headers = {**headers, **key_header, **self.client.headers_for(address)}
            started = time.time()
            try:
                with session.http:
                    yield session
            finally:
                with self._lock:
                    everything = self._received.pop(key, [])
                received = last_call(everything, self.replayer.scenarios, run.scenario)
                session.earlier_calls_reached = bool(everything) and not received
                session.exchange = exchange_of(capture, received, run, started)
                self._answered = self._answered or capture.status is not None

    def close(self) -> None:
        """Stop the replay server (bounded wait)."""
        self.server.stop()


def last_call(received: list[Received], scenarios: Sequence[Scenario], scenario_id: str) -> list[Received]:
    """What the replay server received for the last call of a stored-response chain (the one the run is judged
    on; the earlier calls, and the id no server issued, came before it); everything for another scenario."""
    scenario = next((s for s in scenarios if s.id == scenario_id), None)
    if scenario is None or not scenario.steps:
        return received
    last = len(scenario.steps)
    return [r for r in received if r.request is None or scenario.step_of(r.request) == last]


def inflate(chunks: Sequence[bytes], content_encoding: str) -> list[bytes] | None:
    """Chunks as the client's decoder reads them (gzip/deflate undone); None for an encoding not handled."""
    if content_encoding in ("", "identity"):
        return list(chunks)
    if content_encoding not in ("gzip", "deflate"):
        return None
    inflater = zlib.decompressobj(wbits=47)
    return [inflater.decompress(chunk) for chunk in chunks]


def named_scenario(request: HttpRequest) -> str | None:
    """The scenario a backend request names without being decoded: in its URL (`/_s/<scenario>`), else as the
    route name a gateway sent on as its JSON body's model (`<scenario>--<backend>--<mode>`); None when neither."""
    named, _ = split_scenario(request.path)
    if named is not None:
        return named
    try:
        model = json.loads(request.body).get("model")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None
    parts = model.rsplit(ROUTE_SEPARATOR, 2) if isinstance(model, str) else []
    return parts[0] if len(parts) == 3 else None


def _upstream_ir(
    backend: str, reply: WireReply, stream: bool
) -> tuple[tuple[ir.StreamEvent, ...], ir.Response | None, list[int]]:
    """The reply decoded: its events (and the chunk each was in), or its answer."""
    if reply.status >= 400:
        return (), None, []
    codec = registry.get(backend)
    try:
        if stream:
            events, where = decode_by_chunk(codec.stream_decoder(), reply.chunks)
            return tuple(events), None, where
        return (), codec.decode_response(b"".join(reply.chunks)), []
    except ValueError:  # a recording our own decoder cannot read: the trace simply lacks the upstream IR
        return (), None, []


def exchange_of(capture: CapturingTransport, received: list[Received], run: Run, started: float) -> Exchange | None:
    """The Exchange of a run through an external proxy, rebuilt from the client capture and the replay record."""
    if capture.request is None:
        return None
    try:
        frontend_request: ir.Request | None = registry.get(run.client).decode_request(capture.request)
    except DecodeError:
        frontend_request = None
    first = received[0] if received else None
    raw = first.raw if first else None  # the request as the replay server got it
    events, response, where = _upstream_ir(run.backend, first.reply, first.reply.stream) if first else ((), None, [])
    chunks = inflate(capture.chunks, capture.headers.get("content-encoding", ""))
    content = first_content(registry.get(run.client).stream_decoder(), chunks) if run.stream and chunks else None
    replay = (list(first.sent), len(first.reply.chunks)) if first else ([], 0)
    times = clock(capture.sent, capture.times, *replay, where if events else [], content)
    return Exchange(
        trace_id=capture.headers.get(TRACE_HEADER) or f"sut-{uuid.uuid4().hex}",
        route=f"{capture.request.method} {capture.request.path}",
        frontend_protocol=run.client,
        mode="translate",
        stream=run.stream,
        upstream_name=run.backend,
        upstream_protocol=run.backend,
        frontend_request=frontend_request,
        upstream_request=first.request if first else None,
        upstream_body=raw.body if raw else b"",
        upstream_headers=safe_headers(raw.headers) if raw else {},
        frontend_headers=safe_headers(capture.request.headers),
        frontend_response_headers=safe_headers(capture.headers),
        upstream_status=first.reply.status if first else None,
        upstream_events=events,
        upstream_response=response,
        upstream_chunks=tuple(first.reply.chunks) if first else (),
        frontend_status=capture.status,
        frontend_chunks=tuple(chunks or ()),
        timings=Timings(started, times.upstream_first_byte, times.first_byte, first_token=times.first_token),
        upstream_chunk_times=times.upstream,
        frontend_chunk_times=times.client,
        event_chunks=times.event_chunks,
        frontend_chunk_events=times.client_events,
        # An encoding the harness cannot undo leaves the client's bytes unreadable: checks on them are skipped.
        truncated=chunks is None,
    )


def wait_until_up(url: str, seconds: float, poll: float = 0.25) -> str | None:
    """Poll `url` until something answers HTTP (a proxy still starting), for at most `seconds`; None once it
    answers, else one line saying what the last attempt got."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        try:
            preflight(url, max(0.1, min(left, PREFLIGHT_S)))
            return None
        except SetupError as exc:
            if time.monotonic() + poll >= deadline:
                return f"--wait-for-sut {seconds:g}: nothing answered within {seconds:g} s; {exc}"
        time.sleep(poll)
