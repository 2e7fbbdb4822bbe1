"""`conformance decode --protocol gemini` on corpus files prints the IR as JSON."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from tests.conftest import corpus_dir

pytestmark = pytest.mark.corpus


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["decode", "--protocol", "gemini", *args]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def test_decode_stream_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("gemini") / "sse-stream-parallel-function-calls.yaml"
    out = _run(capsys, "--kind", "stream", str(path), "--interaction", "0")
    assert set(out) == {"events", "response"}
    events = out["events"]
    assert isinstance(events, list)
    assert [e["kind"] for e in events][:3] == ["message_start", "thinking_start", "thinking_end"]
    assert events[-1]["kind"] == "done"
    response = out["response"]
    assert isinstance(response, dict)
    assert response["stop_reason"] == {"kind": "tool_use", "raw": "STOP", "sequence": None}
    calls = [p for p in response["content"] if p["kind"] == "tool_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        ("secret_retrieval_tool", {"password": "mellon"}),
        ("secret_retrieval_tool", {"password": "radiance"}),
    ]
    assert response["usage"]["output_tokens"] == 101


def test_decode_error_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("gemini") / "error-400-api-key-invalid-stream-request.yaml"
    out = _run(capsys, "--kind", "stream", str(path), "--interaction", "0")
    assert set(out) == {"error"}
    assert out["error"] == {
        "kind": "auth",
        "message": "API key not valid. Please pass a valid API key.",
        "status": 400,
        "retryable": False,
        "retry_after": None,
        "code": "INVALID_ARGUMENT",
    }


def test_decode_request_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("gemini") / "json-array-stream-thought-function-call.yaml"
    out = _run(capsys, "--kind", "request", str(path), "--interaction", "2")
    request = out["request"]
    assert isinstance(request, dict)
    assert (request["model"], request["stream"]) == ("gemini-2.5-flash", True)
    assert request["provider_fields"]["gemini"]["json_array_stream"] is True
    tool_results = [p for m in request["messages"] for p in m["content"] if p["kind"] == "tool_result"]
    assert [(r["tool_call_id"], r["name"], r["content"][0]["text"]) for r in tool_results] == [
        ("call_27db36357f594e73b557ec8f70da9e87", "pelican_name_generator", "Charles"),
        ("call_97666b91d4c14f44b94ab69dded4ab10", "pelican_name_generator", "Sammy"),
    ]
