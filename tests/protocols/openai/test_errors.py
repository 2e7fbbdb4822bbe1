"""Error bodies by status, type and code -> IR error kinds, and IR errors -> OpenAI error responses."""

from __future__ import annotations

import json

import pytest

from harness import ir
from tests.protocols.openai.support import GROQ, OPENAI, check_error


def _body(message: str, type_: str | None = None, code: object = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": type_, "param": None, "code": code}}).encode()


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (429, _body("Rate limit reached for gpt-4o", "requests", "rate_limit_exceeded"), ir.ErrorKind.THROTTLED),
        (429, _body("You exceeded your quota", "insufficient_quota", "insufficient_quota"), ir.ErrorKind.THROTTLED),
        (400, _body("This model's maximum context length is 128000 tokens.", "invalid_request_error",
                    "context_length_exceeded"), ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, _body("maximum context length is 4096", "BadRequestError", 400), ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, _body("Invalid value", "invalid_request_error", "invalid_value"), ir.ErrorKind.INVALID_REQUEST),
        (401, _body("Incorrect API key provided", "invalid_request_error", "invalid_api_key"), ir.ErrorKind.AUTH),
        (403, _body("Country not supported", "request_forbidden", "unsupported_country_region_territory"),
         ir.ErrorKind.PERMISSION),
        (404, _body("The model does not exist", "invalid_request_error", "model_not_found"), ir.ErrorKind.NOT_FOUND),
        (500, _body("The server had an error", "server_error"), ir.ErrorKind.SERVER),
        (503, _body("The engine is currently overloaded", "server_error"), ir.ErrorKind.OVERLOADED),
        (504, b"upstream timed out", ir.ErrorKind.TIMEOUT),
        (422, json.dumps({"detail": "field required"}).encode(), ir.ErrorKind.INVALID_REQUEST),
        (400, json.dumps({"error": "flat string error"}).encode(), ir.ErrorKind.INVALID_REQUEST),
    ],
)  # fmt: skip
def test_decode_error_kind_by_status_type_and_code(status: int, body: bytes, kind: ir.ErrorKind) -> None:
    error = OPENAI.decode_error(status, {}, body)
    assert error.kind == kind and error.status == status
    assert error.retryable is kind.retryable
    assert error.message


def test_decode_error_reads_flat_shapes_as_messages() -> None:
    assert OPENAI.decode_error(422, {}, b'{"detail": "field required"}').message == "field required"
    assert OPENAI.decode_error(400, {}, b'{"error": "flat string error"}').message == "flat string error"
    assert OPENAI.decode_error(400, {}, b"[1, 2]").message == "[1, 2]"


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [({"retry-after": "20"}, 20.0), ({"Retry-After-Ms": "1500"}, 1.5), ({"retry-after": "soon"}, None), ({}, None)],
)
def test_decode_error_retry_after_headers(headers: dict[str, str], seconds: float | None) -> None:
    error = OPENAI.decode_error(429, headers, _body("slow down", "requests", "rate_limit_exceeded"))
    assert error.retry_after == seconds


def test_groq_tool_use_failed_is_invalid_request_through_its_profile() -> None:
    body = _body("Tool call validation failed", "invalid_request_error", "tool_use_failed")
    assert GROQ.decode_error(400, {}, body).code == "tool_use_failed"
    assert GROQ.decode_error(400, {}, body).kind == ir.ErrorKind.INVALID_REQUEST


@pytest.mark.parametrize(
    ("kind", "status", "type_", "code"),
    [
        (ir.ErrorKind.THROTTLED, 429, "requests", "rate_limit_exceeded"),
        (ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, 400, "invalid_request_error", "context_length_exceeded"),
        (ir.ErrorKind.AUTH, 401, "invalid_request_error", "invalid_api_key"),
        (ir.ErrorKind.PERMISSION, 403, "permission_error", "permission_error"),
        (ir.ErrorKind.NOT_FOUND, 404, "invalid_request_error", "not_found"),
        (ir.ErrorKind.INVALID_REQUEST, 400, "invalid_request_error", None),
        (ir.ErrorKind.OVERLOADED, 503, "server_error", "overloaded"),
        (ir.ErrorKind.SERVER, 500, "server_error", None),
        (ir.ErrorKind.NETWORK, 502, "server_error", "network_error"),
        (ir.ErrorKind.TIMEOUT, 504, "server_error", "timeout"),
        (ir.ErrorKind.MALFORMED_STREAM, 502, "server_error", "malformed_stream"),
    ],
)
def test_encode_error_status_type_and_code_per_kind(
    kind: ir.ErrorKind, status: int, type_: str, code: str | None
) -> None:
    out = OPENAI.encode_error(ir.IRError.of(kind, "m", retry_after=2.5))
    check_error(out)
    assert out.status == status
    assert out.headers == {"content-type": "application/json", "retry-after": "3"}
    assert json.loads(out.body) == {"error": {"message": "m", "type": type_, "param": None, "code": code}}


def test_encode_error_keeps_a_provider_code_only_when_it_means_the_same_kind() -> None:
    kept = OPENAI.encode_error(ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, "bad", code="unsupported_value"))
    assert json.loads(kept.body)["error"]["code"] == "unsupported_value"
    quota = OPENAI.encode_error(ir.IRError.of(ir.ErrorKind.THROTTLED, "quota", code="insufficient_quota"))
    assert json.loads(quota.body)["error"]["code"] == "insufficient_quota"
    # Anthropic's `rate_limit_error` is not an OpenAI code: the kind's own code replaces it.
    foreign = OPENAI.encode_error(ir.IRError.of(ir.ErrorKind.THROTTLED, "slow", code="rate_limit_error"))
    assert json.loads(foreign.body)["error"]["code"] == "rate_limit_exceeded"
    # A code that names another kind is never kept.
    clash = OPENAI.encode_error(ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, "x", code="invalid_api_key"))
    assert json.loads(clash.body)["error"]["code"] is None


def test_corpus_style_pass_through_keeps_kind_message_and_code() -> None:
    original = OPENAI.decode_error(400, {}, _body("Unsupported value", "invalid_request_error", "unsupported_value"))
    wire = OPENAI.encode_error(original)
    again = OPENAI.decode_error(wire.status, wire.headers, wire.body)
    assert (again.kind, again.message, again.code, again.status) == (
        original.kind,
        original.message,
        original.code,
        400,
    )
