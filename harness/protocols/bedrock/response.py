"""Non-streamed Converse responses <-> IR: `{"output": {"message": {...}}, "stopReason", "usage", "metrics"}`.

The body has no response id and no model (the model is the request path's); the service's request id travels
in the `x-amzn-requestid` header, which the reference backend adds (`reference.py`) and decoding ignores. Top-level
fields the IR has no place for (`additionalModelResponseFields`, `trace`, `performanceConfig`, a field added
later), and unknown keys of `usage` and `metrics`, are kept as extras and written back.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.bedrock.blocks import block_from_part, part_from_block
from harness.protocols.bedrock.mapping import (
    NAME,
    READ,
    dumps,
    load_object,
    stop_from_wire,
    stop_to_wire,
    usage_from_wire,
    usage_to_wire,
)
from harness.wire.http import HttpResponse

LATENCY_MS = 0
"""`metrics.latencyMs` the encoder reports (required on the wire; the IR has no latency)."""
USAGE_KEYS = frozenset({"inputTokens", "outputTokens", "totalTokens", "cacheReadInputTokens", "cacheWriteInputTokens"})
"""`usage` keys the codec reads and writes."""
BODY_KEYS: dict[str, frozenset[str] | None] = {
    "output": None,
    "stopReason": None,
    "usage": USAGE_KEYS,
    "metrics": frozenset({"latencyMs"}),
}
"""Top-level keys of a Converse body the codec reads and writes, with the known keys of its objects."""


def decode_extras(obj: dict[str, Any], known: dict[str, frozenset[str] | None]) -> ir.ProviderExtras | None:
    """The keys of a wire object the codec does not know (and the unknown keys of the objects `known` lists
    key by key), as Bedrock extras; the `p` padding of stream events means nothing and is not kept."""
    found: dict[str, Any] = {}
    for key, value in obj.items():
        inner = known.get(key)
        if key == "p":
            continue
        if key not in known:
            found[key] = value
        elif inner is not None and isinstance(value, dict):
            rest = {k: v for k, v in value.items() if k not in inner}
            if rest:
                found[key] = rest
    return {NAME: found} if found else None


def with_extras(
    obj: dict[str, Any], extras: ir.ProviderExtras | None, keys: frozenset[str] | None = None
) -> dict[str, Any]:
    """A wire object with the Bedrock extras (only those under `keys`, when given) filling in what it lacks."""
    mine = (extras or {}).get(NAME) or {}
    if keys is not None:
        mine = {k: v for k, v in mine.items() if k in keys}
    return ir.fill_missing(obj, mine) if mine else obj


def decode_response(body: bytes) -> ir.Response:
    """A Converse response body -> IR (parts with no IR form, e.g. server tool results, are left out)."""
    data = load_object(body, what="response body")
    message = READ.need_obj(READ.need_obj(data, "output", "body"), "message", "output")
    content: list[ir.OutputPart] = []
    for j, block in enumerate(READ.need_list(message, "content", "output.message")):
        where = f"output.message.content[{j}]"
        part = part_from_block(READ.as_obj(block, where), where, {})
        if isinstance(part, ir.TextPart | ir.ToolCallPart | ir.ThinkingPart | ir.RedactedThinkingPart):
            content.append(part)
    return ir.Response(
        content=content,
        stop_reason=stop_from_wire(data.get("stopReason")),
        usage=usage_from_wire(READ.need_obj(data, "usage", "body")),
        extras=decode_extras(data, BODY_KEYS),
    )


def response_body(response: ir.Response) -> dict[str, Any]:
    """The JSON body of a Converse response."""
    blocks = [block for part in response.content if (block := block_from_part(part)) is not None]
    body = {
        "metrics": {"latencyMs": LATENCY_MS},
        "output": {"message": {"content": blocks, "role": "assistant"}},
        "stopReason": stop_to_wire(response.stop_reason),
        "usage": usage_to_wire(response.usage),
    }
    return with_extras(body, response.extras)


def encode_response(response: ir.Response) -> HttpResponse:
    """IR -> a Converse response (the reference backend adds the request id header)."""
    return HttpResponse(status=200, headers={"content-type": "application/json"}, body=dumps(response_body(response)))
