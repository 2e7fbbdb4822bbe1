"""Reference facts of each OpenAI-compatible provider, for its reference backend: id
formats, the fields it adds to every chunk and body, its headers, and the shape differences from its real
wire that remain, each with its reason (measured in docs/shape.md). Values come from the corpus recordings;
everything random-looking is derived from a seed so a scenario always records the same bytes."""

from __future__ import annotations

import hashlib

from harness import ir
from harness.protocols.openai.profile import JSONDict, ReferenceFacts
from harness.protocols.reference import number, token

HEX = "0123456789abcdef"
LOWER = "0123456789abcdefghijklmnopqrstuvwxyz"


def _uuid(seed: str) -> str:
    h = token(seed, 32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:32]}"


def _fingerprint(request: ir.Request) -> str:
    """A model's `system_fingerprint`: stable per model, as the provider's backend configuration is."""
    return "fp_" + hashlib.sha256(request.model.encode()).hexdigest()[:10]


def _stream_cache_control(stream: bool, status: int, seed: str) -> dict[str, str]:
    return {"cache-control": "no-cache"} if stream else {}


# --- OpenAI ---------------------------------------------------------------------------------------------------


def _openai_extras(request: ir.Request, seed: str) -> JSONDict:
    return {"service_tier": "default", "system_fingerprint": _fingerprint(request)}


def _openai_headers(stream: bool, status: int, seed: str) -> dict[str, str]:
    return {
        "x-request-id": "req_" + token(seed + "/request", 32, HEX),
        "openai-processing-ms": str(number(seed + "/ms", 150, 1500)),
        "openai-version": "2020-10-01",
    }


OPENAI = ReferenceFacts(
    extras=_openai_extras,
    headers=_openai_headers,
    differences={
        "type both error error.param: null/string vs null": (
            "`param` names the request field an error is about; the IR error has no such field, so the "
            "reference sends null"
        ),
        "event real chunk:role+tool_call": (
            "until mid-2025 (gpt-4o-mini, May 2025 here) the role rode on the first tool-call chunk; today's API "
            "sends a role chunk of its own with `content: null`, as the reference does"
        ),
        "sequence both @0 chunk:role+tool_call > *": "the role on the first tool-call chunk: see above",
        "type both chunk:* system_fingerprint: null/string vs string": (
            "reasoning models (gpt-5-mini here) send a null `system_fingerprint`; the reference sends the "
            "fingerprint chat models send"
        ),
    },
)
"""OpenAI itself."""


# --- OpenAI-compatible providers -------------------------------------------------------------------------------


def _deepseek_extras(request: ir.Request, seed: str) -> JSONDict:
    return {"system_fingerprint": f"{_fingerprint(request)}_prod0820_fp8_kvcache"}


DEEPSEEK = ReferenceFacts(response_id=_uuid, extras=_deepseek_extras, headers=_stream_cache_control)
"""DeepSeek: uuid response ids, a build-suffixed fingerprint."""


def _groq_extras(request: ir.Request, seed: str) -> JSONDict:
    x_groq = {"id": "req_01" + token(seed + "/x_groq", 24, LOWER), "seed": number(seed + "/seed", 1, 2**31 - 1)}
    return {"system_fingerprint": _fingerprint(request), "x_groq": x_groq}


_HARMONY = (
    "Groq tags gpt-oss reasoning with the harmony `channel` (`analysis`); the IR does not carry channels and the "
    "reference, like Groq's other models, sends none"
)

GROQ = ReferenceFacts(
    response_id=lambda seed: f"chatcmpl-{_uuid(seed)}",
    extras=_groq_extras,
    headers=_stream_cache_control,
    differences={
        "path real chunk:reasoning choices[].delta.channel": _HARMONY,
        "path real event:error error.failed_generation": (
            "a failed tool call's error carries the text the model generated; the IR error has no such field"
        ),
    },
)
"""Groq: `chatcmpl-<uuid>` ids, `x_groq` request ids and seeds on the first chunk."""


def _fingerprint_only(request: ir.Request, seed: str) -> JSONDict:
    return {"system_fingerprint": _fingerprint(request)}


