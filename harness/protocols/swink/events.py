"""The pieces of swink's stream events both directions share: stop reasons, usage, error kinds.

Written from `StopReason`, `Usage` (`src/types/mod.rs`) and `StreamErrorKind` (`src/stream_error_kind.rs`).
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.jsonread import Reader

PROTOCOL = "swink"
"""Registry name, also the key of `Request.provider_fields` this codec owns."""

STREAM_PATH = "/v1/stream"
"""The one route of swink's proxy protocol (`{base_url}/v1/stream`)."""

READ = Reader(PROTOCOL)
"""Typed reads of swink JSON (and this protocol's `DecodeError`)."""

STOP_KINDS: dict[str, ir.StopKind] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_use": "tool_use",
    "aborted": "error",
    "error": "error",
    "transfer": "other",
}
"""swink `StopReason` -> IR stop kind (`aborted` is a cancelled call; `transfer` an agent hand-off)."""

WIRE_STOPS: dict[str, str] = {"max_tokens": "length", "tool_use": "tool_use", "error": "error"}
"""IR stop kind -> swink `StopReason`; every other kind is `stop`."""

ERROR_KINDS: dict[str, ir.ErrorKind] = {
    "throttled": ir.ErrorKind.THROTTLED,
    "context_window_exceeded": ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    "auth": ir.ErrorKind.AUTH,
    "network": ir.ErrorKind.NETWORK,
    "content_filtered": ir.ErrorKind.INVALID_REQUEST,
    "model_retired": ir.ErrorKind.NOT_FOUND,
}
"""swink `StreamErrorKind` -> IR error kind; an error without `error_kind` is an unclassified server error."""

WIRE_ERROR_KINDS: dict[ir.ErrorKind, str] = {
    ir.ErrorKind.THROTTLED: "throttled",
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: "context_window_exceeded",
    ir.ErrorKind.AUTH: "auth",
    ir.ErrorKind.NETWORK: "network",
    ir.ErrorKind.NOT_FOUND: "model_retired",
}
"""IR error kind -> swink `StreamErrorKind`, for the kinds swink has a name for."""

_USAGE_FIELDS = (("input", "input_tokens"), ("output", "output_tokens"), ("cache_read", "cache_read_tokens"))
_REASONING = "reasoning_tokens"


def stop_reason(value: Any, where: str) -> ir.StopReason:
    """A swink `stop_reason` -> IR."""
    if not isinstance(value, str) or value not in STOP_KINDS:
        raise READ.error(f"{where}.stop_reason is {value!r}, expected one of {sorted(STOP_KINDS)}")
    return ir.StopReason(kind=STOP_KINDS[value], raw=value)


def wire_stop(reason: ir.StopReason | None) -> str:
    """The swink `stop_reason` for an IR stop reason (`stop` when none was given: the field is required)."""
    return "stop" if reason is None else WIRE_STOPS.get(reason.kind, "stop")


def usage(value: Any, where: str) -> ir.Usage:
    """A swink `Usage` object -> IR (reasoning tokens from `extra.reasoning_tokens`)."""
    obj = READ.as_obj(value, where)
    figures = {ir_name: READ.get_count(obj, name, where) for name, ir_name in _USAGE_FIELDS}
    extra = obj.get("extra") or {}
    reasoning = READ.get_count(READ.as_obj(extra, f"{where}.extra"), _REASONING, f"{where}.extra")
    return ir.Usage(**figures, cache_write_tokens=READ.get_count(obj, "cache_write", where), reasoning_tokens=reasoning)


def wire_usage(value: ir.Usage) -> dict[str, Any]:
    """IR usage -> swink's `Usage`, every counter present (an unreported figure is 0)."""
    out: dict[str, Any] = {name: getattr(value, ir_name) or 0 for name, ir_name in _USAGE_FIELDS}
    out["cache_write"] = value.cache_write_tokens or 0
    out["total"] = out["input"] + out["output"]
    if value.reasoning_tokens is not None:
        out["extra"] = {_REASONING: value.reasoning_tokens}
    return out
