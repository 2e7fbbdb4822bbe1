"""The headline of a case is its most specific difference, by one explicit ranking (`harness.diff.headline`):
a lost tool call or wrong text before a usage count, a usage count before an id."""

from __future__ import annotations

from harness.diff.compare import Divergence, diff_views
from harness.diff.headline import Kind, candidates, cause_field, check_kind, field_of, headline, kind_of, ranked


def div(path: str, left: object = 1, right: object = 2, change: str = "values_changed") -> Divergence:
    index = int(path[7 : path.index("]")]) if path.startswith("events[") else None
    return Divergence(path, left, right, index, change)


START_USAGE = div("events[0].start_input_tokens", "<reported>", 0)
LOST_CALL = div(
    "events[3]",
    {"kind": "tool_call_start", "index": 1, "id": "<call:1>", "name": "get_weather"},
    {"kind": "done", "stop_reason": {"kind": "tool_use"}},
)
TEXT = div("events[2].text", "Hello", "Hel")
USAGE = div("response.usage.output_tokens", 3, 4)
ID = div("response.content[1].id", "<call:1>", "<call:2>")


def test_a_lost_tool_call_beats_a_usage_count_that_comes_first() -> None:
    # The case of issue 23: message_start's zeroed count came first and headed the group of a lost tool call.
    assert headline([START_USAGE, LOST_CALL]) is LOST_CALL
    assert (kind_of(START_USAGE), kind_of(LOST_CALL)) == (Kind.USAGE, Kind.TOOL_CALL)


def test_text_beats_a_usage_count() -> None:
    assert headline([USAGE, TEXT]) is TEXT
    assert headline([START_USAGE, TEXT]) is TEXT


def test_a_usage_count_beats_an_id() -> None:
    assert headline([ID, USAGE]) is USAGE
    assert kind_of(ID) is Kind.ID


def test_a_stop_reason_sits_between_text_and_usage() -> None:
    stop = div("events[5].stop_reason.kind", "max_tokens", "end_turn")
    assert headline([USAGE, stop]) is stop
    assert headline([stop, TEXT]) is TEXT


def test_equals_keep_stream_order_and_nothing_heads_nothing() -> None:
    first, later = div("events[2].text", "a", "b"), div("events[4].text", "c", "d")
    assert headline([first, later]) is first
    assert headline([]) is None


def test_only_the_first_whole_item_of_a_list_is_a_candidate() -> None:
    """After a lost item the rest of the list is shifted: the `done` that moved is no second cause."""
    tail = [
        div("events[4]", {"kind": "tool_call_end", "index": 1}, "<missing>", "iterable_item_removed"),
        div("events[5]", {"kind": "done"}, "<missing>", "iterable_item_removed"),
    ]
    lost_part = div("response.content[1]", {"kind": "tool_call", "name": "f"}, "<missing>", "iterable_item_removed")
    found = candidates([START_USAGE, LOST_CALL, *tail, lost_part])
    assert found == [START_USAGE, LOST_CALL, lost_part]  # another list's first whole item still counts
    assert ranked([START_USAGE, LOST_CALL, *tail]) == [LOST_CALL, START_USAGE]


def test_an_error_only_the_compared_side_has_beats_everything() -> None:
    broke = div("events[4]", {"kind": "done"}, {"kind": "error", "error": {"kind": "malformed_stream"}})
    assert kind_of(broke) is Kind.BROKEN and headline([LOST_CALL, broke]) is broke
    assert kind_of(div("error", None, {"kind": "server"})) is Kind.BROKEN
    assert kind_of(div("error", {"kind": "overloaded"}, None)) is Kind.STOP  # an error lost is a wrong outcome


def test_an_items_changed_kind_is_of_that_kind_and_a_stop_reasons_value_is_no_kind() -> None:
    assert kind_of(div("events[1].kind", "thinking_start", "text_start")) is Kind.TEXT
    assert kind_of(div("response.stop_reason.kind", "tool_use", "end_turn")) is Kind.STOP
    assert kind_of(div("response.stop_reason.kind", "max_tokens", "end_turn")) is Kind.STOP


def test_kinds_by_path_and_by_value() -> None:
    assert kind_of(div("request.tools[0]", {"name": "f"}, "<missing>", "iterable_item_removed")) is Kind.TOOL_CALL
    assert kind_of(div("request.messages[1].content[0].text", "a", "b")) is Kind.TEXT
    assert kind_of(div("request.temperature", 0.2, "<missing>")) is Kind.OTHER
    assert kind_of(div("response.content[0].arguments", {"a": 1}, {})) is Kind.TOOL_CALL
    assert kind_of(div("error.kind", "rate_limit", "server")) is Kind.STOP
    assert kind_of(div("events[7].usage.input_tokens", 5, 0)) is Kind.USAGE
    assert kind_of(div("response.model", "a", "b")) is Kind.ID
    assert kind_of(div("request.messages[3].content[0].tool_call_id", "<call:1>", "<call:0>")) is Kind.ID


def test_a_field_is_named_the_same_on_a_stream_and_an_answer() -> None:
    assert field_of("events[5].stop_reason.kind") == field_of("response.stop_reason.kind") == "stop_reason.kind"
    assert field_of("events[3]") == field_of("response.content[1]") == ""
    assert field_of("events[3].arguments") == field_of("response.content[1].arguments") == "arguments"
    assert field_of("request.temperature") == "temperature"


def test_checks_map_onto_the_same_kinds() -> None:
    assert check_kind("tool_calls") is Kind.TOOL_CALL
    assert check_kind("text_equals") is Kind.TEXT
    assert check_kind("stop_reason") is Kind.STOP
    assert check_kind("usage_present") is Kind.USAGE
    assert check_kind("frontend_wire") is None


def test_the_headline_of_a_real_comparison() -> None:
    """Two streams that differ in message_start's count and a lost second tool call, diffed as the judge does:
    stream order puts the count first, the headline is the lost call."""
    start = {"kind": "message_start", "start_input_tokens": "<reported>"}
    first = {"kind": "tool_call_start", "index": 0, "id": "<call:0>", "name": "get_weather"}
    second = {"kind": "tool_call_start", "index": 1, "id": "<call:1>", "name": "get_weather"}
    done = {"kind": "done", "stop_reason": {"kind": "tool_use"}}
    left = {"events": [start, first, second, done]}
    right = {"events": [{**start, "start_input_tokens": 0}, first, done]}
    found = diff_views(left, right)
    assert found[0].path == "events[0].start_input_tokens"
    best = headline(found)
    assert best is not None and best.path == "events[2]" and best.left == second


def test_a_cause_is_named_alike_on_a_stream_and_an_answer() -> None:
    error_to_stop = div("events[4]", {"kind": "error", "error": {"kind": "overloaded"}}, {"kind": "done"})
    assert cause_field(error_to_stop) == cause_field(div("error", {"kind": "overloaded"}, None)) == "error"
    assert cause_field(div("events[2].kind", "tool_call_start", "tool_call_end")) == cause_field(LOST_CALL) == ""
    assert cause_field(div("events[5].stop_reason.kind", "max_tokens", "end_turn")) == "stop_reason.kind"
