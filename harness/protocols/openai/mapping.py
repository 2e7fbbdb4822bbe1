"""Value mappings shared by the response, stream and error modules: finish_reason, usage, content arrays."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.jsonread import Reader
from harness.protocols.openai.profile import JSONDict, Profile

# OpenAI's finish_reason values. `function_call` is the legacy functions API's name for tool_calls.
FINISH_REASONS: dict[str, ir.StopKind] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


def legacy_call(value: Any) -> bool:
    """Whether a message's (or delta's) `function_call` is a call of the legacy functions API: one that names a
    function. Snowflake Cortex's compatible endpoint puts an empty `{"name": "", "arguments": ""}` on every message
    (pydantic-ai's recordings), which is no call."""
    if not isinstance(value, dict):
        return value is not None
    return any(v not in (None, "") for v in value.values())


# IR stop kind -> finish_reason. OpenAI has no wire value for a matched stop sequence, a refusal, an error or
# "other": they all travel as "stop" (listed in the codec's losses under StopReason.kind).
STOP_KIND_FINISH: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "refusal": "stop",
    "error": "stop",
    "other": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "content_filter": "content_filter",
}


def reasoning_effort(thinking: ir.ThinkingConfig) -> str:
    """The `reasoning_effort` level that carries IR thinking settings: `none` when disabled; else by budget
    (up to 2048 tokens low, up to 8192 medium, more high; no budget: medium, OpenAI's default)."""
    if not thinking.enabled:
        return "none"
    budget = thinking.budget_tokens
    if budget is None:
        return "medium"
    return "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"


def stop_reason(profile: Profile, raw: str | None, *, refused: bool = False) -> ir.StopReason | None:
    """The IR stop reason of a finish_reason (None stays None); a refusal message turns `stop` into refusal."""
    if raw is None:
        return None
    kind = profile.finish_reasons.get(raw) or FINISH_REASONS.get(raw, "other")
    if refused and kind == "end_turn":
        kind = "refusal"
    return ir.StopReason(kind=kind, raw=raw)


def finish_reason(stop: ir.StopReason | None) -> str | None:
    """The finish_reason that carries an IR stop reason."""
    return None if stop is None else STOP_KIND_FINISH[stop.kind]


def decode_usage(profile: Profile, reader: Reader, value: Any, path: str = "usage") -> ir.Usage | None:
    """IR usage from an OpenAI `usage` object (null/absent -> None). prompt_tokens already include cached
    tokens and completion_tokens include reasoning tokens, which is the IR convention."""
    raw = reader.opt_obj(value, path)
    if raw is None:
        return None
    usage = reader.obj(profile.decode_usage(raw), path)
    prompt = reader.opt_obj(usage.get("prompt_tokens_details"), f"{path}.prompt_tokens_details") or {}
    completion = reader.opt_obj(usage.get("completion_tokens_details"), f"{path}.completion_tokens_details") or {}
    return ir.Usage(
        input_tokens=reader.opt_int(usage.get("prompt_tokens"), f"{path}.prompt_tokens"),
        output_tokens=reader.opt_int(usage.get("completion_tokens"), f"{path}.completion_tokens"),
        cache_read_tokens=reader.opt_int(prompt.get("cached_tokens"), f"{path}.prompt_tokens_details.cached_tokens"),
        reasoning_tokens=reader.opt_int(
            completion.get("reasoning_tokens"), f"{path}.completion_tokens_details.reasoning_tokens"
        ),
    )


def encode_usage(profile: Profile, usage: ir.Usage) -> JSONDict:
    """An OpenAI `usage` object. The three totals are required by OpenAI's schema, so an unknown figure is sent
    as 0 (a listed loss); the details appear only when the figure is known."""
    prompt = usage.input_tokens or 0
    completion = usage.output_tokens or 0
    out: JSONDict = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if usage.cache_read_tokens is not None:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    if usage.reasoning_tokens is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return profile.encode_usage(out, usage)


def first_reasoning(profile: Profile, reader: Reader, source: JSONDict, path: str) -> str | None:
    """Thinking text from the first reasoning field the profile reads that holds a non-empty string."""
    for name in profile.reasoning_fields_read:
        text = reader.opt_str(source.get(name), f"{path}.{name}")
        if text:
            return text
    return None


def text_of_parts(reader: Reader, parts: list[Any], path: str, *, allowed: tuple[str, ...] = ("text",)) -> str:
    """The joined text of an array of typed text parts (`[{"type": "text", "text": ...}]`)."""
    texts: list[str] = []
    for i, part in enumerate(parts):
        item = reader.obj(part, f"{path}[{i}]")
        kind = reader.opt_str(item.get("type"), f"{path}[{i}].type")
        if kind not in allowed:
            reader.fail(f"{path}[{i}].type", f"unsupported part type {kind!r}")
        texts.append(reader.str_(item.get(kind), f"{path}[{i}].{kind}"))
    return "".join(texts)


def content_text(reader: Reader, value: Any, path: str) -> str:
    """Message or delta `content`: a string, null, or an array of text/refusal parts, as one string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return text_of_parts(reader, reader.lst(value, path), path, allowed=("text", "refusal"))
