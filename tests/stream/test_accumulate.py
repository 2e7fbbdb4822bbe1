"""The accumulator: events fold into the response a client would end up with; breaches become problems."""

from __future__ import annotations

from hypothesis import given

from harness import ir
from harness.stream import Accumulator, accumulate, parse_tool_arguments
from tests import strategies

START = ir.MessageStart(id="msg_1", model="claude-sonnet-4-20250514")
DONE = ir.Done(stop_reason=ir.StopReason(kind="end_turn", raw="end_turn"))


@given(strategies.responses())
def test_events_for_accumulate_back_to_the_response(response: ir.Response) -> None:
    """Every generated response survives events_for -> accumulate unchanged, with no problems."""
    result = accumulate(strategies.events_for(response))
    assert result.response == response
    assert result.error is None
    assert result.problems == []
    assert result.terminated


@given(strategies.responses())
def test_chunking_does_not_matter(response: ir.Response) -> None:
    """Splitting text and arguments into 1-character deltas folds to the same response."""
    assert accumulate(strategies.events_for(response, chunk=1)).response == response


def test_text_and_thinking_joined_with_signature() -> None:
    """Text and thinking deltas join per block; the thinking signature comes from thinking_end."""
    result = accumulate(
        [
            START,
            ir.ThinkingStart(index=0),
            ir.ThinkingDelta(index=0, text="Let me "),
            ir.ThinkingDelta(index=0, text="think."),
            ir.ThinkingEnd(index=0, signature="EqQBCkYIBRgC"),
            ir.TextStart(index=1),
            ir.TextDelta(index=1, text="Hello, "),
            ir.TextDelta(index=1, text="world ✓"),
            ir.TextEnd(index=1),
            DONE,
        ]
    )
    assert result.response == ir.Response(
        id="msg_1",
        model="claude-sonnet-4-20250514",
        content=[ir.ThinkingPart(text="Let me think.", signature="EqQBCkYIBRgC"), ir.TextPart(text="Hello, world ✓")],
        stop_reason=ir.StopReason(kind="end_turn", raw="end_turn"),
    )
    assert result.problems == []


def test_openai_parallel_tool_calls_interleave() -> None:
    """Interleaved argument fragments of two calls join per call, content ordered by block index."""
    result = accumulate(
        [
            START,
            ir.ToolCallStart(index=0, id="call_a", name="get_weather"),
            ir.ToolCallDelta(index=0, arguments='{"ci'),
            ir.ToolCallStart(index=1, id="call_b", name="get_time"),
            ir.ToolCallDelta(index=1, arguments='{"tz": "UTC"}'),
            ir.ToolCallDelta(index=0, arguments='ty": "Paris"}'),
            ir.ToolCallEnd(index=1),
            ir.ToolCallEnd(index=0),
            ir.Done(stop_reason=ir.StopReason(kind="tool_use", raw="tool_calls")),
        ]
    )
    a, b = result.response.content
    assert a == ir.ToolCallPart(
        id="call_a", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}'
    )
    assert b == ir.ToolCallPart(id="call_b", name="get_time", arguments={"tz": "UTC"}, arguments_raw='{"tz": "UTC"}')
    assert result.response.stop_reason == ir.StopReason(kind="tool_use", raw="tool_calls")


def test_anthropic_empty_first_partial_json() -> None:
    """Anthropic's no-argument tool_use streams one input_json_delta with partial_json "": arguments are {}."""
    result = accumulate(
        [
            START,
            ir.ToolCallStart(index=0, id="toolu_01", name="get_time"),
            ir.ToolCallDelta(index=0, arguments=""),
            ir.ToolCallEnd(index=0),
            ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
        ]
    )
    assert result.response.content == [ir.ToolCallPart(id="toolu_01", name="get_time", arguments={}, arguments_raw="")]
    assert result.problems == []


def test_tool_argument_parse_failure_is_reported() -> None:
    """Truncated argument JSON gives arguments=None, keeps the raw text, and names the call in a problem."""
    result = accumulate(
        [
            START,
            ir.ToolCallStart(index=0, id="call_1", name="get_weather"),
            ir.ToolCallDelta(index=0, arguments='{"city": "Par'),
            ir.ToolCallEnd(index=0),
            ir.Done(stop_reason=ir.StopReason(kind="max_tokens", raw="length")),
        ]
    )
    assert result.response.content == [
        ir.ToolCallPart(id="call_1", name="get_weather", arguments=None, arguments_raw='{"city": "Par')
    ]
    assert result.problems == [
        "tool call 'get_weather' (id 'call_1', index 0): arguments are not valid JSON: "
        "Unterminated string starting at (char 9)"
    ]


def test_parse_tool_arguments_rule() -> None:
    """Empty or blank text means no arguments; valid JSON parses (any value); invalid JSON gives an error."""
    assert parse_tool_arguments("") == ({}, None)
    assert parse_tool_arguments("  \n") == ({}, None)
    assert parse_tool_arguments('{"a":[1,2]}') == ({"a": [1, 2]}, None)
    assert parse_tool_arguments("[1]") == ([1], None)
    assert parse_tool_arguments("{") == (None, "Expecting property name enclosed in double quotes (char 1)")


