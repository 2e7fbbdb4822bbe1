"""Typed access to parsed Responses JSON: every wrong type is a `DecodeError` naming the field path and the byte
offset of the payload, so no decoder indexes a dict or trusts a type on its own (providers and mutated test input
send anything)."""

from __future__ import annotations

from typing import Any, NoReturn

from harness.protocols import common
from harness.protocols.base import DecodeError

NAME = "responses"
"""Registry name of the codec, and the key of its `provider_fields`."""

JSONDict = dict[str, Any]


class Reader:
    """Checks the JSON values of one payload; `offset` is where the payload began in the stream or body."""

    def __init__(self, offset: int | None = None) -> None:
        self.offset = offset

    def fail(self, path: str, message: str) -> NoReturn:
        """Raise the typed error for a bad field."""
        raise DecodeError(NAME, f"{path}: {message}", offset=self.offset)

    def _expected(self, value: Any, path: str, what: str) -> NoReturn:
        self.fail(path, f"expected {what}, got {type(value).__name__}")

    def obj(self, value: Any, path: str) -> JSONDict:
        """A JSON object."""
        if not isinstance(value, dict):
            self._expected(value, path, "an object")
        return value

    def opt_obj(self, value: Any, path: str) -> JSONDict | None:
        """A JSON object, or null/absent."""
        return None if value is None else self.obj(value, path)

    def lst(self, value: Any, path: str) -> list[Any]:
        """A JSON array."""
        if not isinstance(value, list):
            self._expected(value, path, "an array")
        return value

    def opt_lst(self, value: Any, path: str) -> list[Any]:
        """A JSON array; null/absent reads as empty."""
        return [] if value is None else self.lst(value, path)

    def str_(self, value: Any, path: str) -> str:
        """A JSON string."""
        if not isinstance(value, str):
            self._expected(value, path, "a string")
        return value

    def opt_str(self, value: Any, path: str) -> str | None:
        """A JSON string, or null/absent."""
        return None if value is None else self.str_(value, path)

    def int_(self, value: Any, path: str) -> int:
        """A JSON integer (booleans are not integers here)."""
        if isinstance(value, bool) or not isinstance(value, int):
            self._expected(value, path, "an integer")
        return value

    def opt_int(self, value: Any, path: str) -> int | None:
        """A JSON integer, or null/absent."""
        return None if value is None else self.int_(value, path)

    def opt_float(self, value: Any, path: str) -> float | None:
        """A JSON number, or null/absent."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._expected(value, path, "a number")
        return float(value)

    def opt_bool(self, value: Any, path: str) -> bool | None:
        """A JSON boolean, or null/absent."""
        if value is None:
            return None
        if not isinstance(value, bool):
            self._expected(value, path, "a boolean")
        return value


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
