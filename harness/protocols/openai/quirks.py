"""Reusable hook functions for OpenAI-compatible providers' quirks, each named after what it repairs.

A hook receives untrusted JSON: it only rewrites what it recognizes and leaves everything else in place for
the common decoder, which reports wrong types as `DecodeError`. Encoding hooks get the codec's own output.
Profiles in `profiles.py` pick these up; the first docstring line of each is what the profile table shows.
"""

from __future__ import annotations

import hashlib
import re
import string
from typing import Any

from harness import ir
from harness.protocols.openai.profile import REASONING_SIGNATURE, JSONDict


def _count(value: Any) -> int | None:
    """A token count, or None for anything that is not a plain integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _details(usage: JSONDict, key: str) -> JSONDict | None:
    """A copy of a `*_details` object ({} when absent); None when it has the wrong type, which the hooks leave
    for the common decoder to report rather than paper over."""
    value = usage.get(key)
    if value is None:
        return {}
    return dict(value) if isinstance(value, dict) else None


# --- usage ---------------------------------------------------------------------------------------------------


def x_groq_usage(chunk: JSONDict) -> JSONDict:
    """Groq: usage may come only inside `x_groq.usage`; lift it to the top-level `usage` OpenAI uses."""
    x_groq = chunk.get("x_groq")
    if chunk.get("usage") is None and isinstance(x_groq, dict) and isinstance(x_groq.get("usage"), dict):
        return {**chunk, "usage": x_groq["usage"]}
    return chunk


def deepseek_cache_usage(usage: JSONDict) -> JSONDict:
    """DeepSeek: cache hits are `prompt_cache_hit_tokens` (prompt_tokens = hits + misses), not
    `prompt_tokens_details.cached_tokens`; the documented DeepSeek field wins."""
    hit = _count(usage.get("prompt_cache_hit_tokens"))
    details = _details(usage, "prompt_tokens_details")
    if hit is None or details is None:
        return usage
    return {**usage, "prompt_tokens_details": {**details, "cached_tokens": hit}}


def deepseek_encode_usage(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """DeepSeek: report cache hits and misses the way DeepSeek does (when the hits are known at all)."""
    if value.cache_read_tokens is None:
        return usage
    hit = value.cache_read_tokens
    return {
        **usage,
        "prompt_cache_hit_tokens": hit,
        "prompt_cache_miss_tokens": max((value.input_tokens or 0) - hit, 0),
    }


def reasoning_outside_completion_tokens(usage: JSONDict) -> JSONDict:
    """xAI: `completion_tokens` leaves out `completion_tokens_details.reasoning_tokens` (only `total_tokens`
    counts both); add them, since IR output tokens include reasoning."""
    completion = _count(usage.get("completion_tokens"))
    details = _details(usage, "completion_tokens_details")
    reasoning = None if details is None else _count(details.get("reasoning_tokens"))
    if completion is None or reasoning is None:
        return usage
    return {**usage, "completion_tokens": completion + reasoning}


def reasoning_outside_completion_tokens_encode(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """xAI: send `completion_tokens` without the reasoning tokens, as xAI does (`total_tokens` keeps them)."""
    completion = _count(usage.get("completion_tokens"))
    if value.reasoning_tokens is None or completion is None:
        return usage
    return {**usage, "completion_tokens": max(completion - value.reasoning_tokens, 0)}


def top_level_cached_tokens(usage: JSONDict) -> JSONDict:
    """Together: cache hits are a top-level `usage.cached_tokens`, not `prompt_tokens_details.cached_tokens`."""
    cached = _count(usage.get("cached_tokens"))
    details = _details(usage, "prompt_tokens_details")
    if cached is None or details is None or "cached_tokens" in details:
        return usage
    return {**usage, "prompt_tokens_details": {**details, "cached_tokens": cached}}


def top_level_cached_tokens_encode(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """Together: report cache hits as the top-level `usage.cached_tokens` Together sends (and nothing else)."""
    if value.cache_read_tokens is None:
        return usage
    out = {k: v for k, v in usage.items() if k != "prompt_tokens_details"}
    return {**out, "cached_tokens": value.cache_read_tokens}


def timings_cache_n(obj: JSONDict) -> JSONDict:
    """llama.cpp: prompt tokens reused from the KV cache are `timings.cache_n` beside `usage` (in the usage
    chunk or the body); report them as `prompt_tokens_details.cached_tokens`."""
    timings, usage = obj.get("timings"), obj.get("usage")
    if not isinstance(timings, dict) or not isinstance(usage, dict):
        return obj
    cache_n = _count(timings.get("cache_n"))
    details = _details(usage, "prompt_tokens_details")
    if cache_n is None or details is None or "cached_tokens" in details:
        return obj
    return {**obj, "usage": {**usage, "prompt_tokens_details": {**details, "cached_tokens": cache_n}}}


def timings_cache_n_encode(obj: JSONDict) -> JSONDict:
    """llama.cpp: add the `timings` object (`cache_n`, `prompt_n`, `predicted_n` and the timing figures) beside a
    known usage, whose cache figure moves there; without a known cache figure `cache_n` is left out rather than
    claimed as 0."""
    usage = obj.get("usage")
    if not isinstance(usage, dict):
        return obj
    prompt = _count(usage.get("prompt_tokens")) or 0
    predicted = _count(usage.get("completion_tokens")) or 0
    cached = _count((_details(usage, "prompt_tokens_details") or {}).get("cached_tokens"))
    timings: JSONDict = {} if cached is None else {"cache_n": cached}
    fresh = max(prompt - (cached or 0), 0)
    # A plausible server: 2 ms per prompt token, 8 ms per generated token (llama.cpp reports both rates).
    prompt_ms, predicted_ms = 2.0 * fresh, 8.0 * predicted
    timings.update(
        prompt_n=fresh,
        prompt_ms=prompt_ms,
        prompt_per_token_ms=prompt_ms / fresh if fresh else 0.0,
        prompt_per_second=1000.0 * fresh / prompt_ms if prompt_ms else 0.0,
        predicted_n=predicted,
        predicted_ms=predicted_ms,
        predicted_per_token_ms=predicted_ms / predicted if predicted else 0.0,
        predicted_per_second=1000.0 * predicted / predicted_ms if predicted_ms else 0.0,
    )
    usage = {k: v for k, v in usage.items() if k != "prompt_tokens_details"}
    return {**obj, "usage": usage, "timings": timings}


def role_content_null(chunk: JSONDict) -> JSONDict:
    """llama.cpp: the role chunk says `content: null` (not `""`), whatever the answer starts with."""
    return _map_choices(chunk, "delta", _null_role_content)


def _null_role_content(delta: Any) -> Any:
    if isinstance(delta, dict) and delta.get("role") and delta.get("content") == "":
        return {**delta, "content": None}
    return delta


# --- what the provider adds to the wire (its reference backend) -----------------------------------------------


def openai_usage_details(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """OpenAI: `usage` always carries both detail objects with every figure (0 when there is none)."""
    prompt = {"cached_tokens": value.cache_read_tokens or 0, "audio_tokens": 0}
    completion = {
        "reasoning_tokens": value.reasoning_tokens or 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    }
    return {**usage, "prompt_tokens_details": prompt, "completion_tokens_details": completion}


def xai_usage_details(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """xAI: `completion_tokens` without the reasoning tokens (`reasoning_outside_completion_tokens_encode`), and
    both detail objects (prompt tokens split by modality), the sources searched and the cost in ticks."""
    usage = reasoning_outside_completion_tokens_encode(usage, value)
    prompt = {
        "text_tokens": value.input_tokens or 0,
        "audio_tokens": 0,
        "image_tokens": 0,
        "cached_tokens": value.cache_read_tokens or 0,
    }
    completion = {
        "reasoning_tokens": value.reasoning_tokens or 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    }
    ticks = 2000 * (value.input_tokens or 0) + 5000 * (value.output_tokens or 0)
    return {
        **usage,
        "prompt_tokens_details": prompt,
        "completion_tokens_details": completion,
        "num_sources_used": 0,
        "cost_in_usd_ticks": ticks,
    }


def groq_usage_times(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """Groq: `usage` also says how long the request queued and how long prompt and completion took (seconds)."""
    prompt_time = 0.0005 * (value.input_tokens or 0)
    completion_time = 0.002 * (value.output_tokens or 0)
    return {
        "queue_time": 0.05,
        **usage,
        "prompt_time": prompt_time,
        "completion_time": completion_time,
        "total_time": prompt_time + completion_time,
    }


def x_groq_on_usage(chunk: JSONDict) -> JSONDict:
    """Groq: the finish chunk repeats its usage inside `x_groq` (with the request id), and the usage-only chunk
    names the `service_tier`."""
    usage = chunk.get("usage")
    if not isinstance(usage, dict):
        return chunk
    if chunk.get("choices"):
        request_id = "req_" + hashlib.sha256(str(chunk.get("id")).encode()).hexdigest()[:26]
        return {**chunk, "x_groq": {"id": request_id, "usage": usage}}
    return {**chunk, "service_tier": "on_demand"}


def deepseek_both_fields(chunk: JSONDict) -> JSONDict:
    """DeepSeek: a delta with reasoning says `content: null`, and one with content `reasoning_content: null`."""
    return _map_choices(chunk, "delta", _both_fields)


def _both_fields(delta: Any) -> Any:
    if not isinstance(delta, dict):
        return delta
    if delta.get("role"):
        return {"role": delta["role"], "content": None, "reasoning_content": ""}
    if delta == {}:
        return {"content": "", "reasoning_content": None}
    if "reasoning_content" in delta and "content" not in delta:
        return {**delta, "content": None}
    if "content" in delta and "reasoning_content" not in delta and not delta.get("role"):
        return {**delta, "reasoning_content": None}
    return delta


def openrouter_usage_cost(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """OpenRouter: `usage` carries the cost in credits, whether the key was the user's own (`is_byok`), the
    upstream costs, and both detail objects."""
    return {
        **usage,
        "cost": 0,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": value.cache_read_tokens or 0, "audio_tokens": 0},
        "cost_details": {
            "upstream_inference_cost": None,
            "upstream_inference_prompt_cost": 0,
            "upstream_inference_completions_cost": 0,
        },
        "completion_tokens_details": {"reasoning_tokens": value.reasoning_tokens or 0, "image_tokens": 0},
    }


def native_finish_reason(chunk: JSONDict) -> JSONDict:
    """OpenRouter: every choice also carries the upstream provider's own `native_finish_reason`, and reasoning
    text comes twice: as `reasoning` and as typed `reasoning_details` entries."""
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return chunk
    return {**chunk, "choices": [_native(c) for c in choices]}


def _native(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return choice
    out = {**choice, "native_finish_reason": choice.get("finish_reason")}
    delta = choice.get("delta")
    if isinstance(delta, dict) and isinstance(delta.get("reasoning"), str):
        details = [{"type": "reasoning.text", "text": delta["reasoning"], "index": 0, "format": None}]
        out["delta"] = {**delta, "reasoning_details": details}
    return out


def empty_tool_calls_and_seed(body: JSONDict) -> JSONDict:
    """Together: a message without tool calls still carries `tool_calls: []`, and each choice its `seed`."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        return body
    seed = int(hashlib.sha256(str(body.get("id")).encode()).hexdigest()[:15], 16)
    return {**body, "choices": [_with_seed(c, seed) for c in choices]}


