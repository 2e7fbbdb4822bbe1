"""The one comparison pipeline: what the verdict compares is what the report's "compared" pane and
`conformance diff` show.

A run's SDK view (a streamed run's response accumulated from its events) -> an incomplete stream told two ways
made one -> the losses every protocol on the way declares (`Codec.losses`) -> the normalization rules and the
equivalences between the two sides (`compare.normalize_pair`) -> the diff, first divergence first. The
request side compares the client's request with what the proxy sent upstream, minus the upstream's losses.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness import ir
from harness.diff.compare import Divergence, diff_views, normalize_pair
from harness.diff.losses import apply_losses, valid_keys
from harness.diff.normalize import DEFAULT_RULES, Rule, View, incomplete_stream, start_usage_reported
from harness.diff.request_side import request_divergences
from harness.protocols import registry
from harness.stream import accumulate
from harness.trace.model import RunTrace


def sdk_view(trace: RunTrace) -> View:
    """What the SDK saw, as the diff compares it. A streamed run's response is the accumulation of its events, so
    both modes compare content, usage and stop reason the same way."""
    response = trace.sdk.response
    if response is None and trace.sdk.events is not None:
        response = accumulate(trace.sdk.events).response
    return {
        "response": ir.to_json(response) if response else None,
        "events": ir.events_to_json(trace.sdk.events) if trace.sdk.events is not None else None,
        "error": ir.to_json(trace.sdk.error) if trace.sdk.error else None,
        "exception": trace.sdk.exception,
    }


class UnknownLossesError(LookupError):
    """A trace names a protocol this harness does not register, so its declared losses are unknown and the
    comparison its verdict made cannot be repeated."""


def loss_keys(protocols: Iterable[str]) -> list[str]:
    """The loss keys the codecs of these protocols declare (each protocol once, in the order given)."""
    keys: list[str] = []
    for name in dict.fromkeys(protocols):
        try:
            codec = registry.get(name)
        except registry.UnknownProtocolError as exc:
            raise UnknownLossesError(f"cannot compare as a verdict does: {exc}") from None
        keys.extend(valid_keys(codec.losses))
    return keys


def protocols_between(reference: RunTrace, compared: RunTrace) -> list[str]:
    """Every protocol on the way in either run: the upstreams first (the translated run's backend leads), then
    the clients. For a case: its backend and its frontend."""
    return list(dict.fromkeys([compared.upstream, reference.upstream, compared.client, reference.client]))


ADMITTED_FIELDS: dict[str, tuple[str, str, str]] = {
    "error.status": ("error", "error", "status"),
    "error.kind": ("error", "error", "kind"),
    "stop_reason": ("response", "stop_reason", "kind"),
}
"""Checks whose expectation may list several values, and where each value sits: (view key, object key, field)."""


def _admitted_slots(view: View, where: tuple[str, str, str]) -> list[dict[str, Any]]:
    """The objects of a view holding one admitted field: the top-level one and its twins in the stream events."""
    top, inner, _ = where
    slots = []
    node = view.get(top)
    if isinstance(node, dict):
        slots.append(node.get(inner) if top == "response" else node)
    event_kind = "error" if top == "error" else "done"
    for event in view.get("events") or []:
        if isinstance(event, dict) and event.get("kind") == event_kind:
            slots.append(event.get(inner))
    return [slot for slot in slots if isinstance(slot, dict)]


def admitted_values(left: View, right: View, compared: RunTrace) -> tuple[View, View]:
    """A field whose scenario check admits several values (`error.status: [529, 503]`: each protocol sends its
    own) and holds one of them on both sides is not judged again by the diff: both become `<one of ...>`. A value
    outside the list still differs (and fails the check)."""
    for check in compared.checks:
        where = ADMITTED_FIELDS.get(check.name)
        if where is None or not check.passed or not isinstance(check.expected, list):
            continue
        field = where[2]
        slots = [*_admitted_slots(left, where), *_admitted_slots(right, where)]
        if slots and all(slot.get(field) in check.expected for slot in slots):
            for slot in slots:
                slot[field] = f"<one of {check.expected}>"
    return left, right


def compared_views(
    reference: RunTrace, compared: RunTrace, *, rules: tuple[Rule, ...] = DEFAULT_RULES, losses: bool = True
) -> tuple[View, View]:
    """Both runs' SDK views exactly as they are diffed. `rules=()` and `losses=False` give the views as seen."""
    left, right = incomplete_stream(sdk_view(reference), sdk_view(compared))
    if losses:
        # Equivalences between the two runs come first: declared losses may remove what they look at (a backend
        # that cannot carry start usage loses its value, not the frontend's duty to report one).
        left, right = start_usage_reported(left), start_usage_reported(right)
        keys = loss_keys(protocols_between(reference, compared))
        left, right = apply_losses(left, right, keys, scope="response")
    left, right = normalize_pair(left, right, rules)
    if rules:
        left, right = admitted_values(left, right, compared)
    return left, right


def response_divergences(
    reference: RunTrace, compared: RunTrace, *, rules: tuple[Rule, ...] = DEFAULT_RULES, losses: bool = True
) -> list[Divergence]:
    """What the SDK saw in `compared` against `reference` (for a case: translated against baseline(F))."""
    return diff_views(*compared_views(reference, compared, rules=rules, losses=losses))


def request_side(translated: RunTrace) -> list[Divergence]:
    """The client's request against what the proxy sent upstream, minus the backend's declared losses."""
    if translated.frontend_request is None or translated.upstream_request is None:
        return []
    return request_divergences(
        ir.to_json(translated.frontend_request),
        ir.to_json(translated.upstream_request),
        losses=loss_keys([translated.upstream]),
        pair=(translated.client, translated.upstream),
        frontend_losses=loss_keys([translated.client]),
    )
