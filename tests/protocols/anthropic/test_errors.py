"""Error bodies: `{"type":"error","error":{"type":..,"message":..}}` both ways, statuses, retry-after."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols.anthropic.errors import ERROR_TYPES
from tests.protocols.anthropic.support import CODEC, assert_schema


def body(error_type: str, message: str) -> bytes:
    """An Anthropic error body as the API sends it."""
    return json.dumps(
        {"type": "error", "error": {"type": error_type, "message": message}, "request_id": "req_1"}
    ).encode()


@pytest.mark.parametrize(
    ("status", "error_type", "kind"),
    [
        (400, "invalid_request_error", ir.ErrorKind.INVALID_REQUEST),
        (401, "authentication_error", ir.ErrorKind.AUTH),
        (402, "billing_error", ir.ErrorKind.PERMISSION),
        (403, "permission_error", ir.ErrorKind.PERMISSION),
        (404, "not_found_error", ir.ErrorKind.NOT_FOUND),
        (413, "request_too_large", ir.ErrorKind.INVALID_REQUEST),
        (429, "rate_limit_error", ir.ErrorKind.THROTTLED),
        (500, "api_error", ir.ErrorKind.SERVER),
        (504, "timeout_error", ir.ErrorKind.TIMEOUT),
        (529, "overloaded_error", ir.ErrorKind.OVERLOADED),
    ],
)
def test_decode_error_types(status: int, error_type: str, kind: ir.ErrorKind) -> None:
    error = CODEC.decode_error(status, {}, body(error_type, "details"))
    assert error == ir.IRError.of(kind, "details", status=status, code=error_type)
    assert ERROR_TYPES[error_type][1] == status


def test_overloaded_is_sent_as_529_with_retry_after() -> None:
    response = CODEC.encode_error(ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", retry_after=2.5))
    assert response.status == 529
    assert response.headers == {"content-type": "application/json", "retry-after": "3"}
    assert json.loads(response.body) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert_schema("error", json.loads(response.body))


def test_rate_limit_retry_after_header_is_read() -> None:
    error = CODEC.decode_error(429, {"retry-after": "31"}, body("rate_limit_error", "slow down"))
    assert (error.kind, error.retry_after, error.retryable) == (ir.ErrorKind.THROTTLED, 31.0, True)


def test_context_window_error_is_a_400_that_says_prompt_is_too_long() -> None:
    decoded = CODEC.decode_error(
        400, {}, body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    )
    assert decoded.kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    encoded = CODEC.encode_error(ir.IRError.of(ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, "input too large for model"))
    assert encoded.status == 400
    sent = json.loads(encoded.body)["error"]
    assert sent == {"type": "invalid_request_error", "message": "prompt is too long: input too large for model"}
    assert (
        CODEC.decode_error(encoded.status, encoded.headers, encoded.body).kind == ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    )


def test_provider_error_type_is_kept_when_it_agrees_with_the_kind() -> None:
    billing = ir.IRError.of(ir.ErrorKind.PERMISSION, "credit balance too low", code="billing_error")
    assert CODEC.encode_error(billing).status == 402
    foreign = ir.IRError.of(ir.ErrorKind.THROTTLED, "x", code="RESOURCE_EXHAUSTED")  # another protocol's code
    assert json.loads(CODEC.encode_error(foreign).body)["error"]["type"] == "rate_limit_error"


@pytest.mark.parametrize(
    ("status", "raw", "kind", "message"),
    [
        (502, b"<html>Bad gateway</html>", ir.ErrorKind.SERVER, "<html>Bad gateway</html>"),
        (503, b"", ir.ErrorKind.OVERLOADED, ""),
        (429, b'{"error": "plain string"}', ir.ErrorKind.THROTTLED, "plain string"),
        (400, b'{"type": "error", "error": {"type": 5, "message": ["a"]}}', ir.ErrorKind.INVALID_REQUEST, '["a"]'),
        (418, b"\xff\xfe", ir.ErrorKind.INVALID_REQUEST, "\ufffd\ufffd"),
    ],
    ids=["html", "empty", "string-error", "odd-types", "not-utf8"],
)
def test_unexpected_error_bodies_still_yield_an_error(
    status: int, raw: bytes, kind: ir.ErrorKind, message: str
) -> None:
    error = CODEC.decode_error(status, {}, raw)
    assert (error.kind, error.status, error.message) == (kind, status, message)


@pytest.mark.parametrize("value", ["nan", "inf", "Mon, 01 Jan 2024 00:00:00 -0000", "soon", "-5"])
def test_odd_retry_after_headers_never_raise(value: str) -> None:
    error = CODEC.decode_error(429, {"retry-after": value}, body("rate_limit_error", "x"))
    assert error.retry_after is None or error.retry_after == 0.0
