"""Which scenario a backend request belongs to: named by its URL (`.../<backend>/_s/<scenario>/...`, the upstream
base URL of every route of the matrix), else by its model name (a scenario id, or a route name a gateway sent on),
else by the nearest request content (recordings of real providers). Misses name the closest scenarios and the
field that differs.

The scenario rides in the URL so that the model a gateway sends upstream can be a realistic one: gateways choose
behaviour by model name, and a scenario id as the model takes their unknown-model paths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness import ir
from harness.scenarios.model import Scenario

SCENARIO_SEGMENT = "_s"
"""The path segment after which an upstream URL names its scenario: `/<backend>/_s/<scenario>/<codec path>`."""


ROUTE_SEPARATOR = "--"
"""What separates a route name's scenario, backend and mode (`harness.trace.route_name`)."""


class NoScenarioError(LookupError):
    """No scenario matches a request; the message names the closest ones and what differs."""


def scenario_path(scenario_id: str) -> str:
    """The path segments that name a scenario in an upstream base URL (`/_s/<scenario>`)."""
    return f"/{SCENARIO_SEGMENT}/{scenario_id}"


def split_scenario(path: str) -> tuple[str | None, str]:
    """(the scenario a request path names, the path without those segments); (None, path) when it names none.

    The segments may follow a prefix (`/openai/_s/text-basic/v1/chat/completions`: the backend folder of a
    recorded URL) and are removed wherever they sit, so the codec sees its own path."""
    marker = f"/{SCENARIO_SEGMENT}/"
    start = path.find(marker)
    if start < 0:
        return None, path
    rest = path[start + len(marker) :]
    scenario, slash, tail = rest.partition("/")
    if not scenario:
        return None, path
    return scenario, path[:start] + (slash + tail if slash else "") or "/"


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


def resolve(
    request: ir.Request, scenarios: Sequence[Scenario], *, named: str | None = None, prefer: str | None = None
) -> Scenario:
    """The scenario `request` was made from; `named` is the one its URL names (`split_scenario`), if any. When
    several scenarios share the request's content and `prefer` is one of them, it is that one (a recording of a
    real provider has no scenario in its URL, and imported captures may share a prompt; its cassette file names
    the scenario it belongs to)."""
    by_id = {s.id: s for s in scenarios}
    if named is not None:
        if named not in by_id:
            raise NoScenarioError(f"the URL names scenario {named!r}, which is not loaded")
        return by_id[named]
    if request.model in by_id:
        return by_id[request.model]
    # A gateway with one upstream and no model table (codex-rosetta) sends the client's model on: a route name,
    # `<scenario>--<backend>--<mode>` (`harness.trace.route_name`).
    parts = request.model.rsplit(ROUTE_SEPARATOR, 2)
    if len(parts) == 3 and parts[0] in by_id:
        return by_id[parts[0]]
    key = _content_key(request)
    exact = [s for s in scenarios if _content_key(s.request_for()) == key]
    if len(exact) == 1:
        return exact[0]
    if prefer is not None and any(s.id == prefer for s in exact):
        return by_id[prefer]
    ranked = sorted(scenarios, key=lambda s: -_score(_content_key(s.request_for()), key))[:3]
    hints = [f"{s.id} (differs at {_first_difference(_content_key(s.request_for()), key)})" for s in ranked]
    reason = "several scenarios share this content" if exact else "no scenario has this content"
    raise NoScenarioError(f"model {request.model!r} is no scenario id and {reason}; closest: {'; '.join(hints)}")