XAI = ReferenceFacts(
    response_id=_uuid,
    tool_id=lambda seed: f"call_{number(seed, 10_000_000, 99_999_999)}",
    extras=_fingerprint_only,
)
"""xAI: uuid response ids, `call_<8 digits>` tool ids."""


MISTRAL = ReferenceFacts(
    response_id=lambda seed: token(seed, 32, HEX),
    differences={
        "event real chunk:empty": (
            'Magistral opens its answer with an empty `content: ""` chunk before the thinking arrays; the '
            "IR never carries an empty delta"
        ),
        "sequence both @1 chunk:role > chunk:empty > *": "the empty content chunk: see above",
    },
)
"""Mistral: 32-hex response ids."""


def _openrouter_id(seed: str) -> str:
    return f"gen-{number(seed, 1_700_000_000, 1_799_999_999)}-{token(seed, 20)}"


def _openrouter_extras(request: ir.Request, seed: str) -> JSONDict:
    return {"provider": "OpenAI"}


def _openrouter_error(body: JSONDict, error: ir.IRError) -> JSONDict:
    """OpenRouter relays the upstream provider's error: its name and own text go in `error.metadata`."""
    inner = body.get("error")
    if isinstance(inner, dict):
        inner = {**inner, "metadata": {"provider_name": "OpenAI", "raw": error.message}}
        return {**body, "error": inner}
    return body


_RELAY = (
    "OpenRouter relays each upstream provider's chunks as they come: this recording (MiniMax through OpenRouter) "
    "repeats finish chunks and sends its error inside a chunk that also repeats the role; the reference sends "
    "OpenRouter's own layout once"
)

OPENROUTER = ReferenceFacts(
    response_id=_openrouter_id,
    extras=_openrouter_extras,
    headers=_stream_cache_control,
    error_body=_openrouter_error,
    differences={
        "path ours chunk:role+usage usage.*": (
            "OpenRouter passes on the usage details its upstream reports (all of them from MiniMax, fewer from "
            "Novita here); the reference sends the fullest set"
        ),
        "event real chunk:role+reasoning+finish": _RELAY,
        "event real chunk:role+finish": _RELAY,
        "sequence both @0 chunk:role+reasoning > *": _RELAY,
        "path real chunk:role*system_fingerprint": (
            "OpenRouter passes on the upstream provider's `system_fingerprint` (an empty one from Novita here) "
            "or none (MiniMax); the reference, with no upstream behind it, sends none"
        ),
        "path real error user_id": (
            "OpenRouter's error bodies name the account (`user_id`), which the recorder scrubs; the reference "
            "has no account"
        ),
    },
)
"""OpenRouter: `gen-...` ids, the upstream `provider` on every chunk."""


def _together_extras(request: ir.Request, seed: str) -> JSONDict:
    return {"prompt": []}


TOGETHER = ReferenceFacts(
    response_id=lambda seed: f"{token(seed, 7)}-{token(seed + '/2', 6)}-{token(seed + '/3', 16, HEX)}",
    extras=_together_extras,
    headers=lambda stream, status, seed: {"x-request-id": token(seed + "/request", 32)},
    differences={
        "header real retry-after": (
            "Together answers a 200 with `retry-after` as a rate-limit hint; a scripted reply has no rate-limit "
            "state (error scenarios script it)"
        ),
    },
)
"""Together AI: its own id form, an empty `prompt` list on bodies."""


LLAMACPP = ReferenceFacts(
    response_id=lambda seed: f"chatcmpl-{token(seed, 32)}",
    extras=lambda request, seed: {"system_fingerprint": "b7010-c27efd2bd"},
)
"""llama.cpp server: `chatcmpl-<32>` ids, the server build as fingerprint."""


GEMMA = ReferenceFacts(
    response_id=lambda seed: f"chatcmpl-{number(seed, 1, 999)}",
    extras=lambda request, seed: {"system_fingerprint": "fp_ollama"},
)
"""Gemma as Ollama serves it OpenAI-compatibly (`/v1/chat/completions`): numbered ids, `fp_ollama`."""
