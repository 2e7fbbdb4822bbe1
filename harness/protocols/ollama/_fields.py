"""Typed access to fields of decoded Ollama JSON: wrong shapes raise `DecodeError`, never KeyError/TypeError."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.base import DecodeError

PROTOCOL = "ollama"
"""Registry name, also the key of `Request.provider_fields` this codec owns."""


def fail(message: str, *, offset: int | None = None) -> DecodeError:
    """A `DecodeError` naming this protocol."""
    return DecodeError(PROTOCOL, message, offset=offset)


def get_str(obj: dict[str, Any], key: str, where: str, default: str | None = None) -> str | None:
    """`obj[key]` as a string; `default` when absent or null."""
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected a string")
    return value


def get_int(obj: dict[str, Any], key: str, where: str) -> int | None:
    """`obj[key]` as an integer (bool is not one); None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected an integer")
    return value


def get_float(obj: dict[str, Any], key: str, where: str) -> float | None:
    """`obj[key]` as a number; None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected a number")
    return float(value)


def get_obj(obj: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    """`obj[key]` as a JSON object; None when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected an object")
    return value


def get_list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    """`obj[key]` as a JSON array; empty when absent or null."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(f"{where}.{key} is {type(value).__name__}, expected an array")
    return value


def as_obj(value: Any, where: str) -> dict[str, Any]:
    """`value` itself, checked to be a JSON object."""
    if not isinstance(value, dict):
        raise fail(f"{where} is {type(value).__name__}, expected an object")
    return value


def tool_call_id(ordinal: int, name: str, arguments: Any) -> str:
    """The id of an Ollama tool call that came without one: deterministic from its position, name and arguments.

    Stream and non-stream decoding use the same rule, so the same reply gets the same ids either way.
    """
    return common.synth_tool_id("call_", ordinal, name, common.dump_json(arguments).decode("utf-8"))


def decode_tool_call(value: Any, ordinal: int, where: str) -> ir.ToolCallPart:
    """One Ollama tool call `{id?, function: {index?, name, arguments: {...}}}` -> IR."""
    call = as_obj(value, where)
    function = get_obj(call, "function", where)
    if function is None:
        raise fail(f"{where} has no function")
    name = get_str(function, "name", f"{where}.function")
    if name is None:
        raise fail(f"{where}.function has no name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise fail(f"{where}.function.arguments is {type(arguments).__name__}, expected an object")
    call_id = get_str(call, "id", where) or tool_call_id(ordinal, name, arguments)
    raw = common.dump_json(arguments).decode("utf-8")
    return ir.ToolCallPart(id=call_id, name=name, arguments=arguments, arguments_raw=raw)


def encode_tool_call(part: ir.ToolCallPart, index: int | None = None) -> dict[str, Any]:
    """IR tool call -> Ollama `{id, function: {index?, name, arguments: {...}}}` (arguments as an object)."""
    arguments = part.arguments
    if not isinstance(arguments, dict):
        # `arguments` is None when the raw text did not parse; "" (no arguments at all) parses to {}.
        arguments = common.parse_arguments(part.arguments_raw)
    if not isinstance(arguments, dict):
        # Ollama's wire type for arguments is a JSON object; there is no way to send anything else.
        raise ValueError(f"ollama: tool call {part.name!r} arguments are not a JSON object: {part.arguments_raw!r}")
    function: dict[str, Any] = {"name": part.name, "arguments": arguments}
    if index is not None:
        function = {"index": index, **function}
    return {"id": part.id, "function": function}
