"""When an external proxy's answer arrived, measured at the client: time to first token and the stream timeline
of a `--sut` run, kept in its trace as the built-in proxy's tap keeps them (`Wire.upstream_times_ms`,
`frontend_times_ms`, `event_chunks`, `frontend_events`), so the report draws them the same way.

Every time is in seconds after the client sent its request (one monotonic clock: the replay server runs in this
process). The upstream side is when the replay server sent each chunk of its answer (`SendTimes`, around the
replay app); the client side is when each chunk reached the SDK's HTTP client. An upstream event is taken to
reach the client with the first client chunk that arrived after the replay server sent it. Time to first token is
when the first client chunk that decodes (with the client protocol's own decoder) to answer content arrived.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness import ir
from harness.protocols import StreamDecoder
from harness.trace.arrivals import CONTENT

_SENDS: ContextVar[list[float] | None] = ContextVar("replay_send_times", default=None)


class SendTimes:
    """ASGI middleware: the monotonic time each non-empty body chunk of an answer is handed to the server, in a
    list the app's code reads while it makes that answer (`sends`)."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request, timing its body chunks."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        times: list[float] = []
        token = _SENDS.set(times)

        async def timed(message: Message) -> None:
            # Taken as the chunk is handed over, before its bytes can leave: no client can have it earlier, and
            # the list is whole before the answer's last byte is out.
            if message["type"] == "http.response.body" and message.get("body"):
                times.append(time.monotonic())
            await send(message)

        try:
            await self.app(scope, receive, timed)
        finally:
            _SENDS.reset(token)


def sends() -> list[float]:
    """The send times of the answer being made (filled as it is sent); an empty list outside `SendTimes`."""
    found = _SENDS.get()
    return found if found is not None else []


def decode_by_chunk(decoder: StreamDecoder, chunks: Sequence[bytes]) -> tuple[list[ir.StreamEvent], list[int]]:
    """The events of a stream and, for each, the chunk (0-based) it was complete in (the last for the events the
    end of the stream gives). ValueError as the decoder raises it."""
    events: list[ir.StreamEvent] = []
    where: list[int] = []
    for number, chunk in enumerate(chunks):
        found = decoder.feed(chunk)
        events += found
        where += [number] * len(found)
    tail = decoder.close()
    return [*events, *tail], [*where, *[max(len(chunks) - 1, 0)] * len(tail)]


@dataclass(frozen=True)
class Clock:
    """A `--sut` run's times, in seconds after the client sent its request."""

    upstream: tuple[float, ...] = ()
    """When the replay server sent each chunk of its answer (empty when not every chunk was timed)."""
    client: tuple[float, ...] = ()
    """When each chunk reached the client."""
    event_chunks: tuple[int, ...] = ()
    """For each upstream event, the upstream chunk it was in (empty without upstream times)."""
    client_events: tuple[int, ...] = ()
    """For each client chunk, how many upstream events the replay server had sent when it arrived."""
    first_token: float | None = None
    """When the first client chunk with answer content arrived (None: no content, or not decodable)."""

    @property
    def first_byte(self) -> float | None:
        """When the first client chunk arrived."""
        return self.client[0] if self.client else None

    @property
    def upstream_first_byte(self) -> float | None:
        """When the replay server sent its first chunk."""
        return self.upstream[0] if self.upstream else None


def first_content(decoder: StreamDecoder, chunks: Sequence[bytes]) -> int | None:
    """The index of the first chunk that completes an answer-content event (`CONTENT`), None when none does or the
    bytes are not the protocol's stream."""
    try:
        events, where = decode_by_chunk(decoder, chunks)
    except ValueError:
        return None
    return next((n for event, n in zip(events, where, strict=True) if event.kind in CONTENT), None)


def clock(
    sent: float,
    client_times: Sequence[float],
    replay_times: Sequence[float],
    replay_chunks: int,
    event_chunks: Sequence[int],
    first_content_chunk: int | None,
) -> Clock:
    """The run's times from the monotonic times of the request (`sent`), each client chunk and each replay chunk
    (`replay_times`, kept only when there is one per replay chunk), the upstream chunk of each upstream event,
    and the client chunk with the first content."""
    client = tuple(t - sent for t in client_times)
    first = (
        client[first_content_chunk] if first_content_chunk is not None and first_content_chunk < len(client) else None
    )
    if not replay_times or len(replay_times) != replay_chunks or any(c >= replay_chunks for c in event_chunks):
        return Clock(client=client, first_token=first)
    upstream = tuple(t - sent for t in replay_times)
    sent_at = [upstream[c] for c in event_chunks]
    arrived = tuple(sum(1 for s in sent_at if s <= t) for t in client)
    return Clock(upstream, client, tuple(event_chunks), arrived, first)
