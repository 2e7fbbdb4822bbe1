"""Gemini errors: `{"error": {"code", "message", "status", "details"}}` (google.rpc.Status) <-> IR errors.

The same body comes as an HTTP error response, as the only element of a JSON-array stream, and as a plain
JSON body on an `alt=sse` request (content-type text/event-stream, but no SSE framing). A wrong API key is
400 INVALID_ARGUMENT with an ErrorInfo detail of reason API_KEY_INVALID, which means `auth`. A RetryInfo
detail (`"retryDelay": "30s"`) gives the retry delay; a `retry-after` header does too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.wire.http import HttpResponse

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_LOCALIZED = "type.googleapis.com/google.rpc.LocalizedMessage"
_DURATION = re.compile(r"(\d{1,9}(?:\.\d{1,9})?)s")

# google.rpc status string -> (error kind, the HTTP status Google sends it with).
STATUSES: dict[str, tuple[ir.ErrorKind, int]] = {
    "INVALID_ARGUMENT": (ir.ErrorKind.INVALID_REQUEST, 400),
    "FAILED_PRECONDITION": (ir.ErrorKind.INVALID_REQUEST, 400),
    "OUT_OF_RANGE": (ir.ErrorKind.INVALID_REQUEST, 400),
    "UNAUTHENTICATED": (ir.ErrorKind.AUTH, 401),
    "PERMISSION_DENIED": (ir.ErrorKind.PERMISSION, 403),
    "NOT_FOUND": (ir.ErrorKind.NOT_FOUND, 404),
    "RESOURCE_EXHAUSTED": (ir.ErrorKind.THROTTLED, 429),
    "INTERNAL": (ir.ErrorKind.SERVER, 500),
    "UNKNOWN": (ir.ErrorKind.SERVER, 500),
    "UNAVAILABLE": (ir.ErrorKind.OVERLOADED, 503),
    "DEADLINE_EXCEEDED": (ir.ErrorKind.TIMEOUT, 504),
}

# IR kind -> (HTTP status, status string) when the error's own `code` is not a fitting status string.
# Gemini has no status for a network failure or a broken stream: both go out as a 502 INTERNAL (-> server).
KIND_WIRE: dict[ir.ErrorKind, tuple[int, str]] = {
    ir.ErrorKind.THROTTLED: (429, "RESOURCE_EXHAUSTED"),
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: (400, "INVALID_ARGUMENT"),
    ir.ErrorKind.AUTH: (401, "UNAUTHENTICATED"),
    ir.ErrorKind.PERMISSION: (403, "PERMISSION_DENIED"),
    ir.ErrorKind.NOT_FOUND: (404, "NOT_FOUND"),
    ir.ErrorKind.INVALID_REQUEST: (400, "INVALID_ARGUMENT"),
    ir.ErrorKind.OVERLOADED: (503, "UNAVAILABLE"),
    ir.ErrorKind.SERVER: (500, "INTERNAL"),
    ir.ErrorKind.NETWORK: (502, "INTERNAL"),
    ir.ErrorKind.TIMEOUT: (504, "DEADLINE_EXCEEDED"),
    ir.ErrorKind.MALFORMED_STREAM: (502, "INTERNAL"),
}


def error_kind(http_status: int | None, status: str | None, message: str, reasons: list[str]) -> ir.ErrorKind:
    """The kind of a Google error: ErrorInfo reason, then the status string, then the HTTP status."""
    if "API_KEY_INVALID" in reasons:
        return ir.ErrorKind.AUTH
    known = STATUSES.get(status or "")
    if known is not None:
        kind, code = known
        if kind is ir.ErrorKind.INVALID_REQUEST:
            return common.kind_for_status(code, message)
        return kind
    if http_status is None:
        return ir.ErrorKind.SERVER
    return common.kind_for_status(http_status, message)


def _details(err: Mapping[str, Any]) -> tuple[list[str], float | None]:
    """ErrorInfo reasons and the RetryInfo delay (seconds) of an error's `details`."""
    reasons: list[str] = []
    delay: float | None = None
    details = err.get("details")
    for item in details if isinstance(details, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("@type") == _ERROR_INFO and isinstance(item.get("reason"), str):
            reasons.append(item["reason"])
        elif item.get("@type") == _RETRY_INFO and isinstance(item.get("retryDelay"), str):
            match = _DURATION.fullmatch(item["retryDelay"])
            delay = float(match.group(1)) if match else delay
    return reasons, delay


def _text(value: Any) -> str:
    """A message as text: strings as they are, other JSON as JSON (never raising: decode_error must not)."""
    if isinstance(value, str) or value is None:
        return value or ""
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):
        return repr(type(value))


