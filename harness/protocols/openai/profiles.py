"""Provider profiles: OpenAI itself and the OpenAI-compatible providers, each a short declaration.

Adding a provider: declare a `Profile` here (its quirks as settings and hooks from `quirks.py`), add it to
`PROFILES`, and test it on its corpus files. See ARCHITECTURE.md, "Adding an OpenAI-compatible provider".
`python -m harness.protocols.openai.table` renders `docs/profiles.md` from these declarations.
"""

from __future__ import annotations

from harness import ir
from harness.ir import Capability
from harness.protocols.openai import quirks, references
from harness.protocols.openai.profile import DEFAULT_CAPABILITIES, Profile, WireStyle, chain

USAGE_DETAILS = "Usage detail counts of None"
"""Reshape key of providers whose usage always carries the detail counts."""
_ZERO_DETAILS = (
    "usage always carries prompt_tokens_details.cached_tokens and completion_tokens_details.reasoning_tokens, as "
    "the provider sends them: an unknown count is sent as 0, which means the same (none)"
)

_STATUS_ONLY = "OpenRouter's error object has only the status as its `code` and a message"

OPENAI = Profile(
    name="openai",
    # the `file` content part: inline PDFs, or the file_id of OpenAI's Files (which Responses shares)
    capabilities=DEFAULT_CAPABILITIES | {Capability.FILES, Capability.FILE_ID},
    encode_usage=quirks.openai_usage_details,
    reshapes={USAGE_DETAILS: _ZERO_DETAILS},
    wire=WireStyle(logprobs=True, refusal=True, annotations=True, usage_null="with_usage", obfuscation=True),
    reference=references.OPENAI,
)
"""OpenAI Chat Completions itself: every default, and the wire's optional keys as api.openai.com sends them."""

DEEPSEEK = Profile(
    name="deepseek",
    base_path="",  # https://api.deepseek.com/chat/completions (the /v1 alias also works)
    max_tokens_field="max_tokens",
    finish_reasons={"insufficient_system_resource": "error"},
    decode_usage=quirks.deepseek_cache_usage,
    encode_usage=quirks.deepseek_encode_usage,
    encode_chunk=quirks.deepseek_both_fields,
    wire=WireStyle(logprobs=True, usage_null="always", usage_chunk="finish"),
    reference=references.DEEPSEEK,
    notes=("`reasoning_content` deltas come with `content: null`; the common decoder reads both",),
)
"""DeepSeek: `reasoning_content`, cache figures in `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`."""

GROQ = Profile(
    name="groq",
    base_path="/openai/v1",
    reasoning_field="reasoning",  # gpt-oss / qwen reasoning arrives as delta.reasoning (with `channel`)
    error_codes={"tool_use_failed": ir.ErrorKind.INVALID_REQUEST},
    stream_error_events=frozenset({"error"}),
    decode_chunk=quirks.x_groq_usage,
    encode_usage=quirks.groq_usage_times,
    encode_chunk=quirks.x_groq_on_usage,
    wire=WireStyle(
        logprobs=True,
        usage_chunk="both",
        whole_tool_calls=True,
        error_chunk="event",
        error_object="groq",
        first_chunk_extras=frozenset({"x_groq"}),
    ),
    reference=references.GROQ,
    notes=("a failed tool call ends a 200 stream with `event: error` and no `data: [DONE]`",),
)
"""Groq: usage also (or only) in `x_groq.usage`; failed tool calls end the stream with `event: error`."""

MISTRAL = Profile(
    name="mistral",
    capabilities=DEFAULT_CAPABILITIES - {Capability.PROMPT_CACHE},  # usage has no cached-token figure
    sends_stream_options=False,  # not a Mistral field; usage always comes on the finish chunk
    max_tokens_field="max_tokens",
    encode_tool_id=quirks.nine_alphanumerics,
    # model_length: the context window, not max_tokens, cut the answer; both are a length stop in the IR.
    finish_reasons={"model_length": "max_tokens", "error": "error"},
    decode_chunk=quirks.content_arrays,
    decode_body=quirks.content_arrays_in_message,
    encode_chunk=chain(quirks.thinking_as_content_arrays, quirks.content_on_finish),
    encode_body=quirks.thinking_as_content_arrays_in_message,
    wire=WireStyle(usage_chunk="finish"),
    reference=references.MISTRAL,
    losses={
        "ToolCallPart.id": "Mistral accepts only 9-character [a-zA-Z0-9] tool-call ids: others are sent as a "
        "stable 9-character digest",
        "ToolResultPart.tool_call_id": "rewritten like the call id it answers, so the pair still matches",
    },
)
"""Mistral: Magistral thinking as typed content arrays, 9-character tool ids, no `stream_options`."""

