"""Reusable hook functions for OpenAI-compatible providers' quirks, each named after what it repairs.

A hook receives untrusted JSON: it only rewrites what it recognizes and leaves everything else in place for
the common decoder, which reports wrong types as `DecodeError`. Profiles in `profiles.py` pick these up.
"""

from __future__ import annotations

import hashlib
import re
import string
from typing import Any

from harness import ir
from harness.protocols.openai.profile import JSONDict


def x_groq_usage(chunk: JSONDict) -> JSONDict:
    """Groq: usage may come only inside `x_groq.usage`; lift it to the top-level `usage` OpenAI uses."""
    x_groq = chunk.get("x_groq")
    if chunk.get("usage") is None and isinstance(x_groq, dict) and isinstance(x_groq.get("usage"), dict):
        return {**chunk, "usage": x_groq["usage"]}
    return chunk


def deepseek_cache_usage(usage: JSONDict) -> JSONDict:
    """DeepSeek: cache hits are `prompt_cache_hit_tokens` (prompt_tokens = hits + misses), not
    `prompt_tokens_details.cached_tokens`; the documented DeepSeek field wins."""
    hit = usage.get("prompt_cache_hit_tokens")
    if not isinstance(hit, int) or isinstance(hit, bool):
        return usage
    details = usage.get("prompt_tokens_details")
    details = dict(details) if isinstance(details, dict) else {}
    details["cached_tokens"] = hit
    return {**usage, "prompt_tokens_details": details}


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


def content_arrays(chunk: JSONDict) -> JSONDict:
    """Mistral: `delta.content` may be an array of typed chunks, `{"type": "thinking", "thinking": [{"type":
    "text", ...}]}` or `{"type": "text", ...}`; rewrite it as `reasoning_content` and a `content` string."""
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return chunk
    out: list[Any] = []
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        split = _split_typed_content(content) if isinstance(content, list) else None
        if split is None or not isinstance(delta, dict):
            out.append(choice)
            continue
        thinking, text = split
        new_delta = {**delta, "content": text}
        if thinking:
            new_delta["reasoning_content"] = thinking
        out.append({**choice, "delta": new_delta})
    return {**chunk, "choices": out}


_NINE_ALNUM = re.compile(r"[a-zA-Z0-9]{9}")
_ALPHABET = string.ascii_letters + string.digits


def nine_alphanumerics(tool_id: str) -> str:
    """Mistral: tool-call ids must be exactly 9 characters of [a-zA-Z0-9]; any other id maps to a stable
    9-character digest (the same for the call and its result, so they still match)."""
    if _NINE_ALNUM.fullmatch(tool_id):
        return tool_id
    digest = hashlib.sha256(tool_id.encode("utf-8")).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:9])
