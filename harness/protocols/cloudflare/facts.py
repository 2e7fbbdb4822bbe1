"""The facts of Cloudflare Workers AI's native route (see `harness.protocols.facts`)."""

from __future__ import annotations

import re
from typing import Any

from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.cloudflare.paths import ACCOUNT_ENV, ACCOUNT_PLACEHOLDER, API_PREFIX, KEY_ENV

MODEL_IN_PATH = facts.ModelInPath(
    pattern=re.compile(r"^(?P<prefix>/client/v4/accounts/(?P<account>[^/]+)/ai/run/)(?P<model>.+)$"),
    rewrite="{prefix}{model}",
    label_format="POST /client/v4/accounts/{{account_id}}/ai/run/{{model}}",
    shape="/client/v4/accounts/ACCOUNT_ID/ai/run/MODEL",
)
"""The model is everything after `/ai/run/`, slashes and all (`@cf/meta/llama-3.1-8b-instruct`), written as is."""
ROUTES = (facts.Route(f"{API_PREFIX}/accounts/{{account_id}}/ai/run/{{model:path}}"),)
"""The native run route; the account id is any segment (the proxy holds the upstream's own)."""
MODELS_SEARCH = f"{API_PREFIX}/accounts/{{account_id}}/ai/models/search"
"""Where Workers AI clients list models (`?task=Text Generation`; they read each result's `name`)."""
TASK = {"id": "c329a1f9-323d-4e91-b2aa-582dd4188d34", "name": "Text Generation", "description": "Family of generative "
        "text models, such as large language models (LLM), that can be adapted for a variety of natural language "
        "tasks."}  # fmt: skip
"""The task object of a text-generation model in the model search."""


def model_entry(model: facts.ListedModel) -> dict[str, Any]:
    """One model in the shape of Workers AI's model search (`name` is what clients read)."""
    return {
        "id": model.name,
        "source": 1,
        "name": model.name,
        "description": f"{model.name} served by the conformance proxy ({model.mode})",
        "task": TASK,
        "tags": [],
        "properties": [],
    }


def model_envelope(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Cloudflare's REST envelope around the search results, one page."""
    info = {"count": len(entries), "page": 1, "per_page": max(len(entries), 1), "total_count": len(entries)}
    return {"success": True, "errors": [], "messages": [], "result": entries, "result_info": info}


CAPABILITIES = frozenset(
    {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.VISION,
        Capability.JSON_OBJECT,
        Capability.JSON_SCHEMA,
        Capability.MODELS_LIST,
        Capability.TOP_P,
        Capability.STREAM_ERROR_FIRST,
        Capability.NOT_FOUND_ERROR,
        Capability.OVERLOADED_ERROR,
    }
)
"""Function calling, images (llama vision models), JSON mode and the model search; no tool_choice, stop
sequences, thinking switch or cache figures on the native wire, and no finish reason: the native output
(`AiTextGenerationOutput`: response, tool_calls, usage) cannot say that the token limit cut the answer."""


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(routes=ROUTES, model=MODEL_IN_PATH),
    model_list=facts.ModelList(
        paths=(MODELS_SEARCH,), item_paths=(), entry=model_entry, envelope=model_envelope, claims=None
    ),
    sdk=facts.Sdk(
        driver="harness.drivers.cloudflare_http",
        package="httpx2",
        http_client="httpx2",
        capabilities=CAPABILITIES | {Capability.RETRY_AFTER, Capability.STOP_MAX_TOKENS},
    ),
    real=facts.RealEndpoint(
        "https://api.cloudflare.com",
        KEY_ENV,
        "@cf/meta/llama-3.1-8b-instruct",
        placeholders=((ACCOUNT_PLACEHOLDER, ACCOUNT_ENV),),
    ),
    upstream_model="@cf/meta/llama-3.1-8b-instruct",
    secrets=facts.Secrets(headers=frozenset({"cf-aig-authorization"})),
    chunking=facts.TypicalChunking(text_chunk_size=4),  # about one token per event
    text_runs_joined=True,  # one `response` string
    upstream_request=facts.UpstreamRequest(
        # Not documented as required (the REST examples send JSON without naming it): a wrong one only warns.
        headers=(facts.HeaderRule("content-type", "content type", value="application/json", read=False),),
        fields=frozenset(
            {
                *("messages", "prompt", "functions", "tools", "response_format", "guided_json", "raw", "stream"),
                *("max_tokens", "temperature", "top_p", "top_k", "seed", "repetition_penalty"),
                *("frequency_penalty", "presence_penalty", "lora", "image"),
            }
        ),
        rejects_unknown_fields=False,  # the model's input schema is checked for its own fields only
        source="https://developers.cloudflare.com/workers-ai/models/llama-3.1-8b-instruct/ (input schema, "
        "Prompt and Messages forms); @cloudflare/workers-types' model input types",
    ),
)
"""Cloudflare Workers AI (native)."""
