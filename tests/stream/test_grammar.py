"""The event grammar: each rule with a minimal bad stream, valid shapes seen in real traffic, and properties."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.stream import GrammarChecker, Violation, validate
from tests import strategies
from tests.conftest import REPO

START = ir.MessageStart(id="msg_1", model="m")
DONE = ir.Done(stop_reason=ir.StopReason(kind="end_turn"))


@dataclass(frozen=True)
class Case:
    """A stream and the exact (rule, event index) pairs it must produce."""

    name: str
    events: tuple[ir.StreamEvent, ...]
    expected: tuple[tuple[str, int], ...]


CASES = [
    Case(
        "start_first",
        (ir.TextStart(index=0), ir.TextDelta(index=0, text="a"), ir.TextEnd(index=0), DONE),
        (("start_first", 0),),
    ),
    # A late message_start after a headless beginning is the same fault, reported once.
    Case("start_first_late_start", (ir.UsageEvent(usage=ir.Usage()), START, DONE), (("start_first", 0),)),
    Case("duplicate_start", (START, START, DONE), (("duplicate_start", 1),)),
    Case(
        "block_restarted_while_open",
        (START, ir.TextStart(index=0), ir.TextStart(index=0), ir.TextEnd(index=0), DONE),
        (("block_restarted", 2),),
    ),
    Case(
        "block_restarted_redacted_on_used_index",
        (START, ir.TextStart(index=0), ir.TextEnd(index=0), ir.RedactedThinking(index=0, data="x"), DONE),
        (("block_restarted", 3),),
    ),
    Case(
        "index_order_skip",
        (START, ir.TextStart(index=1), ir.TextDelta(index=1, text="a"), ir.TextEnd(index=1), DONE),
        (("index_order", 1),),
    ),
    Case(
        "index_order_back",
        (
            START,
            ir.ToolCallStart(index=1, id="c1", name="f"),
            ir.ToolCallStart(index=0, id="c0", name="f"),
            ir.ToolCallEnd(index=1),
            ir.ToolCallEnd(index=0),
            DONE,
        ),
        (("index_order", 1), ("index_order", 2)),
    ),
    Case("delta_without_start", (START, ir.TextDelta(index=0, text="a"), DONE), (("delta_without_start", 1),)),
    Case(
        "delta_type_mismatch",
        (START, ir.ThinkingStart(index=0), ir.TextDelta(index=0, text="a"), ir.ThinkingEnd(index=0), DONE),
        (("delta_type_mismatch", 2),),
    ),
    Case(
        "delta_after_end",
        (START, ir.TextStart(index=0), ir.TextEnd(index=0), ir.TextDelta(index=0, text="a"), DONE),
        (("delta_after_end", 3),),
    ),
    Case(
        "empty_delta",
        (START, ir.ThinkingStart(index=0), ir.ThinkingDelta(index=0, text=""), ir.ThinkingEnd(index=0), DONE),
        (("empty_delta", 2),),
    ),
    Case("end_without_start", (START, ir.ToolCallEnd(index=0), DONE), (("end_without_start", 1),)),
    Case(
        "end_type_mismatch",
        (START, ir.TextStart(index=0), ir.ThinkingEnd(index=0), ir.TextEnd(index=0), DONE),
        (("end_type_mismatch", 2),),
    ),
    Case(
        "duplicate_end",
        (START, ir.TextStart(index=0), ir.TextEnd(index=0), ir.TextEnd(index=0), DONE),
        (("duplicate_end", 3),),
    ),
    Case(
        "block_not_closed",
        (
            START,
            ir.ToolCallStart(index=0, id="c0", name="f"),
            ir.ToolCallStart(index=1, id="c1", name="g"),
            ir.ToolCallEnd(index=0),
            DONE,
        ),
        (("block_not_closed", 4),),
    ),
    Case("event_after_terminal", (START, DONE, ir.UsageEvent(usage=ir.Usage())), (("event_after_terminal", 2),)),
    Case(
        "two_terminals",
        (START, DONE, ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER))),
        (("event_after_terminal", 2),),
    ),
    Case(
        "missing_terminal",
        (START, ir.TextStart(index=0), ir.TextDelta(index=0, text="a")),
        (("missing_terminal", 3), ("block_not_closed", 3)),
    ),
    Case("empty_stream", (), (("start_first", 0), ("missing_terminal", 0))),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case: Case) -> None:
    """Each minimal bad stream yields exactly the expected rules at the expected event positions."""
    found = validate(list(case.events))
    assert [(v.rule, v.index) for v in found] == list(case.expected)


def test_every_documented_rule_has_a_case() -> None:
    """The rule table in the module docstring and the cases here name the same rules."""
    from harness.stream import grammar

    documented = {line.split("`")[1] for line in (grammar.__doc__ or "").splitlines() if line.startswith("| `")}
    covered = {rule for case in CASES for rule, _ in case.expected}
    assert documented == covered
    assert len(documented) == 14


def test_violation_detail_names_index_and_kinds() -> None:
    """Details say which content index and which block types are involved."""
    [v] = validate([START, ir.ThinkingStart(index=0), ir.TextDelta(index=0, text="a"), ir.ThinkingEnd(index=0), DONE])
    assert v == Violation("delta_type_mismatch", 2, "text_delta on index 0, a thinking block")
    assert str(v) == "delta_type_mismatch at event 2: text_delta on index 0, a thinking block"
    [v] = validate([START, ir.ToolCallStart(index=0, id="c", name="f"), DONE])
    assert v.detail == "tool_call block on index 0 still open"


def test_openai_parallel_tool_calls_interleave() -> None:
    """OpenAI streams fragments of two tool calls alternately: several open blocks are fine."""
    events: list[ir.StreamEvent] = [
        START,
        ir.ToolCallStart(index=0, id="call_a", name="get_weather"),
        ir.ToolCallStart(index=1, id="call_b", name="get_time"),
        ir.ToolCallDelta(index=0, arguments='{"city":'),
        ir.ToolCallDelta(index=1, arguments='{"tz":'),
        ir.ToolCallDelta(index=0, arguments='"Paris"}'),
        ir.UsageEvent(usage=ir.Usage(input_tokens=3)),
        ir.ToolCallDelta(index=1, arguments='"UTC"}'),
        ir.ToolCallEnd(index=1),
        ir.ToolCallEnd(index=0),
        ir.UsageEvent(usage=ir.Usage(output_tokens=9)),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use", raw="tool_calls")),
    ]
    assert validate(events) == []


def test_anthropic_redacted_thinking_is_a_whole_block() -> None:
    """Redacted thinking arrives whole in content_block_start: one event, no start/end, then the next index."""
    events: list[ir.StreamEvent] = [
        START,
        ir.RedactedThinking(index=0, data="EmwKAhgBEgy"),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text="Hi"),
        ir.TextEnd(index=1),
        DONE,
    ]
    assert validate(events) == []


def test_error_terminal_after_closed_blocks_is_valid() -> None:
    """A mid-stream error (Anthropic `event: error`) is a valid terminal once the decoder closed the blocks."""
    events: list[ir.StreamEvent] = [
        START,
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="partial"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", code="overloaded_error")),
    ]
    assert validate(events) == []


def test_empty_tool_call_delta_is_allowed() -> None:
    """Anthropic's first input_json_delta has partial_json "": an empty argument fragment is not a violation."""
    events: list[ir.StreamEvent] = [
        START,
        ir.ToolCallStart(index=0, id="toolu_1", name="f"),
        ir.ToolCallDelta(index=0, arguments=""),
        ir.ToolCallEnd(index=0),
        DONE,
    ]
    assert validate(events) == []


