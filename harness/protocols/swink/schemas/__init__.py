"""JSON Schemas (Draft 2020-12) of swink's proxy wire shapes, written from the serde types of swink-agent.

`request` (ProxyRequest), `stream_event` (one SSE `data` payload), `error` (the body this harness writes for a
failed response); `defs` holds messages, content blocks, usage, cost and the enums.
"""

from __future__ import annotations

from harness.protocols.schemas import SchemaSet

NAMES = ("request", "stream_event", "error")
"""The schemas a caller can ask for (`defs` holds shared shapes only)."""

SCHEMAS = SchemaSet(__name__, NAMES)
"""This package's documents, registry and cached validators."""

load_schema = SCHEMAS.load
validator = SCHEMAS.validator
validate = SCHEMAS.validate
