"""Non-streamed Converse responses <-> IR: `{"output": {"message": {...}}, "stopReason", "usage", "metrics"}`.

The body has no response id and no model (the model is the request path's); the service's request id travels
in the `x-amzn-requestid` header, which the encoder sets (a UUID derived from the body, so re-recorded
cassettes stay byte-identical) and decoding ignores.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from harness import ir
from harness.protocols.bedrock.blocks import block_from_part, part_from_block
from harness.protocols.bedrock.mapping import (
    dumps,
    fail,
    field,
    load_object,
    stop_from_wire,
    stop_to_wire,
    usage_from_wire,
    usage_to_wire,
)
from harness.wire.http import HttpResponse

LATENCY_MS = 0
"""`metrics.latencyMs` the encoder reports (required on the wire; the IR has no latency)."""
REQUEST_ID_HEADER = "x-amzn-requestid"
"""The header AWS services name a request by."""


def request_id(seed: bytes) -> str:
    """A request id shaped like Bedrock's (a version-4 UUID), derived from `seed` so it is reproducible."""
    return str(uuid.UUID(bytes=hashlib.sha256(seed).digest()[:16], version=4))


def decode_response(body: bytes) -> ir.Response:
    """A Converse response body -> IR (parts with no IR form, e.g. server tool results, are left out)."""
    data = load_object(body, what="response body")
    message = field(field(data, "output", dict, "body"), "message", dict, "output")
    content: list[ir.OutputPart] = []
    for j, block in enumerate(field(message, "content", list, "output.message")):
        if not isinstance(block, dict):
            raise fail(f"output.message.content[{j}] is {type(block).__name__}, expected an object")
        part = part_from_block(block, f"output.message.content[{j}]", {})
        if isinstance(part, ir.TextPart | ir.ToolCallPart | ir.ThinkingPart | ir.RedactedThinkingPart):
            content.append(part)
    return ir.Response(
        content=content,
        stop_reason=stop_from_wire(data.get("stopReason")),
        usage=usage_from_wire(field(data, "usage", dict, "body")),
    )


def response_body(response: ir.Response) -> dict[str, Any]:
    """The JSON body of a Converse response."""
    blocks = [block for part in response.content if (block := block_from_part(part)) is not None]
    return {
        "metrics": {"latencyMs": LATENCY_MS},
        "output": {"message": {"content": blocks, "role": "assistant"}},
        "stopReason": stop_to_wire(response.stop_reason),
        "usage": usage_to_wire(response.usage),
    }


def encode_response(response: ir.Response) -> HttpResponse:
    """IR -> a Converse response with `x-amzn-requestid`."""
    body = dumps(response_body(response))
    headers = {"content-type": "application/json", REQUEST_ID_HEADER: request_id(body)}
    return HttpResponse(status=200, headers=headers, body=body)
