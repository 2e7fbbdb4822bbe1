"""The routes a system under test must serve for the matrix: one per (scenario, backend, mode), named by
`harness.trace.route_name`, plus the model names a models-list scenario expects listed. The built-in proxy's
config and the gateway configs are both rendered from this one table.

Each route's upstream is the backend's folder on the replay server with the scenario named in the path
(`<replay>/<backend>/_s/<scenario>`, `harness.scenarios.resolve.scenario_path`), and its upstream model is a
realistic one (the backend's `upstream_model` fact, or an override): a gateway never sees a scenario id as a
model, and the replay server still knows which recording to answer with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.protocols import registry
from harness.scenarios.model import ReplyModels, Scenario
from harness.scenarios.resolve import scenario_path
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
    """The model name sent upstream: a realistic name of the backend (`upstream_models`)."""
    upstream_path: str
    """The upstream base URL's path on the replay server: `/<backend>/_s/<scenario>` (just `/<backend>` for a
    listed-only model, which is never called)."""
    scenario: str | None = None
    """The scenario the route serves (None: a name listed for a models-list scenario only)."""
    listed: bool = True
    """Whether a model listing must name it: a models-list scenario's routes and the names it expects. The other
    routes are served all the same; the built-in proxy leaves them out of its listings
    (`proxy.config.ModelRoute.listed`), so that what a models-list case reads is the same whichever scenarios
    run beside it, and does not grow with the matrix (a full matrix's 2,200 routes made each listing call about
    40 times dearer than a one-scenario run's)."""

    def upstream_base(self, replay_url: str) -> str:
        """The upstream base URL under the replay server's root URL (the codec's request paths follow it)."""
        return replay_url.rstrip("/") + self.upstream_path


def upstream_models(backends: Sequence[str], overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The model each backend's routes send upstream: its `upstream_model` fact unless `overrides` names one."""
    chosen = dict(overrides or {})
    unknown = sorted(set(chosen) - set(backends))
    if unknown:
        raise ValueError(f"upstream model given for {', '.join(unknown)}, which is not a backend of this run")
    return {b: chosen.get(b) or registry.facts(b).upstream_model for b in backends}


def parse_model_overrides(items: Sequence[str]) -> dict[str, str]:
    """`BACKEND=MODEL` options as a mapping; a malformed one raises ValueError naming it."""
    out: dict[str, str] = {}
    for item in items:
        backend, sep, model = item.partition("=")
        if not sep or not backend.strip() or not model.strip():
            raise ValueError(f"--upstream-model {item!r}: expected BACKEND=MODEL")
        out[backend.strip()] = model.strip()
    return out


def listed_models(scenarios: Sequence[Scenario]) -> list[str]:
    """The model names the models-list scenarios expect the proxy to list, once each, in order."""
    return list(dict.fromkeys(m for s in scenarios if isinstance(s.reply, ReplyModels) for m in s.reply.models))


def route_table(
    scenarios: Sequence[Scenario],
    backends: Sequence[str],
    modes: Sequence[Mode] = MODES,
    *,
    models: Mapping[str, str] | None = None,
) -> list[RouteSpec]:
    """A route per (scenario, backend, mode), then a pass-through route on the first backend for each listed
    model name no route has (a models-list scenario checks that the proxy lists its configured models).
    `models` overrides the upstream model of some backends (`upstream_models`). Only a models-list scenario's
    routes and those names are `listed`."""
    chosen = upstream_models(backends, models)
    out = [
        RouteSpec(
            route_name(s.id, b, mode),
            mode,
            b,
            chosen[b],
            f"/{b}{scenario_path(s.id)}",
            s.id,
            listed=s.kind == "models_list",
        )
        for s in scenarios
        for b in backends
        for mode in modes
    ]
    if backends:
        taken = {r.name for r in out}
        first = backends[0]
        out += [RouteSpec(m, "passthrough", first, m, f"/{first}") for m in listed_models(scenarios) if m not in taken]
    return out
