"""Bedrock errors: `x-amzn-errortype` (and its body spellings), statuses, kinds, context overflow, stream frames."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import ir
from harness.protocols.bedrock.errors import stream_error, stream_error_frame
from harness.protocols.reference import error_reply
from harness.wire.eventstream import iter_messages
from tests.protocols.bedrock import recordings
from tests.protocols.bedrock.support import CODEC, assert_schema


def decode(status: int, body: object, **headers: str) -> ir.IRError:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return CODEC.decode_error(status, headers, raw)


def test_recorded_errors_name_their_type_in_the_header_with_bedrocks_suffix(tmp_path: Path) -> None:
    # A throttled model answers 503 ServiceUnavailableException (req_llm), a model without access 403.
    rec = recordings.req_llm_error("amazon_bedrock_basic.json")
    assert rec.headers["x-amzn-errortype"].endswith(":http://internal.amazon.com/coral/com.amazon.bedrock/")
    assert CODEC.decode_error(rec.status, rec.headers, rec.body) == ir.IRError.of(
        ir.ErrorKind.OVERLOADED,
        "Model is getting throttled. Try your request again.",
        status=503,
        code="ServiceUnavailableException",
    )
    rec = recordings.langchaingo_error("TestAmazonNova.httprr", tmp_path)
    assert CODEC.decode_error(rec.status, rec.headers, rec.body) == ir.IRError.of(
        ir.ErrorKind.PERMISSION,
        "You don't have access to the model with the specified model ID.",
        status=403,
        code="AccessDeniedException",
    )
    # What our reference backend sends for the same errors has the recorded shape: the header, its suffix, the
    # body, and (from the reference, not the encoder) the request id.
    sent = error_reply(CODEC, CODEC.decode_error(rec.status, rec.headers, rec.body), seed="s")
    assert (sent.status, sent.headers["x-amzn-errortype"], sent.body) == (
        rec.status,
        rec.headers["x-amzn-errortype"],
        rec.body.replace(b'": "', b'":"'),
    )
    assert len(sent.headers["x-amzn-requestid"]) == len(rec.headers["x-amzn-requestid"]) == 36
    assert "x-amzn-requestid" not in CODEC.encode_error(CODEC.decode_error(rec.status, rec.headers, rec.body)).headers


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (
            {"__type": "com.amazon.coral.service#UnrecognizedClientException", "message": "bad token"},
            "UnrecognizedClientException",
        ),
        ({"code": "AccessDeniedException", "Message": "no"}, "AccessDeniedException"),
    ],
)
def test_the_type_may_come_from_the_body(body: dict[str, str], code: str) -> None:
    error = decode(403, body)
    assert error.code == code and error.message in ("bad token", "no")
    assert error.kind is (ir.ErrorKind.AUTH if code.startswith("Unrecognized") else ir.ErrorKind.PERMISSION)


def test_context_overflow_is_a_validation_exception_read_by_its_message() -> None:
    header = {"x-amzn-errortype": "ValidationException"}
    assert (
        decode(400, {"message": "Input is too long for requested model."}, **header).kind
        is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    )
    assert decode(400, {"message": "prompt is too long: 210000 tokens > 200000 maximum"}, **header).kind is (
        ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    )
    assert decode(400, {"message": "Malformed input request"}, **header).kind is ir.ErrorKind.INVALID_REQUEST
    sent = CODEC.encode_error(ir.IRError.of(ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, "too big"))
    assert json.loads(sent.body) == {"message": "Input is too long for requested model: too big"}


def test_without_a_type_the_status_decides_and_non_json_bodies_give_their_text() -> None:
    assert decode(429, {"message": "slow"}).kind is ir.ErrorKind.THROTTLED
    error = decode(502, b"<html>Bad Gateway</html>")
    assert (error.kind, error.message, error.code) == (ir.ErrorKind.SERVER, "<html>Bad Gateway</html>", None)
    assert decode(429, {"message": "x"}, **{"retry-after": "3"}).retry_after == 3.0


@pytest.mark.parametrize(
    ("kind", "status", "error_type"),
    [
        (ir.ErrorKind.THROTTLED, 429, "ThrottlingException"),
        (ir.ErrorKind.AUTH, 403, "UnrecognizedClientException"),
        (ir.ErrorKind.PERMISSION, 403, "AccessDeniedException"),
        (ir.ErrorKind.NOT_FOUND, 404, "ResourceNotFoundException"),
        (ir.ErrorKind.INVALID_REQUEST, 400, "ValidationException"),
        (ir.ErrorKind.OVERLOADED, 503, "ServiceUnavailableException"),
        (ir.ErrorKind.SERVER, 500, "InternalServerException"),
        (ir.ErrorKind.TIMEOUT, 408, "ModelTimeoutException"),
        (ir.ErrorKind.NETWORK, 500, "InternalServerException"),
        (ir.ErrorKind.MALFORMED_STREAM, 424, "ModelStreamErrorException"),
    ],
)
def test_each_kind_is_sent_with_its_type_and_status(kind: ir.ErrorKind, status: int, error_type: str) -> None:
    sent = CODEC.encode_error(ir.IRError.of(kind, "m", retry_after=5))
    assert sent.status == status
    assert sent.headers["x-amzn-errortype"] == f"{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/"
    assert sent.headers["content-type"] == "application/json" and "retry-after" not in sent.headers
    assert_schema("error", json.loads(sent.body))


def test_a_known_type_of_the_same_kind_is_kept() -> None:
    error = ir.IRError.of(ir.ErrorKind.OVERLOADED, "warming up", code="ModelNotReadyException")
    assert CODEC.encode_error(error).status == 429
    assert CODEC.encode_error(error.model_copy(update={"code": "ThrottlingException"})).status == 503


def test_stream_frames_for_errors() -> None:
    [frame] = iter_messages([stream_error_frame(ir.IRError.of(ir.ErrorKind.OVERLOADED, "busy"))])
    assert frame.headers == {
        ":exception-type": "serviceUnavailableException",
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    assert json.loads(frame.payload) == {"message": "busy"}
    [frame] = iter_messages([stream_error_frame(ir.IRError.of(ir.ErrorKind.NOT_FOUND, "é" * 40000))])
    assert frame.headers[":message-type"] == "error" and frame.headers[":error-code"] == "ResourceNotFoundException"
    assert frame.payload == b"" and len(str(frame.headers[":error-message"]).encode()) <= 65535
    assert stream_error(frame.headers, frame.payload).kind is ir.ErrorKind.NOT_FOUND
    assert stream_error({":message-type": "exception"}, b"not json") == ir.IRError.of(ir.ErrorKind.SERVER, "not json")
