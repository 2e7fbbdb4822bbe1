"""The Responses WebSocket mode's per-connection state (`harness.protocols.responses.websocket.ResponsesSocket`)."""

from __future__ import annotations

import json

from harness.protocols.responses.websocket import KEPT, ResponsesSocket


def _create(**body: object) -> str:
    return json.dumps({"type": "response.create", "model": "m", **body})


def _completed(response_id: str, text: str) -> str:
    output = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]
    return json.dumps({"type": "response.completed", "response": {"id": response_id, "output": output}})


def test_a_create_event_becomes_a_streamed_post_body_without_its_type() -> None:
    body, error = ResponsesSocket().begin(_create(input="hi", store=False))
    assert error is None and body is not None
    assert json.loads(body) == {"model": "m", "store": False, "stream": True, "input": [
        {"type": "message", "role": "user", "content": "hi"}
    ]}  # fmt: skip


def test_another_event_type_is_an_error_event() -> None:
    body, error = ResponsesSocket().begin(json.dumps({"type": "response.cancel"}))
    assert body is None and error is not None
    assert json.loads(error)["error"]["code"] == "invalid_event_type"


def test_a_refused_post_becomes_an_error_event_with_its_status_and_code() -> None:
    socket = ResponsesSocket()
    refused = (
        b'{"error": {"message": "model is not configured", "type": "invalid_request_error", "code": "model_not_found"}}'
    )
    event = json.loads(socket.failed(404, refused))
    assert event == {"type": "error", "status": 404, "error": {
        "type": "invalid_request_error", "code": "model_not_found", "message": "model is not configured", "param": None
    }}  # fmt: skip


def test_the_connection_forgets_its_oldest_responses_beyond_its_bound() -> None:
    socket = ResponsesSocket()
    for n in range(KEPT + 1):
        socket.begin(_create(input=f"turn {n}"))
        socket.relay(_completed(f"resp_{n}", "ok"))
    assert "resp_0" not in socket.chains and f"resp_{KEPT}" in socket.chains
    body, error = socket.begin(_create(input="again", previous_response_id=f"resp_{KEPT}"))
    assert error is None and body is not None
    assert [i["role"] for i in json.loads(body)["input"]] == ["user", "assistant", "user"]


def test_a_failed_continuation_evicts_the_response_it_continued() -> None:
    socket = ResponsesSocket()
    socket.begin(_create(input="one"))
    socket.relay(_completed("resp_1", "ok"))
    socket.begin(_create(input="two", previous_response_id="resp_1"))
    socket.relay(json.dumps({"type": "response.failed", "response": {"id": "resp_2", "output": []}}))
    _, error = socket.begin(_create(input="three", previous_response_id="resp_1"))
    assert error is not None and json.loads(error)["error"]["code"] == "previous_response_not_found"


def test_a_refused_post_keeps_its_error_type_and_carries_its_wait_in_error_headers() -> None:
    """The published form (`openai` SDK's `ResponseWsError`, from OpenAI's OpenAPI): `status`, nested `error` with
    the HTTP body's `type`, and the headers emitted with it: a rate limit's Retry-After reaches the client."""
    refused = b'{"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded", "param": null}}'
    event = json.loads(ResponsesSocket().failed(429, refused, {"Retry-After": "7", "x-request-id": "req_1"}))
    assert event == {"type": "error", "status": 429, "error": {
        "type": "requests", "code": "rate_limit_exceeded", "message": "slow down", "param": None,
        "headers": {"retry-after": "7"},
    }}  # fmt: skip


def test_a_stream_error_event_is_sent_in_the_websocket_form() -> None:
    """WebSocket mode types every `error` event as `ResponseWsError` (nested `error`, the stream's
    `sequence_number`): the HTTP stream's flat `code`, `message` and `param` are not its fields. Other events, and
    an error event that already has the form, go as they are."""
    socket = ResponsesSocket()
    inner = {"type": "server_error", "code": "server_error", "message": "cut", "param": None}
    both = {
        "type": "error",
        "sequence_number": 4,
        "code": "server_error",
        "message": "cut",
        "param": None,
        "error": inner,
    }
    assert json.loads(socket.relay(json.dumps(both))) == {"type": "error", "sequence_number": 4, "error": inner}
    flat = {"type": "error", "sequence_number": 2, "code": "rate_limit_exceeded", "message": "slow", "param": None}
    assert json.loads(socket.relay(json.dumps(flat))) == {"type": "error", "sequence_number": 2, "error": {
        "type": "server_error", "code": "rate_limit_exceeded", "message": "slow", "param": None
    }}  # fmt: skip
    delta = json.dumps({"type": "response.output_text.delta", "delta": "hi", "sequence_number": 1})
    assert socket.relay(delta) == delta
    refused = socket.failed(400, b'{"error": {"message": "bad", "type": "invalid_request_error"}}')
    assert socket.relay(refused) == refused
