"""`conformance decode --protocol ollama` on real captures prints the IR."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from tests.conftest import corpus_dir


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    code = main(["decode", "--protocol", "ollama", *args])
    out = capsys.readouterr().out
    assert code == 0
    result: dict[str, object] = json.loads(out)
    return result


def test_cli_decodes_a_stream_capture(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("ollama") / "api-chat-stream-thinking-cloud.httprr"
    out = _run(capsys, "--kind", "stream", "--interaction", "0", str(path))
    assert sorted(out) == ["events", "response"]
    events = out["events"]
    assert isinstance(events, list)
    assert events[0] == {"kind": "message_start", "id": None, "model": "gpt-oss:120b", "usage": None, "extras": None}
    assert events[-1]["kind"] == "done"
    response = out["response"]
    assert isinstance(response, dict)
    assert [p["kind"] for p in response["content"]] == ["thinking", "text"]
    assert response["content"][1]["text"] == "1  \n2  \n3  \n4  \n5"
    assert response["usage"]["input_tokens"] == 74
    assert response["usage"]["output_tokens"] == 57
    assert response["stop_reason"] == {"kind": "end_turn", "raw": "stop", "sequence": None}


def test_cli_decodes_an_error_capture(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("ollama") / "api-chat-error-400-tools-unsupported.httprr"
    out = _run(capsys, "--kind", "response", "--interaction", "0", str(path))
    assert list(out) == ["error"]
    error = out["error"]
    assert isinstance(error, dict)
    assert error["kind"] == "invalid_request"
    assert error["status"] == 400
    assert error["message"] == "registry.ollama.ai/library/gemma3:1b does not support tools"


def test_cli_decodes_a_request_capture(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("ollama") / "api-chat-tool-call-thinking-cloud.httprr"
    out = _run(capsys, "--kind", "request", "--interaction", "0", str(path))
    request = out["request"]
    assert isinstance(request, dict)
    assert request["model"] == "gpt-oss:120b"
    assert request["stream"] is False
    assert [t["name"] for t in request["tools"]] == ["getWeather"]