def _with_seed(choice: Any, seed: int) -> Any:
    if not isinstance(choice, dict):
        return choice
    message = choice.get("message")
    if isinstance(message, dict) and "tool_calls" not in message:
        message = {**message, "tool_calls": []}
    return {**choice, "message": message, "seed": seed}


def content_on_finish(chunk: JSONDict) -> JSONDict:
    """Mistral: the finish_reason chunk says `content: ""`."""
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return chunk
    return {**chunk, "choices": [_finish_content(c) for c in choices]}


def _finish_content(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("finish_reason") and choice.get("delta") == {}:
        return {**choice, "delta": {"content": ""}}
    return choice


# --- content arrays (Mistral) --------------------------------------------------------------------------------


def _split_typed_content(content: list[Any]) -> tuple[str, str] | None:
    """(thinking, text) of a Mistral content array, or None when it holds something unrecognized."""
    thinking: list[str] = []
    text: list[str] = []
    for item in content:
        if not isinstance(item, dict):
            return None
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            text.append(item["text"])
        elif item.get("type") == "thinking" and isinstance(item.get("thinking"), list):
            inner = _split_typed_content(item["thinking"])
            if inner is None:
                return None
            thinking += [inner[0], inner[1]]
        else:
            return None
    return "".join(thinking), "".join(text)


def _with_split_content(message: Any) -> Any:
    """A delta or message whose typed content array became `reasoning_content` and a `content` string."""
    content = message.get("content") if isinstance(message, dict) else None
    split = _split_typed_content(content) if isinstance(content, list) else None
    if split is None or not isinstance(message, dict):
        return message
    thinking, text = split
    out = {**message, "content": text}
    if thinking:
        out["reasoning_content"] = thinking
    return out


def _map_choices(obj: JSONDict, key: str, fn: Any) -> JSONDict:
    choices = obj.get("choices")
    if not isinstance(choices, list):
        return obj
    out = [{**c, key: fn(c.get(key))} if isinstance(c, dict) and key in c else c for c in choices]
    return {**obj, "choices": out}


def content_arrays(chunk: JSONDict) -> JSONDict:
    """Mistral: `delta.content` may be an array of typed chunks, `{"type": "thinking", "thinking": [{"type":
    "text", ...}]}` or `{"type": "text", ...}`; rewrite it as `reasoning_content` and a `content` string."""
    return _map_choices(chunk, "delta", _with_split_content)


def content_arrays_in_message(body: JSONDict) -> JSONDict:
    """Mistral: a non-streamed `message.content` may be the same array of thinking and text chunks."""
    return _map_choices(body, "message", _with_split_content)


def _thinking_as_array(message: Any) -> Any:
    """A delta or message whose `reasoning_content` became a thinking chunk leading a content array."""
    if not isinstance(message, dict) or not isinstance(message.get("reasoning_content"), str):
        return message
    out = {k: v for k, v in message.items() if k != "reasoning_content"}
    chunks: list[JSONDict] = [
        {"type": "thinking", "thinking": [{"type": "text", "text": message["reasoning_content"]}]}
    ]
    if isinstance(message.get("content"), str) and message["content"]:
        chunks.append({"type": "text", "text": message["content"]})
    out["content"] = chunks
    return out


def thinking_as_content_arrays(chunk: JSONDict) -> JSONDict:
    """Mistral: send thinking as the content array Magistral streams, not as a `reasoning_content` field."""
    return _map_choices(chunk, "delta", _thinking_as_array)


def thinking_as_content_arrays_in_message(body: JSONDict) -> JSONDict:
    """Mistral: a non-streamed message with thinking carries `[thinking chunk, text chunk]` as its content."""
    return _map_choices(body, "message", _thinking_as_array)


_NINE_ALNUM = re.compile(r"[a-zA-Z0-9]{9}")
_ALPHABET = string.ascii_letters + string.digits


def nine_alphanumerics(tool_id: str) -> str:
    """Mistral: tool-call ids must be exactly 9 characters of [a-zA-Z0-9]; any other id maps to a stable
    9-character digest (the same for the call and its result, so they still match)."""
    if _NINE_ALNUM.fullmatch(tool_id):
        return tool_id
    digest = hashlib.sha256(tool_id.encode("utf-8")).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:9])


