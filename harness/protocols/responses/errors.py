"""Responses errors <-> IR errors: HTTP error bodies, the stream's `error` event and `response.failed`.

An HTTP error is OpenAI's body (`{"error": {"message", "type", "param", "code"}}`), the same as Chat
Completions'. Kind precedence when decoding: the `code` (then `type`) when it names a kind, else the HTTP status
(with the context-window message check of `common.kind_for_status`), else `server`.

Inside a stream, an `error` event is documented with top-level `code`, `message` and `param`, while the API
has been seen sending the OpenAI error object nested under `error` (openai/openai-dotnet#881); the decoder reads
both. The encoder writes both in one event: the documented fields for clients that read them (the SDK's
`ResponseErrorEvent`) and the nested object, which is what makes the `openai` SDK raise `APIError` instead of
yielding the event as data. `response.failed` carries the failed response, whose `error` has a `code` from its
own list (`server_error`, `rate_limit_exceeded`, `invalid_prompt`, image errors, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.responses.reader import JSONDict
from harness.wire.http import HttpResponse

ERROR_CODES: dict[str, ir.ErrorKind] = {
    "context_length_exceeded": ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    "string_above_max_length": ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    "rate_limit_exceeded": ir.ErrorKind.THROTTLED,
    "too_many_requests": ir.ErrorKind.THROTTLED,
    "insufficient_quota": ir.ErrorKind.THROTTLED,
    "invalid_api_key": ir.ErrorKind.AUTH,
    "authentication_error": ir.ErrorKind.AUTH,
    "permission_error": ir.ErrorKind.PERMISSION,
    "unsupported_country_region_territory": ir.ErrorKind.PERMISSION,
    "model_not_found": ir.ErrorKind.NOT_FOUND,
    "not_found": ir.ErrorKind.NOT_FOUND,
    "overloaded": ir.ErrorKind.OVERLOADED,
    "server_is_overloaded": ir.ErrorKind.OVERLOADED,
    "server_error": ir.ErrorKind.SERVER,
    "network_error": ir.ErrorKind.NETWORK,
    "timeout": ir.ErrorKind.TIMEOUT,
    "vector_store_timeout": ir.ErrorKind.TIMEOUT,
    "malformed_stream": ir.ErrorKind.MALFORMED_STREAM,
    "invalid_prompt": ir.ErrorKind.INVALID_REQUEST,
}
"""`code` (or `type`) strings that name a kind more precisely than the status does."""

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
"""`type` strings, consulted only when neither the code nor a status decides (errors inside a stream)."""

# `response.failed` codes about the input (images, prompts, policies) that no table above names.
_INPUT_CODE_MARKERS = ("image", "invalid_", "policy", "mismatch", "empty_")

KIND_WIRE: dict[ir.ErrorKind, tuple[str, str | None]] = {
    ir.ErrorKind.THROTTLED: ("requests", "rate_limit_exceeded"),
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: ("invalid_request_error", "context_length_exceeded"),
    ir.ErrorKind.AUTH: ("invalid_request_error", "invalid_api_key"),
    ir.ErrorKind.PERMISSION: ("permission_error", "permission_error"),
    ir.ErrorKind.NOT_FOUND: ("invalid_request_error", "not_found"),
    ir.ErrorKind.INVALID_REQUEST: ("invalid_request_error", None),
    ir.ErrorKind.OVERLOADED: ("server_error", "overloaded"),
    ir.ErrorKind.SERVER: ("server_error", "server_error"),
    ir.ErrorKind.NETWORK: ("server_error", "network_error"),
    ir.ErrorKind.TIMEOUT: ("server_error", "timeout"),
    ir.ErrorKind.MALFORMED_STREAM: ("server_error", "malformed_stream"),
}
"""What the encoder writes for each kind, (type, code): codes that decode back to the kind without a status
(a stream error has none); only invalid_request goes by its type."""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def error_kind(error: Mapping[str, Any], status: int | None) -> ir.ErrorKind:
    """The IR kind of an error object, given the HTTP status when there is one."""
    message = _text(error.get("message")) or ""
    for key in ("code", "type"):
        name = _text(error.get(key))
        if name is not None and name in ERROR_CODES:
            return ERROR_CODES[name]
    if status is not None:
        return common.kind_for_status(status, message)
    if common.is_context_message(message):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    type_ = _text(error.get("type")) or ""
    if type_ in ERROR_TYPES:
        return ERROR_TYPES[type_]
    code = _text(error.get("code")) or ""
    if any(marker in code for marker in _INPUT_CODE_MARKERS):
        return ir.ErrorKind.INVALID_REQUEST
    return ir.ErrorKind.SERVER


def error_from_object(error: Mapping[str, Any], status: int | None, retry: float | None = None) -> ir.IRError:
    """An IR error from an error object (an HTTP body's `error`, a stream error, a failed response's `error`)."""
    code = _text(error.get("code")) or _text(error.get("type"))
    message = _text(error.get("message")) or ""
    return ir.IRError.of(error_kind(error, status), message, status=status, retry_after=retry, code=code)


def stream_error(data: Mapping[str, Any]) -> ir.IRError:
    """The error an `error` event carries: its nested `error` object when there is one, else its own fields."""
    nested = data.get("error")
    return error_from_object(nested if isinstance(nested, dict) else data, None)


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An error response -> IR error. Never raises: an unreadable body keeps its text as the message."""
    retry = common.retry_after(headers)
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        inner = parsed.get("error")
        if isinstance(inner, dict):
            return error_from_object(inner, status, retry)
        for key in ("error", "message", "detail"):
            if isinstance(parsed.get(key), str):
                text = parsed[key]
                break
    return ir.IRError.of(common.kind_for_status(status, text), text.strip(), status=status, retry_after=retry)


def error_object(error: ir.IRError) -> JSONDict:
    """The OpenAI error object for an IR error: the error's own code is kept when it decodes to the same kind
    (so a pass-through keeps `model_not_found`), else the kind's code."""
    type_, code = KIND_WIRE[error.kind]
    own = error.code
    if own is not None and (ERROR_CODES.get(own) == error.kind or (own not in ERROR_CODES and code is None)):
        code = own
    return {"type": type_, "code": code, "message": error.message, "param": None}


def stream_error_event(error: ir.IRError) -> JSONDict:
    """The data of an `error` event without its sequence number (both forms, see the module docstring)."""
    inner = error_object(error)
    return {"type": "error", "code": inner["code"], "message": inner["message"], "param": None, "error": inner}


def encode_error(error: ir.IRError) -> HttpResponse:
    """An IR error as an error response: status by kind, OpenAI's body, `retry-after` when known."""
    headers = {"content-type": "application/json", **common.retry_after_headers(error)}
    body = common.dump_json({"error": error_object(error)})
    return HttpResponse(status=common.KIND_STATUS[error.kind], headers=headers, body=body)