def test_after_terminal_only_event_after_terminal_is_reported() -> None:
    """Events after the terminal are not checked further (one clear violation each, no cascade)."""
    found = validate([START, DONE, ir.TextDelta(index=5, text=""), ir.TextEnd(index=9)])
    assert [(v.rule, v.index) for v in found] == [("event_after_terminal", 2), ("event_after_terminal", 3)]


def test_finish_after_terminal_is_clean() -> None:
    """finish() has nothing to add to a terminated stream, however often it is called."""
    checker = GrammarChecker()
    assert checker.check(START) == []
    assert checker.check(DONE) == []
    assert checker.finish() == []
    assert checker.finish() == []


@given(strategies.responses())
def test_events_for_any_response_is_valid(response: ir.Response) -> None:
    """The canonical stream of every generated response follows the grammar."""
    assert validate(strategies.events_for(response)) == []


# Whichever structural event is removed from a valid stream, the grammar notices.
_STRUCTURAL = ("message_start", "text_start", "thinking_start", "tool_call_start", "text_end", "thinking_end")


@given(strategies.responses(), st.data())
def test_dropping_a_structural_event_is_detected(response: ir.Response, data: st.DataObject) -> None:
    """Removing the start, any block start/end, or the terminal event of a valid stream is a violation."""
    events = strategies.events_for(response)
    positions = [i for i, e in enumerate(events) if e.kind in (*_STRUCTURAL, "tool_call_end", "done")]
    drop = data.draw(st.sampled_from(positions))
    assert validate(events[:drop] + events[drop + 1 :]) != []


