"""Ollama's name, its typed JSON reader, and its tool calls (which come without ids and carry object arguments)."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.jsonread import Reader

PROTOCOL = "ollama"
"""Registry name, also the key of `Request.provider_fields` this codec owns."""

READ = Reader(PROTOCOL)
"""Typed reads of Ollama JSON (and this protocol's `DecodeError`)."""


def tool_call_id(ordinal: int, name: str, arguments: Any) -> str:
    """The id of an Ollama tool call that came without one: deterministic from its position, name and arguments.

    Stream and non-stream decoding use the same rule, so the same reply gets the same ids either way.
    """
    return common.synth_tool_id("call_", ordinal, name, common.dump_text(arguments))


def decode_tool_call(value: Any, ordinal: int, where: str) -> ir.ToolCallPart:
    """One Ollama tool call `{id?, function: {index?, name, arguments: {...}}}` -> IR."""
    call = READ.as_obj(value, where)
    function = READ.get_obj(call, "function", where)
    if function is None:
        raise READ.error(f"{where} has no function")
    name = READ.get_str(function, "name", f"{where}.function")
    if name is None:
        raise READ.error(f"{where}.function has no name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise READ.error(f"{where}.function.arguments is {type(arguments).__name__}, expected an object")
    call_id = READ.get_str(call, "id", where) or tool_call_id(ordinal, name, arguments)
    raw = common.dump_text(arguments)
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