XAI = Profile(
    name="xai",
    decode_usage=quirks.reasoning_outside_completion_tokens,
    encode_usage=quirks.xai_usage_details,
    reshapes={USAGE_DETAILS: _ZERO_DETAILS},
    wire=WireStyle(role_chunk="merged", finish_reason_null=False, whole_tool_calls=True),
    reference=references.XAI,
    notes=("a whole tool call (id, name, arguments) arrives in one chunk, together with the role",),
)
"""xAI (Grok): completion_tokens exclude reasoning tokens; whole tool calls in one chunk."""

OPENROUTER = Profile(
    name="openrouter",
    base_path="/api/v1",
    capabilities=DEFAULT_CAPABILITIES | {Capability.FILES},  # OpenAI's `file` part, for PDFs to any model
    reasoning_field="reasoning",  # plus `reasoning_details`, the same text in typed entries
    finish_reasons={"error": "error"},
    encode_usage=quirks.openrouter_usage_cost,
    reshapes={USAGE_DETAILS: _ZERO_DETAILS},
    losses={
        "IRError.kind:context_window_exceeded": _STATUS_ONLY + ": a context overflow is a 400 that decodes as "
        "context_window_exceeded only when its message reads like one",
        "IRError.kind:network": _STATUS_ONLY + ": 502 decodes as server",
        "IRError.kind:malformed_stream": _STATUS_ONLY + ": 502 decodes as server",
    },
    encode_chunk=quirks.native_finish_reason,
    decode_chunk=quirks.reasoning_details_signature,
    decode_body=quirks.reasoning_details_signature_in_body,
    wire=WireStyle(
        role_chunk="every", logprobs=True, whole_tool_calls=True, error_chunk="in_chunk", error_object="openrouter"
    ),
    reference=references.OPENROUTER,
    notes=(
        "`: OPENROUTER PROCESSING` SSE comment lines while the upstream provider warms up",
        "an `error` object (numeric `code`) inside a normal chunk, after a finish_reason, then `[DONE]`",
        "streams with no finish_reason at all (the `Done` has stop_reason None), and repeated role chunks",
        "error bodies put the upstream provider's own message in `error.metadata.raw`",
    ),
)
"""OpenRouter: a router over many providers; comments, in-chunk errors and missing finish reasons."""

TOGETHER = Profile(
    name="together",
    reasoning_field="reasoning",
    max_tokens_field="max_tokens",
    finish_reasons={"eos": "end_turn", "error": "error"},
    decode_usage=quirks.top_level_cached_tokens,
    encode_usage=quirks.top_level_cached_tokens_encode,
    encode_body=quirks.empty_tool_calls_and_seed,
    wire=WireStyle(logprobs=True),
    reference=references.TOGETHER,
    notes=("non-streamed messages carry `tool_calls: []` and choices a `seed`; extra fields are ignored",),
)
"""Together AI: `reasoning`, `eos` finish reason, cache hits as top-level `usage.cached_tokens`."""

VLLM = Profile(
    name="vllm",
    reasoning_field="reasoning",  # vLLM >= 0.9 (`reasoning_content` before; both are read)
    tool_id_prefix="chatcmpl-tool-",
    finish_reasons={"abort": "error"},
    notes=(
        "errors may be flat `{object: error, message, type, code}` bodies; the message and status are read",
        "choices carry `stop_reason` (the matched stop string or token id), not mapped: the IR kind stays end_turn",
    ),
)
"""vLLM's OpenAI-compatible server: `reasoning` deltas (reasoning parser), `abort` finish reason."""

LLAMACPP = Profile(
    name="llamacpp",
    request_reasoning_field="reasoning_content",  # llama.cpp accepts earlier reasoning back (seen in the corpus)
    max_tokens_field="max_tokens",
    decode_chunk=quirks.timings_cache_n,
    decode_body=quirks.timings_cache_n,
    encode_chunk=chain(quirks.timings_cache_n_encode, quirks.role_content_null),
    encode_body=quirks.timings_cache_n_encode,
    own_fields=frozenset({"timings"}),
    reference=references.LLAMACPP,
    notes=("keys in non-standard order and `content: null` on the role chunk",),
)
"""llama.cpp server: `reasoning_content`, KV-cache reuse in `timings.cache_n`, reasoning sent back."""

