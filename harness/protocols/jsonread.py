"""Typed reads of parsed wire JSON, for every protocol: a wrong type is a `DecodeError` naming the protocol, the
field and the byte offset of the payload, never a `KeyError`/`TypeError` (providers and mutated test input send
anything, and the codec contract lets a decoder raise only `DecodeError`).

One `Reader` per protocol (or per payload, when its offset is known) speaks two dialects, each kept because
existing messages read that way: values at a path (`obj`, `opt_str`, ...: "PATH: expected a string, got int"),
and fields of an object (`get_str`, `need_str`, ...: "WHERE.KEY is int, expected a string").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from harness.protocols.base import DecodeError

JSONDict = dict[str, Any]


class Reader:
    """Checks the JSON values of one protocol's payloads; `offset` is where the payload began, if known."""

    def __init__(self, protocol: str, offset: int | None = None) -> None:
        self.protocol = protocol
        self.offset = offset

    def __repr__(self) -> str:
        return f"Reader({self.protocol!r}, {self.offset!r})"

    # --- errors ---------------------------------------------------------------------------------------
    def error(self, message: str, *, offset: int | None = None) -> DecodeError:
        """A `DecodeError` of this protocol (at `offset`, else the payload's), to raise."""
        return DecodeError(self.protocol, message, offset=self.offset if offset is None else offset)

    def fail(self, path: str, message: str) -> NoReturn:
        """Raise the typed error for a bad value at `path`."""
        raise DecodeError(self.protocol, f"{path}: {message}", offset=self.offset)

    def _expected(self, value: Any, path: str, what: str) -> NoReturn:
        self.fail(path, f"expected {what}, got {type(value).__name__}")

    # --- values at a path -----------------------------------------------------------------------------
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

    # --- fields of an object (and values named `what`) ------------------------------------------------
    def _is_not(self, value: Any, what: str, expected: str) -> DecodeError:
        return self.error(f"{what} is {type(value).__name__}, expected {expected}")

    def as_obj(self, value: Any, what: str) -> JSONDict:
        """`value` itself, checked to be a JSON object."""
        if not isinstance(value, dict):
            raise self._is_not(value, what, "an object")
        return value

    def as_list(self, value: Any, what: str) -> list[Any]:
        """`value` as a JSON array; empty when null."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._is_not(value, what, "an array")
        return value

    def as_str(self, value: Any, what: str) -> str:
        """`value` itself, checked to be a string."""
        if not isinstance(value, str):
            raise self._is_not(value, what, "a string")
        return value

    def as_float(self, value: Any, what: str) -> float | None:
        """`value` as a number; None when null."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._is_not(value, what, "a number")
        try:
            return float(value)
        except OverflowError as exc:
            raise self.error(f"{what} is out of range") from exc

    def as_bool(self, value: Any, what: str) -> bool | None:
        """`value` as a boolean; None when null."""
        if value is None or isinstance(value, bool):
            return value
        raise self._is_not(value, what, "a boolean")

    def get_obj(self, obj: Mapping[str, Any], key: str, where: str) -> JSONDict | None:
        """`obj[key]` as a JSON object; None when absent or null."""
        value = obj.get(key)
        return None if value is None else self.as_obj(value, f"{where}.{key}")

    def get_list(self, obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
        """`obj[key]` as a JSON array; empty when absent or null."""
        return self.as_list(obj.get(key), f"{where}.{key}")

    def get_str(self, obj: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str | None:
        """`obj[key]` as a string; `default` when absent or null."""
        value = obj.get(key)
        return default if value is None else self.as_str(value, f"{where}.{key}")

    def need_str(self, obj: Mapping[str, Any], key: str, where: str) -> str:
        """`obj[key]` as a string that must be there."""
        value = self.get_str(obj, key, where)
        if value is None:
            raise self.error(f"{where} has no {key}")
        return value

    def need_obj(self, obj: Mapping[str, Any], key: str, where: str) -> JSONDict:
        """`obj[key]` as a JSON object that must be there."""
        value = self.get_obj(obj, key, where)
        if value is None:
            raise self.error(f"{where} has no {key}")
        return value

    def need_list(self, obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
        """`obj[key]` as a JSON array that must be there."""
        if obj.get(key) is None:
            raise self.error(f"{where} has no {key}")
        return self.get_list(obj, key, where)

    def get_bool(self, obj: Mapping[str, Any], key: str, where: str) -> bool | None:
        """`obj[key]` as a boolean; None when absent or null."""
        return self.as_bool(obj.get(key), f"{where}.{key}")

    def need_int(self, obj: Mapping[str, Any], key: str, where: str) -> int:
        """`obj[key]` as an integer (bool is not one) that must be there."""
        value = self.get_int(obj, key, where)
        if value is None:
            raise self.error(f"{where} has no {key}")
        return value

    def get_int(self, obj: Mapping[str, Any], key: str, where: str) -> int | None:
        """`obj[key]` as an integer (bool is not one); None when absent or null."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._is_not(value, f"{where}.{key}", "an integer")
        return value

    def get_count(self, obj: Mapping[str, Any], key: str, where: str) -> int | None:
        """`obj[key]` as a non-negative integer (token counts); None when absent or null."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(f"{where}.{key} is {value!r}, expected a non-negative integer")
        return value

    def get_float(self, obj: Mapping[str, Any], key: str, where: str) -> float | None:
        """`obj[key]` as a number; None when absent or null."""
        return self.as_float(obj.get(key), f"{where}.{key}")
