"""The shared schema loader: documents by name, cross-file references, cached validators, clear failures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from jsonschema import ValidationError

from harness.protocols.anthropic import schemas as anthropic_schemas
from harness.protocols.bedrock import schemas as bedrock_schemas
from harness.protocols.cloudflare import schemas as cloudflare_schemas
from harness.protocols.gemini import schemas as gemini_schemas
from harness.protocols.ollama import schemas as ollama_schemas
from harness.protocols.responses import schemas as responses_schemas
from harness.protocols.schemas import SchemaSet
from harness.protocols.swink import schemas as swink_schemas

SETS = {
    "anthropic": anthropic_schemas.SCHEMAS,
    "bedrock": bedrock_schemas.SCHEMAS,
    "cloudflare": cloudflare_schemas.SCHEMAS,
    "gemini": gemini_schemas.SCHEMAS,
    "ollama": ollama_schemas.SCHEMAS,
    "responses": responses_schemas.SCHEMAS,
    "swink": swink_schemas.SCHEMAS,
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_document_registers_under_its_id(name: str) -> None:
    schema_set = SETS[name]
    ids = {schema_set.load(n)["$id"] for n in (*schema_set.names, *schema_set.shared)}
    assert ids == {f"https://conformance.invalid/{name}/{n}.json" for n in (*schema_set.names, "defs")}
    assert all(schema_set.registry().contents(i) for i in ids)


def test_validators_are_cached_per_name() -> None:
    assert ollama_schemas.validator("request") is ollama_schemas.validator("request")
    assert ollama_schemas.validator("request") is not ollama_schemas.validator("response")


def test_a_reference_into_defs_is_resolved() -> None:
    # ollama request.json points at defs.json#/$defs/message: a message without a role fails through that $ref.
    ollama_schemas.validate("request", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(ValidationError, match="role"):
        ollama_schemas.validate("request", {"model": "m", "messages": [{"content": "hi"}]})


def test_an_unknown_schema_name_is_a_key_error_naming_the_known_ones() -> None:
    with pytest.raises(KeyError, match="stream_chunk"):
        ollama_schemas.load_schema("stream_event")


def test_a_document_without_id_fails_when_the_registry_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "noid_schemas"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "thing.json").write_text(json.dumps({"$id": "https://x.invalid/thing.json", "type": "object"}))
    (package / "defs.json").write_text(json.dumps({"$defs": {}}))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "noid_schemas", raising=False)
    schema_set = SchemaSet("noid_schemas", ("thing",))
    assert schema_set.load("thing")["type"] == "object"
    with pytest.raises(ValueError, match=r"noid_schemas/defs\.json has no \$id"):
        schema_set.validate("thing", {})
