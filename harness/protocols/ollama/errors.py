"""Ollama errors: an HTTP status and a flat `{"error": "<message>"}` body, before or inside a stream.

Ollama has no error codes, so the kind comes from the status and, where the status is generic (400, 500, or
none at all mid-stream), from well-known message texts: "... not found" (a model that is not pulled),
"... does not support tools/thinking/...", "server busy", context-length messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.wire.http import HttpResponse

# Message markers and the kind they mean, checked in order, lower-cased.
_MESSAGE_KINDS: tuple[tuple[str, ir.ErrorKind], ...] = (
    ("does not support", ir.ErrorKind.INVALID_REQUEST),
    ("not found", ir.ErrorKind.NOT_FOUND),
    ("unauthorized", ir.ErrorKind.AUTH),
    ("invalid api key", ir.ErrorKind.AUTH),
    ("rate limit", ir.ErrorKind.THROTTLED),
    ("too many requests", ir.ErrorKind.THROTTLED),
    ("server busy", ir.ErrorKind.OVERLOADED),
    ("overloaded", ir.ErrorKind.OVERLOADED),
)

# Statuses whose kind the message may refine (they say little by themselves).
_GENERIC = frozenset({ir.ErrorKind.INVALID_REQUEST, ir.ErrorKind.SERVER})


def error_kind(status: int | None, message: str) -> ir.ErrorKind:
    """The kind of an Ollama error from its status (None mid-stream) and message."""
    if common.is_context_message(message):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    base = common.kind_for_status(status, message) if status is not None else None
    if base is None or base in _GENERIC:
        lower = message.lower()
        for marker, kind in _MESSAGE_KINDS:
            if marker in lower:
                return kind
    return base if base is not None else ir.ErrorKind.SERVER


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An Ollama error response -> IR error; never raises (a body that is not the JSON shape is the message)."""
    text = body.decode("utf-8", errors="replace")
    message = _message(text)
    return ir.IRError.of(
        error_kind(status, message),
        message,
        status=status,
        retry_after=common.retry_after(headers),
    )


def _message(text: str) -> str:
    try:
        obj: Any = json.loads(text)
    except (ValueError, RecursionError):
        return text.strip()
    if isinstance(obj, dict):
        error = obj.get("error")
        if isinstance(error, str):
            return error
        # Some gateways in front of Ollama wrap it OpenAI-style: {"error": {"message": ...}}.
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return text.strip()


def encode_error(error: ir.IRError) -> HttpResponse:
    """IR error -> Ollama's `{"error": message}` with the kind's status and a `retry-after` header if any."""
    headers = {"content-type": "application/json; charset=utf-8", **common.retry_after_headers(error)}
    return HttpResponse(common.KIND_STATUS[error.kind], headers, common.dump_json({"error": error.message}))


def stream_error_line(error: ir.IRError) -> dict[str, Any]:
    """The NDJSON line Ollama writes when a stream fails after it began."""
    return {"error": error.message}
