"""The one comparison pipeline: what the verdict compares is what the report's "compared" pane and
`conformance diff` show.

A run's SDK view (a streamed run's response accumulated from its events) -> an incomplete stream told two ways
made one -> the losses every protocol on the way declares (`Codec.losses`) -> the rules the clients' frontends
declare (`frontend_rules`) and a proxy's reasoning-token estimate -> the normalization rules and the
equivalences between the two sides (`compare.normalize_pair`) -> the diff, first divergence first. The
request side compares the client's request with what the proxy sent upstream, minus the upstream's losses.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from harness import ir
from harness.diff.compare import Divergence, diff_views, normalize_pair
from harness.diff.losses import apply_losses, valid_keys
from harness.diff.normalize import (
    DEFAULT_RULES,
    DELTA_FIELDS,
    Rule,
    View,
    apply,
    blocks_in_order,
    delta_runs_joined,
    empty_thinking_pair,
    incomplete_stream,
    json_copy,
    opaque_signatures,
    start_usage_reported,
    text_runs_joined,
)
from harness.diff.request_side import request_divergences
from harness.protocols import registry
from harness.stream import accumulate
from harness.trace.model import CaseResult, RunTrace

VIEW_CACHE = 32
"""SDK views kept (a baseline run is the reference of every case of its frontend, scenario and mode, one after the
other: its view is built once, not once per backend)."""
_views: OrderedDict[int, tuple[RunTrace, View]] = OrderedDict()


def sdk_view(trace: RunTrace) -> View:
    """What the SDK saw, as the diff compares it. A streamed run's response is the accumulation of its events, so
    both modes compare content, usage and stop reason the same way. Shared between calls on the same trace: do not
    change it (the pipeline copies it first)."""
    return _kept(_views, trace, _sdk_view)


def clear_views() -> None:
    """Forget the SDK views kept (a benchmark builds them afresh)."""
    _views.clear()
    _joined.clear()


_joined: OrderedDict[int, tuple[RunTrace, View]] = OrderedDict()


def joined_view(trace: RunTrace) -> View:
    """`sdk_view` with each run of consecutive deltas of one block joined into one (`delta_runs_joined`). Every
    step of the default comparison before `coalesce_deltas` treats a delta by its kind and index alone (none
    matches a loss or a rule, none reads a delta's text), and that rule joins the same runs and more: the views
    compared come out the same, and a long stream's per-event work is done once per run of deltas
    (tests/diff/test_pipeline.py holds the two ways equal). Shared: do not change it."""
    return _kept(_joined, trace, lambda t: _sdk_view(t, joined=True))


def _kept(cache: OrderedDict[int, tuple[RunTrace, View]], trace: RunTrace, build: Callable[[RunTrace], View]) -> View:
    """The view `build` makes of `trace`, kept in `cache` (the VIEW_CACHE latest, by trace)."""
    hit = cache.get(id(trace))
    if hit is not None and hit[0] is trace:
        cache.move_to_end(id(trace))
        return hit[1]
    view = build(trace)
    cache[id(trace)] = (trace, view)  # the trace is held, so its id cannot be reused while cached
    if len(cache) > VIEW_CACHE:
        cache.popitem(last=False)
    return view


def _sdk_view(trace: RunTrace, *, joined: bool = False) -> View:
    """The run's SDK view; `joined`: its events as `delta_runs_joined` gives them (`joined_events_json`)."""
    response, events = trace.sdk.response, trace.sdk.events
    if response is None and events is not None:
        response = accumulate(events).response
    return {
        "response": ir.to_json(response) if response else None,
        "events": None if events is None else joined_events_json(events) if joined else ir.events_to_json(events),
        "error": ir.to_json(trace.sdk.error) if trace.sdk.error else None,
        "exception": trace.sdk.exception,
    }


def joined_events_json(events: list[ir.StreamEvent]) -> list[dict[str, Any]]:
    """The events as JSON with each run of consecutive deltas of one block joined into its first, as
    `delta_runs_joined` joins their JSON (tests/diff/test_pipeline.py holds the two equal): the runs are found on
    the events, so that only the first delta of each run is dumped (a long stream is mostly deltas)."""
    firsts: list[ir.StreamEvent] = []
    more: dict[int, list[str]] = {}  # the place of a run's first delta in `firsts`: what its later deltas add
    last: ir.StreamEvent | None = None  # the last event kept, when it is a delta
    for event in events:
        field = DELTA_FIELDS.get(event.kind)
        if field is not None and last is not None and last.kind == event.kind and last.index == event.index:  # type: ignore[union-attr]
            more.setdefault(len(firsts) - 1, []).append(getattr(event, field))
            continue
        firsts.append(event)
        last = event if field is not None else None
    dumped = ir.events_to_json(firsts)
    for place, pieces in more.items():
        first = dumped[place]
        field = DELTA_FIELDS[first["kind"]]
        first[field] = "".join([first[field], *pieces])
    return dumped


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


def _joins_text_runs(protocols: Iterable[str]) -> bool:
    """Whether a wire on the way has no text block boundaries (`ProtocolFacts.text_runs_joined`)."""
    for name in protocols:
        try:
            if registry.facts(name).text_runs_joined:
                return True
        except registry.UnknownProtocolError:
            continue  # `loss_keys` reports the unknown protocol
    return False


def frontend_rules(reference: RunTrace, compared: RunTrace) -> tuple[Rule, ...]:
    """The normalization rules the clients' protocols declare for what they receive (`facts.Frontend`): opaque
    signatures compared by presence, concurrent blocks compared block by block. A rule applies to both sides
    when either run's client declares it."""
    frontends = []
    for name in dict.fromkeys([reference.client, compared.client]):
        try:
            frontend = registry.facts(name).frontend
        except registry.UnknownProtocolError:
            continue  # no declared facts, no rules: `loss_keys` reports the unknown protocol
        if frontend is not None:
            frontends.append(frontend)
    rules: list[Rule] = []
    if any(f.concurrent_blocks for f in frontends):
        rules.append(blocks_in_order)
    if any(f.opaque_signatures for f in frontends):
        rules.append(opaque_signatures)
    return tuple(rules)


def _upstream_counted_reasoning(trace: RunTrace) -> bool:
    """Whether the run's upstream reported a reasoning-token count (in its answer or any streamed usage)."""
    usages: list[ir.Usage | None] = [trace.upstream_response.usage] if trace.upstream_response is not None else []
    # An event's usage is a field of its model (none has another attribute of that name): read where there is one,
    # as `getattr` on a model without it is slow (and so is `model_fields` on a class: asked once per class).
    usages += [getattr(e, "usage", None) for e in trace.upstream_events or [] if _has_usage(type(e))]
    return any(usage is not None and usage.reasoning_tokens is not None for usage in usages)


@functools.cache
def _has_usage(cls: type[Any]) -> bool:
    """Whether an event model has a `usage` field."""
    return "usage" in cls.model_fields


def _usages(view: View) -> list[dict[str, Any]]:
    found = [(view.get("response") or {}).get("usage")]
    found += [e.get("usage") for e in view.get("events") or [] if e.get("kind") in ("done", "usage")]
    return [usage for usage in found if isinstance(usage, dict)]


def estimated_reasoning_tokens(
    left: View, right: View, compared: RunTrace, *, owned: bool = False
) -> tuple[View, View]:
    """A reasoning-token count the proxy reports when its upstream reported none (Anthropic's usage has no such
    count; LiteLLM counts the thinking text itself) is its estimate. When the reference knows no count either
    (0 or none: its scenario scripted none), there is nothing to hold the estimate against, so it compares as
    the reference's value. A count the reference does know still differs from any estimate, and a count the
    upstream reported is compared as is. `owned`: the caller owns `right`, which is then changed in place."""
    if _upstream_counted_reasoning(compared):
        return left, right
    if any(usage.get("reasoning_tokens") for usage in _usages(left)):
        return left, right
    right = right if owned else json_copy(right)
    for usage in _usages(right):
        if isinstance(usage.get("reasoning_tokens"), int) and usage["reasoning_tokens"] > 0:
            usage["reasoning_tokens"] = 0
    return left, right


def saw_nothing(trace: RunTrace) -> bool:
    """Whether the run's SDK view is empty (no response, events, error or exception): a slim run's, whose view
    was not kept (`harness.trace.slim`)."""
    sdk = trace.sdk
    return sdk.response is None and sdk.events is None and sdk.error is None and sdk.exception is None


def _nothing() -> View:
    return {"response": None, "events": None, "error": None, "exception": None}


def compared_views(
    reference: RunTrace, compared: RunTrace, *, rules: tuple[Rule, ...] = DEFAULT_RULES, losses: bool = True
) -> tuple[View, View]:
    """Both runs' SDK views exactly as they are diffed. `rules=()` and `losses=False` give the views as seen.
    Each view is copied once (the first step), and every later step changes that copy in place."""
    if rules in ((), DEFAULT_RULES) and saw_nothing(reference) and saw_nothing(compared):
        # Every step leaves two empty views as they are (tests/diff/test_pipeline.py holds the two paths equal).
        if losses:
            loss_keys(protocols_between(reference, compared))  # an unknown protocol is reported all the same
        return _nothing(), _nothing()
    return _compared_views(reference, compared, rules=rules, losses=losses)


def _compared_views(
    reference: RunTrace, compared: RunTrace, *, rules: tuple[Rule, ...] = DEFAULT_RULES, losses: bool = True
) -> tuple[View, View]:
    extra = frontend_rules(reference, compared) if rules else ()
    join_runs = rules == DEFAULT_RULES  # the rules join every run of deltas (`coalesce_deltas`): join them first
    early = join_runs and blocks_in_order not in extra  # moving blocks may part a run: then join after it
    views = (joined_view(reference), joined_view(compared)) if early else (sdk_view(reference), sdk_view(compared))
    left, right = incomplete_stream(*views)
    if losses:
        # Equivalences between the two runs come first: declared losses may remove what they look at (a backend
        # that cannot carry start usage loses its value, not the frontend's duty to report one).
        start = (start_usage_reported,)
        left, right = apply(left, start, owned=True), apply(right, start, owned=True)
        protocols = protocols_between(reference, compared)
        left, right = apply_losses(left, right, loss_keys(protocols), scope="response", owned=True)
        left, right = empty_thinking_pair(left, right, owned=True)
        if _joins_text_runs(protocols):
            joined = (text_runs_joined,)
            left, right = apply(left, joined, owned=True), apply(right, joined, owned=True)
    if rules:
        left, right = apply(left, extra, owned=True), apply(right, extra, owned=True)
        if join_runs and not early:
            left, right = delta_runs_joined(left), delta_runs_joined(right)
        left, right = estimated_reasoning_tokens(left, right, compared, owned=True)
    left, right = normalize_pair(left, right, rules, owned=True)
    if rules:
        left, right = admitted_values(left, right, compared)
    return left, right


@dataclass(frozen=True)
class Compared:
    """The views a verdict compared (`compared_views`), with the two runs they are of: the report shows them
    instead of building them again. Shared: do not change them."""

    reference: RunTrace
    compared: RunTrace
    views: tuple[View, View]

    def of(self, case: CaseResult) -> tuple[View, View] | None:
        """The views when the case's frontend baseline and translated run are exactly the two runs they are of
        (the same objects: a run slimmed or read back since is another), else None."""
        reference, compared = case.runs.get("baseline_frontend"), case.runs.get("translated")
        return self.views if reference is self.reference and compared is self.compared else None


def response_divergences(
    reference: RunTrace, compared: RunTrace, *, rules: tuple[Rule, ...] = DEFAULT_RULES, losses: bool = True
) -> list[Divergence]:
    """What the SDK saw in `compared` against `reference` (for a case: translated against baseline(F))."""
    return diff_views(*compared_views(reference, compared, rules=rules, losses=losses))


def rejected(translated: RunTrace) -> bool:
    """Whether the request reached the backend and was answered 400 without being decoded (through an external
    proxy: the replay server could not read what the proxy sent)."""
    return translated.upstream_status == 400 and translated.upstream_request is None and translated.mode == "translate"


def request_side(translated: RunTrace) -> list[Divergence]:
    """The client's request against what the proxy sent upstream, minus the backend's declared losses. A request
    that reached the backend and could not be decoded there differs as a whole (a real provider answers it 400)."""
    if translated.frontend_request is not None and translated.upstream_request is None and rejected(translated):
        what = f"<not a valid {translated.upstream} request: the backend rejected it with HTTP 400 undecoded>"
        return [Divergence("request", "<the client's request>", what, None, "request_rejected")]
    if translated.frontend_request is None or translated.upstream_request is None:
        return []
    return request_divergences(
        ir.to_json(translated.frontend_request),
        ir.to_json(translated.upstream_request),
        losses=loss_keys([translated.upstream]),
        pair=(translated.client, translated.upstream),
        frontend_losses=loss_keys([translated.client]),
        owned=True,  # both fresh from `ir.to_json`
    )
