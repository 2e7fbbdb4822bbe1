"""`conformance decode --protocol anthropic` on corpus files."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from tests.conftest import corpus_dir


def run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    """Run `conformance decode --protocol anthropic ARGS` and return its JSON output."""
    assert main(["decode", "--protocol", "anthropic", *args]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.corpus
def test_decode_stream_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("anthropic") / "stream-parallel-tool-use.yaml"
    out = run(capsys, "--kind", "stream", "--interaction", "0", str(path))
    assert set(out) == {"events", "response"}
    events = out["events"]
    assert isinstance(events, list) and events[0]["kind"] == "message_start" and events[-1]["kind"] == "done"
    response = out["response"]
    assert isinstance(response, dict)
    assert response["stop_reason"]["kind"] == "tool_use"
    assert [p["arguments"] for p in response["content"] if p["kind"] == "tool_call"] == [
        {"password": "mellon"},
        {"password": "radiance"},
    ]
    assert response["usage"]["input_tokens"] == 416 and response["usage"]["output_tokens"] == 109


@pytest.mark.corpus
def test_decode_error_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("anthropic") / "error-404-not-found-stream-request.yaml"
    out = run(capsys, "--kind", "stream", "--interaction", "0", str(path))
    assert set(out) == {"error"}
    assert out["error"] == {
        "kind": "not_found",
        "message": "model: this-model-does-not-exist-12345",
        "status": 404,
        "retryable": False,
        "retry_after": None,
        "code": "not_found_error",
    }


@pytest.mark.corpus
def test_decode_request_and_response(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("anthropic") / "nonstream-thinking.yaml"
    request = run(capsys, "--kind", "request", "--interaction", "0", str(path))["request"]
    assert isinstance(request, dict) and request["thinking"] == {"enabled": True, "budget_tokens": 6400}
    response = run(capsys, "--kind", "response", "--interaction", "0", str(path))["response"]
    assert isinstance(response, dict) and [p["kind"] for p in response["content"]] == ["thinking", "text"]
