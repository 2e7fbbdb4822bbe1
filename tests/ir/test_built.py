"""The fast paths past pydantic's validation (`ir.delta`, `ir.events_kept`) against validated construction."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness import ir
from harness.drivers.base import SdkResult
from harness.ir import events as events_module
from harness.trace.model import RunTrace, SdkView, Wire
from tests import strategies

BLOCKS: dict[str, tuple[type[ir.IRModel], str]] = {
    "text": (ir.TextDelta, "text"),
    "thinking": (ir.ThinkingDelta, "text"),
    "tool_call": (ir.ToolCallDelta, "arguments"),
}


class _Str(str):
    """A str subclass: validation makes a plain str of it, so it must not take the fast path."""


def _state(event: ir.IRModel) -> tuple[Any, ...]:
    """Everything validation decides about an event: class, values and their exact types, the fields set."""
    values = [(key, type(value), value) for key, value in event.__dict__.items()]
    return (
        type(event),
        values,
        event.model_fields_set,
        event.__pydantic_extra__,
        event.__pydantic_private__,
        event.model_dump_json(),
        event.model_dump_json(exclude_unset=True),
        hash(event),
    )


indices = st.one_of(st.integers(), st.booleans(), st.integers().map(str), st.floats(allow_nan=False), st.none())
texts = st.one_of(st.text(), st.text().map(_Str), st.binary(max_size=8), st.integers(), st.none())


@given(st.sampled_from(sorted(BLOCKS)), indices, texts)
def test_delta_is_the_validated_event(block: Literal["text", "thinking", "tool_call"], index: Any, text: Any) -> None:
    """Whatever it is given, `ir.delta` makes what validated construction makes, or fails as it fails."""
    cls, field = BLOCKS[block]
    try:
        expected = cls(**{"index": index, field: text})
    except ValidationError:
        with pytest.raises(ValidationError):
            ir.delta(block, index, text)
        return
    assert _state(ir.delta(block, index, text)) == _state(expected)


def test_delta_skips_validation_for_exact_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain int and str take the fast path: no validation runs (the point of it)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("validated")

    monkeypatch.setattr(ir.TextDelta, "model_validate", refuse)
    assert ir.delta("text", 3, "hi") == ir.TextDelta.model_construct(index=3, text="hi")


def test_built_events_are_frozen() -> None:
    """An event built without validation is as immutable as a validated one."""
    event = ir.delta("thinking", 0, "x")
    with pytest.raises(ValidationError):
        event.text = "y"  # type: ignore[misc]


class _Done(ir.Done):
    """A subclass of an event class: validation keeps it too, but only exact classes take the fast path."""


def _events_state(model: Any, field: str) -> tuple[Any, ...]:
    events = getattr(model, field)
    return (
        type(model),
        None if events is None else [type(event) for event in events],
        events is None or type(events) is list,
        model.model_fields_set,
        model.model_dump_json(),
    )


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `ir.events_kept` validate every list (the path it skips)."""
    monkeypatch.setattr(events_module, "EVENT_CLASSES", frozenset())


@given(
    strategies.responses(),
    st.booleans(),
    st.sampled_from(["SdkResult", "SdkView", "RunTrace"]),
    st.none() | strategies.errors,
)
def test_events_kept_is_validation(response: ir.Response, odd: bool, model: str, error: ir.IRError | None) -> None:
    """A model holding a run's events comes out the same (the same event objects in a new list, fields set, dump)
    whether `ir.events_kept` keeps its events or they are validated one by one."""
    events: list[Any] = [*strategies.events_for(response)]
    if odd:  # a subclass and a dict: validated (the dict into an event), as before
        events = [*events[:-1], {"kind": "usage", "usage": {}}, _Done()]
    cls, field, extra = {
        "SdkResult": (SdkResult, "events", {"error": error}),
        "SdkView": (SdkView, "events", {"error": error, "exception": "x"}),
        "RunTrace": (RunTrace, "upstream_events", _TRACE),
    }[model]
    fast = cls(**{field: events}, **extra)
    with pytest.MonkeyPatch.context() as patch:
        _slow(patch)
        slow = cls(**{field: events}, **extra)
    assert _events_state(fast, field) == _events_state(slow, field)
    assert fast == slow
    kept, validated = getattr(fast, field), getattr(slow, field)
    # The same event objects (a model is not revalidated), in a list of the model's own.
    assert all(a is b for a, b, given in zip(kept, validated, events, strict=True) if not isinstance(given, dict))
    assert kept is not events


_TRACE: dict[str, Any] = {
    "case_id": "c",
    "role": "baseline_frontend",
    "scenario": "s",
    "client": "openai",
    "upstream": "openai",
    "mode": "translate",
    "stream": True,
}


def test_trace_after_validator_reads_the_kept_events() -> None:
    """`RunTrace`'s check that each upstream event has its chunk reads the events kept (not the None the wrapped
    validation sees), both ways round."""
    events = [ir.MessageStart(), ir.Done()]
    placed = Wire(event_chunks=[0, 0], upstream_times_ms=[1.0], upstream_chunks=1)
    assert RunTrace(**_TRACE, upstream_events=events, wire=placed).upstream_events == events
    with pytest.raises(ValidationError, match="one entry per upstream event"):
        RunTrace(**_TRACE, upstream_events=events, wire=placed.model_copy(update={"event_chunks": [0]}))


def test_events_kept_from_json() -> None:
    """Validating JSON (a trace read back) takes the validating path and gives the same model."""
    view = SdkView(events=[ir.MessageStart(), ir.delta("text", 0, "x"), ir.Done()])
    assert SdkView.model_validate_json(view.model_dump_json()) == view
