"""JSON Schemas (Draft 2020-12) of the Anthropic Messages wire shapes, written from the API reference.

`request` (a /v1/messages body), `response` (a non-streamed message), `stream_event` (the data of one SSE
event), `error` (an error body, also the data of a mid-stream `event: error`); `defs` holds the shared content
block, usage and message shapes. Objects stay open (`additionalProperties` is not restricted) because
Anthropic adds fields between versions; known block and event types are checked by their `type`.
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
