"""A run's time to first token (`first_token_ms`), read from the first content event the client got, is what the
full list of `arrivals` says: the first content event with a client time, else the first response byte."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.trace.arrivals import CONTENT, arrivals, first_token_ms
from harness.trace.model import RunTrace, Timings, Wire
from tests.report.factory import dropped_call

_EVENTS: dict[str, ir.StreamEvent] = {
    "text_delta": ir.TextDelta(index=0, text="a"),
    "thinking_delta": ir.ThinkingDelta(index=0, text="b"),
    "tool_call_start": ir.ToolCallStart(index=0, id="c", name="f"),
    "tool_call_delta": ir.ToolCallDelta(index=0, arguments="{"),
    "text_start": ir.TextStart(index=0),
    "usage": ir.UsageEvent(usage=ir.Usage(input_tokens=1)),
}


def _from_arrivals(run: RunTrace) -> float | None:
    """The time to first token as every event's arrival gives it (how `first_token_ms` read it before)."""
    if run.timings.first_token_ms is not None:
        return run.timings.first_token_ms
    found = arrivals(run)
    if found:
        times = [client for kind, _, client in found if kind in CONTENT and client is not None]
        if times:
            return times[0]
    return run.timings.first_byte_ms


@st.composite
def _runs(draw: st.DrawFn) -> RunTrace:
    kinds = draw(st.lists(st.sampled_from(sorted(_EVENTS)), max_size=8))
    upstream = draw(st.lists(st.floats(0, 100), max_size=4))
    chunks = [draw(st.integers(-1, max(len(upstream) - 1, 0))) for _ in kinds] if draw(st.booleans()) else []
    sent = sorted(draw(st.lists(st.integers(0, len(kinds) + 1), max_size=4)))
    wire = Wire(
        upstream_chunks=len(upstream),
        frontend_chunks=len(sent),
        upstream_times_ms=upstream,
        frontend_times_ms=[draw(st.floats(0, 100)) for _ in sent],
        event_chunks=chunks,
        frontend_events=sent,
    )
    timings = Timings(
        first_byte_ms=draw(st.none() | st.floats(0, 100)), first_token_ms=draw(st.none() | st.floats(0, 100))
    )
    base = dropped_call().runs["translated"]
    events = [_EVENTS[kind] for kind in kinds] if kinds or draw(st.booleans()) else None
    return base.model_copy(update={"upstream_events": events, "wire": wire, "timings": timings})


@given(_runs())
def test_first_token_is_the_first_content_arrival(run: RunTrace) -> None:
    assert first_token_ms(run) == _from_arrivals(run)


def test_a_run_whose_events_and_chunks_disagree_is_refused_as_before() -> None:
    run = dropped_call().runs["translated"]
    broken = run.model_copy(update={"wire": run.wire.model_copy(update={"event_chunks": run.wire.event_chunks[:-1]})})
    for way in (first_token_ms, _from_arrivals):
        try:
            way(broken)
        except ValueError as exc:
            assert "zip()" in str(exc)
        else:
            raise AssertionError("a trace whose events and chunks disagree was read")
