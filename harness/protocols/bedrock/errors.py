"""Bedrock errors <-> IR: HTTP errors named by `x-amzn-errortype`, and exceptions inside an event stream.

An HTTP error is `{"message": "..."}` with its status and `x-amzn-errortype: ThrottlingException:http://...`
(the type before the first colon; AWS JSON bodies may name it in `__type` or `code` instead). Inside a
ConverseStream (a 200 response) a failure is an event stream message with `:message-type: exception` and a
camelCase `:exception-type`; the stream's model knows five: throttlingException, validationException,
modelStreamErrorException, serviceUnavailableException, internalServerException (botocore raises
`EventStreamError` with that code). A kind without one of these (auth, permission, not found, timeout) is sent
as the framing's generic `:message-type: error` with `:error-code` / `:error-message` headers, which botocore
raises the same way, so the kind survives. Bedrock sends no Retry-After header.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.bedrock.mapping import dumps
from harness.wire.eventstream import HeaderValue, encode_message
from harness.wire.http import HttpResponse

ERRORTYPE_HEADER = "x-amzn-errortype"
"""The header naming an HTTP error's exception type."""
ERRORTYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
"""What Bedrock appends to the type in `x-amzn-errortype` (seen in every recorded error)."""
CONTEXT_PREFIX = "Input is too long for requested model: "
"""Put before a context-window message that does not say so itself: the only way the wire says it."""

TYPES: dict[str, tuple[ir.ErrorKind, int]] = {
    "ValidationException": (ir.ErrorKind.INVALID_REQUEST, 400),
    "ServiceQuotaExceededException": (ir.ErrorKind.THROTTLED, 400),
    "AccessDeniedException": (ir.ErrorKind.PERMISSION, 403),
    "UnrecognizedClientException": (ir.ErrorKind.AUTH, 403),
    "InvalidSignatureException": (ir.ErrorKind.AUTH, 403),
    "IncompleteSignatureException": (ir.ErrorKind.AUTH, 403),
    "MissingAuthenticationTokenException": (ir.ErrorKind.AUTH, 403),
    "ExpiredTokenException": (ir.ErrorKind.AUTH, 403),
    "ResourceNotFoundException": (ir.ErrorKind.NOT_FOUND, 404),
    "ModelTimeoutException": (ir.ErrorKind.TIMEOUT, 408),
    "ModelErrorException": (ir.ErrorKind.SERVER, 424),
    "ModelStreamErrorException": (ir.ErrorKind.SERVER, 424),
    "ThrottlingException": (ir.ErrorKind.THROTTLED, 429),
    "ModelNotReadyException": (ir.ErrorKind.OVERLOADED, 429),
    "InternalServerException": (ir.ErrorKind.SERVER, 500),
    "ServiceUnavailableException": (ir.ErrorKind.OVERLOADED, 503),
}
"""Exception type (as `x-amzn-errortype` spells it) -> IR kind and the HTTP status Bedrock sends it with."""

KIND_TYPES: dict[ir.ErrorKind, str] = {
    ir.ErrorKind.THROTTLED: "ThrottlingException",
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: "ValidationException",
    ir.ErrorKind.AUTH: "UnrecognizedClientException",
    ir.ErrorKind.PERMISSION: "AccessDeniedException",
    ir.ErrorKind.NOT_FOUND: "ResourceNotFoundException",
    ir.ErrorKind.INVALID_REQUEST: "ValidationException",
    ir.ErrorKind.OVERLOADED: "ServiceUnavailableException",
    ir.ErrorKind.SERVER: "InternalServerException",
    ir.ErrorKind.NETWORK: "InternalServerException",
    ir.ErrorKind.TIMEOUT: "ModelTimeoutException",
    ir.ErrorKind.MALFORMED_STREAM: "ModelStreamErrorException",
}
"""IR kind -> the exception type it is sent as (network and malformed_stream have none of their own)."""

STREAM_EXCEPTIONS = frozenset(
    {
        "ThrottlingException",
        "ValidationException",
        "ModelStreamErrorException",
        "ServiceUnavailableException",
        "InternalServerException",
    }
)
"""The exception types a ConverseStream can carry as `:message-type: exception` (camelCase on the wire)."""

_CONTEXT_MARKERS = ("input is too long", "too many input tokens", "too long for requested model")


def _pascal(name: str) -> str:
    return name[:1].upper() + name[1:]


