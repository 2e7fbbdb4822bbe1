"""Anthropic errors: `{"type":"error","error":{"type":..,"message":..}}` bodies and mid-stream `event: error`."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.anthropic.mapping import dumps
from harness.wire.http import HttpResponse

CONTEXT_PREFIX = "prompt is too long: "
"""Anthropic signals a context-window overflow only through the message of a 400 invalid_request_error."""

# Error type -> (kind, status it is sent with). A kind of None means "decide from the status and message"
# (invalid_request_error and api_error cover several statuses, and a 400 may be a context-window overflow).
ERROR_TYPES: dict[str, tuple[ir.ErrorKind | None, int]] = {
    "invalid_request_error": (None, 400),
    "authentication_error": (ir.ErrorKind.AUTH, 401),
    "billing_error": (ir.ErrorKind.PERMISSION, 402),
    "permission_error": (ir.ErrorKind.PERMISSION, 403),
    "not_found_error": (ir.ErrorKind.NOT_FOUND, 404),
    "conflict_error": (ir.ErrorKind.INVALID_REQUEST, 409),
    # 413 is a byte-size limit enforced before the model sees the prompt, not a context-window overflow.
    "request_too_large": (ir.ErrorKind.INVALID_REQUEST, 413),
    "rate_limit_error": (ir.ErrorKind.THROTTLED, 429),
    "api_error": (None, 500),
    "timeout_error": (ir.ErrorKind.TIMEOUT, 504),
    "overloaded_error": (ir.ErrorKind.OVERLOADED, 529),
}

# IR kind -> (error type, status) the encoder sends.
_WIRE_ERRORS: dict[ir.ErrorKind, tuple[str, int]] = {
    ir.ErrorKind.THROTTLED: ("rate_limit_error", 429),
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: ("invalid_request_error", 400),
    ir.ErrorKind.AUTH: ("authentication_error", 401),
    ir.ErrorKind.PERMISSION: ("permission_error", 403),
    ir.ErrorKind.NOT_FOUND: ("not_found_error", 404),
    ir.ErrorKind.INVALID_REQUEST: ("invalid_request_error", 400),
    ir.ErrorKind.OVERLOADED: ("overloaded_error", 529),
    ir.ErrorKind.SERVER: ("api_error", 500),
    ir.ErrorKind.NETWORK: ("api_error", 502),
    ir.ErrorKind.TIMEOUT: ("timeout_error", 504),
    ir.ErrorKind.MALFORMED_STREAM: ("api_error", 502),
}


def kind_for(error_type: str | None, status: int | None, message: str) -> ir.ErrorKind:
    """The IR kind of an Anthropic error type, refined by the HTTP status (None mid-stream) and message."""
    kind, default_status = ERROR_TYPES.get(error_type or "", (None, None))
    if kind is not None:
        return kind
    if status is None:
        status = default_status if default_status is not None else 500
    return common.kind_for_status(status, message)


def error_from_object(error: Any, *, status: int | None, retry_after: float | None = None) -> ir.IRError:
    """An IR error from the wire `error` object (`{"type":..,"message":..}`); tolerant of odd shapes."""
    error_type: str | None = None
    message = ""
    if isinstance(error, Mapping):
        raw_type, raw_message = error.get("type"), error.get("message")
        error_type = raw_type if isinstance(raw_type, str) else None
        if isinstance(raw_message, str):
            message = raw_message
        elif raw_message is not None:
            message = _as_text(raw_message)
    elif isinstance(error, str):
        message = error
    return ir.IRError.of(
        kind_for(error_type, status, message), message, status=status, retry_after=retry_after, code=error_type
    )


def _as_text(value: Any) -> str:
    # A message that is not a string is shown as its JSON; one too deep even for that is shown by type.
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__}>"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    # The shared helper raises TypeError on an HTTP date without a zone ("-0000" parses naive) and passes
    # "nan" through; neither may escape decode_error, and neither is a usable wait.
    try:
        value = common.retry_after(headers)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if value is not None and math.isfinite(value) else None


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An Anthropic error response -> IR error. Never raises: a body that is not the expected JSON still
    yields an error whose message is the body text."""
    retry = _retry_after(headers)
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, Mapping) and "error" in parsed:
        return error_from_object(parsed["error"], status=status, retry_after=retry)
    message = text.strip()
    return ir.IRError.of(common.kind_for_status(status, message), message, status=status, retry_after=retry)


def wire_error_type(error: ir.IRError) -> tuple[str, int]:
    """The Anthropic error type and status for an IR error.

    The error's own `code` wins when it is an Anthropic type of the same kind (so a pass-through keeps
    billing_error / request_too_large), else the kind's standard type.
    """
    if error.code in ERROR_TYPES:
        kind, status = ERROR_TYPES[error.code]
        if kind == error.kind or (kind is None and kind_for(error.code, status, error.message) == error.kind):
            return error.code, status
    return _WIRE_ERRORS[error.kind]


def wire_message(error: ir.IRError) -> str:
    """The message to send: a context-window error must say "prompt is too long" or it reads as a plain 400."""
    if error.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not common.is_context_message(error.message):
        return CONTEXT_PREFIX + error.message
    return error.message


def error_body(error: ir.IRError) -> dict[str, Any]:
    """The wire error object, as sent in an error response and in a mid-stream `event: error`."""
    error_type, _ = wire_error_type(error)
    return {"type": "error", "error": {"type": error_type, "message": wire_message(error)}}


def encode_error(error: ir.IRError) -> HttpResponse:
    """IR error -> Anthropic error response (status by type; overloaded is 529) with retry-after."""
    _, status = wire_error_type(error)
    headers = {"content-type": "application/json", **common.retry_after_headers(error)}
    return HttpResponse(status=status, headers=headers, body=dumps(error_body(error)).encode("utf-8"))
