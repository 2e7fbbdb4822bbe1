"""Errors by status: HTTP error bodies decode to the kind the code (or status) says, never raising; encoded errors
carry the kind's status, OpenAI's body and Retry-After."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols.responses import schemas
from tests.protocols.responses.support import CODEC


def body(code: str | None, message: str = "m", type_: str = "invalid_request_error") -> bytes:
    """An OpenAI error body."""
    return json.dumps({"error": {"message": message, "type": type_, "param": None, "code": code}}).encode()


@pytest.mark.parametrize(
    ("status", "code", "message", "kind"),
    [
        (400, None, "Invalid value for 'input'", ir.ErrorKind.INVALID_REQUEST),
        (400, "context_length_exceeded", "Your input exceeds the context window", ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, None, "This model's maximum context length is 128000 tokens", ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (401, "invalid_api_key", "Incorrect API key provided", ir.ErrorKind.AUTH),
        (403, None, "Project does not have access", ir.ErrorKind.PERMISSION),
        (404, None, "No response found with id 'resp_1'", ir.ErrorKind.NOT_FOUND),
        (429, "rate_limit_exceeded", "Rate limit reached", ir.ErrorKind.THROTTLED),
        (429, "insufficient_quota", "You exceeded your current quota", ir.ErrorKind.THROTTLED),
        (500, "server_error", "The server had an error", ir.ErrorKind.SERVER),
        (503, None, "The engine is currently overloaded", ir.ErrorKind.OVERLOADED),
    ],
)
def test_decode_by_code_then_status(status: int, code: str | None, message: str, kind: ir.ErrorKind) -> None:
    error = CODEC.decode_error(status, {}, body(code, message))
    assert (error.kind, error.status, error.message, error.retryable) == (kind, status, message, kind.retryable)


def test_retry_after_comes_from_the_headers() -> None:
    error = CODEC.decode_error(429, {"Retry-After": "7"}, body("rate_limit_exceeded"))
    assert error.retry_after == 7.0
    assert CODEC.decode_error(429, {"retry-after-ms": "1500"}, body("rate_limit_exceeded")).retry_after == 1.5


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"upstream connect error", "upstream connect error"),
        (b'{"error": "Bad gateway"}', "Bad gateway"),
        (b"\xff", "\ufffd"),
    ],
)
def test_bodies_that_are_not_openai_errors_keep_their_text(raw: bytes, message: str) -> None:
    error = CODEC.decode_error(502, {}, raw)
    assert error.kind == ir.ErrorKind.SERVER and error.message == message and error.status == 502


@pytest.mark.parametrize("kind", list(ir.ErrorKind))
def test_encode_gives_the_kind_back_with_its_status(kind: ir.ErrorKind) -> None:
    error = ir.IRError.of(kind, "boom" if kind != ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED else "context length exceeded")
    encoded = CODEC.encode_error(error)
    schemas.validate("error", json.loads(encoded.body))
    assert CODEC.decode_error(encoded.status, encoded.headers, encoded.body).kind == kind


def test_encode_keeps_retry_after_and_a_code_of_the_same_kind() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow", retry_after=2.5, code="insufficient_quota")
    encoded = CODEC.encode_error(error)
    assert encoded.status == 429 and encoded.headers["retry-after"] == "3"
    assert json.loads(encoded.body)["error"] == {
        "type": "requests",
        "code": "insufficient_quota",
        "message": "slow",
        "param": None,
    }
    other = CODEC.encode_error(ir.IRError.of(ir.ErrorKind.THROTTLED, "slow", code="invalid_api_key"))
    assert json.loads(other.body)["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("server_error", ir.ErrorKind.SERVER),
        ("rate_limit_exceeded", ir.ErrorKind.THROTTLED),
        ("invalid_prompt", ir.ErrorKind.INVALID_REQUEST),
        ("vector_store_timeout", ir.ErrorKind.TIMEOUT),
        ("image_content_policy_violation", ir.ErrorKind.INVALID_REQUEST),
        ("invalid_base64_image", ir.ErrorKind.INVALID_REQUEST),
        ("misalignment_policy_violation", ir.ErrorKind.INVALID_REQUEST),
    ],
)
def test_failed_response_codes_name_their_kind(code: str, kind: ir.ErrorKind) -> None:
    # response.failed's error object has a code from its own list and no type.
    from harness.protocols.responses.errors import error_from_object

    assert error_from_object({"code": code, "message": "m"}, None).kind == kind
