"""JSON (de)serialization of IR values and the JSON Schema generated from the IR."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter

from harness.ir.content import ContentPart
from harness.ir.errors import IRError
from harness.ir.events import StreamEvent
from harness.ir.request import Request
from harness.ir.response import Response

M = TypeVar("M", bound=BaseModel)

EVENT_ADAPTER: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)
EVENTS_ADAPTER: TypeAdapter[list[StreamEvent]] = TypeAdapter(list[StreamEvent])
CONTENT_ADAPTER: TypeAdapter[ContentPart] = TypeAdapter(ContentPart)


def to_json(value: BaseModel) -> dict[str, Any]:
    """An IR model as a JSON-ready dict (aliases used, defaults kept so the shape is stable)."""
    return value.model_dump(mode="json", by_alias=True)


def events_to_json(events: list[StreamEvent]) -> list[dict[str, Any]]:
    """A list of stream events as JSON-ready dicts (each as its own `model_dump` gives it, in one call)."""
    dumped: list[dict[str, Any]] = EVENTS_ADAPTER.dump_python(events, mode="json", by_alias=True)
    return dumped


def events_from_json(data: Any) -> list[StreamEvent]:
    """Stream events from JSON-ready dicts (validated)."""
    return EVENTS_ADAPTER.validate_python(data)


def from_json(model: type[M], data: Any) -> M:
    """An IR model from a JSON-ready dict (validated)."""
    return model.model_validate(data)


TAGS = ("kind", "type")
"""The fields IR unions are discriminated on."""


def require_tags(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every union member's tag (`kind`, or `type` for an image source: a constant with a default)
    required, as the models require it: pydantic picks a member by its tag, while JSON Schema's `oneOf` would take a
    tagless object that fits one member's other fields. Changes and returns `schema`."""
    for definition in schema.get("$defs", {}).values():
        for name in TAGS:
            tag = definition.get("properties", {}).get(name)
            if isinstance(tag, dict) and "const" in tag:
                required = definition.setdefault("required", [])
                if name not in required:
                    required.append(name)
    return schema


def ir_json_schema() -> dict[str, Any]:
    """One JSON Schema document with a definition for each top-level IR type."""
    defs: dict[str, Any] = {}
    roots: dict[str, Any] = {}
    for name, adapter in (
        ("Request", TypeAdapter(Request)),
        ("Response", TypeAdapter(Response)),
        ("StreamEvent", EVENT_ADAPTER),
        ("IRError", TypeAdapter(IRError)),
    ):
        schema = adapter.json_schema(by_alias=True, ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        roots[name] = schema
    defs.update(roots)
    return require_tags(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Core IR",
            "$defs": defs,
        }
    )


def dumps_schema() -> str:
    """The IR JSON Schema as stable, pretty JSON text."""
    return json.dumps(ir_json_schema(), indent=2, sort_keys=True)
