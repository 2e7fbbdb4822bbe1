"""The event diff aligns blocks, so a dropped tool call is one change; and the stream timeline from chunk times."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.report.eventdiff import blocks, event_diff
from harness.report.timeline import first_token_ms, timeline
from harness.trace import RunTrace, Timings, Wire
from harness.trace.identity import Run


def _call(index: int, name: str, args: str) -> list[dict[str, Any]]:
    return [
        {"kind": "tool_call_start", "index": index, "id": f"<call:{index}>", "name": name},
        {"kind": "tool_call_delta", "index": index, "arguments": args},
        {"kind": "tool_call_end", "index": index},
    ]


def _view(*calls: tuple[str, str]) -> dict[str, Any]:
    events = [{"kind": "message_start", "id": "<id>"}]
    for i, (name, args) in enumerate(calls):
        events += _call(i, name, args)
    return {"events": [*events, {"kind": "done", "stop_reason": {"kind": "tool_use"}}]}


def test_a_dropped_tool_call_is_one_change() -> None:
    diff = event_diff(_view(("a", "{}"), ("b", "{}"), ("c", "{}")), _view(("a", "{}"), ("c", "{}")))
    assert [r["op"] for r in diff["rows"]] == ["same", "same", "removed", "same", "same"]
    assert diff["changes"] == 1
    removed = diff["rows"][2]["left"]
    assert (removed["kind"], removed["index"], removed["events"], removed["text"]) == (
        "tool call",
        1,
        [4, 6],
        "b#<call:1>({})",
    )
    # The later call keeps its place although its index moved from 2 to 1.
    assert diff["rows"][3]["left"]["index"] == 2 and diff["rows"][3]["right"]["index"] == 1


def test_changed_arguments_are_one_changed_block() -> None:
    diff = event_diff(_view(("a", '{"x":1}')), _view(("a", '{"x":2}')))
    assert [r["op"] for r in diff["rows"]] == ["same", "changed", "same"]


def test_interleaved_blocks_keep_their_events_together() -> None:
    events = [
        {"kind": "tool_call_start", "index": 0, "id": "1", "name": "a"},
        {"kind": "tool_call_start", "index": 1, "id": "2", "name": "b"},
        {"kind": "tool_call_delta", "index": 0, "arguments": "{}"},
        {"kind": "tool_call_delta", "index": 1, "arguments": "[]"},
        {"kind": "tool_call_end", "index": 0},
        {"kind": "tool_call_end", "index": 1},
    ]
    assert [(b.key, len(b.events)) for b in blocks(events)] == [("tool call a", 3), ("tool call b", 3)]


def test_non_streamed_views_align_content_parts() -> None:
    left = {"response": {"content": [{"kind": "text", "text": "hi"}, {"kind": "tool_call", "name": "a", "id": "1"}]}}
    right = {"response": {"content": [{"kind": "text", "text": "hi"}]}}
    diff = event_diff(left, right)
    assert diff["by"] == "content" and [r["op"] for r in diff["rows"]] == ["same", "removed"]


def _streamed(wire: Wire, events: list[ir.StreamEvent]) -> RunTrace:
    run = Run("translated", "anthropic", "openai", "text-basic", True)
    return RunTrace.of(run, "c", upstream_events=events, wire=wire)


EVENTS: list[ir.StreamEvent] = [
    ir.MessageStart(id="m"),
    ir.TextStart(index=0),
    ir.TextDelta(index=0, text="hi"),
    ir.TextEnd(index=0),
    ir.Done(),
]


def test_timeline_places_each_event_at_the_proxy_and_at_the_client() -> None:
    # A proxy that buffers: the three upstream chunks arrive at 1, 2 and 3 ms; the client gets it all at 9 ms.
    wire = Wire(
        upstream_chunks=3,
        frontend_chunks=2,
        upstream_times_ms=[1.0, 2.0, 3.0],
        frontend_times_ms=[9.0, 9.5],
        event_chunks=[0, 1, 1, 2, 2],
        frontend_events=[5, 5],
    )
    line = timeline(_streamed(wire, EVENTS))
    assert line is not None
    assert line["events"] == [
        ["message_start", 1.0, 9.0],
        ["text_start", 2.0, 9.0],
        ["text_delta", 2.0, 9.0],
        ["text_end", 3.0, 9.0],
        ["done", 3.0, 9.0],
    ]
    assert line["first_token"] == 9.0


def test_first_token_falls_back_to_the_first_byte_without_chunk_times() -> None:
    run = _streamed(Wire(), EVENTS).model_copy(update={"timings": Timings()})
    assert timeline(run) is None
    timed = run.model_copy(update={"timings": run.timings.model_copy(update={"first_byte_ms": 4.5})})
    assert first_token_ms(timed) == 4.5
