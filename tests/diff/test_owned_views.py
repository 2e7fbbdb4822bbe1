"""One private copy per case: the comparison pipeline copies each view once and lets the rules change that copy
(`owned=True`). A rule called without `owned` still never changes its caller's data, and both ways give the same
views."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.diff import (
    apply_losses,
    compared_views,
    normalize_pair,
    request_divergences,
    response_divergences,
    sdk_view,
)
from harness.diff import normalize as n
from harness.diff.request_rules import (
    empty_schema_keywords,
    inert_settings,
    one_result_per_tool_message,
    system_folded,
    text_layout,
    tool_result_json,
    unsaid_schema_keywords,
)
from harness.trace import Case, RunTrace, SdkView
from harness.trace.identity import RunRole
from tests import strategies
from tests.diff.test_fast_paths import key_lists, response_view

PAIR_RULES = (
    n.empty_thinking_pair,
    n.empty_text_pair,
    n.usage_details_zero,
    n.error_first_answered_with_status,
    n.incomplete_stream,
    normalize_pair,
)

errors = st.none() | st.builds(ir.IRError.of, strategies.error_kinds, strategies.text)


def with_empty_blocks(view: n.View) -> n.View:
    """The view with an empty text part and a thinking part that says nothing added to its response, so the pair
    rules that drop them have something to drop."""
    out = copy.deepcopy(view)
    content = out["response"]["content"]
    content += [{"kind": "text", "text": ""}, {"kind": "thinking", "text": "", "signature": None}]
    return out


@given(strategies.responses(), strategies.responses(), errors, st.integers(1, 5), st.booleans())
def test_pair_rules_leave_the_callers_views_alone_and_owned_gives_the_same(
    a: ir.Response, b: ir.Response, error: ir.IRError | None, chunk: int, empty: bool
) -> None:
    left, right = response_view(a, chunk, None), response_view(b, chunk + 1, error)
    if empty:
        left, right = with_empty_blocks(left), with_empty_blocks(right)
    snapshot = repr((left, right))
    for rule in PAIR_RULES:
        copied = rule(left, right)
        assert repr((left, right)) == snapshot, rule.__name__
        assert rule(copy.deepcopy(left), copy.deepcopy(right), owned=True) == copied, rule.__name__


@given(strategies.responses(), st.integers(1, 5), st.booleans())
def test_the_empty_block_tests_say_what_the_rules_would_change(response: ir.Response, chunk: int, empty: bool) -> None:
    view = response_view(response, chunk, None)
    view = with_empty_blocks(view) if empty else view
    assert n.has_empty_text(view) is (n.empty_text_blocks(view) != view)
    assert n._has_empty_thinking(view) is (n._empty_thinking(copy.deepcopy(view)) != view)
    if empty:
        assert n.has_empty_text(view) and n._has_empty_thinking(view)


@given(strategies.responses(), st.integers(1, 5))
def test_apply_owned_changes_the_view_given_and_gives_what_a_copy_gives(response: ir.Response, chunk: int) -> None:
    view = response_view(response, chunk, None)
    expected = n.apply(view, n.DEFAULT_RULES)
    mine = copy.deepcopy(view)
    assert n.apply(mine, n.DEFAULT_RULES, owned=True) == expected


@given(strategies.responses(), strategies.responses(), errors, key_lists)
def test_losses_on_owned_views_give_what_copies_give(
    a: ir.Response, b: ir.Response, error: ir.IRError | None, keys: list[str]
) -> None:
    left, right = response_view(a, 2, None), response_view(b, 3, error)
    expected = apply_losses(left, right, keys, scope="response")
    mine = copy.deepcopy(left), copy.deepcopy(right)
    got = apply_losses(*mine, keys, scope="response", owned=True)
    assert got == expected
    assert got[0] is mine[0] and got[1] is mine[1]  # stripped in place, not rebuilt


def _trace(case: Case, role: RunRole, response: ir.Response, events: list[ir.StreamEvent] | None) -> RunTrace:
    sdk = SdkView(response=None if events else response, events=events)
    return RunTrace.of(case.runs("ollama")[role], case.case_id, sdk=sdk)


@given(strategies.responses(), strategies.responses(), st.booleans())
def test_compared_views_never_change_the_shared_sdk_views(a: ir.Response, b: ir.Response, stream: bool) -> None:
    case = Case("text-basic", "anthropic", "ollama", stream)
    events_a = strategies.events_for(a, chunk=2) if stream else None
    events_b = strategies.events_for(b, chunk=3) if stream else None
    reference = _trace(case, "baseline_frontend", a, events_a)
    translated = _trace(case, "translated", b, events_b)
    before = copy.deepcopy((sdk_view(reference), sdk_view(translated)))
    first = compared_views(reference, translated)
    assert (sdk_view(reference), sdk_view(translated)) == before  # the cached views the next case compares
    assert compared_views(reference, translated) == first
    assert response_divergences(reference, translated) == response_divergences(reference, translated)


def _request(system: str | None, text: str) -> dict[str, Any]:
    request = ir.Request(
        model="m",
        system=system,
        messages=[
            ir.Message(role="user", content=[ir.TextPart(text=text), ir.TextPart(text="more")]),
            ir.Message(role="assistant", content=[ir.ToolCallPart(id="c1", name="f", arguments={"a": 1})]),
            ir.Message(
                role="tool",
                content=[
                    ir.ToolResultPart(tool_call_id="c1", content=[ir.TextPart(text='{"x": 1}')]),
                    ir.ToolResultPart(tool_call_id="c2", content=[ir.TextPart(text="two")]),
                ],
            ),
        ],
        thinking=ir.ThinkingConfig(enabled=False, budget_tokens=100),
    )
    return ir.to_json(request)


def test_request_rules_leave_the_callers_requests_alone_and_owned_gives_the_same() -> None:
    client = _request("Be a pirate.", "Hi")
    upstream = _request(None, "Be a pirate.\n\nHi")
    upstream["messages"][0]["content"] = [{"kind": "text", "text": "Be a pirate.\n\nHi\nmore"}]
    upstream["messages"][2]["content"][0]["content"][0]["text"] = '{"x":1}'
    snapshot = repr((client, upstream))
    singles = (inert_settings, one_result_per_tool_message, empty_schema_keywords)
    pairs: tuple[Any, ...] = (
        text_layout,
        system_folded,
        lambda a, b, **kw: tool_result_json(a, b, frontend_objects=True, upstream_objects=False, **kw),
        lambda a, b, **kw: unsaid_schema_keywords(a, b, ("additionalProperties",), **kw),
    )
    for rule in singles:
        assert rule(copy.deepcopy(client), owned=True) == rule(client)
    for both in pairs:
        assert both(copy.deepcopy(client), copy.deepcopy(upstream), owned=True) == both(client, upstream)
    pair = ("openai", "gemini")  # Gemini's wire carries tool results as objects: re-spaced JSON is no divergence
    found = request_divergences(client, upstream, pair=pair)
    assert repr((client, upstream)) == snapshot  # none of the rules, nor the whole pipeline, touched them
    assert request_divergences(copy.deepcopy(client), copy.deepcopy(upstream), pair=pair, owned=True) == found
    assert [d.path for d in found] == []  # the fold, the joined text and the re-spaced JSON are all excused
    upstream["messages"][0]["content"][0]["text"] = "Hi\nmore"
    assert [d.path for d in request_divergences(client, upstream, pair=pair)] == ["request.system"]
