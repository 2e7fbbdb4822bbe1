"""Answers the proxy gives itself: model lists in each protocol's shape (built from the config's frontend model
names; real agents call these first) and Anthropic-style `count_tokens` in translate mode.

Which paths list models, and in which shape, are protocol facts (`ProtocolFacts.model_list`); where several
protocols list at one path (`GET /v1/models`), the client's headers say whose shape it wants.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.protocols import registry
from harness.protocols.facts import ListedModel, ModelList
from harness.proxy.config import ModelRoute, ProxyConfig


def listings() -> dict[str, ModelList]:
    """The model-list facts of every protocol that declares one, by protocol name (sorted)."""
    out = {}
    for name in registry.names():
        listing = registry.facts(name).model_list
        if listing is not None:
            out[name] = listing
    return out


def protocols_at(paths_of: Callable[[ModelList], Sequence[str]]) -> dict[str, list[str]]:
    """GET path -> the protocols that answer it (`paths_of` picks list paths or item paths), in name order."""
    out: dict[str, list[str]] = {}
    for name, listing in listings().items():
        for path in paths_of(listing):
            out.setdefault(path, []).append(name)
    return out


def list_shape(candidates: Sequence[str], headers: Mapping[str, str], query: Mapping[str, str]) -> str:
    """Which of the protocols listing at a path a request wants: the first whose clients announce themselves
    in these headers or query, else the path's default protocol (the one that claims nothing)."""
    facts = {name: registry.facts(name).model_list for name in candidates}
    for name, listing in facts.items():
        if listing is not None and listing.claims is not None and listing.claims(headers, query):
            return name
    defaults = [name for name, listing in facts.items() if listing is not None and listing.claims is None]
    return defaults[0] if defaults else candidates[0]


def _listed(route: ModelRoute) -> ListedModel:
    return ListedModel(name=route.name, mode=route.mode)


def model_entry(shape: str, route: ModelRoute) -> dict[str, Any]:
    """One model in the given protocol's shape."""
    listing = listings()[shape]
    return listing.entry(_listed(route))


def model_list(shape: str, config: ProxyConfig) -> dict[str, Any]:
    """Every listed frontend model of the config (`ModelRoute.listed`) in the given protocol's list shape."""
    listing = listings()[shape]
    return listing.envelope([listing.entry(_listed(route)) for route in config.models if route.listed])


def estimate_tokens(body: Any) -> int:
    """Local `count_tokens` estimate for translate mode: one token per four characters of every string in the
    request except the model name, at least one. Deterministic and documented; not the upstream's tokenizer."""
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "model"}
    return max(1, math.ceil(_chars(body) / 4))


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_chars(v) for v in value.values())
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0
