"""OpenAI error bodies (`{"error": {"message", "type", "param", "code"}}`) <-> IR errors.

Kind precedence when decoding: the provider's `code` (then `type`) when it names a kind, else the HTTP status
(with the context-window message check of `common.kind_for_status`), else for a mid-stream error with no
status a status-like number in the body (Groq `status_code`, OpenRouter numeric `code`), else `server`.
`decode_error` never raises: a body that is not the expected JSON keeps its text as the message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from harness import ir
from harness.protocols import common
from harness.protocols.openai.profile import JSONDict, Profile
from harness.wire.http import HttpResponse

# OpenAI `code` / `type` strings that name an error kind more precisely than the status does.
ERROR_CODES: dict[str, ir.ErrorKind] = {
    "context_length_exceeded": ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    "string_above_max_length": ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    "rate_limit_exceeded": ir.ErrorKind.THROTTLED,
    "insufficient_quota": ir.ErrorKind.THROTTLED,
    "invalid_api_key": ir.ErrorKind.AUTH,
    "authentication_error": ir.ErrorKind.AUTH,
    "permission_error": ir.ErrorKind.PERMISSION,
    "request_forbidden": ir.ErrorKind.PERMISSION,
    "unsupported_country_region_territory": ir.ErrorKind.PERMISSION,
    "model_not_found": ir.ErrorKind.NOT_FOUND,
    "not_found": ir.ErrorKind.NOT_FOUND,
    "overloaded": ir.ErrorKind.OVERLOADED,
    "engine_overloaded": ir.ErrorKind.OVERLOADED,
    "network_error": ir.ErrorKind.NETWORK,
    "timeout": ir.ErrorKind.TIMEOUT,
    "malformed_stream": ir.ErrorKind.MALFORMED_STREAM,
}

# `type` strings, consulted only when neither the code nor a status decides (mid-stream errors).
ERROR_TYPES: dict[str, ir.ErrorKind] = {
    "invalid_request_error": ir.ErrorKind.INVALID_REQUEST,
    "authentication_error": ir.ErrorKind.AUTH,
    "permission_error": ir.ErrorKind.PERMISSION,
    "not_found_error": ir.ErrorKind.NOT_FOUND,
    "rate_limit_error": ir.ErrorKind.THROTTLED,
    "requests": ir.ErrorKind.THROTTLED,
    "tokens": ir.ErrorKind.THROTTLED,
    "server_error": ir.ErrorKind.SERVER,
    "api_error": ir.ErrorKind.SERVER,
}

# What the encoder writes for each kind: (type, code). Codes are chosen so that decoding them gives the kind
# back even without a status (a mid-stream error has none).
KIND_WIRE: dict[ir.ErrorKind, tuple[str, str | None]] = {
    ir.ErrorKind.THROTTLED: ("requests", "rate_limit_exceeded"),
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: ("invalid_request_error", "context_length_exceeded"),
    ir.ErrorKind.AUTH: ("invalid_request_error", "invalid_api_key"),
    ir.ErrorKind.PERMISSION: ("permission_error", "permission_error"),
    ir.ErrorKind.NOT_FOUND: ("invalid_request_error", "not_found"),
    ir.ErrorKind.INVALID_REQUEST: ("invalid_request_error", None),
    ir.ErrorKind.OVERLOADED: ("server_error", "overloaded"),
    ir.ErrorKind.SERVER: ("server_error", None),
    ir.ErrorKind.NETWORK: ("server_error", "network_error"),
    ir.ErrorKind.TIMEOUT: ("server_error", "timeout"),
    ir.ErrorKind.MALFORMED_STREAM: ("server_error", "malformed_stream"),
}


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _status_hint(error: Mapping[str, Any]) -> int | None:
    for key in ("status_code", "status", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value < 600:
            return value
    return None


def error_kind(profile: Profile, error: Mapping[str, Any], status: int | None) -> ir.ErrorKind:
    """The IR kind of an OpenAI-style error object, given the HTTP status when there is one."""
    message = _as_text(error.get("message")) or ""
    for key in ("code", "type"):
        name = _as_text(error.get(key))
        if name is None:
            continue
        kind = profile.error_codes.get(name) or ERROR_CODES.get(name)
        if kind is not None:
            return kind
    if status is not None:
        return common.kind_for_status(status, message)
    hint = _status_hint(error)
    if hint is not None:
        return common.kind_for_status(hint, message)
    if common.is_context_message(message):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    type_ = _as_text(error.get("type"))
    return ERROR_TYPES.get(type_ or "", ir.ErrorKind.SERVER)


def error_from_object(
    profile: Profile, error: Mapping[str, Any], status: int | None, retry: float | None
) -> ir.IRError:
    """An IR error from the inner `error` object of an OpenAI error body or stream chunk."""
    code = _as_text(error.get("code")) or _as_text(error.get("type"))
    message = _as_text(error.get("message")) or ""
    return ir.IRError.of(error_kind(profile, error, status), message, status=status, retry_after=retry, code=code)


def decode_error(profile: Profile, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An error response -> IR error. Never raises: unreadable bodies keep their text as the message."""
    retry = common.retry_after(headers)
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        inner = parsed.get("error")
        if isinstance(inner, dict):
            return error_from_object(profile, inner, status, retry)
        # Flat shapes seen from compatible servers: {"error": "msg"}, {"message": ...}, {"detail": ...}.
        for key in ("error", "message", "detail"):
            if isinstance(parsed.get(key), str):
                text = parsed[key]
                break
    kind = common.kind_for_status(status, text)
    return ir.IRError.of(kind, text.strip(), status=status, retry_after=retry)


ErrorStyle = Literal["openai", "groq", "openrouter"]
"""How a provider writes the inner error object (see `error_object`)."""


def error_object(error: ir.IRError, style: ErrorStyle = "openai") -> JSONDict:
    """The inner `error` object for an IR error. The error's own code is kept when it decodes to the same kind
    (so a pass-through keeps OpenAI's `unsupported_value`), else the kind's canonical code is used.

    `style`: OpenAI's `{message, type, param, code}`; Groq's `{message, type, code, status_code}`; OpenRouter's
    `{code, message}` with the HTTP status as a number for `code`."""
    status = error.status if error.status is not None else common.KIND_STATUS[error.kind]
    if style == "openrouter":
        return {"code": status, "message": error.message}
    type_, code = KIND_WIRE[error.kind]
    own = error.code
    # A code the table maps to this very kind is safe; so is an unknown code where the kind needs none.
    if own is not None and (ERROR_CODES.get(own) == error.kind or (own not in ERROR_CODES and code is None)):
        code = own
    if style == "groq":
        return {"message": error.message, "type": type_, "code": code, "status_code": status}
    return {"message": error.message, "type": type_, "param": None, "code": code}


def encode_error(error: ir.IRError, style: ErrorStyle = "openai") -> HttpResponse:
    """An IR error as OpenAI's error response: status by kind, JSON body, `retry-after` when known."""
    headers = {"content-type": "application/json", **common.retry_after_headers(error)}
    body = common.dump_json({"error": error_object(error, style)})
    return HttpResponse(status=common.KIND_STATUS[error.kind], headers=headers, body=body)
