"""Small Anthropic <-> IR mappings every direction shares: constants, usage, stop reasons, safe JSON loading."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.jsonread import Reader

NAME = "anthropic"
"""Registry name of the codec and key of `Request.provider_fields`."""

READ = Reader(NAME)
"""Typed reads of Anthropic JSON (a wrong type is a one-line `DecodeError`)."""

ANTHROPIC_VERSION = "2023-06-01"
"""The `anthropic-version` header the encoder sends (the only stable version of the Messages API)."""

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` is required on the wire; sent when the IR has none (listed in the codec's losses)."""

MISSING_MESSAGE_ID = "msg_unknown"
"""`id` is required in a message; sent when the IR has none (listed in the codec's losses)."""

_STOP_KINDS: dict[str, ir.StopKind] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "refusal": "refusal",
    "pause_turn": "other",
    # Generation stopped because the context window filled up: a length limit, like max_tokens.
    "model_context_window_exceeded": "max_tokens",
}

# IR kind -> wire stop_reason. content_filter is closest to Anthropic's `refusal` (a classifier stepped in);
# `error` and `other` have no wire value that would not make a client act (pause_turn asks it to resend),
# so they are sent as a plain end_turn.
_WIRE_STOPS: dict[str, str] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "refusal": "refusal",
    "content_filter": "refusal",
    "error": "end_turn",
    "other": "end_turn",
}


def load_json(data: bytes | str, *, offset: int = 0, what: str = "body") -> Any:
    """Parse JSON, raising only `DecodeError` (also for nesting too deep or integers too long to convert)."""
    return common.load_json(NAME, data, offset=offset, what=what)


def load_object(data: bytes | str, *, offset: int = 0, what: str = "body") -> dict[str, Any]:
    """Parse a JSON object, raising only `DecodeError`."""
    return common.load_object(NAME, data, offset=offset, what=what)


def dumps(value: Any) -> str:
    """Compact JSON text as the API sends it."""
    return common.dump_text(value)


def stop_reason_from_wire(stop_reason: Any, stop_sequence: Any) -> ir.StopReason | None:
    """The IR stop reason of a wire `stop_reason` / `stop_sequence` pair (None when the wire says null)."""
    if stop_reason is None:
        return None
    READ.as_str(stop_reason, "stop_reason")
    kind = _STOP_KINDS.get(stop_reason, "other")
    sequence = stop_sequence if kind == "stop_sequence" and isinstance(stop_sequence, str) else None
    return ir.StopReason(kind=kind, raw=stop_reason, sequence=sequence)


def stop_reason_to_wire(stop: ir.StopReason | None) -> tuple[str | None, str | None]:
    """The wire `stop_reason` and `stop_sequence` for an IR stop reason."""
    if stop is None:
        return None, None
    wire = _WIRE_STOPS[stop.kind]
    return wire, stop.sequence if wire == "stop_sequence" else None


def usage_from_wire(usage: Any) -> ir.Usage:
    """IR usage from a wire usage object: IR input_tokens = input + cache_read + cache_creation."""
    usage = READ.as_obj(usage, "usage")
    fresh = READ.get_count(usage, "input_tokens", "usage")
    cache_read = READ.get_count(usage, "cache_read_input_tokens", "usage")
    cache_write = READ.get_count(usage, "cache_creation_input_tokens", "usage")
    details = usage.get("output_tokens_details")  # anything but an object is ignored
    reasoning = READ.get_count(details, "thinking_tokens", "usage") if isinstance(details, Mapping) else None
    total_input = None if fresh is None else fresh + (cache_read or 0) + (cache_write or 0)
    return ir.Usage(
        input_tokens=total_input,
        output_tokens=READ.get_count(usage, "output_tokens", "usage"),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )


def usage_to_wire(usage: ir.Usage | None, *, required: bool) -> dict[str, Any]:
    """Wire usage for IR usage (cached tokens taken back out of input_tokens), with the keys the real API sends.

    `required=True` (a message's usage, also in message_start) sends every count, 0 when unknown: input_tokens,
    cache_creation_input_tokens, cache_read_input_tokens, the cache_creation breakdown and output_tokens.
    Otherwise (message_delta's cumulative usage) input and both cache counts go when the input is known, a cache
    count alone when it is known, so message_start's values stand for the rest; output_tokens always.
    """
    usage = usage or ir.Usage()
    cached = (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
    out: dict[str, Any] = {}
    known = usage.input_tokens is not None or required
    if known:
        # The wire cannot say "fewer input tokens than were cached": clamp (listed in losses).
        out["input_tokens"] = max((usage.input_tokens or 0) - cached, 0)
    if known or usage.cache_write_tokens is not None:
        out["cache_creation_input_tokens"] = usage.cache_write_tokens or 0
    if known or usage.cache_read_tokens is not None:
        out["cache_read_input_tokens"] = usage.cache_read_tokens or 0
    if required:
        # Every cache write is a 5-minute one: the IR has no cache lifetime.
        out["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_write_tokens or 0,
            "ephemeral_1h_input_tokens": 0,
        }
    # output_tokens is required in both message usage and message_delta usage.
    out["output_tokens"] = usage.output_tokens or 0
    if usage.reasoning_tokens is not None:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return out


def estimate_input_tokens(request: ir.Request | None) -> int | None:
    """An estimate of a request's input tokens, for a message_start that must report them before an upstream
    that cannot know them yet has said (one token per four characters of the request's text, at least 1);
    None without a request."""
    if request is None:
        return None
    return common.estimate_tokens(request)


def merge_wire_usage(base: dict[str, Any], newer: Any) -> dict[str, Any]:
    """Cumulative wire usage: message_delta figures replace message_start ones key by key (null keeps)."""
    newer = READ.as_obj(newer, "usage")
    merged = dict(base)
    merged.update({k: v for k, v in newer.items() if v is not None})
    return merged
