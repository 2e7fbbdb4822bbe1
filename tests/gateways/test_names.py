"""How each known gateway names a protocol: the gateways' own table (`harness/gateways/names.py`), a profile named
as its family unless its facts say no gateway config reaches it."""

from __future__ import annotations

import pytest

from harness.gateways.names import NAMES, GatewayName, gateways_naming, naming
from harness.gateways.specs import GATEWAYS
from harness.protocols import registry

ALL = ["ccr", "codex-rosetta", "litellm", "louter", "mlflow", "nullplatform", "open-responses-server", "portkey"]
SERVED = {
    "anthropic": ["ccr", "litellm", "louter", "mlflow", "nullplatform", "portkey"],
    "gemini": ["ccr", "litellm", "louter", "portkey"],
    "ollama": ["litellm"],
    **{name: [] for name in ("bedrock", "cloudflare", "responses", "swink", "vertex-anthropic", "vertex-gemini")},
}
"""Which gateways name each protocol (every OpenAI-compatible profile: all of them), as the protocols' facts said
before the table moved here."""


def test_each_protocol_is_named_by_the_gateways_that_serve_it() -> None:
    for name in registry.names():
        expected = SERVED.get(name, ALL if registry.get(name).family == "openai" else None)
        assert gateways_naming(name) == expected, name


def test_a_profile_is_named_as_its_family_unless_no_config_reaches_it() -> None:
    assert naming("litellm", "groq") == naming("litellm", "openai") == NAMES["litellm"]["openai"]
    assert naming("litellm", "vertex-anthropic") is None and not registry.facts("vertex-anthropic").gateway_upstream
    assert naming("no-such-gateway", "openai") is None


def test_every_named_gateway_is_known_and_names_a_provider() -> None:
    gated = {spec.naming for spec in GATEWAYS.values()}
    assert gated <= set(NAMES)
    assert all(name.provider for table in NAMES.values() for name in table.values())
    assert all(protocol in registry.names() for table in NAMES.values() for protocol in table)


@pytest.mark.parametrize(
    ("appends", "path", "base"),
    [
        ("/chat/completions", "/openai/v1/chat/completions", "/openai/v1"),
        ("/v1/chat/completions", "/chat/completions", ""),
        ("/models/", "/v1beta/models/m:generateContent", "/v1beta"),
        ("", "/v1/messages", ""),
    ],
)
def test_a_gateway_base_path_is_the_request_path_cut_where_the_gateway_appends(
    appends: str, path: str, base: str
) -> None:
    assert GatewayName("x", appends=appends).base_path(path) == base


def test_a_gateway_that_takes_the_endpoint_keeps_what_it_would_append() -> None:
    gemini = GatewayName("gemini", appends="/models/", endpoint=True)
    assert gemini.base_path("/v1beta/models/m:generateContent") == "/v1beta/models/"
    assert GatewayName("OpenAI", appends="/chat/completions", endpoint=True).base_path("/v1/chat/completions") == (
        "/v1/chat/completions"
    )
