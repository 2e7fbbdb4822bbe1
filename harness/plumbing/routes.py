"""The routes a system under test must serve for the matrix: one per (scenario, backend, mode), named by
`harness.trace.route_name`, plus the model names a models-list scenario expects listed. The built-in proxy's
config and the gateway configs are both rendered from this one table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.scenarios.model import ReplyModels, Scenario
from harness.trace import MODES, Mode, route_name


@dataclass(frozen=True)
class RouteSpec:
    """One model name the system under test serves, and where it goes."""

    name: str
    """The model name the SDK sends."""
    mode: Mode
    """Pass-through or translate."""
    backend: str
    """Registry name of the upstream (also its folder on the replay server)."""
    upstream_model: str
    """The model name sent upstream: the scenario id (the replay server finds the recording by it)."""


def listed_models(scenarios: Sequence[Scenario]) -> list[str]:
    """The model names the models-list scenarios expect the proxy to list, once each, in order."""
    return list(dict.fromkeys(m for s in scenarios if isinstance(s.reply, ReplyModels) for m in s.reply.models))


def route_table(
    scenarios: Sequence[Scenario], backends: Sequence[str], modes: Sequence[Mode] = MODES
) -> list[RouteSpec]:
    """A route per (scenario, backend, mode), then a pass-through route on the first backend for each listed
    model name no route has (a models-list scenario checks that the proxy lists its configured models)."""
    out = [RouteSpec(route_name(s.id, b, mode), mode, b, s.id) for s in scenarios for b in backends for mode in modes]
    if backends:
        taken = {r.name for r in out}
        out += [RouteSpec(m, "passthrough", backends[0], m) for m in listed_models(scenarios) if m not in taken]
    return out
