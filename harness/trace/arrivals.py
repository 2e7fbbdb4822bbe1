"""When each event of a streamed run arrived: at the proxy (the upstream chunk it was decoded from) and at the
client (the first client chunk sent after it), from the chunk times the trace's wire keeps, and the time to first
token taken from them. In the trace package so that a trace kept without its wire (`slim`) can keep the figure."""

from __future__ import annotations

import bisect

from harness.trace.model import RunTrace

CONTENT = frozenset({"text_delta", "thinking_delta", "tool_call_delta", "tool_call_start"})
"""Event kinds that carry the answer: the first of them to reach the client is the first token."""


def arrivals(run: RunTrace) -> list[tuple[str, float | None, float | None]] | None:
    """(kind, ms at the proxy, ms at the client) of each upstream event; None when the trace has no chunk times
    (older traces, non-streamed runs, external proxies)."""
    wire, events = run.wire, run.upstream_events or []
    if not events or not wire.event_chunks or not wire.upstream_times_ms:
        return None
    out: list[tuple[str, float | None, float | None]] = []
    for number, (event, chunk) in enumerate(zip(events, wire.event_chunks, strict=True)):
        at_proxy = wire.upstream_times_ms[chunk] if 0 <= chunk < len(wire.upstream_times_ms) else None
        # The first client chunk sent once more than `number` events had arrived carries this one (or its
        # translation); none when the client never got it (a dropped event, a cut tap).
        sent = bisect.bisect_right(wire.frontend_events, number)
        at_client = wire.frontend_times_ms[sent] if sent < len(wire.frontend_times_ms) else None
        out.append((event.kind, at_proxy, at_client))
    return out


def first_token_ms(run: RunTrace) -> float | None:
    """Milliseconds from the proxy receiving the request to the first answer content reaching the client; the
    first response byte for traces without chunk times or without content. A slim trace (no wire) keeps the figure
    in its timings."""
    if run.timings.first_token_ms is not None:
        return run.timings.first_token_ms
    wire, events = run.wire, run.upstream_events or []
    if not events or not wire.event_chunks or not wire.upstream_times_ms:
        return run.timings.first_byte_ms
    if len(events) != len(wire.event_chunks):
        arrivals(run)  # raises, as a trace whose events and chunks disagree always has
    # What `arrivals` says of the first content event the client got, without the arrivals of every other event
    # (a slim trace asks this of every run: tests/trace/test_arrivals.py holds the two ways equal).
    sent_after, client_times = wire.frontend_events, wire.frontend_times_ms
    for number, event in enumerate(events):
        if event.kind in CONTENT:
            sent = bisect.bisect_right(sent_after, number)
            if sent < len(client_times):
                return client_times[sent]
    return run.timings.first_byte_ms
