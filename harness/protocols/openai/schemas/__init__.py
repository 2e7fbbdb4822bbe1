"""JSON Schemas (Draft 2020-12) of the Chat Completions wire shapes: request, response, stream payload, error.

Used by the tests to validate every encoded output and the recorded corpus bodies. `jsonschema` is imported
only when a validator is asked for, so importing the codec stays light.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal

ShapeName = Literal["Request", "Response", "Chunk", "Error", "StreamPayload", "Usage"]


@cache
def document() -> dict[str, Any]:
    """The whole schema document (definitions under `$defs`)."""
    text = resources.files(__package__).joinpath("chat_completions.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def schema(name: ShapeName) -> dict[str, Any]:
    """A standalone schema for one shape: a `$ref` into the document's definitions."""
    doc = document()
    return {"$schema": doc["$schema"], "$ref": f"#/$defs/{name}", "$defs": doc["$defs"]}


def validate(name: ShapeName, instance: Any) -> None:
    """Raise `jsonschema.ValidationError` if `instance` does not have the shape `name`."""
    import jsonschema

    jsonschema.Draft202012Validator(schema(name)).validate(instance)
