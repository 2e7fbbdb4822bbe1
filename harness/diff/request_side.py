"""Request-side diff: what the proxy sent upstream (decoded back to IR) against what the client asked for.

Losses a protocol is allowed are declared as data: the upstream codec's `losses` table keys (`Model.field`, or
`Model` for a whole part) plus pair-specific entries in `PAIR_LOSSES`. Everything else that differs is a proxy
bug on the request side (e.g. tools dropped on a streaming request).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from harness.diff.compare import Divergence, diff_views
from harness.diff.normalize import tool_call_ids

# Which JSON nodes an IR model name means: the `kind` tag of content parts and events, or a key position.
_KIND_OF_MODEL = {
    "TextPart": "text",
    "ImagePart": "image",
    "ToolCallPart": "tool_call",
    "ToolResultPart": "tool_result",
    "ThinkingPart": "thinking",
    "RedactedThinkingPart": "redacted_thinking",
}
_KEY_OF_MODEL = {"Usage": "usage", "ThinkingConfig": "thinking", "StopReason": "stop_reason"}

# Fields that always differ between the two sides by design and are compared elsewhere or not at all.
ALWAYS_IGNORED = ("Request.model", "Request.provider_fields")

# Extra allowed losses for a (frontend, backend) pair, beyond the backend codec's own table.
PAIR_LOSSES: Mapping[tuple[str, str], tuple[str, ...]] = {}


def _drop(node: Any, model: str, field: str | None) -> Any:
    if isinstance(node, list):
        kind = _KIND_OF_MODEL.get(model)
        kept = [x for x in node if not (field is None and isinstance(x, dict) and kind and x.get("kind") == kind)]
        return [_drop(x, model, field) for x in kept]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if field is not None and key == field and node.get("kind") == _KIND_OF_MODEL.get(model, object()):
            continue
        if _KEY_OF_MODEL.get(model) == key and field is not None and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != field}
        elif _KEY_OF_MODEL.get(model) == key and field is None:
            continue
        out[key] = _drop(value, model, field)
    return out


def strip_losses(request: dict[str, Any], losses: Iterable[str]) -> dict[str, Any]:
    """The request JSON without the fields (or parts) named by loss keys such as `Request.top_p`,
    `ThinkingPart.signature`, `Usage.cache_write_tokens` or `ImagePart`."""
    out = copy.deepcopy(request)
    for key in losses:
        model, _, field = key.partition(".")
        if model == "Request":
            out.pop(field, None)
        else:
            out = _drop(out, model, field or None)
    return out


def request_divergences(
    frontend: dict[str, Any],
    upstream: dict[str, Any],
    *,
    losses: Iterable[str] = (),
    pair: tuple[str, str] | None = None,
) -> list[Divergence]:
    """Divergences between the client's request IR and the upstream request IR, minus allowed losses."""
    allowed = [*ALWAYS_IGNORED, *losses, *(PAIR_LOSSES.get(pair, ()) if pair else ())]
    left = tool_call_ids({"request": strip_losses(frontend, allowed)})
    right = tool_call_ids({"request": strip_losses(upstream, allowed)})
    return diff_views(left, right)