def test_usage_merged_in_order() -> None:
    """Usage = message_start usage, then each usage event, then done's usage; later non-None figures win."""
    result = accumulate(
        [
            ir.MessageStart(id="msg_1", usage=ir.Usage(input_tokens=25, output_tokens=1, cache_read_tokens=0)),
            ir.UsageEvent(usage=ir.Usage(output_tokens=7)),
            ir.UsageEvent(usage=ir.Usage(cache_write_tokens=4)),
            ir.Done(stop_reason=None, usage=ir.Usage(output_tokens=12, reasoning_tokens=5)),
        ]
    )
    assert result.response.usage == ir.Usage(
        input_tokens=25, output_tokens=12, cache_read_tokens=0, cache_write_tokens=4, reasoning_tokens=5
    )


def test_openrouter_stream_without_finish_reason() -> None:
    """OpenRouter can end a stream with no finish_reason at all: the stop reason stays None."""
    result = accumulate(
        [START, ir.TextStart(index=0), ir.TextDelta(index=0, text="ok"), ir.TextEnd(index=0), ir.Done()]
    )
    assert result.response.stop_reason is None
    assert result.terminated
    assert result.response.content == [ir.TextPart(text="ok")]


def test_error_event_keeps_what_arrived_before() -> None:
    """A terminal error sets `error`; the response holds the text that arrived before it."""
    error = ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, "tool_use_failed", code="tool_use_failed")
    result = accumulate(
        [
            START,
            ir.TextStart(index=0),
            ir.TextDelta(index=0, text="I'll call"),
            ir.TextEnd(index=0),
            ir.ErrorEvent(error=error),
        ]
    )
    assert result.error == error
    assert result.response.content == [ir.TextPart(text="I'll call")]
    assert result.response.stop_reason is None
    assert result.terminated


def test_stream_cut_off_is_not_terminated() -> None:
    """A stream with no terminal event folds what arrived and says it was not terminated."""
    result = accumulate([START, ir.TextStart(index=0), ir.TextDelta(index=0, text="Hel")])
    assert not result.terminated
    assert result.error is None
    assert result.response.content == [ir.TextPart(text="Hel")]


def test_redacted_thinking_block() -> None:
    """A redacted-thinking event becomes one part with its data, in index order."""
    result = accumulate([START, ir.RedactedThinking(index=0, data="EmwKAhgB"), DONE])
    assert result.response.content == [ir.RedactedThinkingPart(data="EmwKAhgB")]


def test_delta_for_unknown_index_creates_the_block() -> None:
    """A delta without a start still lands in a block of its type, and the breach is a problem."""
    result = accumulate([START, ir.TextDelta(index=0, text="orphan"), ir.TextEnd(index=0), DONE])
    assert result.response.content == [ir.TextPart(text="orphan")]
    assert result.problems == ["event 1: text_delta on index 0, never started; block created"]


def test_delta_of_wrong_type_is_dropped_and_reported() -> None:
    """Text for a tool-call block cannot be folded into it: dropped, and said so."""
    result = accumulate(
        [
            START,
            ir.ToolCallStart(index=0, id="c", name="f"),
            ir.TextDelta(index=0, text="stray"),
            ir.ToolCallDelta(index=0, arguments="{}"),
            ir.ToolCallEnd(index=0),
            DONE,
        ]
    )
    assert result.response.content == [ir.ToolCallPart(id="c", name="f", arguments={}, arguments_raw="{}")]
    assert result.problems == ["event 2: text_delta on index 0, a tool_call block; delta dropped"]


def test_restart_and_late_delta_and_extra_start() -> None:
    """A restarted block keeps its first start; a delta after the end is appended; a second start keeps ids."""
    result = accumulate(
        [
            START,
            ir.TextStart(index=0),
            ir.TextDelta(index=0, text="a"),
            ir.TextEnd(index=0),
            ir.ThinkingStart(index=0),
            ir.TextDelta(index=0, text="b"),
            ir.MessageStart(id="msg_2", model="other"),
            DONE,
        ]
    )
    assert result.response.content == [ir.TextPart(text="ab")]
    assert (result.response.id, result.response.model) == ("msg_1", "claude-sonnet-4-20250514")
    assert result.problems == [
        "event 4: thinking_start on index 0, already a text block; start ignored",
        "event 5: text_delta on index 0 after its end; appended",
        "event 6: a second message_start",
    ]


def test_events_after_terminal_are_ignored() -> None:
    """A client stops at the terminal event: later events change nothing but are reported."""
    result = accumulate([START, DONE, ir.TextStart(index=0), ir.TextDelta(index=0, text="late")])
    assert result.response.content == []
    assert result.problems == [
        "event 2: text_start after the terminal event ignored",
        "event 3: text_delta after the terminal event ignored",
    ]


def test_content_ordered_by_index_not_arrival() -> None:
    """Blocks come out in content-index order even when a later index opened first."""
    result = accumulate(
        [
            START,
            ir.TextStart(index=1),
            ir.TextDelta(index=1, text="second"),
            ir.TextStart(index=0),
            ir.TextDelta(index=0, text="first"),
            DONE,
        ]
    )
    assert result.response.content == [ir.TextPart(text="first"), ir.TextPart(text="second")]


def test_incremental_result_midstream() -> None:
    """result() can be read at any point and later events still fold in."""
    acc = Accumulator()
    acc.add(START)
    acc.add(ir.TextStart(index=0))
    acc.add(ir.TextDelta(index=0, text="Hel"))
    assert acc.result().response.content == [ir.TextPart(text="Hel")]
    assert not acc.result().terminated
    acc.add(ir.TextDelta(index=0, text="lo"))
    acc.add(ir.TextEnd(index=0))
    acc.add(DONE)
    final = acc.result()
    assert final.response.content == [ir.TextPart(text="Hello")]
    assert final.terminated
