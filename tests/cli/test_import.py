"""`conformance import` run in-process: a capture's every interaction imported (or the one named), a raw body with
its request, and usage errors (exit 2) told apart from exchanges that cannot become a case (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.scenarios import load_scenarios
from tests.conftest import corpus_dir


def run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str, str]:
    code = main(["import", *args, "--scenarios", str(tmp_path / "s"), "--cassettes", str(tmp_path / "c")])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.corpus
def test_every_interaction_of_a_capture(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = corpus_dir("openai_chat") / "stream-tool-call-then-text.yaml"
    code, out, err = run(capsys, tmp_path, str(capture), "--backends", "anthropic")
    assert (code, err) == (0, "")
    assert "as stream-tool-call-then-text-0 (openai; expectations: openai SDK)" in out
    assert [s.id for s in load_scenarios(tmp_path / "s")] == [
        "stream-tool-call-then-text-0",
        "stream-tool-call-then-text-1",
    ]
    assert sorted(p.relative_to(tmp_path / "c").as_posix() for p in (tmp_path / "c").rglob("*.yaml")) == [
        "anthropic/stream-tool-call-then-text-0.stream.yaml",
        "anthropic/stream-tool-call-then-text-1.stream.yaml",
        "openai/stream-tool-call-then-text-0.stream.yaml",
        "openai/stream-tool-call-then-text-1.stream.yaml",
    ]


@pytest.mark.corpus
def test_one_interaction_with_an_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = corpus_dir("openai_chat") / "stream-tool-call-then-text.yaml"
    code, out, _ = run(capsys, tmp_path, str(capture), "--interaction", "1", "--id", "mine", "--backends", "none")
    assert code == 0 and "#1 as mine" in out and "reference  0 backend(s)" in out
    assert [s.id for s in load_scenarios(tmp_path / "s")] == ["mine"]
    code, _, err = run(capsys, tmp_path, str(capture), "--id", "two")
    assert code == 2 and "has 2 interactions: --id names one, so pass --interaction too" in err
    code, _, err = run(capsys, tmp_path, str(capture), "--interaction", "1", "--id", "mine")
    assert code == 2 and "exists: choose another --id, or --force" in err
    code, _, err = run(capsys, tmp_path, str(capture), "--interaction", "5")
    assert code == 2 and "--interaction 5: the capture has 2" in err


def test_a_raw_body_and_its_request(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = tmp_path / "answer.json"
    body.write_text(
        '{"model":"llama3.2","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi."},'
        '"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}'
    )
    request = tmp_path / "request.json"
    request.write_text('{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"Hello"}]}')
    code, out, err = run(capsys, tmp_path, str(body), "--request", str(request), "--protocol", "ollama")
    assert (code, err) == (0, "") and "as answer (ollama; expectations: ollama SDK)" in out
    (scenario,) = load_scenarios(tmp_path / "s")
    assert scenario.expect.text_equals == "Hi." and scenario.streaming == ["nonstream"]


def test_usage_errors_and_an_answer_that_does_not_decode(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = tmp_path / "answer.json"
    body.write_text("{not json")
    request = tmp_path / "request.json"
    request.write_text('{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}')
    code, _, err = run(capsys, tmp_path, str(body))
    assert code == 2 and "needs --request" in err
    code, _, err = run(capsys, tmp_path, str(body), "--request", str(request), "--protocol", "nope")
    assert code == 2 and "unknown protocol" in err.lower()
    code, _, err = run(capsys, tmp_path, str(body), "--request", str(request), "--protocol", "anthropic")
    assert code == 1 and "the anthropic decoder cannot read the answer" in err
    code, _, err = run(capsys, tmp_path, str(tmp_path / "missing.yaml"))
    assert code == 2 and "cannot read" in err
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())
