"""A translated run through an external proxy that left nothing at the replay server: a success answer means
another server answered in the replay server's place (a harness error), and anything that is no answer of the
client's protocol is the proxy's own doing, judged like any other answer."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from harness.proxy import Exchange
from harness.runner.execute import _unreached

REPLAY = "http://127.0.0.1:8790"
TEXT_RESPONSE = (
    b'{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,'
    b'"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
)


def _unreached_of(client: str, status: int, body: bytes, *, stream: bool = False) -> tuple[str, bool] | None:
    run: Any = SimpleNamespace(role="translated", client=client, backend="openai", stream=stream)
    scenario: Any = SimpleNamespace(kind="generate")
    session: Any = SimpleNamespace(replay_url=REPLAY, earlier_calls_reached=False)
    exchange = Exchange(
        trace_id="t", route="r", frontend_protocol=client, mode="translate", frontend_status=status,
        frontend_chunks=(body,) if body else (),
    )  # fmt: skip
    return _unreached(run, scenario, exchange, session)


def test_a_success_answer_of_the_clients_protocol_is_another_servers() -> None:
    found = _unreached_of("openai", 200, TEXT_RESPONSE)
    assert found is not None and found[1] is True
    assert found[0].startswith("HTTP 200 (") and f"nothing reached {REPLAY}/openai" in found[0]


@pytest.mark.parametrize(
    ("client", "body"),
    [
        ("responses", b"null"),  # open-responses-server's answer to every non-streamed request
        ("openai", b""),  # headers sent, then the body cut (MLflow)
        ("openai", b"<html>gateway</html>"),
    ],
)
def test_a_2xx_that_is_no_answer_of_the_protocol_is_the_proxys_own(client: str, body: bytes) -> None:
    found = _unreached_of(client, 200, body)
    assert found is not None and found[1] is False


def test_an_error_status_is_the_proxys_own() -> None:
    found = _unreached_of("openai", 500, b'{"error":{"message":"boom"}}')
    assert found is not None and found[1] is False


LITELLM_WS_ERROR = (
    b'data: {"type": "error", "error": {"type": "server_error", "message": "litellm.BadRequestError: Error: Unable '
    b'to fetch image from URL."}}\n\n'
)
RESPONSES_TEXT_STREAM = (
    b'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response",'
    b'"created_at":1,"status":"in_progress","model":"m","output":[]}}\n\n'
    b'data: {"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","object":"response",'
    b'"created_at":1,"status":"completed","model":"m","output":[],'
    b'"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}\n\n'
)


def test_a_2xx_stream_carrying_only_an_error_is_the_proxys_own_refusal() -> None:
    """Quirk: LiteLLM answers a WebSocket turn whose file URL it cannot fetch with an error event and no upstream
    call; the upgrade succeeded, so the status is 2xx, but the answer is its own refusal, judged, not a harness
    error."""
    found = _unreached_of("responses", 200, LITELLM_WS_ERROR, stream=True)
    assert found is not None and found[1] is False
    assert "Unable to fetch" in found[0]


def test_a_2xx_stream_answering_the_request_is_another_servers() -> None:
    found = _unreached_of("responses", 200, RESPONSES_TEXT_STREAM, stream=True)
    assert found is not None and found[1] is True
