"""JSON Schemas (Draft 2020-12) of the Gemini wire shapes, written from the Generative Language API reference.

`request` (a generateContent / streamGenerateContent body), `response` (a GenerateContentResponse: a whole
response or one stream chunk), `stream_event` (one SSE data payload or JSON-array element: a response chunk or
an error object), `error` (an error body); `defs` holds Content, Part, usageMetadata and google.rpc.Status.
Objects stay open because Google adds fields between versions.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

NAMES = ("request", "response", "stream_event", "error")
"""The schemas a caller can ask for."""

_BASE = "https://conformance.invalid/gemini/"


def load_schema(name: str) -> dict[str, Any]:
    """The schema document `name` (one of NAMES, or `defs`)."""
    text = resources.files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@cache
def _registry() -> Registry[Any]:
    pairs = [(f"{_BASE}{n}.json", Resource.from_contents(load_schema(n))) for n in (*NAMES, "defs")]
    return Registry().with_resources(pairs)


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for schema `name` that resolves the cross-file references."""
    return Draft202012Validator(load_schema(name), registry=_registry())


def validate(name: str, instance: Any) -> None:
    """Raise `jsonschema.ValidationError` if `instance` does not match schema `name`."""
    validator(name).validate(instance)
