"""Typed access to parsed JSON: every wrong type becomes a `DecodeError` naming the field path and byte offset.

Wire payloads come from providers (and from mutated test input), so no decoder indexes a dict or trusts a type
without going through a `Reader`; that is what keeps `TypeError`/`KeyError` out of the decoders.
"""

from __future__ import annotations

from typing import Any, NoReturn

from harness.protocols.base import DecodeError


class Reader:
    """Checks JSON values for one payload; `offset` is where the payload began in the stream or body."""

    def __init__(self, protocol: str, offset: int | None = None) -> None:
        self.protocol = protocol
        self.offset = offset

    def fail(self, path: str, message: str) -> NoReturn:
        """Raise the typed error for a bad field."""
        raise DecodeError(self.protocol, f"{path}: {message}", offset=self.offset)

    def _type_error(self, value: Any, path: str, expected: str) -> NoReturn:
        self.fail(path, f"expected {expected}, got {type(value).__name__}")

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        """A JSON object."""
        if not isinstance(value, dict):
            self._type_error(value, path, "an object")
        return value

    def opt_obj(self, value: Any, path: str) -> dict[str, Any] | None:
        """A JSON object or null/absent."""
        return None if value is None else self.obj(value, path)

    def lst(self, value: Any, path: str) -> list[Any]:
        """A JSON array."""
        if not isinstance(value, list):
            self._type_error(value, path, "an array")
        return value

    def opt_lst(self, value: Any, path: str) -> list[Any]:
        """A JSON array; null/absent reads as empty."""
        return [] if value is None else self.lst(value, path)

    def str_(self, value: Any, path: str) -> str:
        """A JSON string."""
        if not isinstance(value, str):
            self._type_error(value, path, "a string")
        return value

    def opt_str(self, value: Any, path: str) -> str | None:
        """A JSON string or null/absent."""
        return None if value is None else self.str_(value, path)

    def opt_int(self, value: Any, path: str) -> int | None:
        """A JSON integer or null/absent (booleans are not integers here)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self._type_error(value, path, "an integer")
        return value

    def opt_float(self, value: Any, path: str) -> float | None:
        """A JSON number or null/absent."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._type_error(value, path, "a number")
        return float(value)

    def opt_bool(self, value: Any, path: str) -> bool | None:
        """A JSON boolean or null/absent."""
        if value is None:
            return None
        if not isinstance(value, bool):
            self._type_error(value, path, "a boolean")
        return value
