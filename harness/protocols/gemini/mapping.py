"""Value mappings between Gemini and the IR: usageMetadata, finishReason, schema types, base64."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.gemini.enums import SCHEMA_TYPE, enum_name
from harness.protocols.gemini.fields import get, opt_int

# finishReason -> IR stop kind. STOP becomes tool_use when the response has function calls (see stop_reason).
FINISH_KINDS: dict[str, ir.StopKind] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
}

# IR stop kind -> finishReason when the IR value's `raw` is not itself a fitting Gemini value.
# Gemini has no separate value for a matched stop sequence (it reports STOP) and none for a refusal.
KIND_FINISH: dict[str, str] = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
    "error": "MALFORMED_FUNCTION_CALL",
    "other": "OTHER",
}

# A stream must end with a finishReason; a Done without a stop reason is sent as this (decodes to `other`).
UNSPECIFIED_FINISH = "FINISH_REASON_UNSPECIFIED"

# promptFeedback.blockReason values (prompt rejected, no candidates).
BLOCK_KINDS: dict[str, ir.StopKind] = {
    "SAFETY": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}


def stop_reason(finish: str, *, has_tool_calls: bool) -> ir.StopReason:
    """The IR stop reason of a candidate's finishReason."""
    kind = FINISH_KINDS.get(finish, "other")
    if kind == "end_turn" and has_tool_calls:
        kind = "tool_use"
    return ir.StopReason(kind=kind, raw=finish)


def block_stop_reason(block: str) -> ir.StopReason:
    """The IR stop reason of a prompt blocked before generation (promptFeedback.blockReason)."""
    return ir.StopReason(kind=BLOCK_KINDS.get(block, "other"), raw=block)


def finish_reason(stop: ir.StopReason | None) -> str:
    """The finishReason for an IR stop reason; keeps `raw` when it is a Gemini value meaning the same kind."""
    if stop is None:
        return UNSPECIFIED_FINISH
    raw = stop.raw
    if raw is not None and raw.isupper():
        kind = FINISH_KINDS.get(raw, "other")
        if kind == stop.kind or (raw == "STOP" and stop.kind in ("tool_use", "stop_sequence")):
            return raw
    return KIND_FINISH[stop.kind]


def usage_from(meta: dict[str, Any]) -> ir.Usage:
    """IR usage from usageMetadata: output = candidates + thoughts; promptTokenCount already counts the cache."""
    prompt = opt_int(get(meta, "promptTokenCount"), "usageMetadata.promptTokenCount")
    cached = opt_int(get(meta, "cachedContentTokenCount"), "usageMetadata.cachedContentTokenCount")
    candidates = opt_int(get(meta, "candidatesTokenCount"), "usageMetadata.candidatesTokenCount")
    thoughts = opt_int(get(meta, "thoughtsTokenCount"), "usageMetadata.thoughtsTokenCount")
    # Gemini leaves candidatesTokenCount out while only thoughts were produced: absent then means zero.
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return ir.Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=cached, reasoning_tokens=thoughts)


def usage_metadata(usage: ir.Usage | None) -> dict[str, Any] | None:
    """usageMetadata for IR usage (None when nothing is known): candidates = output - reasoning."""
    if usage is None:
        return None
    out: dict[str, Any] = {}
    if usage.input_tokens is not None:
        out["promptTokenCount"] = usage.input_tokens
    if usage.output_tokens is not None:
        candidates = max(usage.output_tokens - (usage.reasoning_tokens or 0), 0)
        # While only thoughts were produced Gemini leaves the candidates count out (proto3 omits zeros).
        if candidates or not usage.reasoning_tokens:
            out["candidatesTokenCount"] = candidates
    if usage.cache_read_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    if not out and usage.reasoning_tokens is None:
        return None
    parts = (usage.input_tokens, usage.output_tokens)
    out["totalTokenCount"] = sum(n or 0 for n in parts)
    if usage.input_tokens is not None:
        # Every count of the prompt is text here: the IR does not count tokens per modality.
        out["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage.input_tokens}]
    if usage.cache_read_tokens:
        out["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage.cache_read_tokens}]
    if usage.reasoning_tokens is not None:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    return out


_OPENAPI_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})


def json_schema_from_openapi(schema: Any) -> Any:
    """A Gemini OpenAPI-subset schema (`parameters`, `responseSchema`) with its upper-case `type` names
    (`OBJECT`, `STRING`, as google-genai sends them) lower-cased into JSON Schema; everything else verbatim."""
    if isinstance(schema, list):
        return [json_schema_from_openapi(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            # A gapic client (enum-encoding=int) sends the type as its proto number.
            value = (
                [enum_name(SCHEMA_TYPE, v) for v in value] if isinstance(value, list) else enum_name(SCHEMA_TYPE, value)
            )
        if key == "type" and isinstance(value, str) and value in _OPENAPI_TYPES:
            out[key] = value.lower()
        elif key == "type" and isinstance(value, list) and all(v in _OPENAPI_TYPES for v in value):
            out[key] = [v.lower() for v in value]
        elif key == "properties" and isinstance(value, dict):
            # Property names are data, never schema keywords: recurse into each property's schema only.
            out[key] = {name: json_schema_from_openapi(prop) for name, prop in value.items()}
        else:
            out[key] = json_schema_from_openapi(value)
    return out


_URLSAFE = str.maketrans("-_", "+/")


def standard_base64(data: str) -> str:
    """Standard base64 for bytes google-genai sends base64url-encoded (`inlineData.data`); other protocols need
    the standard alphabet, and Gemini accepts both."""
    return data.translate(_URLSAFE)
