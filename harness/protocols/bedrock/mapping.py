"""Small Bedrock Converse <-> IR mappings every direction shares: JSON reading with typed errors, usage, stop
reasons, image formats, the compact sorted JSON Bedrock sends.

Converse counts `inputTokens` apart from cache reads and writes (`totalTokens` = input + output + both cache
figures, as every real recording shows), while IR `input_tokens` includes them: decoding adds them up, encoding
subtracts them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.base import DecodeError
from harness.protocols.jsonread import Reader

NAME = "bedrock"
"""Registry name of the codec and key of `Request.provider_fields`."""

READ = Reader(NAME)
"""Typed reads of Bedrock JSON (a wrong type is a one-line `DecodeError`)."""

STOP_KINDS: dict[str, ir.StopKind] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
    # Generation stopped because the context window filled up: a length limit, like max_tokens.
    "model_context_window_exceeded": "max_tokens",
}
"""Wire `stopReason` -> IR kind (unknown values decode as `other`)."""

WIRE_STOPS: dict[str, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "content_filtered",
    "refusal": "content_filtered",
    "error": "malformed_model_output",
    "other": "end_turn",
}
"""IR kind -> wire `stopReason` (refusal and other have no value of their own: see the codec's losses)."""


def fail(message: str, offset: int | None = None) -> DecodeError:
    """A `DecodeError` of this protocol."""
    return DecodeError(NAME, message, offset=offset)


def load_object(data: bytes | str, *, offset: int = 0, what: str = "body") -> dict[str, Any]:
    """Parse a JSON object, raising only `DecodeError` (also for nesting too deep or integers too long)."""
    return common.load_object(NAME, data, offset=offset, what=what)


def dumps(value: Any) -> bytes:
    """Compact JSON with sorted keys, as Bedrock writes its bodies and events (UTF-8, not ASCII-escaped)."""
    return common.dump_sorted(value)


def stop_from_wire(value: Any) -> ir.StopReason:
    """The IR stop reason of a wire `stopReason` string."""
    READ.as_str(value, "stopReason")
    return ir.StopReason(kind=STOP_KINDS.get(value, "other"), raw=value)


def stop_to_wire(stop: ir.StopReason | None) -> str:
    """The wire `stopReason` of an IR stop reason (required on the wire: none is sent as end_turn)."""
    return "end_turn" if stop is None else WIRE_STOPS[stop.kind]


def _count(usage: Mapping[str, Any], key: str) -> int | None:
    return READ.get_count(usage, key, "usage")


def usage_from_wire(usage: Any) -> ir.Usage:
    """IR usage from a wire `usage`: IR input_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens."""
    usage = READ.as_obj(usage, "usage")
    fresh = _count(usage, "inputTokens")
    read = _count(usage, "cacheReadInputTokens")
    write = _count(usage, "cacheWriteInputTokens")
    total_input = None if fresh is None else fresh + (read or 0) + (write or 0)
    return ir.Usage(
        input_tokens=total_input,
        output_tokens=_count(usage, "outputTokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def usage_to_wire(usage: ir.Usage | None) -> dict[str, int]:
    """A wire `usage` (inputTokens, outputTokens, totalTokens required; missing figures sent as 0)."""
    usage = usage or ir.Usage()
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    fresh = max((usage.input_tokens or 0) - (read or 0) - (write or 0), 0)
    output = usage.output_tokens or 0
    out = {"inputTokens": fresh, "outputTokens": output, "totalTokens": fresh + output + (read or 0) + (write or 0)}
    if read is not None:
        out["cacheReadInputTokens"] = read
    if write is not None:
        out["cacheWriteInputTokens"] = write
    return out


def media_type(image_format: Any, where: str) -> str:
    """The MIME type of a wire image `format` (`png` -> `image/png`)."""
    if not isinstance(image_format, str) or not image_format:
        raise fail(f"{where}.format is {image_format!r}, expected png, jpeg, gif or webp")
    return f"image/{image_format}"


def image_format(media: str) -> str:
    """The wire image `format` of a MIME type (`image/jpeg` -> `jpeg`; `image/jpg` is read as jpeg)."""
    fmt = media.removeprefix("image/").lower()
    return "jpeg" if fmt == "jpg" else fmt