def error_from_object(
    err: Mapping[str, Any], *, http_status: int | None = None, http_error: bool = False
) -> ir.IRError:
    """An IR error from the `error` object. Its numeric `code` becomes the IR status only for a whole error
    body (`http_error`); a mid-stream error has no HTTP status of its own, but the code still classifies it."""
    message = _text(err.get("message"))
    status = err.get("status") if isinstance(err.get("status"), str) else None
    code = err.get("code") if isinstance(err.get("code"), int) and not isinstance(err.get("code"), bool) else None
    if http_status is None and http_error:
        http_status = code
    reasons, delay = _details(err)
    kind = error_kind(http_status if http_status is not None else code, status, message, reasons)
    return ir.IRError.of(kind, message, status=http_status, retry_after=delay, code=status)


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An error response -> IR error; never raises (a body that is not Google's JSON gives its text)."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, list) and parsed and isinstance(parsed[0], dict):
        parsed = parsed[0]  # the JSON-array stream endpoint wraps its error in an array
    err = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(err, dict):
        error = error_from_object(err, http_status=status)
    else:
        message = text.strip()
        error = ir.IRError.of(common.kind_for_status(status, message), message, status=status)
    if error.retry_after is None:
        header = common.retry_after(headers)
        if header is not None and math.isfinite(header) and header >= 0:
            error = error.model_copy(update={"retry_after": header})
    return error


def _duration(seconds: float) -> str:
    """A google.protobuf.Duration in JSON form: `30s`, `1.5s`."""
    return f"{seconds:.9f}".rstrip("0").rstrip(".") + "s"


def error_object(error: ir.IRError) -> tuple[int, dict[str, Any]]:
    """The HTTP status and `{"error": ...}` body for an IR error."""
    http, status = KIND_WIRE[error.kind]
    known = STATUSES.get(error.code or "")
    if known is not None and known[0] is error.kind:
        # Keep the provider's own status string (e.g. FAILED_PRECONDITION) when it means the same kind.
        status, http = error.code or status, known[1]
    details: list[dict[str, Any]] = []
    if error.kind is ir.ErrorKind.AUTH and error.code == "INVALID_ARGUMENT":
        # Google's answer to a wrong API key (decoded to `auth` from its reason) goes back as Google sends it.
        http, status = 400, "INVALID_ARGUMENT"
        service = {"service": "generativelanguage.googleapis.com"}
        info = {"@type": _ERROR_INFO, "reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": service}
        details += [info, {"@type": _LOCALIZED, "locale": "en-US", "message": error.message}]
    if error.retry_after is not None:
        details.append({"@type": _RETRY_INFO, "retryDelay": _duration(error.retry_after)})
    body: dict[str, Any] = {"code": http, "message": error.message, "status": status}
    if details:
        body["details"] = details
    return http, {"error": body}


def encode_error(error: ir.IRError) -> HttpResponse:
    """IR error -> Gemini error response with `retry-after` when the error has a delay."""
    http, body = error_object(error)
    headers = {"content-type": "application/json; charset=UTF-8", **common.retry_after_headers(error)}
    return HttpResponse(status=http, headers=headers, body=common.dump_json(body))
