"""How each known gateway names a protocol in its config, and which protocols it serves to clients: the gateways'
own knowledge, kept here and not in the protocols (a protocol knows its wire, not who routes it). A provider
profile (an OpenAI-compatible provider, say) is named as its family is, unless its facts say a gateway config
cannot reach it (`ProtocolFacts.gateway_upstream`: Vertex AI's OAuth token is no key a config holds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from harness.protocols import registry


@dataclass(frozen=True)
class GatewayName:
    """How one known gateway names a protocol in its config, and whether it serves it to clients."""

    provider: str
    """The gateway's name for the protocol (LiteLLM's model prefix, Louter's backend `type`, Portkey's provider,
    claude-code-router's transformer)."""
    appends: str = ""
    """What the gateway appends to the configured base URL itself: the upstream base URL is the codec's request
    path cut where this begins (empty: the base URL is the backend root)."""
    note: str = ""
    """What a user of the generated config should know about this gateway and protocol (printed as a comment)."""
    endpoint: bool = False
    """The configured URL runs through `appends` (claude-code-router takes the whole endpoint, or the Gemini
    `models/` folder it appends the model and method to)."""
    frontend: bool = False
    """The gateway also serves this protocol to its clients (its gate drives this protocol's SDK at it)."""

    def base_path(self, request_path: str) -> str:
        """The part of the codec's request path the gateway's configured base URL must end with."""
        if not self.appends:
            return ""
        cut = request_path.find(self.appends)
        if cut < 0:
            return ""
        return request_path[: cut + len(self.appends)] if self.endpoint else request_path[:cut]


_LITELLM_OPENAI = (
    "OpenAI: LiteLLM sends an Anthropic client's request for an openai/ model to {api_base}/responses unless "
    "litellm_settings.use_chat_completions_url_for_anthropic_messages is true (set here: the gate judges the Chat "
    "Completions path)."
)
_LITELLM_GEMINI = (
    "Gemini: LiteLLM builds {api_base}/models/{model}:{action} (versions before that used {api_base}:{action})."
)

NAMES: Mapping[str, Mapping[str, GatewayName]] = MappingProxyType(
    {
        "litellm": {
            "anthropic": GatewayName("anthropic", appends="/v1/messages", frontend=True),
            "openai": GatewayName("openai", appends="/chat/completions", note=_LITELLM_OPENAI, frontend=True),
            "gemini": GatewayName("gemini", appends="/models/", note=_LITELLM_GEMINI, frontend=True),
            "ollama": GatewayName("ollama_chat", appends="/api/chat"),
            # Not generated: LiteLLM names a Bedrock Converse upstream `bedrock/converse/{model}` and takes AWS
            # credentials and a region, not a key and an api_base. Responses upstreams: its `openai/` models forward
            # /v1/responses natively only when the client itself calls /v1/responses (gated as litellm-responses).
        },
        "louter": {
            "anthropic": GatewayName("anthropic", appends="/v1/messages"),
            "openai": GatewayName("openai", appends="/v1/chat/completions"),
            "gemini": GatewayName("gemini"),
        },
        "portkey": {
            "anthropic": GatewayName("anthropic", appends="/messages"),
            "openai": GatewayName("openai", appends="/chat/completions", frontend=True),
            "gemini": GatewayName("google", appends="/models/"),
        },
        "ccr": {  # claude-code-router's transformers; the OpenAI one only names the endpoint
            "anthropic": GatewayName("Anthropic", appends="/v1/messages", endpoint=True, frontend=True),
            "openai": GatewayName("OpenAI", appends="/chat/completions", endpoint=True),
            "gemini": GatewayName("gemini", appends="/models/", endpoint=True),
        },
        "codex-rosetta": {  # its UPSTREAM_PROVIDER; it appends the path to UPSTREAM_BASE_URL
            "openai": GatewayName("openai", appends="/chat/completions"),
        },
        "mlflow": {  # MLflow AI Gateway's providers (`anthropic_api_base` ends with /v1); OpenAI clients served
            "anthropic": GatewayName("anthropic", appends="/messages"),
            "openai": GatewayName("openai", appends="/chat/completions", frontend=True),
        },
        "nullplatform": {  # LLM Gateway's provider `type` (its `baseUrl`); clients under /openai and /anthropic
            "anthropic": GatewayName("anthropic", appends="/v1/messages", frontend=True),
            "openai": GatewayName("openai", appends="/chat/completions", frontend=True),
        },
    }
)
"""Each known gateway's names, by the protocol they name (a base protocol: its profiles are named as it is)."""


def naming(gateway: str, protocol: str) -> GatewayName | None:
    """How `gateway` names `protocol` (None: it does not serve it, or knows no such gateway)."""
    table = NAMES.get(gateway, {})
    if protocol in table:
        return table[protocol]
    if not registry.facts(protocol).gateway_upstream:
        return None
    return table.get(registry.get(protocol).family)


def gateways_naming(protocol: str) -> list[str]:
    """The known gateways that name `protocol`, sorted."""
    return sorted(gateway for gateway in NAMES if naming(gateway, protocol) is not None)
