"""The facts of the Anthropic Messages API (see `harness.protocols.facts`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.ir import Capability
from harness.protocols import facts

CREATED_AT = "1970-01-01T00:00:00Z"
"""`created_at` of a listed model: the proxy does not know the upstream's dates (a fixed, documented placeholder)."""


def model_entry(model: facts.ListedModel) -> dict[str, Any]:
    """One model in Anthropic's `/v1/models` shape."""
    return {"type": "model", "id": model.name, "display_name": model.name, "created_at": CREATED_AT}


def model_envelope(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Anthropic's list body, one page with its cursors."""
    return {
        "data": entries,
        "has_more": False,
        "first_id": entries[0]["id"] if entries else None,
        "last_id": entries[-1]["id"] if entries else None,
    }


def is_client(headers: Mapping[str, str], query: Mapping[str, str]) -> bool:
    """Anthropic clients announce themselves on `GET /v1/models` with `anthropic-version`."""
    return "anthropic-version" in headers


CAPABILITIES = frozenset(
    {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.TOOL_CHOICE,
        Capability.VISION,
        Capability.FILES,
        Capability.FILE_URL,  # a document's URL source
        Capability.THINKING,
        Capability.THINKING_SIGNATURE,
        Capability.STOP_SEQUENCES,
        Capability.PROMPT_CACHE,
        Capability.MODELS_LIST,
        Capability.RETRY_AFTER,
        Capability.TOP_P,
        Capability.STOP_MAX_TOKENS,
        Capability.STREAM_ERROR_FIRST,
        Capability.NOT_FOUND_ERROR,
        Capability.OVERLOADED_ERROR,
    }
)
"""No response_format: Anthropic Messages has no JSON mode (see `losses`)."""


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(
        routes=(facts.Route("/v1/messages"), facts.Route("/v1/messages/count_tokens", kind="count_tokens")),
        model=facts.ModelInBody(),
        request_id_header="request-id",  # https://docs.anthropic.com/en/api/errors#request-id
        reads_retry_after=True,  # anthropic-python `_calculate_retry_timeout`
    ),
    model_list=facts.ModelList(
        paths=("/v1/models",),
        item_paths=("/v1/models/{model_id}",),
        entry=model_entry,
        envelope=model_envelope,
        claims=is_client,
    ),
    sdk=facts.Sdk(
        driver="harness.drivers.anthropic_sdk",
        package="anthropic",
        http_client="httpx2",
        # The SDK also asks for a schema-shaped answer (`output_config.format`).
        capabilities=CAPABILITIES | {Capability.JSON_SCHEMA},
    ),
    real=facts.RealEndpoint("https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "claude-sonnet-4-5"),
    upstream_model="claude-sonnet-4-5-20250929",
    wire_specs=(facts.WireSpec("harness.protocols.anthropic.spec", "anthropic"),),
    secrets=facts.Secrets(
        headers=frozenset({"x-api-key", "anthropic-organization-id"}),
        credentials=frozenset({"x-api-key"}),
        header_prefixes=("anthropic-ratelimit-", "x-stainless-"),
        key_patterns=(r"sk-ant-[A-Za-z0-9_\-]{8,}",),
    ),
    # Somewhat larger text deltas than OpenAI's, and input_json_delta fragments.
    chunking=facts.TypicalChunking(text_chunk_size=7, arguments_chunk_size=10),
    upstream_request=facts.UpstreamRequest(
        headers=(
            facts.HeaderRule("anthropic-version", "version", required=True),
            facts.HeaderRule("anthropic-beta", "beta", client_only=True),
            facts.HeaderRule("content-type", "content type", value="application/json", required=True),
        ),
        fields=frozenset(
            {
                *("model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream"),
                *("temperature", "top_p", "top_k", "tools", "tool_choice", "thinking", "service_tier"),
                *("container", "mcp_servers", "context_management", "output_config", "output_format"),
                *("inference_geo", "cache_control"),
            }
        ),
        rejects_unknown_fields=True,
        source="https://docs.anthropic.com/en/api/messages (request body and headers; an unknown field is "
        'answered 400 invalid_request_error "<field>: Extra inputs are not permitted", e.g. a forwarded '
        "stream_options); https://docs.anthropic.com/en/api/versioning, /en/api/beta-headers",
    ),
)
"""Anthropic Messages."""
