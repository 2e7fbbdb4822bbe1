"""When each event of a streamed run arrived: at the proxy (the upstream chunk it was decoded from) and at the
client (the first client chunk sent after it), from the chunk times the trace's wire excerpt keeps. The report
draws this as the case's stream timeline and takes time to first token from it. A `--sut` run's times are the
client's (`harness.rig.sut_timing`): its upstream side is when the replay server sent each chunk."""

from __future__ import annotations

from typing import Any

from harness.trace.arrivals import CONTENT, arrivals, first_token_ms
from harness.trace.model import RunTrace

__all__ = ["CONTENT", "arrivals", "first_token_ms", "timeline"]


def timeline(run: RunTrace) -> dict[str, Any] | None:
    """The timeline data of one run for the page: events with both times, every chunk's time, the total."""
    found = arrivals(run)
    if found is None:
        return None
    return {
        "events": [[kind, proxy, client] for kind, proxy, client in found],
        "upstream": run.wire.upstream_times_ms,
        "client": run.wire.frontend_times_ms,
        "total": round(run.timings.total_ms, 3),
        "first_token": first_token_ms(run),
    }
