"""The facts of the Gemini API (see `harness.protocols.facts`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.gemini import wire_rules
from harness.wire.http import HttpRequest

METHODS = ("generateContent", "streamGenerateContent")
"""The generation methods a frontend request may call."""
LISTED_METHODS = [*METHODS, "countTokens"]
"""`supportedGenerationMethods` of a listed model."""

MODEL_IN_PATH = facts.ModelInPath(
    pattern=re.compile(r"^/(?P<version>v1|v1beta)/models/(?P<model>[^/:]+):(?P<action>[A-Za-z]+)$"),
    rewrite="/{version}/models/{model}:{action}",
    label_format="POST /{version}/models/{{model}}:{action}",
    shape="/v1beta/models/MODEL:ACTION",
    actions=METHODS,
)
"""The model is a path segment: `/v1beta/models/{model}:streamGenerateContent`."""


def stream_media_type(request: HttpRequest) -> str | None:
    """A translated stream is SSE only when the query says `alt=sse`; otherwise Gemini streams a JSON array."""
    return None if request.query.get("alt") == "sse" else "application/json"


def model_entry(model: facts.ListedModel) -> dict[str, Any]:
    """One model in Gemini's `models` shape."""
    return {
        "name": f"models/{model.name}",
        "version": "proxy",
        "displayName": model.name,
        "description": f"{model.name} served by the conformance proxy ({model.mode})",
        "supportedGenerationMethods": LISTED_METHODS,
    }


def model_envelope(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Gemini's list body."""
    return {"models": entries}


def is_client(headers: Mapping[str, str], query: Mapping[str, str]) -> bool:
    """A Gemini client on `GET /v1/models`: its key header (or `key=` query) or its client header."""
    return "x-goog-api-key" in headers or "key" in query or "x-goog-api-client" in headers


CAPABILITIES = frozenset(
    {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.TOOL_CHOICE,
        Capability.VISION,
        Capability.FILES,
        Capability.FILE_URL,  # fileData: a fileUri the API fetches (public or signed https URLs)
        Capability.THINKING,
        Capability.THINKING_SIGNATURE,
        Capability.JSON_OBJECT,
        Capability.JSON_SCHEMA,
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
"""What Gemini's wire carries (scenario capability names)."""


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(
        routes=(facts.Route("/v1beta/models/{target}"), facts.Route("/v1/models/{target}")),
        model=MODEL_IN_PATH,
        stream_media_type=stream_media_type,
        wire_rules=wire_rules.RULES,
    ),
    model_list=facts.ModelList(
        paths=("/v1beta/models", "/v1/models"),
        item_paths=("/v1beta/models/{model_id}", "/v1/models/{model_id}"),
        entry=model_entry,
        envelope=model_envelope,
        claims=is_client,
    ),
    sdk=facts.Sdk(
        driver="harness.drivers.genai_sdk",
        package="google-genai",
        http_client="httpx2",
        capabilities=CAPABILITIES,
    ),
    real=facts.RealEndpoint(
        "https://generativelanguage.googleapis.com", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash"
    ),
    upstream_model="gemini-2.5-flash",
    wire_specs=(facts.WireSpec("harness.protocols.gemini.spec", "gemini"),),
    secrets=facts.Secrets(
        headers=frozenset({"x-goog-api-key"}),
        key_patterns=(r"AIza[0-9A-Za-z_\-]{35}",),
        credentials=frozenset({"x-goog-api-key"}),
        credential_query=frozenset({"key"}),
    ),
    # Whole sentences per chunk and whole functionCall objects.
    chunking=facts.TypicalChunking(text_chunk_size=24),
    tool_results_as_objects=True,
    text_runs_joined=True,  # a candidate is a run of parts; adjacent text parts are one answer
    upstream_request=facts.UpstreamRequest(
        headers=(facts.HeaderRule("content-type", "content type", value="application/json", required=True),),
        # The API reads proto JSON: lowerCamelCase names, and their snake_case forms too.
        fields=frozenset(
            {
                *("contents", "tools", "toolConfig", "tool_config", "safetySettings", "safety_settings"),
                *("systemInstruction", "system_instruction", "generationConfig", "generation_config"),
                *("cachedContent", "cached_content", "labels"),
                # GenerateContentRequest.model: bound to the path, yet a field of the request message, so the
                # API reads it in a body (countTokens' `generateContentRequest` requires it there): LiteLLM sends it.
                "model",
            }
        ),
        rejects_unknown_fields=True,
        source="https://ai.google.dev/api/generate-content#request-body; an unknown field is answered 400 "
        '`Invalid JSON payload received. Unknown name "<field>": Cannot find field.`',
    ),
)
"""Gemini (Generative Language API)."""
