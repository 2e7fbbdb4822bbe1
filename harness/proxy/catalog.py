"""Answers the proxy gives itself: model lists in each protocol's shape (built from the config's frontend
model names; real agents call these first) and Anthropic `count_tokens` in translate mode."""

from __future__ import annotations

import math
from typing import Any

from harness.proxy.config import ModelRoute, ProxyConfig

# Fixed, documented placeholder values: the proxy does not know the upstream's real limits or dates.
CREATED_UNIX = 0
CREATED_ISO = "1970-01-01T00:00:00Z"
OWNER = "conformance-proxy"
GEMINI_METHODS = ["generateContent", "streamGenerateContent", "countTokens"]


def list_shape(headers: dict[str, str], query: dict[str, str]) -> str:
    """Which protocol's shape a `GET /v1/models` wants: Anthropic and Gemini clients announce themselves."""
    if "anthropic-version" in headers:
        return "anthropic"
    if "x-goog-api-key" in headers or "key" in query or "x-goog-api-client" in headers:
        return "gemini"
    return "openai"


def openai_model(route: ModelRoute) -> dict[str, Any]:
    """One model in OpenAI's `/v1/models` shape."""
    return {"id": route.name, "object": "model", "created": CREATED_UNIX, "owned_by": OWNER}


def anthropic_model(route: ModelRoute) -> dict[str, Any]:
    """One model in Anthropic's `/v1/models` shape."""
    return {"type": "model", "id": route.name, "display_name": route.name, "created_at": CREATED_ISO}


def gemini_model(route: ModelRoute) -> dict[str, Any]:
    """One model in Gemini's `models` shape."""
    return {
        "name": f"models/{route.name}",
        "version": "proxy",
        "displayName": route.name,
        "description": f"{route.name} served by the conformance proxy ({route.mode})",
        "supportedGenerationMethods": GEMINI_METHODS,
    }


def ollama_model(route: ModelRoute) -> dict[str, Any]:
    """One model in Ollama's `/api/tags` shape."""
    return {"name": route.name, "model": route.name, "modified_at": CREATED_ISO, "size": 0, "digest": "", "details": {}}


def model_entry(shape: str, route: ModelRoute) -> dict[str, Any]:
    """One model in the given protocol's shape."""
    return _ENTRY[shape](route)


def model_list(shape: str, config: ProxyConfig) -> dict[str, Any]:
    """Every configured frontend model in the given protocol's list shape."""
    entries = [_ENTRY[shape](route) for route in config.models]
    if shape == "anthropic":
        return {
            "data": entries,
            "has_more": False,
            "first_id": entries[0]["id"] if entries else None,
            "last_id": entries[-1]["id"] if entries else None,
        }
    if shape == "gemini":
        return {"models": entries}
    if shape == "ollama":
        return {"models": entries}
    return {"object": "list", "data": entries}


_ENTRY = {"openai": openai_model, "anthropic": anthropic_model, "gemini": gemini_model, "ollama": ollama_model}


def estimate_tokens(body: Any) -> int:
    """Local `count_tokens` estimate for translate mode: one token per four characters of every string in the
    request except the model name, at least one. Deterministic and documented; not the upstream's tokenizer."""
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "model"}
    return max(1, math.ceil(_chars(body) / 4))


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_chars(v) for v in value.values())
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0
