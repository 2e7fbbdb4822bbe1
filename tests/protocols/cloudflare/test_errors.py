"""Workers AI error envelopes: codes decide the kind where the status says less (3040 capacity, 5007 model)."""

from __future__ import annotations

import json

from harness import ir
from tests.protocols.cloudflare.support import CODEC, check_error


def _envelope(code: int, message: str) -> bytes:
    return json.dumps(
        {"success": False, "errors": [{"code": code, "message": message}], "messages": [], "result": None}
    ).encode()


def test_capacity_429_is_overloaded_and_account_limit_is_throttled() -> None:
    capacity = CODEC.decode_error(429, {"retry-after": "3"}, _envelope(3040, "Capacity temporarily exceeded"))
    assert (capacity.kind, capacity.code, capacity.retry_after) == (ir.ErrorKind.OVERLOADED, "3040", 3.0)
    limited = CODEC.decode_error(429, {}, _envelope(3036, "Account limited"))
    assert limited.kind == ir.ErrorKind.THROTTLED and limited.retryable


def test_no_such_model_400_is_not_found() -> None:
    error = CODEC.decode_error(400, {}, _envelope(5007, "No such model @cf/nope/x or task"))
    assert (error.kind, error.status, error.message) == (
        ir.ErrorKind.NOT_FOUND,
        400,
        "No such model @cf/nope/x or task",
    )


def test_authentication_error_code_by_status() -> None:
    assert CODEC.decode_error(401, {}, _envelope(10000, "Authentication error")).kind == ir.ErrorKind.AUTH
    assert CODEC.decode_error(403, {}, _envelope(10000, "Authentication error")).kind == ir.ErrorKind.PERMISSION


def test_context_window_message_on_a_400() -> None:
    message = "The estimated number of input and maximum output tokens exceeded this model context window limit"
    assert CODEC.decode_error(400, {}, _envelope(5021, message)).kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED


def test_a_body_that_is_not_the_envelope_is_the_message() -> None:
    error = CODEC.decode_error(502, {}, b"<html>Bad gateway</html>")
    assert (error.kind, error.message) == (ir.ErrorKind.SERVER, "<html>Bad gateway</html>")


def test_encoded_errors_are_envelopes_with_the_kind_status() -> None:
    wire = CODEC.encode_error(ir.IRError.of(ir.ErrorKind.OVERLOADED, "busy", retry_after=2))
    check_error(wire)
    assert (wire.status, wire.headers["retry-after"]) == (429, "2")
    assert json.loads(wire.body)["errors"] == [{"code": 3040, "message": "busy"}]
