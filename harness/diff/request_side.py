"""Request-side diff: what the proxy sent upstream (decoded back to IR) against what the client asked for.

Losses a protocol is allowed are declared as data: the upstream codec's `losses` table (see
`harness.diff.losses` for the key grammar) plus pair-specific entries in `PAIR_LOSSES`. Everything else that
differs is a proxy bug on the request side (e.g. tools dropped on a streaming request). The rules of
`harness.diff.request_rules` remove differences that are neither (inert settings, text cut into fewer parts).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from harness.diff.compare import Divergence, diff_views
from harness.diff.losses import apply_losses
from harness.diff.normalize import apply, tool_call_ids
from harness.diff.request_rules import (
    empty_schema_keywords,
    inert_settings,
    one_result_per_tool_message,
    system_folded,
    text_layout,
    thinking_budget_chosen,
    tool_result_json,
    unsaid_schema_keywords,
)
from harness.protocols import registry
from harness.protocols.common import UNSAID_SCHEMA_KEYWORDS

# Fields that always differ between the two sides by design and are compared elsewhere or not at all.
ALWAYS_IGNORED = ("Request.model", "Request.provider_fields")

# Extra allowed losses for a (frontend, backend) pair, beyond the backend codec's own table.
PAIR_LOSSES: Mapping[tuple[str, str], tuple[str, ...]] = {}

OBJECT_CARRIER = "ToolCallPart.arguments_raw"
"""The loss key a codec declares when its wire carries tool arguments as a JSON value, not text: there is no raw
text of the client's to keep."""


def carries_objects(losses: Iterable[str]) -> bool:
    """Whether a codec's loss keys say its wire carries tool arguments as JSON values (`OBJECT_CARRIER`)."""
    return any(key in (OBJECT_CARRIER, f"request.{OBJECT_CARRIER}") for key in losses)


def results_as_objects(protocol: str | None) -> bool:
    """Whether the protocol's wire carries tool results only as JSON objects (its facts say so)."""
    return protocol is not None and registry.facts(protocol).tool_results_as_objects


def _unsaid(request: dict[str, Any]) -> tuple[str, ...]:
    """The schema keywords the request's own decoder says its schema dialect could not say."""
    fields = request.get("provider_fields") or {}
    found = [k for extra in fields.values() if isinstance(extra, dict) for k in extra.get(UNSAID_SCHEMA_KEYWORDS) or ()]
    return tuple(dict.fromkeys(found))


def request_divergences(
    frontend: dict[str, Any],
    upstream: dict[str, Any],
    *,
    losses: Iterable[str] = (),
    pair: tuple[str, str] | None = None,
    frontend_losses: Iterable[str] = (),
    owned: bool = False,
) -> list[Divergence]:
    """Divergences between the client's request IR and the upstream request IR, minus allowed losses.
    `frontend_losses`: the client protocol's own loss keys; where its wire carries tool arguments as a JSON value,
    the compact `arguments_raw` its codec wrote is not the client's text. `pair` (client, backend) says, from their
    facts, whether either wire carries tool results only as objects (`request_rules.tool_result_json`).
    `owned`: the caller owns both requests, which the rules then change in place (otherwise each is copied
    once)."""
    allowed = [*ALWAYS_IGNORED, *losses, *(PAIR_LOSSES.get(pair, ()) if pair else ())]
    if carries_objects(frontend_losses):
        allowed.append(OBJECT_CARRIER)
    client, backend = pair or (None, None)
    unsaid = _unsaid(upstream)
    front, up = (frontend, upstream) if owned else (copy.deepcopy(frontend), copy.deepcopy(upstream))
    front, up = (
        empty_schema_keywords(one_result_per_tool_message(inert_settings(r, owned=True), owned=True), owned=True)
        for r in (front, up)
    )
    front, up = tool_result_json(
        front,
        up,
        frontend_objects=results_as_objects(client),
        upstream_objects=results_as_objects(backend),
        owned=True,
    )
    front, up = thinking_budget_chosen(*unsaid_schema_keywords(front, up, unsaid, owned=True))
    front, up = system_folded(front, up, owned=True)  # before the losses, which may remove the system prompt
    left, right = apply_losses({"request": front}, {"request": up}, allowed, scope="request", owned=True)
    # After the losses: a field a protocol drops (e.g. thinking signatures) must not stop text from matching.
    left["request"], right["request"] = text_layout(left["request"], right["request"], owned=True)
    ids = (tool_call_ids,)
    return diff_views(apply(left, ids, owned=True), apply(right, ids, owned=True))
