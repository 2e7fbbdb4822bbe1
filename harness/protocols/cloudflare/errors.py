"""Workers AI errors: Cloudflare's envelope `{"success": false, "errors": [{"code", "message"}], "messages": [],
"result": null}` with an HTTP status.

Codes and statuses from Cloudflare's Workers AI error table (mirrored in cloudflare/ai's
`gateway-core/src/workers-ai-errors.ts`): 5007 no such model (400), 5004 invalid data (400), 3003 incomplete
request (400), 5016 / 5018 / 3023 / 3041 forbidden (403), 3042 invalid model id (404), 3006 request too large
(413), 3007 timeout and 3008 aborted (408), 3036 account limited and 3040 out of capacity (429); 10000 is the
API's authentication error, 3043 an internal error. The code decides the kind where it is known (3040 is
capacity, overloaded, though it comes as a 429; 5007 an unknown model, though it comes as a 400); 5021 (the
context window) and unknown codes go by the status and the message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.wire.http import HttpResponse

CODE_KINDS: dict[int, ir.ErrorKind] = {
    5007: ir.ErrorKind.NOT_FOUND,
    3042: ir.ErrorKind.NOT_FOUND,
    5004: ir.ErrorKind.INVALID_REQUEST,
    3003: ir.ErrorKind.INVALID_REQUEST,
    5016: ir.ErrorKind.PERMISSION,
    5018: ir.ErrorKind.PERMISSION,
    3023: ir.ErrorKind.PERMISSION,
    3041: ir.ErrorKind.PERMISSION,
    3040: ir.ErrorKind.OVERLOADED,
    3036: ir.ErrorKind.THROTTLED,
    3007: ir.ErrorKind.TIMEOUT,
    3008: ir.ErrorKind.TIMEOUT,
    3043: ir.ErrorKind.SERVER,
    10000: ir.ErrorKind.AUTH,
}
"""Workers AI error codes -> kind; the code says more than the status (and is all a stream error has)."""

WIRE: dict[ir.ErrorKind, tuple[int, int]] = {
    ir.ErrorKind.THROTTLED: (429, 3036),
    ir.ErrorKind.OVERLOADED: (429, 3040),
    ir.ErrorKind.AUTH: (401, 10000),
    ir.ErrorKind.PERMISSION: (403, 5018),
    ir.ErrorKind.NOT_FOUND: (400, 5007),
    ir.ErrorKind.INVALID_REQUEST: (400, 5004),
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: (400, 5021),
    ir.ErrorKind.TIMEOUT: (408, 3007),
    ir.ErrorKind.SERVER: (500, 3043),
}
"""IR error kind -> (status, code) the encoder sends; other kinds go as a 500 server error."""


def envelope_error(obj: dict[str, Any], *, status: int | None) -> ir.IRError:
    """The IR error an envelope (or an `{"error": ...}` object) says, given the status it came with."""
    code, message = _first_error(obj)
    kind = CODE_KINDS.get(code) if code is not None else None
    if kind is ir.ErrorKind.AUTH and status == 403:
        kind = ir.ErrorKind.PERMISSION
    if kind is None:
        kind = common.kind_for_status(status, message) if status is not None else _by_message(message)
    elif kind is ir.ErrorKind.INVALID_REQUEST and common.is_context_message(message):
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    return ir.IRError.of(kind, message, status=status, code=None if code is None else str(code))


def _by_message(message: str) -> ir.ErrorKind:
    return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED if common.is_context_message(message) else ir.ErrorKind.SERVER


def _first_error(obj: dict[str, Any]) -> tuple[int | None, str]:
    errors = obj.get("errors")
    first: Any = errors[0] if isinstance(errors, list) and errors else obj.get("error")
    if isinstance(first, str):
        return None, first
    if not isinstance(first, dict):
        return None, common.dump_text(obj)
    code = first.get("code")
    message = first.get("message")
    return (code if isinstance(code, int) and not isinstance(code, bool) else None), (
        message if isinstance(message, str) else common.dump_text(first)
    )


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """An error response -> IR error; never raises (a body that is not the envelope is the message)."""
    text = body.decode("utf-8", errors="replace")
    try:
        obj: Any = json.loads(text)
    except (ValueError, RecursionError):
        obj = None
    if isinstance(obj, dict):
        error = envelope_error(obj, status=status)
    else:
        error = ir.IRError.of(common.kind_for_status(status, text), text.strip(), status=status)
    return error.model_copy(update={"retry_after": common.retry_after(headers)})


def envelope(error: ir.IRError) -> dict[str, Any]:
    """Cloudflare's error envelope for an IR error."""
    _, code = WIRE.get(error.kind, (500, 3043))
    return {"success": False, "errors": [{"code": code, "message": error.message}], "messages": [], "result": None}


def encode_error(error: ir.IRError) -> HttpResponse:
    """IR error -> the envelope with the kind's status and code (and Retry-After when the error has one)."""
    status, _ = WIRE.get(error.kind, (500, 3043))
    headers = {"content-type": "application/json", **common.retry_after_headers(error)}
    return HttpResponse(status, headers, common.dump_json(envelope(error)))
