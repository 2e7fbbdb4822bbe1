"""The facts of OpenAI Chat Completions and of each OpenAI-compatible profile (see `harness.protocols.facts`).

`FAMILY` is OpenAI's own; a profile is a backend of this family: it serves no frontend routes or model list of
its own and is driven by the `openai` SDK, so its facts are the family's with those cleared and its real
endpoint, typical chunking and key shapes declared (`backend(...)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.openai import wire_rules
from harness.protocols.openai.profile import DEFAULT_CAPABILITIES, Profile

CREATED_UNIX = 0
"""`created` of a listed model: the proxy does not know the upstream's dates (a fixed, documented placeholder)."""
OWNER = "conformance-proxy"
"""`owned_by` of a listed model."""


def model_entry(model: facts.ListedModel) -> dict[str, Any]:
    """One model in OpenAI's `/v1/models` shape."""
    return {"id": model.name, "object": "model", "created": CREATED_UNIX, "owned_by": OWNER}


def model_envelope(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenAI's list body."""
    return {"object": "list", "data": entries}


SECRETS = facts.Secrets(
    headers=frozenset({"openai-organization", "openai-project"}),
    # x-stainless-*: the SDK's platform telemetry; x-ratelimit-*: per-account limits.
    header_prefixes=("x-stainless-", "x-ratelimit-"),
    key_patterns=(r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}",),
)

FAMILY = facts.ProtocolFacts(
    frontend=facts.Frontend(
        routes=(facts.Route("/v1/chat/completions"),),
        model=facts.ModelInBody(),
        wire_rules=wire_rules.RULES,
        request_id_header="x-request-id",  # https://platform.openai.com/docs/api-reference/debugging-requests
        reads_retry_after=True,  # openai-python `_calculate_retry_timeout`: retry-after-ms, then retry-after
    ),
    model_list=facts.ModelList(
        paths=("/v1/models",),
        item_paths=("/v1/models/{model_id}",),
        entry=model_entry,
        envelope=model_envelope,
        claims=None,  # the default shape of `GET /v1/models`: the other protocols' clients announce themselves
    ),
    sdk=facts.Sdk(
        driver="harness.drivers.openai_sdk",
        package="openai",
        http_client="httpx2",
        # The `openai` profile's wire but reasoning, which the SDK's types do not carry; files by data and by id.
        capabilities=(DEFAULT_CAPABILITIES - {Capability.THINKING}) | {Capability.FILES, Capability.FILE_ID},
    ),
    real=facts.RealEndpoint("https://api.openai.com", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    upstream_model="gpt-4o-mini",
    wire_specs=(facts.WireSpec("harness.protocols.openai.spec", "openai"),),
    secrets=SECRETS,
    # A few characters per delta and argument fragments, as api.openai.com streams.
    chunking=facts.TypicalChunking(text_chunk_size=4, arguments_chunk_size=6),
    text_runs_joined=True,  # a message has one content string
    upstream_request=facts.UpstreamRequest(
        headers=(facts.HeaderRule("content-type", "content type", value="application/json", required=True),),
        fields=frozenset(
            {
                *("model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias"),
                *("logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n"),
                *("parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key"),
                *("prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier", "seed"),
                *("service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice"),
                *("tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options"),
            }
        ),
        rejects_unknown_fields=True,
        source="https://platform.openai.com/docs/api-reference/chat/create (request body); an unknown field is "
        "answered 400 `Unrecognized request argument supplied: <field>`",
    ),
)
"""OpenAI Chat Completions."""


def backend(
    *,
    real: facts.RealEndpoint | None,
    model: str | None = None,
    chunking: facts.TypicalChunking = FAMILY.chunking,
    key_patterns: tuple[str, ...] = (),
    headers: frozenset[str] = frozenset(),
    credentials: frozenset[str] = frozenset(),
) -> facts.ProtocolFacts:
    """A profile's facts: the family's, as a backend only, with its own endpoint, model (default: the real
    endpoint's), chunking and key shapes."""
    secrets = facts.Secrets(
        headers=SECRETS.headers | headers,
        header_prefixes=SECRETS.header_prefixes,
        key_patterns=(*SECRETS.key_patterns, *key_patterns),
        credentials=SECRETS.credentials | credentials,
    )
    upstream_model = model or (real.model if real is not None else None)
    if upstream_model is None:
        raise ValueError("a profile without a real endpoint names its realistic model (`model=`)")
    return FAMILY.derive(
        frontend=None,
        # OpenAI's own spec, but a compatible server ignores request fields it does not know: they only warn.
        wire_specs=(facts.WireSpec("harness.protocols.openai.spec", "openai", strict_requests=False),),
        model_list=None,
        sdk=None,
        real=real,
        upstream_model=upstream_model,
        chunking=chunking,
        secrets=secrets,
        upstream_request=None,  # OpenAI-compatible servers document (and reject) fields of their own
    )


PROFILE_FACTS: Mapping[str, facts.ProtocolFacts] = MappingProxyType(
    {
        "openai": FAMILY,
        "deepseek": backend(
            real=facts.RealEndpoint("https://api.deepseek.com", ("DEEPSEEK_API_KEY",), "deepseek-chat"),
            chunking=facts.TypicalChunking(text_chunk_size=3, arguments_chunk_size=4),
        ),
        "groq": backend(
            real=facts.RealEndpoint("https://api.groq.com", ("GROQ_API_KEY",), "openai/gpt-oss-20b"),
            chunking=facts.TypicalChunking(text_chunk_size=5),  # whole tool calls in one chunk
            key_patterns=(r"gsk_[A-Za-z0-9]{20,}",),
        ),
        "mistral": backend(
            real=facts.RealEndpoint("https://api.mistral.ai", ("MISTRAL_API_KEY",), "mistral-small-latest"),
            chunking=facts.TypicalChunking(text_chunk_size=5),
        ),
        "xai": backend(
            real=facts.RealEndpoint("https://api.x.ai", ("XAI_API_KEY",), "grok-4-fast"),
            chunking=facts.TypicalChunking(text_chunk_size=6),  # whole tool calls in one chunk
            key_patterns=(r"xai-[A-Za-z0-9]{20,}",),
        ),
        "openrouter": backend(
            real=facts.RealEndpoint("https://openrouter.ai/api", ("OPENROUTER_API_KEY",), "openai/gpt-4o-mini"),
        ),
        "together": backend(
            real=facts.RealEndpoint(
                "https://api.together.xyz", ("TOGETHER_API_KEY",), "meta-llama/Llama-3.3-70B-Instruct-Turbo"
            ),
        ),
        # Self-hosted servers: no provider to record from without a user's own deployment (`--base-url`).
        "vllm": backend(real=None, model="meta-llama/Llama-3.1-8B-Instruct"),
        "llamacpp": backend(real=None, model="llama-3.2-3b-instruct"),
        "lmstudio": backend(real=None, model="qwen2.5-7b-instruct"),
        "gptoss": backend(real=None, model="openai/gpt-oss-20b"),
        "gemma": backend(real=None, model="google/gemma-3-27b-it"),
        # Per-resource endpoints: no default; the model is the deployment name.
        "azure": backend(
            real=None, model="gpt-4o-mini", headers=frozenset({"api-key"}), credentials=frozenset({"api-key"})
        ),
        "cloudflare-openai": backend(
            real=facts.RealEndpoint(
                "https://api.cloudflare.com",
                ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_API_KEY"),
                "@cf/meta/llama-3.1-8b-instruct",
                # The profile's base path holds a placeholder account id; recording sends the real one.
                placeholders=(("0" * 32, "CLOUDFLARE_ACCOUNT_ID"),),
            ),
            chunking=facts.TypicalChunking(text_chunk_size=4),
        ),
    }
)
"""Facts by profile name."""


def facts_of(profile: Profile) -> facts.ProtocolFacts:
    """The facts declared for `profile` (every profile in `profiles.PROFILES` has an entry)."""
    try:
        return PROFILE_FACTS[profile.name]
    except KeyError:
        raise LookupError(f"profile {profile.name!r} has no facts: add it to PROFILE_FACTS in {__name__}") from None
