"""The diff engine's fast paths give exactly what the plain algorithms give: losses applied only where they find
something, normalization on one private copy, and the equality check that spares deepdiff."""

from __future__ import annotations

import copy
import importlib
from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.diff import apply_losses, compare, diff_views, pipeline, valid_keys
from harness.diff import losses as loss_module
from harness.diff import normalize as n
from harness.diff.compare import Divergence, same, same_pickle
from harness.protocols import registry
from tests import strategies

compare_module = importlib.import_module("harness.diff.compare")  # `harness.diff.compare` is also a function
LOSS_KEYS = sorted({key for name in registry.names() for key in valid_keys(registry.get(name).losses)})


def plain_apply_losses(left: Any, right: Any, keys: list[str], scope: Any, root_key: str | None) -> tuple[Any, Any]:
    """Every key stripped in turn, as before the one-walk filter."""
    a, b = copy.deepcopy(left), copy.deepcopy(right)
    for loss in loss_module._expand(loss_module.parse_loss(key) for key in keys):
        if scope is not None and loss.scope not in (None, scope):
            continue
        if loss.value is not None and not (
            loss_module._has_value(a, loss, root_key) or loss_module._has_value(b, loss, root_key)
        ):
            continue
        a, b = loss_module._strip(a, loss, root_key), loss_module._strip(b, loss, root_key)
    return a, b


def response_view(response: ir.Response, chunk: int, error: ir.IRError | None) -> n.View:
    return {
        "response": ir.to_json(response),
        "events": ir.events_to_json(strategies.events_for(response, chunk=chunk)),
        "error": ir.to_json(error) if error else None,
    }


errors = st.none() | st.builds(ir.IRError.of, strategies.error_kinds, strategies.text)
key_lists = st.lists(st.sampled_from(LOSS_KEYS), max_size=12)


@given(strategies.responses(), strategies.responses(), errors, key_lists, st.sampled_from([None, "response"]))
def test_losses_on_response_views_equal_stripping_every_key(
    a: ir.Response, b: ir.Response, error: ir.IRError | None, keys: list[str], scope: Any
) -> None:
    left, right = response_view(a, 2, None), response_view(b, 5, error)
    snapshot = repr((left, right))
    assert apply_losses(left, right, keys, scope=scope) == plain_apply_losses(left, right, keys, scope, None)
    assert repr((left, right)) == snapshot


@given(strategies.requests, strategies.requests, key_lists)
def test_losses_on_requests_equal_stripping_every_key(a: ir.Request, b: ir.Request, keys: list[str]) -> None:
    left, right = {"request": ir.to_json(a)}, {"request": ir.to_json(b)}
    expected = plain_apply_losses(left, right, keys, "request", None)
    assert apply_losses(left, right, keys, scope="request") == expected


