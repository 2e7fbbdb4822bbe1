"""JSON Schemas (Draft 2020-12) of Workers AI's native wire shapes, written from Cloudflare's docs.

`request` (text-generation input), `response` (non-streamed reply in the envelope), `stream_event` (one SSE
`data` payload), `error` (the envelope); `defs` holds messages, tool calls, usage and error entries.
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
