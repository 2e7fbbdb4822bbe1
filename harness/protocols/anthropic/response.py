"""Non-streamed Messages responses (`{"type":"message",...}`) <-> IR."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.anthropic.blocks import block_from_part, part_from_block
from harness.protocols.anthropic.mapping import (
    MISSING_MESSAGE_ID,
    NAME,
    READ,
    dumps,
    load_object,
    stop_reason_from_wire,
    stop_reason_to_wire,
    usage_from_wire,
    usage_to_wire,
)
from harness.protocols.base import DecodeError
from harness.wire.http import HttpResponse

MESSAGE_KEYS = frozenset({"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"})
"""Keys of a wire message the IR reads; anything else is kept as an extra (`stop_details` only when it is not
null: the encoder writes the null itself)."""

USAGE_KEYS = frozenset(
    {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cache_creation",
        "output_tokens_details",
    }
)
"""Keys of a wire usage object the IR reads or re-derives (`cache_creation` from the cache writes)."""


def decode_content(content: list[Any], where: str) -> list[ir.OutputPart]:
    """Response content blocks -> IR output parts.

    Server-tool blocks (server_tool_use, web_search_tool_result, ...) have no IR part and are skipped;
    citations on text blocks are dropped and the text kept (see the codec's losses).
    """
    parts: list[ir.OutputPart] = []
    for j, block in enumerate(content):
        block = READ.as_obj(block, f"{where}[{j}]")
        part = part_from_block(block, f"{where}[{j}]", {})
        if isinstance(part, ir.TextPart | ir.ToolCallPart | ir.ThinkingPart | ir.RedactedThinkingPart):
            parts.append(part)
        elif part is not None:
            raise DecodeError(NAME, f"{where}[{j}] is a {block['type']} block, which a response cannot hold")
    return parts


def decode_response(body: bytes) -> ir.Response:
    """A Messages response body -> IR response."""
    message = load_object(body, what="response body")
    if message.get("type") != "message":
        raise DecodeError(NAME, f"response type is {message.get('type')!r}, expected 'message'")
    return ir.Response(
        id=READ.get_str(message, "id", "message"),
        model=READ.get_str(message, "model", "message"),
        content=decode_content(READ.need_list(message, "content", "message"), "content"),
        stop_reason=stop_reason_from_wire(message.get("stop_reason"), message.get("stop_sequence")),
        usage=usage_from_wire(READ.need_obj(message, "usage", "message")),
        extras=decode_extras(message, MESSAGE_KEYS),
    )


def message_object(
    *,
    message_id: str | None,
    model: str | None,
    content: list[dict[str, Any]],
    stop: ir.StopReason | None,
    usage: ir.Usage | None,
    extras: ir.ProviderExtras | None = None,
    in_stream: bool = False,
) -> dict[str, Any]:
    """A wire `message` object (a response body, or the `message` of a stream's message_start), with the
    Anthropic extras of the IR laid over it. A stream's message has `stop_details` too, as the API sends it."""
    stop_reason, stop_sequence = stop_reason_to_wire(stop)
    message: dict[str, Any] = {
        "id": message_id if message_id is not None else MISSING_MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": model if model is not None else "",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
    }
    if in_stream:
        message["stop_details"] = None
    message["usage"] = usage_to_wire(usage, required=True)
    return with_extras(message, extras)


def with_extras(obj: dict[str, Any], extras: ir.ProviderExtras | None) -> dict[str, Any]:
    """A wire object with the IR's Anthropic extras filling in what it lacks (the encoder's own values win)."""
    mine = (extras or {}).get(NAME)
    if not mine:
        return obj
    return ir.fill_missing(obj, mine)


def decode_extras(
    obj: dict[str, Any], known: frozenset[str], nested: dict[str, frozenset[str]] | None = None
) -> ir.ProviderExtras | None:
    """The fields of a wire object the IR has no place for, as Anthropic extras shaped like the object: unknown
    top-level keys, and the unknown keys of the objects under `nested` (default: `usage`). A null
    `stop_details` is no extra (the encoder writes it)."""
    nested = {"usage": USAGE_KEYS} if nested is None else nested
    found: dict[str, Any] = {}
    for key, value in obj.items():
        if key in nested and isinstance(value, dict):
            inner = {k: v for k, v in value.items() if k not in nested[key] and not _null_detail(k, v)}
            if inner:
                found[key] = inner
        elif key not in known and key not in nested and not _null_detail(key, value):
            found[key] = value
    return {NAME: found} if found else None


def _null_detail(key: str, value: Any) -> bool:
    return key == "stop_details" and value is None


def encode_response(response: ir.Response) -> HttpResponse:
    """IR response -> a Messages response body (200, application/json)."""
    body = message_object(
        message_id=response.id,
        model=response.model,
        content=[block_from_part(p) for p in response.content],
        stop=response.stop_reason,
        usage=response.usage,
        extras=response.extras,
    )
    return HttpResponse(status=200, headers={"content-type": "application/json"}, body=dumps(body).encode("utf-8"))
