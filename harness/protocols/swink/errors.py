"""swink proxy errors: an HTTP status before the stream, or a terminal `error` event inside it.

`ProxyStreamFn` reads only the status of a failed response (`error_event_from_status(status, "", "Proxy")`):
401/403 auth, 429 throttled, 408 and 5xx network, anything else an unclassified error. The body is not part
of the protocol; the encoder writes the fields of the stream's own `error` event (`error_message`,
`error_kind`), and the decoder reads them back when present, so a context-window overflow keeps its kind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.swink.events import ERROR_KINDS, WIRE_ERROR_KINDS
from harness.wire.http import HttpResponse


def decode_error(status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
    """A failed `/v1/stream` response -> IR error; never raises (the body is read when it is our JSON shape)."""
    text = body.decode("utf-8", errors="replace")
    message, wire_kind = text.strip(), None
    try:
        obj: Any = json.loads(text)
    except (ValueError, RecursionError):
        obj = None
    if isinstance(obj, dict):
        if isinstance(obj.get("error_message"), str):
            message = obj["error_message"]
        if isinstance(obj.get("error_kind"), str):
            wire_kind = obj["error_kind"]
    kind = common.kind_for_status(status, message)
    if wire_kind == "context_window_exceeded" and kind is ir.ErrorKind.INVALID_REQUEST:
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    return ir.IRError.of(kind, message, status=status, retry_after=common.retry_after(headers), code=wire_kind)


def encode_error(error: ir.IRError) -> HttpResponse:
    """IR error -> the kind's status, with `{"error_message", "error_kind"?}` and Retry-After if any."""
    headers = {"content-type": "application/json", **common.retry_after_headers(error)}
    return HttpResponse(common.KIND_STATUS[error.kind], headers, common.dump_json(error_fields(error)))


def error_fields(error: ir.IRError) -> dict[str, Any]:
    """`error_message` and, when swink has a name for the kind, `error_kind`."""
    out: dict[str, Any] = {"error_message": error.message}
    wire_kind = WIRE_ERROR_KINDS.get(error.kind)
    if wire_kind is not None:
        out["error_kind"] = wire_kind
    return out


def stream_error(message: str, wire_kind: str | None) -> ir.IRError:
    """The IR error of a terminal `error` event."""
    kind = ERROR_KINDS.get(wire_kind or "", ir.ErrorKind.SERVER)
    return ir.IRError.of(kind, message, code=wire_kind)
