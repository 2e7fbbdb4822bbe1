"""The JSON Schemas are right about real traffic (every corpus body validates) and reject what OpenAI rejects."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from harness.protocols.openai import schemas
from tests.conftest import corpus_files
from tests.protocols.openai.support import check_stream, interactions

FILES = [("openai_chat", p.name) for p in corpus_files("openai_chat")] + [
    ("openai_compat", p.name) for p in corpus_files("openai_compat") if p.name.startswith(("deepseek", "groq"))
]


@pytest.mark.corpus
@pytest.mark.parametrize(("folder", "name"), FILES, ids=lambda v: str(v))
def test_corpus_bodies_validate(folder: str, name: str) -> None:
    for item in interactions(folder, name):
        schemas.validate("Request", json.loads(item.request.body))
        body = item.response.body
        if item.response.status >= 400:
            schemas.validate("Error", json.loads(body))
        elif "event-stream" in item.response.headers.get("content-type", ""):
            check_stream(body)
        else:
            schemas.validate("Response", json.loads(body))


def test_schema_document_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(schemas.document())
    assert Path(schemas.__file__).with_name("chat_completions.json").is_file()


@pytest.mark.parametrize(
    ("shape", "instance"),
    [
        ("Request", {"messages": []}),  # no model
        ("Request", {"model": "m", "messages": [{"role": "tool", "content": "x"}]}),  # no tool_call_id
        ("Request", {"model": "m", "messages": [{"role": "user", "content": [{"type": "audio"}]}]}),
        ("Request", {"model": "m", "messages": [], "tool_choice": "sometimes"}),
        ("Chunk", {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}),
        ("Chunk", {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{}]}),
        ("Response", {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0}]}),
        ("Error", {"error": {"type": "server_error"}}),  # no message
        ("Usage", {"prompt_tokens": 1, "completion_tokens": 2}),  # no total
    ],
)
def test_schemas_reject_malformed_shapes(shape: schemas.ShapeName, instance: object) -> None:
    with pytest.raises(jsonschema.ValidationError):
        schemas.validate(shape, instance)
