"""The Responses API's name and JSON helpers; typed reads go through the shared `jsonread.Reader` (every wrong type
a `DecodeError` naming the field path and the byte offset of the payload), re-exported here for this package."""

from __future__ import annotations

from typing import Any

from harness.protocols import common
from harness.protocols.jsonread import JSONDict, Reader

__all__ = ["NAME", "JSONDict", "Reader", "dumps", "hint_list", "hint_table", "load_object"]

NAME = "responses"
"""Registry name of the codec, and the key of its `provider_fields`."""


def load_object(data: bytes | str, *, offset: int = 0, what: str = "body") -> JSONDict:
    """A JSON object parsed from `data`, or `DecodeError` naming what was parsed and where."""
    return common.load_object(NAME, data, offset=offset, what=what)


def dumps(value: Any) -> bytes:
    """Compact JSON bytes, as OpenAI sends them."""
    return common.dump_json(value)


def hint_table(shape: Any, key: str) -> dict[str, Any]:
    """A keyed shape hint (`{"3": ...}`), empty when absent or malformed."""
    value = shape.get(key) if isinstance(shape, dict) else None
    return value if isinstance(value, dict) else {}


def hint_list(shape: Any, key: str) -> list[Any]:
    """An index-listed shape hint (`[0, 3]`), empty when absent or malformed."""
    value = shape.get(key) if isinstance(shape, dict) else None
    return value if isinstance(value, list) else []
