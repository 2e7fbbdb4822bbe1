"""Each backend's endpoint on the replay server and every route, as JSON (`conformance sut-config --format json`):
what a gateway configured by hand or by script needs, whether it routes by model name, by path or by header, or
serves one upstream.

A route (`<scenario>--<backend>--translate`) goes to `<replay>/<backend>/_s/<scenario>` plus the backend's request
path, with the backend's realistic model. A gateway that serves one upstream per instance points it at
`<replay>/<backend>` and sends the client's model name on unchanged: the replay server then finds the scenario by
that name (`harness.rig.sut.named_scenario`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from harness import ir
from harness.protocols import registry
from harness.rig import PLANTED_KEY_ENV, route_table
from harness.rig.routes import upstream_models
from harness.scenarios.model import Scenario

MODEL = "{model}"
"""Where a path carries the model (Gemini, Bedrock, Workers AI): filled with the route's upstream model."""


def request_path(backend: str, model: str, stream: bool) -> str:
    """The path (and query) the backend's codec posts a request for `model` to."""
    sample = ir.Request(
        model=model, stream=stream, messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])]
    )
    request = registry.get(backend).encode_request(sample)
    return request.path + (f"?{urlencode(request.query)}" if request.query else "")


def endpoint_paths(backend: str) -> dict[str, str]:
    """The path the backend's codec posts a request to, per streaming mode (`{model}` where the model goes)."""
    return {
        mode: request_path(backend, MODEL, stream).replace(quote(MODEL, safe=""), MODEL)
        for mode, stream in (("nonstream", False), ("stream", True))
    }


def endpoints_json(
    replay_url: str, scenarios: Sequence[Scenario], backends: Sequence[str], models: Mapping[str, str] | None = None
) -> str:
    """The JSON document: `backends` (each one's single upstream, paths and upstream model) and `routes` (each
    model name with its upstream base URL, upstream model and full URLs)."""
    replay_url = replay_url.rstrip("/")
    chosen = upstream_models(backends, models)
    paths = {b: endpoint_paths(b) for b in backends}
    doc: dict[str, Any] = {
        "replay_url": replay_url,
        "upstream_key_env": PLANTED_KEY_ENV,
        "backends": {
            b: {
                "protocol_family": registry.get(b).family,
                "single_upstream": f"{replay_url}/{b}",
                "paths": paths[b],
                "upstream_model": chosen[b],
            }
            for b in backends
        },
        "routes": [
            {
                "model": r.name,
                "backend": r.backend,
                "scenario": r.scenario,
                "upstream_base": r.upstream_base(replay_url),
                "upstream_model": r.upstream_model,
                "urls": {
                    mode: r.upstream_base(replay_url) + request_path(r.backend, r.upstream_model, stream)
                    for mode, stream in (("nonstream", False), ("stream", True))
                },
            }
            for r in route_table(scenarios, backends, modes=("translate",), models=models)
            if r.scenario is not None
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def endpoint_table(backends: Sequence[str]) -> str:
    """A Markdown table: each backend's request paths and realistic upstream model (docs/external-gateway.md
    carries it; a test keeps it current)."""
    chosen = upstream_models(backends)
    lines = ["| backend | family | request path | stream path (if other) | upstream model |", "|---|---|---|---|---|"]
    for b in backends:
        paths = endpoint_paths(b)
        stream = f"`{paths['stream']}`" if paths["stream"] != paths["nonstream"] else ""
        lines.append(f"| `{b}` | {registry.get(b).family} | `{paths['nonstream']}` | {stream} | `{chosen[b]}` |")
    return "\n".join(lines) + "\n"
