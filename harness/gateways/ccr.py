"""claude-code-router: how it names each protocol (its transformers), its `config.json` (a provider per route and
the custom router `ccr_router.js`), and how it is started for a gate."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.gateways.base import GatewayName, GatewaySpec, named, routes, served, upstream_url
from harness.rig import PLANTED_KEY_ENV
from harness.rig.keys import CLIENT_KEY_ENV
from harness.scenarios.model import Scenario

NAME = "ccr"

NAMES: Mapping[str, GatewayName] = {  # its transformers; the OpenAI one only names the endpoint
    "anthropic": GatewayName("Anthropic", appends="/v1/messages", endpoint=True, frontend=True),
    "openai": GatewayName("OpenAI", appends="/chat/completions", endpoint=True),
    "gemini": GatewayName("gemini", appends="/models/", endpoint=True),
}
"""claude-code-router's transformer per protocol, and the frontend it serves."""

ROUTER = Path(__file__).with_name("ccr_router.js")
"""claude-code-router's custom router for the generated config: a route name is a provider name."""


def render(replay_url: str, scenarios: Sequence[Scenario], backends: Sequence[str], models: Mapping[str, str]) -> str:
    """A claude-code-router `config.json`: one provider per route (named like it, at the route's upstream, with the
    backend's transformer), the custom router that picks the provider a model name names, and the gate's keys
    (`APIKEY` is the client key; without one ccr serves its provider keys at /api/config)."""
    chosen = served(NAMES, routes(scenarios, backends, models))
    if not chosen:
        raise ValueError("ccr names none of these backends")
    providers: list[dict[str, Any]] = []
    for r in chosen:
        name = named(NAME, NAMES, r.backend)
        providers.append(
            {
                "name": r.name,
                "api_base_url": upstream_url(name, replay_url, r),
                "api_key": f"${PLANTED_KEY_ENV}",
                "models": [r.upstream_model],
                "transformer": {"use": [name.provider]},
            }
        )
    config = {
        "HOST": "127.0.0.1",
        "APIKEY": f"${CLIENT_KEY_ENV}",
        "LOG": True,
        "LOG_LEVEL": "info",
        "API_TIMEOUT_MS": 60000,
        "NON_INTERACTIVE_MODE": True,
        "CUSTOM_ROUTER_PATH": str(ROUTER.resolve()),
        "Providers": providers,
        "Router": {"default": f"{chosen[0].name},{chosen[0].upstream_model}"},
    }
    return json.dumps(config, indent=1, ensure_ascii=False) + "\n"


SPEC = GatewaySpec(
    name=NAME,
    package="@musistudio/claude-code-router@2.0.0",
    version="2.0.0",
    config_file=".claude-code-router/config.json",
    # `ccr start` serves in the foreground (`ccr restart` would spawn a detached server).
    argv=("{bin}", "{home}/node_modules/@musistudio/claude-code-router/dist/cli.js", "start"),
    ready_path="/health",
    install_hint="run `npm ci` in gateways/ccr (nox -s gateway-ccr does)",
    executable="node",
    env={"CI": "true"},
    home_is_run_dir=True,  # it reads $HOME/.claude-code-router/config.json
    port_env="SERVICE_PORT",
    names=NAMES,
)
"""claude-code-router 2.0.0 (3.x does not install from the registry)."""

SPECS = (SPEC,)
