"""JSON Schemas (Draft 2020-12) of Ollama's wire shapes, written from the API reference and `api/types.go`.

`request`, `response` (non-streamed reply), `stream_chunk` (one NDJSON line: chunk or error line), `error`,
`tags`; `defs` holds the shared message and tool-call shapes. Objects stay open (`additionalProperties` is not
restricted) because Ollama adds fields between releases.
"""

from __future__ import annotations

from harness.protocols.schemas import SchemaSet

NAMES = ("request", "response", "stream_chunk", "error", "tags")
"""The schemas a caller can ask for (`defs` holds shared shapes only)."""

SCHEMAS = SchemaSet(__name__, NAMES)
"""This package's documents, registry and cached validators."""

load_schema = SCHEMAS.load
validator = SCHEMAS.validator
validate = SCHEMAS.validate