def _camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def is_context_message(message: str) -> bool:
    """Whether a ValidationException's message says the input overflowed the context window."""
    return common.is_context_message(message) or any(m in message.lower() for m in _CONTEXT_MARKERS)


def kind_of(error_type: str | None, message: str, status: int | None) -> ir.ErrorKind:
    """The IR kind of an exception type (either spelling), refined by the message; else by the HTTP status."""
    known = TYPES.get(_pascal(error_type or ""))
    if known is not None:
        kind = known[0]
    elif status is not None:
        kind = common.kind_for_status(status, message)
    else:
        kind = ir.ErrorKind.SERVER
    if kind is ir.ErrorKind.INVALID_REQUEST and is_context_message(message):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    return kind


def wire_type(error: ir.IRError) -> str:
    """The exception type an IR error is sent as: its own code when that names a type of the same kind."""
    own = _pascal(error.code or "")
    if own in TYPES and kind_of(own, error.message, None) is error.kind:
        return own
    if error.kind is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED:
        return "ValidationException"
    return KIND_TYPES[error.kind]


def wire_message(error: ir.IRError) -> str:
    """The message an IR error is sent with (a context overflow must say so, see CONTEXT_PREFIX)."""
    if error.kind is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED and not is_context_message(error.message):
        return CONTEXT_PREFIX + error.message
    return error.message


def _text(value: Any) -> str:
    """A message as text: strings as they are, other JSON as JSON (never raising: decode_error must not)."""
    if isinstance(value, str) or value is None:
        return value or ""
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):
        return repr(type(value))


def _type_from(headers: Mapping[str, str], body: Mapping[str, Any]) -> str | None:
    lower = {k.lower(): v for k, v in headers.items()}
    raw = lower.get(ERRORTYPE_HEADER)
    if raw is None:
        raw = body.get("__type") if isinstance(body.get("__type"), str) else body.get("code")
    if not isinstance(raw, str) or not raw:
        return None
    return raw.split(":", 1)[0].rsplit("#", 1)[-1] or None


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An HTTP error response -> IR error; never raises (a body that is not JSON gives its text)."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    data = parsed if isinstance(parsed, dict) else {}
    message = _text(data.get("message", data.get("Message"))) if data else text.strip()
    error_type = _type_from(headers, data)
    kind = kind_of(error_type, message, status)
    delay = common.retry_after(headers)
    return ir.IRError.of(kind, message, status=status, retry_after=delay, code=error_type)


def encode_error(error: ir.IRError) -> HttpResponse:
    """IR error -> Bedrock's error response: the type's status, `x-amzn-errortype`, `{"message": ...}` (the
    reference backend adds the request id header)."""
    name = wire_type(error)
    body = dumps({"message": wire_message(error)})
    headers = {"content-type": "application/json", ERRORTYPE_HEADER: name + ERRORTYPE_SUFFIX}
    return HttpResponse(status=TYPES[name][1], headers=headers, body=body)


# --- inside an event stream ---------------------------------------------------------------------------


def stream_error(headers: Mapping[str, HeaderValue], payload: bytes) -> ir.IRError:
    """The IR error of an `exception` or `error` message of a ConverseStream (no HTTP status: it is a 200)."""
    if headers.get(":message-type") == "error":
        code = headers.get(":error-code")
        message = headers.get(":error-message")
        name = code if isinstance(code, str) else None
        text = message if isinstance(message, str) else ""
        return ir.IRError.of(kind_of(name, text, None), text, code=name)
    exception = headers.get(":exception-type")
    name = exception if isinstance(exception, str) else None
    try:
        parsed: Any = json.loads(payload)
    except (ValueError, RecursionError):
        parsed = None
    data = parsed if isinstance(parsed, dict) else {}
    text = _text(data.get("message", data.get("Message"))) if data else payload.decode("utf-8", errors="replace")
    return ir.IRError.of(kind_of(name, text, None), text, code=name)


def stream_error_frame(error: ir.IRError) -> bytes:
    """The event stream message for a failure inside a ConverseStream (see the module docstring)."""
    name = wire_type(error)
    message = wire_message(error)
    if name in STREAM_EXCEPTIONS:
        headers: dict[str, HeaderValue] = {
            ":exception-type": _camel(name),
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        return encode_message(headers, dumps({"message": message}))
    # A header value holds at most 65535 bytes; a longer message is cut at a character boundary.
    clipped = message.encode("utf-8")[:65535].decode("utf-8", errors="ignore")
    return encode_message({":error-code": name, ":error-message": clipped, ":message-type": "error"}, b"")
