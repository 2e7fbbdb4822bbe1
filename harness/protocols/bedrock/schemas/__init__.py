"""JSON Schemas (Draft 2020-12) of the Bedrock Converse wire shapes, written from the API reference and
botocore's service model for bedrock-runtime (2023-09-30).

`request` (a Converse / ConverseStream body), `response` (a Converse response), `stream_event` (one
ConverseStream frame as `{"headers": {...}, "payload": <its JSON>}`: an event, an exception or an error),
`error` (an HTTP error body); `defs` holds content blocks, messages, usage, metrics and stop reasons. Unions
(content blocks, tool choices, deltas) must have exactly one member, as the service requires; objects stay open
otherwise because AWS adds fields (the `p` padding of stream events among them).
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