_small_index = st.integers(0, 3)
_any_event: st.SearchStrategy[ir.StreamEvent] = st.one_of(
    st.just(START),
    st.builds(ir.TextStart, index=_small_index),
    st.builds(ir.TextDelta, index=_small_index, text=st.sampled_from(["", "a"])),
    st.builds(ir.TextEnd, index=_small_index),
    st.builds(ir.ThinkingStart, index=_small_index),
    st.builds(ir.ThinkingDelta, index=_small_index, text=st.just("t")),
    st.builds(ir.ThinkingEnd, index=_small_index),
    st.builds(ir.RedactedThinking, index=_small_index, data=st.just("r")),
    st.builds(ir.ToolCallStart, index=_small_index, id=st.just("c"), name=st.just("f")),
    st.builds(ir.ToolCallDelta, index=_small_index, arguments=st.just("{}")),
    st.builds(ir.ToolCallEnd, index=_small_index),
    st.just(ir.UsageEvent(usage=ir.Usage(output_tokens=1))),
    st.just(DONE),
)


@given(st.lists(_any_event, max_size=12))
def test_incremental_checker_equals_batch(events: list[ir.StreamEvent]) -> None:
    """Checking event by event gives the batch result, and each violation points at the event that caused it."""
    checker = GrammarChecker()
    incremental: list[Violation] = []
    for position, event in enumerate(events):
        caused = checker.check(event)
        assert all(v.index == position for v in caused)
        incremental += caused
    tail = checker.finish()
    assert all(v.index == len(events) for v in tail)
    assert incremental + tail == validate(events)


@given(st.lists(_any_event, max_size=12))
def test_terminal_count_rule(events: list[ir.StreamEvent]) -> None:
    """A stream is free of terminal-related violations iff it has exactly one terminal event, and it is last."""
    rules = {v.rule for v in validate(events)}
    terminals = [i for i, e in enumerate(events) if e.kind in ir.TERMINAL_KINDS]
    well_terminated = len(terminals) == 1 and terminals[0] == len(events) - 1
    assert well_terminated == (not rules & {"missing_terminal", "event_after_terminal"})


def test_stream_imports_only_ir() -> None:
    """`harness.stream` may import only `harness.ir` of the harness (ARCHITECTURE.md)."""
    code = "import sys, harness.stream; print(' '.join(sorted(m for m in sys.modules if m.startswith('harness'))))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    outside = [m for m in out.split() if m != "harness" and not m.startswith(("harness.ir", "harness.stream"))]
    assert outside == []
