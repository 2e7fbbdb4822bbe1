"""The real gateways the project gates (`conformance gateway NAME`, `nox -s gateway-NAME`), gathered from the
gateway modules (each its `SPECS`: the pinned version, how it is started on loopback from its install and its
generated config, and when it is ready). Which protocols a gateway serves to clients and which upstreams it can
name are in its names table, so a profile added later (an OpenAI-compatible provider) is gated without a change.

Installs live outside the harness: LiteLLM in the Python environment that runs the gate (its `litellm` script),
the npm gateways in `gateways/<name>/node_modules` (pinned by the committed `package.json` and `package-lock.json`).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.gateways.base import GatewayInstallError, GatewaySpec
from harness.gateways.names import MODULES

GATEWAYS: Mapping[str, GatewaySpec] = {spec.name: spec for module in MODULES for spec in module.SPECS}
"""The gated gateways by name."""


def gateway(name: str) -> GatewaySpec:
    """A gateway by name; KeyError names the known ones."""
    try:
        return GATEWAYS[name]
    except KeyError:
        raise KeyError(f"no gateway named {name!r} (known: {', '.join(GATEWAYS)})") from None


__all__ = ["GATEWAYS", "GatewayInstallError", "GatewaySpec", "gateway"]
