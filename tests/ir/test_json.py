"""IR values survive JSON and always match the generated JSON Schema; the schema documents every field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from harness import ir
from tests import strategies

SCHEMA = ir.ir_json_schema()


def _validator(root: str) -> Draft202012Validator:
    """A validator for one top-level IR type, resolving `$ref`s into the shared `$defs`."""
    return Draft202012Validator({"$ref": f"#/$defs/{root}", "$defs": SCHEMA["$defs"]})


VALIDATORS = {name: _validator(name) for name in ("Request", "Response", "StreamEvent", "IRError")}


def _through_text(data: Any) -> Any:
    """The value as it comes back from real JSON text, so nothing Python-only can slip through."""
    return json.loads(json.dumps(data, ensure_ascii=False))


def _assert_round_trip(model: type[BaseModel], root: str, value: BaseModel) -> None:
    data = _through_text(ir.to_json(value))
    VALIDATORS[root].validate(data)
    assert ir.from_json(model, data) == value


def test_schema_is_valid_draft_2020_12() -> None:
    """The generated document is itself a valid 2020-12 schema with all four roots."""
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {"Request", "Response", "StreamEvent", "IRError"} <= set(SCHEMA["$defs"])


@given(strategies.requests)
def test_request_round_trip(request: ir.Request) -> None:
    """Requests: to_json -> JSON text -> schema-valid -> from_json gives the same value."""
    _assert_round_trip(ir.Request, "Request", request)


@given(strategies.responses())
def test_response_round_trip(response: ir.Response) -> None:
    """Responses round-trip and validate."""
    _assert_round_trip(ir.Response, "Response", response)


@given(strategies.errors)
def test_error_round_trip(error: ir.IRError) -> None:
    """Errors round-trip and validate."""
    _assert_round_trip(ir.IRError, "IRError", error)


@given(strategies.responses())
def test_event_stream_round_trip(response: ir.Response) -> None:
    """Every event of a canonical stream validates against StreamEvent; the list round-trips."""
    events = strategies.events_for(response)
    data = _through_text(ir.events_to_json(events))
    for item in data:
        VALIDATORS["StreamEvent"].validate(item)
    assert ir.events_from_json(data) == events


@given(strategies.responses(), strategies.errors)
def test_events_as_json_in_one_call_are_each_events_own_dump(response: ir.Response, error: ir.IRError) -> None:
    events = [
        *strategies.events_for(response, chunk=2),
        ir.UsageEvent(usage=ir.Usage(input_tokens=1)),
        ir.ProviderEvent(protocol="responses", type="x", data={"a": [1, None, "\u00e9"]}),
        ir.ErrorEvent(error=error),
    ]
    data = ir.events_to_json(events)
    assert data == [e.model_dump(mode="json", by_alias=True) for e in events]
    assert [list(item) for item in data] == [list(e.model_dump(mode="json", by_alias=True)) for e in events]


@given(strategies.errors)
def test_error_event_round_trip(error: ir.IRError) -> None:
    """A terminal error event validates and round-trips through the event adapter."""
    event = ir.ErrorEvent(error=error)
    data = _through_text(ir.EVENT_ADAPTER.dump_python(event, mode="json", by_alias=True))
    VALIDATORS["StreamEvent"].validate(data)
    assert ir.EVENT_ADAPTER.validate_python(data) == event


def test_response_format_schema_alias_on_the_wire() -> None:
    """`schema_` is `schema` in JSON (the alias is what the schema and every consumer see)."""
    fmt = ir.ResponseFormatJsonSchema.model_validate({"schema": {"type": "object"}})
    request = ir.Request(model="m", response_format=fmt)
    data = ir.to_json(request)
    assert data["response_format"] == {
        "kind": "json_schema",
        "name": "response",
        "schema": {"type": "object"},
        "strict": None,
    }
    VALIDATORS["Request"].validate(data)
    assert ir.from_json(ir.Request, data) == request


def _ir_models() -> list[type[ir.IRModel]]:
    return [
        obj
        for obj in vars(ir).values()
        if isinstance(obj, type) and issubclass(obj, ir.IRModel) and obj is not ir.IRModel
    ]


def test_every_model_is_in_the_schema() -> None:
    """Every public IR model has its definition in the schema document."""
    names = {m.__name__ for m in _ir_models()}
    assert len(names) == 39
    assert names <= set(SCHEMA["$defs"])


@pytest.mark.parametrize("model", _ir_models(), ids=lambda m: m.__name__)
def test_every_field_has_a_description(model: type[ir.IRModel]) -> None:
    """The one-line docstring rule: each model and each of its fields is described in the schema."""
    definition = SCHEMA["$defs"][model.__name__]
    assert definition.get("description"), f"{model.__name__} has no docstring"
    assert set(definition["properties"]) == {f.alias or name for name, f in model.model_fields.items()}
    undocumented = [name for name, prop in definition["properties"].items() if not prop.get("description")]
    assert undocumented == []


@pytest.mark.parametrize("model", _ir_models(), ids=lambda m: m.__name__)
def test_schema_forbids_unknown_fields(model: type[ir.IRModel]) -> None:
    """The schema mirrors `extra="forbid"`, so an external validator rejects typos as the models do."""
    assert SCHEMA["$defs"][model.__name__]["additionalProperties"] is False


def test_schema_rejects_what_the_models_reject() -> None:
    """Unknown kind, unknown field and a wrong type fail schema validation too."""
    events = VALIDATORS["StreamEvent"]
    assert not events.is_valid({"kind": "text_delta", "index": 0, "text": "a", "extra": 1})
    assert not events.is_valid({"kind": "video_delta", "index": 0})
    assert not events.is_valid({"kind": "text_delta", "index": "0", "text": "a"})
    assert events.is_valid({"kind": "text_delta", "index": 0, "text": "a"})
