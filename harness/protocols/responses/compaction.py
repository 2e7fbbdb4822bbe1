"""`POST /v1/responses/compact` as a translating proxy answers it, and the `compaction` items it hands out.

A translating proxy has no model of its own to summarize with, so its compaction is lossless: the `compaction`
item's `encrypted_content` carries the compacted input items themselves (`SEALED` then base64 of their JSON; opaque
to the client, as the API says it is), and a later request that passes the item back has it expanded into those
items before decoding (`expand`). A compaction item some other server made cannot be read here and stays opaque.
Open Responses: "Compaction" (`CompactResource`: `id`, `object: response.compaction`, `output`, `created_at`,
`usage`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
from typing import Any

from harness.protocols.common import dump_json, load_object
from harness.protocols.responses.reader import NAME
from harness.wire.http import HttpRequest, HttpResponse

COMPACT_PATH = "/v1/responses/compact"
"""The route."""
SEALED = "conformance-proxy-compaction.v1:"
"""How this proxy's `encrypted_content` begins."""
_MAX_DEPTH = 8
"""Compaction items inside compaction items are expanded this deep at most."""


def seal(items: list[Any]) -> str:
    """The `encrypted_content` carrying `items`."""
    return SEALED + base64.b64encode(dump_json(items)).decode("ascii")


def _unsealed(item: Any) -> list[Any] | None:
    """The items one of this proxy's compaction items carries; None for any other item."""
    if not isinstance(item, dict) or item.get("type") != "compaction":
        return None
    content = item.get("encrypted_content")
    if not isinstance(content, str) or not content.startswith(SEALED):
        return None
    try:
        carried = json.loads(base64.b64decode(content.removeprefix(SEALED), validate=True))
    except (binascii.Error, ValueError):
        return None
    return carried if isinstance(carried, list) else None


def expand(value: Any, depth: int = 0) -> Any:
    """An `input` with each of this proxy's compaction items replaced by the items it carries."""
    if not isinstance(value, list) or depth > _MAX_DEPTH:
        return value
    out: list[Any] = []
    for item in value:
        carried = _unsealed(item)
        if carried is None:
            out.append(item)
        else:
            out.extend(expand(carried, depth + 1))
    return out


def _items(body: dict[str, Any]) -> list[Any]:
    value = body.get("input", [])
    items = [{"type": "message", "role": "user", "content": value}] if isinstance(value, str) else value
    if not isinstance(items, list):
        items = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        items = [{"type": "message", "role": "developer", "content": instructions}, *items]
    return list(expand(items))


def compact(request: HttpRequest) -> HttpResponse:
    """The proxy's answer to a compact request: one compaction item carrying the whole conversation."""
    body = load_object(NAME, request.body, what="request body")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return _invalid("model", "Missing required parameter: 'model'.")
    if not isinstance(body.get("input", []), str | list):
        return _invalid("input", "Invalid type for 'input': expected a string or an array of items.")
    items = _items(body)
    digest = hashlib.sha256(dump_json(items)).hexdigest()[:24]
    tokens = max(1, len(dump_json(items)) // 4)
    answer = {
        "id": f"cmp_{digest}",
        "object": "response.compaction",
        "created_at": int(time.time()),
        "output": [{"type": "compaction", "id": f"cmpitem_{digest}", "encrypted_content": seal(items)}],
        "usage": {
            "input_tokens": tokens,
            "output_tokens": 0,
            "total_tokens": tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return HttpResponse(200, {"content-type": "application/json"}, dump_json(answer))


def _invalid(param: str, message: str) -> HttpResponse:
    error = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
    return HttpResponse(400, {"content-type": "application/json"}, dump_json(error))