LMSTUDIO = Profile(
    name="lmstudio",
    capabilities=DEFAULT_CAPABILITIES - {Capability.PROMPT_CACHE},  # no cached-token figure in usage
    max_tokens_field="max_tokens",
    notes=(
        "`reasoning_content` for reasoning models (with the separate-reasoning setting on)",
        "errors may be a flat `{error: message}` body",
    ),
)
"""LM Studio's local server: `reasoning_content`, flat error bodies."""

GPTOSS = Profile(
    name="gptoss",
    capabilities=DEFAULT_CAPABILITIES - {Capability.VISION},  # gpt-oss is a text-only model
    reasoning_field="reasoning",
    request_reasoning_field="reasoning",  # harmony needs the analysis of earlier tool-calling turns back
    notes=("the harmony `analysis` channel is streamed as `delta.reasoning` (Groq adds `channel`)",),
)
"""gpt-oss served OpenAI-compatibly (vLLM, Ollama, llama.cpp): `delta.reasoning`, sent back in requests."""

SYSTEM_FOLDED = "Request.system folded into the first user turn"
"""Reshape key of providers without a system role."""

GEMMA = Profile(
    name="gemma",
    # Gemma 3 has no tool-call format (Ollama answers "does not support tools") and no thinking mode.
    capabilities=DEFAULT_CAPABILITIES
    - {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.TOOL_CHOICE,
        Capability.THINKING,
        Capability.PROMPT_CACHE,
    },
    max_tokens_field="max_tokens",
    reasoning_effort=False,
    encode_request=quirks.system_in_first_user_turn,
    reference=references.GEMMA,
    reshapes={
        SYSTEM_FOLDED: "Gemma has no system role: the leading system prompt is folded into the first user turn "
        "(its text, a blank line, then the user's text), so the upstream request has no system prompt and its "
        "first user text starts with it; the request-side diff recognises exactly this fold (system_folded)",
    },
)
"""Gemma 3 served OpenAI-compatibly: no system role (folded into the first user turn), no tools."""

AZURE = Profile(
    name="azure",
    base_path="/openai/deployments",
    model_in_path=True,  # /openai/deployments/{deployment}/chat/completions: the deployment is the model
    query={"api-version": "2024-10-21"},
    auth="api-key",
    # A prompt the content filter blocks is a 400 the client must change, not retry: invalid_request.
    error_codes={"content_filter": ir.ErrorKind.INVALID_REQUEST},
    decode_chunk=quirks.prompt_filter_results_chunk,
    encode_preamble=quirks.prompt_filter_results_preamble,
    encode_chunk=quirks.content_filter_results,
    encode_body=quirks.content_filter_results_in_body,
    own_fields=frozenset({"prompt_filter_results"}),
    notes=("finish_reason `content_filter` when the output filter cuts the answer (an OpenAI value too)",),
)
"""Azure OpenAI: deployment URLs, `api-version`, `api-key` auth, content-filter annotations."""

CLOUDFLARE_OPENAI = Profile(
    name="cloudflare-openai",
    # https://api.cloudflare.com/client/v4/accounts/{account_id}/ai/v1/chat/completions: the account is part of
    # the base URL an OpenAI client is given; recording against the real API substitutes CLOUDFLARE_ACCOUNT_ID.
    base_path="/client/v4/accounts/" + "0" * 32 + "/ai/v1",
    capabilities=DEFAULT_CAPABILITIES - {Capability.RETRY_AFTER},
    max_tokens_field="max_tokens",
    notes=(
        "chunks carry a `p` padding field and `usage.neurons` (Cloudflare's billing unit); both are ignored",
        "some models send per-chunk usage increments; the common decoder keeps the last figures seen",
    ),
)
"""Cloudflare Workers AI's OpenAI-compatible route (the native route is the `cloudflare` codec)."""

PROFILES: tuple[Profile, ...] = (
    OPENAI,
    DEEPSEEK,
    GROQ,
    MISTRAL,
    XAI,
    OPENROUTER,
    TOGETHER,
    VLLM,
    LLAMACPP,
    LMSTUDIO,
    GPTOSS,
    GEMMA,
    AZURE,
    CLOUDFLARE_OPENAI,
)
"""Every profile registered as a codec at import."""
