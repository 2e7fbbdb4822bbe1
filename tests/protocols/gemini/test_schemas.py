"""The Gemini wire JSON Schemas are valid Draft 2020-12, accept the corpus, and reject wrong shapes."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft202012Validator

from harness.protocols.gemini import schemas
from tests.conftest import corpus_files
from tests.protocols.gemini.support import corpus


@pytest.mark.parametrize("name", [*schemas.NAMES, "defs"])
def test_schemas_are_valid(name: str) -> None:
    Draft202012Validator.check_schema(schemas.load_schema(name))


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("gemini"), ids=lambda p: p.name)
def test_corpus_bodies_validate(path: Any) -> None:
    for item in corpus(path.name):
        schemas.validate("request", json.loads(item.request.body))
        if item.response.status >= 400:
            schemas.validate("error", json.loads(item.response.body))
        elif not item.request.path.endswith("streamGenerateContent"):
            schemas.validate("response", json.loads(item.response.body))


TEXT = {"text": "hi"}
CALL = {"functionCall": {"name": "f", "args": {}}}


@pytest.mark.parametrize(
    ("name", "instance"),
    [
        ("request", {"contents": [{"role": "assistant", "parts": [TEXT]}]}),
        ("request", {"contents": [{"role": "user", "parts": [{**TEXT, **CALL}]}]}),
        ("request", {"contents": [{"role": "user", "parts": [{}]}]}),
        ("request", {"contents": [], "generationConfig": {"responseSchema": {}, "responseJsonSchema": {}}}),
        ("request", {"contents": [], "generationConfig": {"thinkingConfig": {"thinkingBudget": "high"}}}),
        ("request", {"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "REQUIRED"}}}),
        ("response", {"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}),
        ("response", {"candidates": [], "usageMetadata": {"promptTokenCount": -1}}),
        ("response", {"error": {"code": 500, "message": "x", "status": "INTERNAL"}}),
        ("stream_event", {"candidates": [{"finishReason": "stop"}]}),
        ("error", {"error": {"code": 429, "message": "slow down"}}),
        ("error", {"message": "flat"}),
    ],
    ids=[
        "role-assistant",
        "text-and-call-in-one-part",
        "empty-part",
        "two-response-schemas",
        "budget-not-integer",
        "unknown-mode",
        "call-without-name",
        "negative-tokens",
        "response-that-is-an-error",
        "lower-case-finish-reason",
        "error-without-status",
        "flat-error",
    ],
)
def test_schemas_reject(name: str, instance: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        schemas.validate(name, instance)
