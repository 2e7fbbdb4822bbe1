"""Typed access to fields of decoded Workers AI JSON: wrong shapes raise `DecodeError`, never KeyError/TypeError."""

from __future__ import annotations

from typing import Any

from harness.protocols.base import DecodeError

PROTOCOL = "cloudflare"
"""Registry name, also the key of `Request.provider_fields` this codec owns."""


def fail(message: str, *, offset: int | None = None) -> DecodeError:
    """A `DecodeError` naming this protocol."""
    return DecodeError(PROTOCOL, message, offset=offset)


def as_obj(value: Any, where: str) -> dict[str, Any]:
    """`value` itself, checked to be a JSON object."""
    if not isinstance(value, dict):
        raise fail(f"{where} is {type(value).__name__}, expected an object")
    return value


def get_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    """`obj[key]` as a string; None when absent or null."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected a string")
    return value


def need_str(obj: dict[str, Any], key: str, where: str) -> str:
    """`obj[key]` as a string that must be there."""
    value = get_str(obj, key, where)
    if value is None:
        raise fail(f"{where} has no {key}")
    return value


def get_int(obj: dict[str, Any], key: str, where: str) -> int | None:
    """`obj[key]` as a non-negative integer (token counts); None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(f"{where}.{key} is {value!r}, expected a non-negative integer")
    return value


def get_float(obj: dict[str, Any], key: str, where: str) -> float | None:
    """`obj[key]` as a number; None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected a number")
    return float(value)


def get_list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    """`obj[key]` as a JSON array; empty when absent or null."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected an array")
    return value


def get_obj(obj: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    """`obj[key]` as a JSON object; None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    return as_obj(value, f"{where}.{key}")
