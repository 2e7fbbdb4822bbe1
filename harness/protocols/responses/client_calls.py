"""Output items the client executes that are not function calls <-> IR tool calls with a `call_type`.

A `custom_tool_call` (a custom tool: free text `input`, no JSON) and the built-in client tools' items
(`local_shell_call`, `shell_call`, `apply_patch_call`) ask the client to act, like a `function_call`: the answer
ends `completed` and the client runs the call. The IR call id is the item's `call_id`. A custom call's `name` and
`input` are the IR name and `arguments_raw`; a built-in's IR name is its tool (`local_shell`, ...) and its
`arguments_raw` the item's own fields beyond `id`, `type`, `status` and `call_id` as JSON (its `action` or
`operation`), so the same codec writes the item back as it came. A `shell_call` in a hosted container (its
`environment` neither absent nor `local`) is run by OpenAI, with its output in the same response: a hosted-tool
item, not a call; so is a `custom_tool_call` of xAI's server-side search tools (`x_keyword_search`,
`view_x_video`, ...: its call ids are `xs_call_`, and the answer goes on after it: vercel/ai
`xai-x-search-tool.chunks.txt`, whose xAI provider reads every such item as provider-executed). Requests keep
these items, and their outputs, opaque (`provider_fields`, see `losses`).
"""

from __future__ import annotations

import json
from typing import Any

from harness import ir
from harness.protocols.responses.reader import JSONDict, Reader

CUSTOM = "custom"
CALL_TYPES = {"custom_tool_call": CUSTOM, "local_shell_call": "local_shell", "shell_call": "shell",
              "apply_patch_call": "apply_patch"}  # fmt: skip
"""Item type -> `ToolCallPart.call_type`."""
PREFIX = {CUSTOM: "ctc_", "local_shell": "lsh_", "shell": "sh_", "apply_patch": "apc_"}
"""The id prefix of each kind's output items, as the API writes them."""
_BOOKKEEPING = ("id", "type", "status", "call_id")
XAI_SERVER_CALL = "xs_call_"
"""The call id prefix of xAI's server-side tool calls (see the module docstring)."""


def is_client_call(item: Any) -> bool:
    """Whether an output item (a JSON object) is a call the client executes, other than a `function_call`."""
    if not isinstance(item, dict) or item.get("type") not in CALL_TYPES:
        return False
    if item["type"] == "custom_tool_call":
        return not str(item.get("call_id")).startswith(XAI_SERVER_CALL)
    environment = item.get("environment")
    return item["type"] != "shell_call" or environment is None or environment == {"type": "local"}


def known_keys(item: JSONDict) -> frozenset[str]:
    """The keys of a client-executed item the codec carries (a built-in's: all of them; see `extras`)."""
    if item.get("type") == "custom_tool_call":
        return frozenset({*_BOOKKEEPING, "name", "input"})
    return frozenset(item)


def decode(r: Reader, item: JSONDict, path: str) -> ir.ToolCallPart:
    """The IR call of a client-executed item (see the module docstring)."""
    call_type = CALL_TYPES[r.str_(item.get("type"), f"{path}.type")]
    call_id = r.str_(item.get("call_id"), f"{path}.call_id")
    if call_type == CUSTOM:
        name, raw = r.str_(item.get("name"), f"{path}.name"), r.opt_str(item.get("input"), f"{path}.input") or ""
    else:
        name = call_type
        raw = json.dumps({k: v for k, v in item.items() if k not in _BOOKKEEPING}, ensure_ascii=False)
    return ir.ToolCallPart(id=call_id, name=name, arguments=_parsed(raw), arguments_raw=raw, call_type=call_type)


def _parsed(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:  # a custom tool's free text
        return None


def item(item_id: str | None, call: ir.ToolCallPart, status: str | None) -> JSONDict:
    """The output item of a client-executed IR call; `status` `in_progress` is the item as first added. Without
    an id and status: the item as a client sends it back as input."""
    call_type = call.call_type or ""
    wire_type = next((t for t, c in CALL_TYPES.items() if c == call_type), None)
    if wire_type is None:
        raise ValueError(f"tool call {call.id!r} has call_type {call_type!r}, which the Responses API has no item for")
    head = {"id": item_id, "type": wire_type, "status": status, "call_id": call.id}
    out: JSONDict = {k: v for k, v in head.items() if v is not None}
    if call_type == CUSTOM:
        return {**out, "name": call.name, "input": call.arguments_raw if status != "in_progress" else ""}
    fields = _parsed(call.arguments_raw)
    if not isinstance(fields, dict):
        raise ValueError(f"a {wire_type} ({call.id!r}) needs its fields as a JSON object, got {call.arguments_raw!r}")
    return {**out, **fields}
