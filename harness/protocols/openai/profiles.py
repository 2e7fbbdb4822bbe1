"""Provider profiles: OpenAI itself and the OpenAI-compatible providers, each a short declaration.

Adding a provider: declare a `Profile` here (its quirks as settings and hooks from `quirks.py`), add it to
`PROFILES`, and test it on its corpus files. See ARCHITECTURE.md, "Adding an OpenAI-compatible provider".
"""

from __future__ import annotations

from harness import ir
from harness.protocols.openai import quirks
from harness.protocols.openai.profile import Profile

OPENAI = Profile(name="openai")
"""OpenAI Chat Completions itself: every default."""

DEEPSEEK = Profile(
    name="deepseek",
    base_path="",  # https://api.deepseek.com/chat/completions (the /v1 alias also works)
    max_tokens_field="max_tokens",
    # reasoning_content deltas come with `content: null`; the common decoder reads both.
    finish_reasons={"insufficient_system_resource": "error"},
    decode_usage=quirks.deepseek_cache_usage,
    encode_usage=quirks.deepseek_encode_usage,
)
"""DeepSeek: `reasoning_content`, cache figures in `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`."""

GROQ = Profile(
    name="groq",
    base_path="/openai/v1",
    reasoning_field="reasoning",  # gpt-oss / qwen reasoning arrives as delta.reasoning (with `channel`)
    error_codes={"tool_use_failed": ir.ErrorKind.INVALID_REQUEST},
    stream_error_events=frozenset({"error"}),  # `event: error` inside a 200 stream, then no [DONE]
    decode_chunk=quirks.x_groq_usage,
)
"""Groq: usage also (or only) in `x_groq.usage`; failed tool calls end the stream with `event: error`."""

PROFILES: tuple[Profile, ...] = (OPENAI, DEEPSEEK, GROQ)
"""Every profile registered as a codec at import."""
