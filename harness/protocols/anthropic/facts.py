"""The facts of the Anthropic Messages API (see `harness.protocols.facts`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.protocols.facts import (
    Frontend,
    GatewayName,
    ListedModel,
    ModelInBody,
    ModelList,
    ProtocolFacts,
    RealEndpoint,
    Route,
    Sdk,
    Secrets,
    TypicalChunking,
)

CREATED_AT = "1970-01-01T00:00:00Z"
"""`created_at` of a listed model: the proxy does not know the upstream's dates (a fixed, documented placeholder)."""


def model_entry(model: ListedModel) -> dict[str, Any]:
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


FACTS = ProtocolFacts(
    frontend=Frontend(
        routes=(Route("/v1/messages"), Route("/v1/messages/count_tokens", kind="count_tokens")),
        model=ModelInBody(),
    ),
    model_list=ModelList(
        paths=("/v1/models",),
        item_paths=("/v1/models/{model_id}",),
        entry=model_entry,
        envelope=model_envelope,
        claims=is_client,
    ),
    sdk=Sdk(driver="harness.drivers.anthropic_sdk", package="anthropic", http_client="httpx2"),
    real=RealEndpoint("https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "claude-sonnet-4-5"),
    secrets=Secrets(
        headers=frozenset({"x-api-key", "anthropic-organization-id"}),
        header_prefixes=("anthropic-ratelimit-", "x-stainless-"),
        key_patterns=(r"sk-ant-[A-Za-z0-9_\-]{8,}",),
    ),
    # Somewhat larger text deltas than OpenAI's, and input_json_delta fragments.
    chunking=TypicalChunking(text_chunk_size=7, arguments_chunk_size=10),
    gateways={
        "litellm": GatewayName("anthropic", appends="/v1/messages"),
        "louter": GatewayName("anthropic", appends="/v1/messages"),
    },
)
"""Anthropic Messages."""
