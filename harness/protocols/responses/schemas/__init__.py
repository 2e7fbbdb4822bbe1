"""JSON Schemas (Draft 2020-12) of the Responses API wire shapes, written from the API reference and the `openai`
SDK's `openai.types.responses` models.

`request` (a /v1/responses body), `response` (a response object, non-streamed), `stream_event` (the data of one
SSE event), `error` (an HTTP error body); `defs` holds the shared item, content part, usage, tool and response
shapes. Objects stay open (`additionalProperties` is not restricted) because OpenAI adds fields often; known
item, part and event types are checked by their `type`, with the fields the SDK's models require.
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
