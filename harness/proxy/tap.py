"""The trace tap: collects one exchange as it happens and hands it to the harness's callback at the end."""

from __future__ import annotations

import inspect
import logging
import time
import uuid
import zlib
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from harness import ir
from harness.protocols import Codec, DecodeError, HttpRequest
from harness.proxy.decoded import DecodedRequests
from harness.proxy.models import Exchange, ExchangeCallback, Timings
from harness.stream import GrammarChecker, Violation
from harness.wire.content import MAX_INFLATED

log = logging.getLogger("harness.proxy")

TRACE_HEADER = "x-conformance-trace-id"
# Upper bound on IR events kept per exchange, so a huge stream cannot grow the tap without limit.
MAX_TAP_EVENTS = 200_000


def new_trace_id() -> str:
    """A fresh trace id (32 hex digits)."""
    return uuid.uuid4().hex


@dataclass
class _Chunks:
    """Raw chunks kept up to a byte limit."""

    limit: int
    chunks: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    """When each kept chunk passed, in seconds after the request arrived."""
    size: int = 0
    truncated: bool = False

    def add(self, chunk: bytes, at: float) -> bool:
        """Keep `chunk`, or the part of it that fits (a body larger than the limit keeps its head, not nothing);
        whether any of it was kept. After the limit, nothing more is: the kept bytes have no gap."""
        if self.truncated:
            return False
        room = self.limit - self.size
        if len(chunk) > room:
            self.truncated = True
            if room <= 0:
                return False
            chunk = chunk[:room]
        self.chunks.append(chunk)
        self.times.append(at)
        self.size += len(chunk)
        return True


class Recorder:
    """One exchange in progress. With no callback installed it only keeps what logging and counters need."""

    def __init__(self, trace_id: str, route: str, frontend_protocol: str, *, enabled: bool, tap_max_bytes: int):
        self.enabled = enabled
        self.fields: dict[str, Any] = {"trace_id": trace_id, "route": route, "frontend_protocol": frontend_protocol}
        self.mode = "local"
        self._wall = time.time()
        self._t0 = time.perf_counter()
        self._upstream_first: float | None = None
        self._first: float | None = None
        self._upstream = _Chunks(tap_max_bytes)
        self._frontend = _Chunks(tap_max_bytes)
        self._events: list[ir.StreamEvent] = []
        self._violations: list[Violation] = []
        self._problems: list[str] = []
        self._truncated_events = False
        self._upstream_count = 0
        self._upstream_text: list[int] = []
        self._frontend_text: list[int] = []
        self._event_chunks: list[int] = []
        self._frontend_events: list[int] = []
        self.error: ir.IRError | None = None

    @property
    def trace_id(self) -> str:
        """Id of the exchange."""
        return str(self.fields["trace_id"])

    def set(self, **values: Any) -> None:
        """Record plain fields of the exchange (model, upstream, statuses, IR requests, ...)."""
        self.fields.update(values)

    def problem(self, text: str) -> None:
        """Note something the tap could not do; it never changes what is sent."""
        self._problems.append(text)

    def elapsed(self) -> float:
        """Seconds since the request arrived."""
        return time.perf_counter() - self._t0

    def upstream_chunk(self, chunk: bytes) -> None:
        """A chunk read from the upstream."""
        at = perf_counter() - self._t0
        if self._upstream_first is None:
            self._upstream_first = at
        self._upstream_count += 1
        if self.enabled:
            self._upstream.add(chunk, at)

    def upstream_text(self) -> None:
        """The upstream chunk read last yielded text (kept as its ordinal, to tell streaming from buffering)."""
        if self.enabled and (not self._upstream_text or self._upstream_text[-1] != self._upstream_count):
            self._upstream_text.append(self._upstream_count)

    def frontend_chunk(self, chunk: bytes, *, text: bool = False) -> None:
        """A chunk sent to the client; `text`: it carries answer text (noted with the upstream chunks read so far)."""
        at = perf_counter() - self._t0
        if self._first is None:
            self._first = at
        if self.enabled:
            if self._frontend.add(chunk, at):
                self._frontend_events.append(len(self._events))
            if text:
                self._frontend_text.append(self._upstream_count)

    def events(self, events: list[ir.StreamEvent], violations: list[Violation]) -> None:
        """Upstream events decoded so far and the grammar violations they caused."""
        self._violations.extend(violations)
        for event in events:
            self.event(event, [])

    def event(self, event: ir.StreamEvent, violations: list[Violation]) -> None:
        """One upstream event and the grammar violations it caused (the translate path's, per event)."""
        if violations:
            self._violations.extend(violations)
        if not self.enabled:
            return
        if self._upstream.truncated or len(self._events) >= MAX_TAP_EVENTS:
            # Events are decoded from the upstream bytes: past the byte limit, they are not kept either.
            self._truncated_events = True
            return
        self._events.append(event)
        # The upstream chunk each event arrived in (0-based): the trace's stream timeline.
        self._event_chunks.append(self._upstream_count - 1)

    def finish(self) -> Exchange:
        """The finished exchange."""
        timings = Timings(start=self._wall, upstream_first_byte=self._upstream_first, first_byte=self._first)
        timings = Timings(timings.start, timings.upstream_first_byte, timings.first_byte, self.elapsed())
        return Exchange(
            **self.fields,
            mode=self.mode,
            upstream_events=tuple(self._events),
            upstream_chunks=tuple(self._upstream.chunks),
            frontend_chunks=tuple(self._frontend.chunks),
            violations=tuple(self._violations),
            timings=timings,
            error=self.error,
            problems=tuple(self._problems),
            truncated=self._upstream.truncated or self._frontend.truncated or self._truncated_events,
            upstream_text_chunks=tuple(self._upstream_text),
            frontend_text_chunks=tuple(self._frontend_text),
            upstream_chunk_times=tuple(self._upstream.times),
            frontend_chunk_times=tuple(self._frontend.times),
            event_chunks=tuple(self._event_chunks),
            frontend_chunk_events=tuple(self._frontend_events),
        )

    @property
    def violation_count(self) -> int:
        """Grammar violations seen so far."""
        return len(self._violations)


