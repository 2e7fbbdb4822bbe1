"""JSON Schemas (Draft 2020-12) of Ollama's wire shapes, written from the API reference and `api/types.go`.

`request`, `response` (non-streamed reply), `stream_chunk` (one NDJSON line: chunk or error line), `error`,
`tags`; `defs` holds the shared message and tool-call shapes. Objects stay open (`additionalProperties` is not
restricted) because Ollama adds fields between releases.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

NAMES = ("request", "response", "stream_chunk", "error", "tags")
"""The schemas a caller can ask for."""

_BASE = "https://conformance.invalid/ollama/"


def load_schema(name: str) -> dict[str, Any]:
    """The schema document `name` (one of NAMES, or `defs`)."""
    text = resources.files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@cache
def _registry() -> Registry[Any]:
    resources_ = [(f"{_BASE}{n}.json", Resource.from_contents(load_schema(n))) for n in (*NAMES, "defs")]
    return Registry().with_resources(resources_)


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for schema `name` that resolves the shared `defs.json` references."""
    return Draft202012Validator(load_schema(name), registry=_registry())


def validate(name: str, instance: Any) -> None:
    """Raise `jsonschema.ValidationError` if `instance` does not match schema `name`."""
    validator(name).validate(instance)
