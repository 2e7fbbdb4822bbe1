"""Which scenario a backend request belongs to, found by decoding it: by model name first (the runner sends the
scenario id as the model), else by the nearest request content. Misses name the closest scenarios and the
field that differs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness import ir
from harness.scenarios.model import Scenario


class NoScenarioError(LookupError):
    """No scenario matches a request; the message names the closest ones and what differs."""


def _content_key(request: ir.Request) -> dict[str, Any]:
    # What identifies a scenario's request across protocols: the conversation and the tools, not the knobs
    # (a proxy that drops temperature must still be matched, so the request-side diff can say so).
    data = ir.to_json(request)
    return {"system": data["system"], "messages": data["messages"], "tools": [t["name"] for t in data["tools"]]}


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return path or "(root)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}".lstrip(".")
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found.lstrip(".")
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})".lstrip(".")
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else path or "(root)"


def _score(a: Any, b: Any) -> int:
    """How many leaf values two JSON values share (a cheap similarity for ranking)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(_score(a[k], b[k]) for k in set(a) & set(b))
    if isinstance(a, list) and isinstance(b, list):
        return sum(_score(x, y) for x, y in zip(a, b, strict=False))
    return 1 if a == b else 0


def resolve(request: ir.Request, scenarios: Sequence[Scenario]) -> Scenario:
    """The scenario `request` was made from."""
    by_id = {s.id: s for s in scenarios}
    if request.model in by_id:
        return by_id[request.model]
    key = _content_key(request)
    exact = [s for s in scenarios if _content_key(s.request_for()) == key]
    if len(exact) == 1:
        return exact[0]
    ranked = sorted(scenarios, key=lambda s: -_score(_content_key(s.request_for()), key))[:3]
    hints = [f"{s.id} (differs at {_first_difference(_content_key(s.request_for()), key)})" for s in ranked]
    reason = "several scenarios share this content" if exact else "no scenario has this content"
    raise NoScenarioError(f"model {request.model!r} is no scenario id and {reason}; closest: {'; '.join(hints)}")