def test_every_codec_loss_table_on_a_full_response_equals_stripping_every_key() -> None:
    response = ir.Response(
        id="r",
        model="m",
        content=[
            ir.ThinkingPart(text="t", signature="s"),
            ir.RedactedThinkingPart(data="x"),
            ir.TextPart(text="hi"),
            ir.ToolCallPart(id="c", name="f", arguments={"a": 1}, arguments_raw='{"a":1}'),
        ],
        stop_reason=ir.StopReason(kind="stop_sequence", raw="stop", sequence="END"),
        usage=ir.Usage(input_tokens=3, output_tokens=4, cache_read_tokens=1, cache_write_tokens=2, reasoning_tokens=1),
    )
    view = response_view(response, 1, ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", status=429))
    for name in registry.names():
        keys = valid_keys(registry.get(name).losses)
        got = apply_losses(view, view, keys, scope="response")
        assert got == plain_apply_losses(view, view, keys, "response", None), name


def shout(view: n.View) -> n.View:
    """A rule from outside the module: upper-cases text deltas (without touching its input)."""
    out = copy.deepcopy(view)
    for event in out.get("events") or []:
        if event.get("kind") == "text_delta":
            event["text"] = event["text"].upper()
    return out


@given(strategies.responses(), st.integers(1, 7))
def test_apply_on_one_copy_equals_each_rule_in_turn(response: ir.Response, chunk: int) -> None:
    view = response_view(response, chunk, None)
    snapshot = repr(view)
    rules = (*n.DEFAULT_RULES[:3], shout, *n.DEFAULT_RULES[3:])
    pipeline_rules = (n.start_usage_reported, n.text_runs_joined, n.blocks_in_order, n.opaque_signatures)
    for chosen in (n.DEFAULT_RULES, rules, pipeline_rules):
        expected = view
        for rule in chosen:
            expected = rule(expected)
        assert n.apply(view, chosen) == expected
    assert repr(view) == snapshot  # neither the copy-once path nor the rules touched the input
    assert n.apply(view, ()) is view


def test_json_copy_shares_nothing_mutable() -> None:
    value: dict[str, Any] = {"a": [1, 2.5, True, None, "x", {"b": []}], "t": ([1],)}
    copied = n.json_copy(value)
    assert copied == value
    assert copied["a"] is not value["a"] and copied["a"][5] is not value["a"][5]
    assert copied["t"][0] is not value["t"][0]  # a tuple is not JSON: copied by copy.deepcopy


def test_same_is_type_strict_where_deepdiff_is() -> None:
    assert same({"a": [1, "x", None, {"b": 2.0}]}, {"a": [1, "x", None, {"b": 2.0}]})
    assert not same({"n": 1}, {"n": 1.0}) and not same([True], [1]) and not same((1,), (1,))
    # `==` holds for these, so deepdiff must still run and report the type change.
    found = diff_views({"n": 1}, {"n": 1.0})
    assert [(d.path, d.change) for d in found] == [("n", "type_changes")]
    assert diff_views({"n": [1, {"k": "v"}]}, {"n": [1, {"k": "v"}]}) == []


scalars = (
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3) | st.just(float("nan")) | st.text(max_size=3)
)
data = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=2) | st.integers(0, 2), inner, max_size=3)
    ),
    max_leaves=12,
)
"""JSON data and what is not quite JSON (tuples, int keys, NaN, 1 against 1.0 and True)."""


def deepdiff_alone(left: Any, right: Any) -> list[Divergence]:
    """What `diff_views` gives without its shortcut for equal views: deepdiff's own finding."""
    with (
        mock.patch.object(compare_module, "same_pickle", return_value=False),
        mock.patch.object(compare_module, "same", return_value=False),
    ):
        return diff_views(left, right)


def twin(value: Any, draw: Any) -> Any:
    """An equal value, its scalars maybe of another type (1 as 1.0 or True) and its dicts maybe in another order."""
    if isinstance(value, dict):
        items = [(key, twin(item, draw)) for key, item in value.items()]
        return dict(reversed(items) if draw(st.booleans()) else items)
    if isinstance(value, list | tuple):
        return type(value)(twin(item, draw) for item in value)
    if isinstance(value, bool | int | float) and value == value and value == int(value):  # not NaN, a whole number
        return draw(st.sampled_from([value, int(value), float(value), *([bool(value)] if value in (0, 1) else [])]))
    return value


@given(data, data, st.data())
def test_the_shortcut_for_equal_views_gives_what_deepdiff_finds(left: Any, right: Any, draws: st.DataObject) -> None:
    pairs = ((left, right), (left, copy.deepcopy(left)), (left, left), (left, twin(left, draws.draw)))
    for one, other in pairs:
        assert diff_views(one, other) == deepdiff_alone(one, other)


@given(data)
def test_equal_pickles_of_json_data_are_same(value: Any) -> None:
    twin = copy.deepcopy(value)
    if value == twin and same_pickle(value, twin):
        assert same(value, twin) or deepdiff_alone(value, twin) == []