# --- Azure content filtering ---------------------------------------------------------------------------------

_SAFE = {name: {"filtered": False, "severity": "safe"} for name in ("hate", "self_harm", "sexual", "violence")}


def prompt_filter_results_chunk(chunk: JSONDict) -> JSONDict:
    """Azure: a stream opens with a chunk holding only `prompt_filter_results` (empty `id`, `model` and
    `choices`); it says nothing of the answer, so it is dropped instead of starting the message."""
    filter_only = "prompt_filter_results" in chunk and chunk.get("choices") == [] and not chunk.get("id")
    if filter_only and chunk.get("usage") is None and chunk.get("error") is None:
        return {}
    return chunk


def prompt_filter_results_preamble() -> list[JSONDict]:
    """Azure: the prompt-annotation chunk Azure sends before the answer (every category `safe`)."""
    filters = [{"prompt_index": 0, "content_filter_results": _SAFE}]
    return [{"choices": [], "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": filters}]


def _annotated_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return choice
    delta = choice.get("delta") or choice.get("message") or {}
    has_text = isinstance(delta, dict) and bool(delta.get("content"))
    return {**choice, "content_filter_results": dict(_SAFE) if has_text else {}}


def content_filter_results(obj: JSONDict) -> JSONDict:
    """Azure: every choice carries its `content_filter_results` (all `safe`; `{}` on chunks with no text)."""
    choices = obj.get("choices")
    if not isinstance(choices, list):
        return obj
    return {**obj, "choices": [_annotated_choice(c) for c in choices]}


