"""`conformance decode --protocol responses` on corpus files."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from tests.conftest import corpus_dir


def run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    """Run `conformance decode --protocol responses ARGS` and return its JSON output."""
    assert main(["decode", "--protocol", "responses", *args]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.corpus
def test_decode_stream_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("openai_responses") / "stream-function-call.yaml"
    out = run(capsys, "--kind", "stream", "--interaction", "0", str(path))
    assert set(out) == {"events", "response"}
    events = out["events"]
    assert isinstance(events, list) and events[0]["kind"] == "message_start" and events[-1]["kind"] == "done"
    response = out["response"]
    assert isinstance(response, dict) and response["stop_reason"]["kind"] == "tool_use"
    assert [p["arguments"] for p in response["content"]] == [{"a": 1231, "b": 2331}]


@pytest.mark.corpus
def test_decode_error_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("openai_responses") / "error-400-model-not-found-stream-request.yaml"
    out = run(capsys, "--kind", "stream", "--interaction", "0", str(path))
    assert out == {
        "error": {
            "kind": "not_found",
            "message": "The requested model 'this-model-does-not-exist-12345' does not exist.",
            "status": 400,
            "retryable": False,
            "retry_after": None,
            "code": "model_not_found",
        }
    }


@pytest.mark.corpus
def test_decode_request_and_response(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("openai_responses") / "nonstream-text.yaml"
    request = run(capsys, "--kind", "request", "--interaction", "0", str(path))["request"]
    assert isinstance(request, dict) and request["thinking"] == {"enabled": True, "budget_tokens": None}
    response = run(capsys, "--kind", "response", "--interaction", "0", str(path))["response"]
    assert isinstance(response, dict) and response["content"] == [{"kind": "text", "text": "pong"}]
