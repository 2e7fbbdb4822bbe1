"""Reading Gemini JSON: camelCase or snake_case keys, and type checks (the shared `jsonread.Reader`, plus proto
JSON's quoted int64) that raise `DecodeError`.

The Generative Language API parses request bodies as proto JSON, which accepts both `thoughtSignature` and
`thought_signature`; real clients use both (google-genai sends `thinkingConfig: {"include_thoughts": ...}` and
`parameters_json_schema`, llm-gemini sends `function_call`). So every lookup here tries both spellings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from harness.protocols import common
from harness.protocols.base import DecodeError
from harness.protocols.jsonread import Reader

PROTOCOL = "gemini"

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")


@lru_cache(maxsize=1024)  # field names come from code: a few dozen, looked up on every chunk
def snake(name: str) -> str:
    """The snake_case spelling of a camelCase field name (`thoughtSignature` -> `thought_signature`)."""
    return _UPPER.sub("_", name).lower()


def has(obj: Mapping[str, Any], name: str) -> bool:
    """Whether the object carries the field under either spelling."""
    return name in obj or snake(name) in obj


def get(obj: Mapping[str, Any], name: str) -> Any:
    """The field's value under either spelling (camelCase wins), or None."""
    if name in obj:
        return obj[name]
    return obj.get(snake(name))


def spellings(names: Iterable[str]) -> frozenset[str]:
    """Both spellings of each name, for telling known fields from extra ones."""
    out: set[str] = set()
    for name in names:
        out.update((name, snake(name)))
    return frozenset(out)


def extras(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """The fields of `obj` that are not in `known` (kept verbatim for provider_fields)."""
    return {k: v for k, v in obj.items() if k not in known}


def fail(message: str, offset: int | None = None) -> DecodeError:
    """A `DecodeError` of this protocol."""
    return DecodeError(PROTOCOL, message, offset=offset)


def load_object(data: bytes | str, *, offset: int = 0, what: str = "body") -> dict[str, Any]:
    """Parse a JSON object or raise `DecodeError`, also for what `json` rejects outside its own error type
    (integers over the interpreter's digit limit raise ValueError, deep nesting RecursionError)."""
    try:
        return common.load_object(PROTOCOL, data, offset=offset, what=what)
    except DecodeError:
        raise
    except (ValueError, RecursionError) as exc:
        raise fail(f"{what} is not readable JSON: {exc}", offset) from exc


def _read(offset: int | None) -> Reader:
    return Reader(PROTOCOL, offset)


def as_object(value: Any, what: str, offset: int | None = None) -> dict[str, Any]:
    """`value` if it is a JSON object, else `DecodeError` naming `what`."""
    if isinstance(value, dict):  # read on every chunk: the Reader only for the error
        return value
    return _read(offset).as_obj(value, what)


def opt_object(value: Any, what: str, offset: int | None = None) -> dict[str, Any] | None:
    """`value` if it is an object, None if absent, else `DecodeError`."""
    return None if value is None else as_object(value, what, offset)


def as_list(value: Any, what: str, offset: int | None = None) -> list[Any]:
    """`value` if it is a JSON array (None counts as empty), else `DecodeError`."""
    if isinstance(value, list):
        return value
    return _read(offset).as_list(value, what)


def as_str(value: Any, what: str, offset: int | None = None) -> str:
    """`value` if it is a string, else `DecodeError`."""
    if isinstance(value, str):
        return value
    return _read(offset).as_str(value, what)


def opt_str(value: Any, what: str, offset: int | None = None) -> str | None:
    """`value` if it is a string, None if absent, else `DecodeError`."""
    return None if value is None else as_str(value, what, offset)


def opt_int(value: Any, what: str, offset: int | None = None) -> int | None:
    """`value` if it is an integer (proto JSON may quote int64 as a string), None if absent, else `DecodeError`."""
    if value is None:
        return None
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(f"{what} is {type(value).__name__}, expected an integer", offset)
    return value


def opt_float(value: Any, what: str, offset: int | None = None) -> float | None:
    """`value` as a float if it is a number, None if absent, else `DecodeError`."""
    return _read(offset).as_float(value, what)


def opt_bool(value: Any, what: str, offset: int | None = None) -> bool | None:
    """`value` if it is a boolean, None if absent, else `DecodeError`."""
    if value is None or isinstance(value, bool):
        return value
    return _read(offset).as_bool(value, what)


class EncodeError(ValueError):
    """An IR value the Gemini wire cannot express (e.g. a tool result whose tool name is unknown)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{PROTOCOL}: {message}")