def content_filter_results_in_body(body: JSONDict) -> JSONDict:
    """Azure: a non-streamed body carries `prompt_filter_results` and per-choice `content_filter_results`."""
    return {
        **content_filter_results(body),
        "prompt_filter_results": prompt_filter_results_preamble()[0]["prompt_filter_results"],
    }


# --- system prompts (Gemma) ----------------------------------------------------------------------------------


def _prefixed(content: Any, system: str) -> Any:
    """User content with the system text in front, the way Gemma's chat template joins them."""
    if isinstance(content, str):
        return f"{system}\n\n{content}"
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                return [*content[:i], {**part, "text": f"{system}\n\n{part['text']}"}, *content[i + 1 :]]
        return [{"type": "text", "text": system}, *content]
    return system


def system_in_first_user_turn(body: JSONDict, request: ir.Request) -> JSONDict:
    """Gemma: no system role (its chat template folds it, Google's endpoint rejects it): the leading system
    message goes into the first user turn, before its text and a blank line, as Gemma's template does."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        return body
    if messages[0].get("role") not in ("system", "developer"):
        return body
    content = messages[0].get("content")
    if isinstance(content, list):
        content = "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    system, rest = str(content or ""), list(messages[1:])
    if rest and isinstance(rest[0], dict) and rest[0].get("role") == "user":
        rest[0] = {**rest[0], "content": _prefixed(rest[0].get("content"), system)}
    else:
        rest.insert(0, {"role": "user", "content": system})
    return {**body, "messages": rest}


def reasoning_details_signature(chunk: JSONDict) -> JSONDict:
    """OpenRouter: Anthropic's thinking signature arrives only in `delta.reasoning_details` (a `reasoning.text`
    entry with a `signature` and no text, after the thinking text); hand it to the decoder. An entry whose
    signature is empty is no signature: OpenRouter opens a block with `{"text": "", "signature": ""}` (seen in a
    real stream from claude-sonnet-4.5, December 2025). A `reasoning.encrypted` entry's `data` (OpenAI's encrypted
    reasoning, seen from openai/o3) is the signature too, as Responses' `encrypted_content` is."""
    return _map_choices(chunk, "delta", _with_signature)


def reasoning_details_signature_in_body(body: JSONDict) -> JSONDict:
    """OpenRouter: a non-streamed `message.reasoning_details` entry carries the signature beside its text."""
    return _map_choices(body, "message", _with_signature)


_SIGNED = {"reasoning.text": "signature", "reasoning.encrypted": "data"}
"""The `reasoning_details` entries that carry a signature, and its field."""


def _with_signature(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("reasoning_details"), list):
        return message
    found = [d.get(_SIGNED.get(str(d.get("type")), "")) for d in message["reasoning_details"] if isinstance(d, dict)]
    signatures = [s for s in found if isinstance(s, str) and s]
    return {**message, REASONING_SIGNATURE: signatures[-1]} if signatures else message
