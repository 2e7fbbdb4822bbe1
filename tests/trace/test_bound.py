"""A huge answer's trace is bounded (issue 22: "a 50 MB answer gives 340 MB of trace per case"): past
`LARGE_CHARS`, strings outside the wire and IR event lists are cut, the trace says what was cut, and the cut
trace reads back as a case."""

from __future__ import annotations

from harness.trace import case_text, parse_case
from harness.trace.bound import LARGE_CHARS, MAX_EVENTS, MAX_STRING
from harness.trace.model import SdkView, Wire
from tests.report.factory import dropped_call, events, text_bug


def test_a_small_trace_is_written_as_it_is() -> None:
    result = text_bug()
    assert case_text(result) == result.model_dump_json(indent=1, by_alias=True)
    assert parse_case(case_text(result)).cut == []


def test_a_huge_answers_strings_are_cut_and_the_trace_says_where() -> None:
    result = text_bug()
    translated = result.runs["translated"]
    huge = "x" * (LARGE_CHARS + 10)
    stream = events([huge])
    result.runs["translated"] = translated.model_copy(update={"sdk": SdkView(events=stream), "upstream_events": stream})
    text = case_text(result)
    assert len(text) < 4 * MAX_STRING
    back = parse_case(text)
    delta = back.runs["translated"].sdk.events[2]  # type: ignore[index]
    assert delta.text.startswith("x" * MAX_STRING)  # type: ignore[union-attr]
    assert delta.text.endswith(f"[... {LARGE_CHARS + 10 - MAX_STRING:,} characters cut by the trace]")  # type: ignore[union-attr]
    sizes = f"{LARGE_CHARS + 10 - MAX_STRING:,} of {LARGE_CHARS + 10:,} characters cut"
    assert back.cut == [
        f"runs.translated.upstream_events[2].text: {sizes}",
        f"runs.translated.sdk.events[2].text: {sizes}",
    ]
    assert back.verdict == result.verdict


def test_a_long_streams_events_keep_their_ends_and_their_chunk_placing() -> None:
    result = dropped_call()
    translated = result.runs["translated"]
    count = 3 * MAX_EVENTS
    stream = events([f"{i:08d}" + "y" * 200 for i in range(count)])
    wire = Wire(upstream_chunks=1, upstream_times_ms=[1.0], event_chunks=[0] * len(stream))
    result.runs["translated"] = translated.model_copy(
        update={"sdk": SdkView(events=stream), "upstream_events": stream, "wire": wire}
    )
    back = parse_case(case_text(result))
    run = back.runs["translated"]
    assert run.upstream_events is not None and len(run.upstream_events) == MAX_EVENTS
    assert len(run.wire.event_chunks) == MAX_EVENTS  # still one entry per kept event
    assert run.upstream_events[0] == stream[0]
    assert run.upstream_events[-1] == stream[-1]
    assert run.upstream_events[MAX_EVENTS // 2] == stream[len(stream) - MAX_EVENTS // 2]
    half = MAX_EVENTS // 2
    assert (
        f"runs.translated.upstream_events: events {half} to {len(stream) - half - 1} of {len(stream):,} cut" in back.cut
    )