async def deliver(callback: ExchangeCallback | None, exchange: Exchange) -> bool:
    """Hand an exchange to the callback; a failing callback is logged (with the trace id) and reported."""
    if callback is None:
        return True
    try:
        result = callback(exchange)
        if inspect.isawaitable(result):
            await result
    except Exception:  # the harness's callback must not break the proxy's response; it is logged loudly
        log.exception("tap callback failed", extra={"trace_id": exchange.trace_id})
        return False
    return True


def decode_request_for_tap(
    codec: Codec, request: HttpRequest, recorder: Recorder, what: str, decoded: DecodedRequests | None = None
) -> ir.Request | None:
    """Decode a request for the trace (through `decoded`, to decode each distinct request once); a failure is a tap
    problem, not a reason to change the exchange."""
    try:
        return codec.decode_request(request) if decoded is None else decoded(codec, request)
    except DecodeError as exc:
        recorder.problem(f"{what}: {exc}")
        return None


class StreamTap:
    """Decodes a pass-through response stream to IR as it goes by, without touching the bytes."""

    def __init__(self, codec: Codec, content_encoding: str, recorder: Recorder) -> None:
        self.recorder = recorder
        self.codec = codec
        self.decoder = codec.stream_decoder()
        self.checker = GrammarChecker()
        # A gzip/deflate body passes through compressed; the tap inflates its own copy.
        self._inflate = zlib.decompressobj(wbits=47) if content_encoding in ("gzip", "deflate") else None
        self.failed = False

    def feed(self, chunk: bytes) -> None:
        """Decode one chunk of the response body."""
        if self.failed:
            return
        try:
            data = chunk
            if self._inflate is not None:
                # Bounded: a few kilobytes of gzip may inflate to gigabytes; the tap gives up, the bytes pass on.
                data = self._inflate.decompress(chunk, MAX_INFLATED)
                if self._inflate.unconsumed_tail:
                    raise zlib.error(f"the body inflates beyond {MAX_INFLATED} bytes in one chunk; not decoded")
            self._emit(self.decoder.feed(data))
        except (ValueError, zlib.error) as exc:  # DecodeError, or any WireError: the bytes pass on untouched
            self.failed = True
            self.recorder.problem(f"upstream stream: {exc}")

    def close(self) -> None:
        """End of the response body."""
        if self.failed:
            return
        try:
            self._emit(self.decoder.close())
        except ValueError as exc:  # DecodeError or any WireError
            self.recorder.problem(f"upstream stream: {exc}")
        self.recorder.events([], self.checker.finish())

    def _emit(self, events: list[ir.StreamEvent]) -> None:
        violations: list[Violation] = []
        for event in events:
            violations.extend(self.checker.check(event))
        self.recorder.events(events, violations)