def test_compare_still_names_the_first_divergence_after_the_fast_paths() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="ab"),
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn")),
    ]
    left: n.View = {"events": ir.events_to_json(events), "response": None, "error": None}
    right = copy.deepcopy(left)
    right["events"][2]["text"] = "ac"
    found = compare(left, right)
    assert [(d.path, d.left, d.right) for d in found] == [("events[2].text", "ab", "ac")]
    assert compare(left, copy.deepcopy(left)) == []


def test_a_value_that_appears_when_a_whole_model_is_dropped_still_counts() -> None:
    # Dropping the ThinkingConfig leaves `request.thinking` None, which `Request.thinking:None` then removes: the
    # one-walk filter must not rule the second key out because thinking was not None to begin with.
    request = ir.to_json(
        ir.Request(model="m", messages=[], thinking=ir.ThinkingConfig(enabled=True, budget_tokens=2048))
    )
    keys = ["ThinkingConfig", "Request.thinking:None"]
    got = apply_losses({"request": request}, {"request": request}, keys)
    assert got == plain_apply_losses({"request": request}, {"request": request}, keys, None, None)
    assert "thinking" not in got[0]["request"] and request["thinking"] == {"enabled": True, "budget_tokens": 2048}


def test_a_part_without_its_source_is_dropped_even_when_no_key_matches() -> None:
    request = {"messages": [{"role": "user", "content": [{"kind": "image", "source": None}, {"kind": "text"}]}]}
    keys = ["UrlImage"]  # nothing to match: only the orphaned image part goes, as every strip drops it
    got = apply_losses({"request": request}, {"request": request}, keys)
    assert got == plain_apply_losses({"request": request}, {"request": request}, keys, None, None)
    assert got[0]["request"]["messages"][0]["content"] == [{"kind": "text"}]


def plain_coalesce(view: n.View) -> n.View:
    """`coalesce_deltas` as first written: each delta added to its run's first event with `+=`."""
    out = copy.deepcopy(view)
    merged: list[dict[str, Any]] = []
    for event in out["events"]:
        kind = event.get("kind")
        if kind == "usage":
            continue
        field = {"text_delta": "text", "thinking_delta": "text", "tool_call_delta": "arguments"}.get(kind or "")
        last = merged[-1] if merged else None
        if field and last and last.get("kind") == kind and last.get("index") == event.get("index"):
            last[field] += event[field]
            continue
        merged.append(event)
    out["events"] = merged
    return out


delta_events = st.lists(
    st.builds(
        lambda kind, index, text: {
            "kind": kind,
            "index": index,
            "text" if kind != "tool_call_delta" else "arguments": text,
        },
        st.sampled_from(["text_delta", "thinking_delta", "tool_call_delta", "usage", "text_start", "text_end"]),
        st.integers(0, 2),
        st.text(max_size=3),
    ),
    max_size=30,
)


@given(delta_events)
def test_coalescing_joins_each_run_as_adding_one_delta_at_a_time_does(events: list[dict[str, Any]]) -> None:
    view: n.View = {"response": None, "events": events, "error": None}
    assert n.coalesce_deltas(view) == plain_coalesce(view)


def test_the_events_with_usage_are_those_whose_model_has_the_field() -> None:
    for name in ir.__all__:
        model = getattr(ir, name)
        if isinstance(model, type) and issubclass(model, ir.IRModel):
            assert pipeline._has_usage(model) is ("usage" in model.model_fields), name


@given(strategies.responses(), strategies.requests, strategies.responses(), errors, key_lists)
def test_live_losses_are_the_same_with_plans_kept_from_other_trees(
    seen: ir.Response, asked: ir.Request, a: ir.Response, error: ir.IRError | None, keys: list[str]
) -> None:
    losses = loss_module._expand(loss_module.parse_loss(key) for key in keys)
    kept = loss_module._Wanted(losses)  # its plans made on other trees first, as a run's cases share them
    loss_module._live((response_view(seen, 3, None), {"request": ir.to_json(asked)}), kept, None)
    trees = (response_view(a, 2, error), {"request": ir.to_json(asked)})
    assert loss_module._live(trees, kept, None) == loss_module._live(trees, loss_module._Wanted(losses), None)
