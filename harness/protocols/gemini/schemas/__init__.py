"""JSON Schemas (Draft 2020-12) of the Gemini wire shapes, written from the Generative Language API reference.

`request` (a generateContent / streamGenerateContent body), `response` (a GenerateContentResponse: a whole
response or one stream chunk), `stream_event` (one SSE data payload or JSON-array element: a response chunk or
an error object), `error` (an error body); `defs` holds Content, Part, usageMetadata and google.rpc.Status.
Objects stay open because Google adds fields between versions.
"""

from __future__ import annotations

from harness.protocols.schemas import SchemaSet

NAMES = ("request", "response", "stream_event", "error")
"""The schemas a caller can ask for (`defs` holds shared shapes only)."""

SCHEMAS = SchemaSet(__name__, NAMES)
"""This package's documents, registry and cached validators."""

load_schema = SCHEMAS.load
validator = SCHEMAS.validator
validate = SCHEMAS.validate
