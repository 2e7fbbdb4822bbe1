"""`ir.delta`, the unvalidated fast path for the hottest events, against validated construction."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness import ir

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
