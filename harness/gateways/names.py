"""How each known gateway names a protocol in its config, and which protocols it serves to clients, gathered from
the gateway modules (`harness/gateways/<name>.py`, each its own `NAMES`): the gateways' own knowledge, not the
protocols' (a protocol knows its wire, not who routes it). A provider profile (an OpenAI-compatible provider, say)
is named as its family is, unless its facts say a gateway config cannot reach it (`ProtocolFacts.gateway_upstream`:
Vertex AI's OAuth token is no key a config holds)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.gateways import ccr, codex_rosetta, litellm, louter, mlflow, nullplatform, open_responses_server, portkey
from harness.gateways.base import GatewayName, naming_in

MODULES = (litellm, louter, portkey, ccr, codex_rosetta, mlflow, nullplatform, open_responses_server)
"""Every gateway module, in the order their config formats are listed."""

NAMES: Mapping[str, Mapping[str, GatewayName]] = MappingProxyType({m.NAME: m.NAMES for m in MODULES})
"""Each known gateway's names, by the protocol they name (a base protocol: its profiles are named as it is)."""


def naming(gateway: str, protocol: str) -> GatewayName | None:
    """How `gateway` names `protocol` (None: it does not serve it, or knows no such gateway)."""
    return naming_in(NAMES.get(gateway, {}), protocol)


def gateways_naming(protocol: str) -> list[str]:
    """The known gateways that name `protocol`, sorted."""
    return sorted(gateway for gateway in NAMES if naming(gateway, protocol) is not None)


__all__ = ["MODULES", "NAMES", "GatewayName", "gateways_naming", "naming"]
